/* The program the manual's kernel(...) fragment runs in: an array a of n
   floats, scaled in place. */
#include <stdio.h>

int main(void) {
  enum { N = 5000 };
  static float a[N];
  int i, n = N;
  for (i = 0; i < n; i++)
    a[i] = (float)(i % 101);
  /* @EXAMPLE@ */
  double check = 0;
  for (i = 0; i < n; i++)
    check += a[i] * (i % 7);
  printf("%.17g\n", check);
  return 0;
}
