/* The program the manual's vector fragments run in: x, y and the scalars
   they name, filled with values every sum keeps exact, then printed.
   USE_FPM: the manual's `#ifdef USE_FPM` example takes fpm's pragma. */
#include <stdio.h>

#define USE_FPM 1

int main(void) {
  enum { N = 20000 };
  static float x[N], y[N];
  const float a = 2.0f;
  double sum = 0, top = -1.0;
  int i, n = N;
  for (i = 0; i < n; i++) {
    x[i] = (float)(i % 97) * 0.5f;
    y[i] = (float)(i % 13);
  }
  /* @EXAMPLE@ */
  double check = 0;
  for (i = 0; i < n; i++)
    check += x[i] + 3.0 * y[i];
  printf("%.17g %.17g %.17g\n", check, sum, top);
  return 0;
}
