/* Matrix multiply, C = A * B, split by rows across the machine's processing
 * elements. Checks the result against the same product computed serially. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void multiply(int n, const float *A, const float *B, float *C) {
#pragma fpm partition name(matmul.rows) in(A[i * n : n], B[0 : n * n])         \
    out(C[i * n : n])
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int k = 0; k < n; ++k)
        sum += A[i * n + k] * B[k * n + j];
      C[i * n + j] = sum;
    }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 384;
  float *A = malloc(sizeof(float) * n * n), *B = malloc(sizeof(float) * n * n);
  float *C = malloc(sizeof(float) * n * n), *R = malloc(sizeof(float) * n * n);
  if (!A || !B || !C || !R) {
    fprintf(stderr, "matmul: out of memory for n = %d\n", n);
    return 1;
  }
  for (int i = 0; i < n * n; ++i) {
    A[i] = (float)((i * 7) % 13) / 13.0f;
    B[i] = (float)((i * 5) % 11) / 11.0f;
  }
  multiply(n, A, B, C);

  for (int i = 0; i < n; ++i) /* the serial reference */
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int k = 0; k < n; ++k)
        sum += A[i * n + k] * B[k * n + j];
      R[i * n + j] = sum;
    }
  for (int i = 0; i < n * n; ++i)
    if (fabsf(C[i] - R[i]) > 1e-4f * fabsf(R[i]) + 1e-6f) {
      fprintf(stderr, "matmul: C[%d] = %g, expected %g\n", i, C[i], R[i]);
      return 1;
    }
  printf("matmul: %d x %d, result matches the serial product\n", n, n);
  free(A), free(B), free(C), free(R);
  return 0;
}
