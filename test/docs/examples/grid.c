/* The program the manual's stencil fragments run in: a grid of n rows of m
   points and the grid `next` of one step. */
#include <stdio.h>

int main(void) {
  enum { N = 200, M = 150 };
  static double grid[N][M], next[N][M];
  int i, j, n = N, m = M;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      grid[i][j] = (i * 7 + j * 3) % 17;
  /* @EXAMPLE@ */
  double check = 0;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      check += next[i][j] * ((i + j) % 5);
  printf("%.17g\n", check);
  return 0;
}
