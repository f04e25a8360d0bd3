/* The program the manual's Jacobi fragment runs in: laplace2d, a grid A of
   n x m points relaxed into Anew until the largest change is below tol. */
#include <math.h>
#include <stdio.h>

int main(void) {
  enum { N = 160, M = 160 };
  static double A[N][M], Anew[N][M];
  int i, j, n = N, m = M, iter = 0, iter_max = 50;
  double error = 1.0, tol = 1e-6;
  for (j = 0; j < n; j++)
    A[j][0] = Anew[j][0] = 1.0;
  /* @EXAMPLE@ */
  double check = 0;
  for (j = 0; j < n; j++)
    for (i = 0; i < m; i++)
      check += A[j][i] * ((i + j) % 5);
  printf("%d %.17g %.17g\n", iter, error, check);
  return 0;
}
