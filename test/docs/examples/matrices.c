/* The program the manual's matrix fragments run in: n x n matrices A, B
   and C in row-major order. */
#include <stdio.h>

int main(void) {
  enum { N = 96 };
  static double A[N * N], B[N * N], C[N * N];
  int i, n = N;
  for (i = 0; i < n * n; i++) {
    A[i] = i % 7;
    B[i] = i % 5 - 2;
  }
  /* @EXAMPLE@ */
  double check = 0;
  for (i = 0; i < n * n; i++)
    check += C[i] * (i % 11);
  printf("%.17g\n", check);
  return 0;
}
