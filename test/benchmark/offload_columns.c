/*===- benchmark/offload_columns.c - Column loops, rewritten by the build -===*
 *
 * Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * fpm_rewrite_sources (CMakeLists.txt) offloads each loop: the sections
 * x[0:m][j:1] and c[0:m][k*b:b] reach the runtime as rows of runs a pitch
 * apart, which a device copies as rectangles. The bodies compute what
 * offload.cpp's hand-written kernels compute, the same float operations in
 * the same order. C, for the matrices' variable-length row type.
 *
 *===----------------------------------------------------------------------===*/

#include "offload_columns.h"

/* The loops' bodies are macros, not functions: a helper that takes a
   pointer to variable-length rows is no kernel helper yet. */
#define SWEEP_COLUMN                                                           \
  {                                                                            \
    float acc = x[0][j];                                                       \
    for (int r = 1; r < m; ++r) {                                              \
      acc = acc * 0.5f + x[r][j];                                              \
      x[r][j] = acc;                                                           \
    }                                                                          \
  }

#define CENTER_BLOCK                                                           \
  for (int r = 0; r < m; ++r) {                                                \
    float sum = 0.0f;                                                          \
    for (int t = 0; t < b; ++t)                                                \
      sum += c[r][k * b + t];                                                  \
    const float mean = sum / (float)b;                                         \
    for (int t = 0; t < b; ++t)                                                \
      c[r][k * b + t] -= mean;                                                 \
  }

void fpm_bench_sweep(int copy, int m, int n, float *data, int64_t first,
                     int64_t last) {
  float(*x)[n] = (float(*)[n])data;
  if (copy == 0) {
#pragma fpm partition name(offload.columns.gpu) devices(gpu)                   \
    inout(x[0 : m][j : 1])
    for (int64_t j = first; j < last; ++j)
      SWEEP_COLUMN
  } else if (copy == 1) {
#pragma fpm partition name(offload.columns.cpu) devices(cpu)                   \
    inout(x[0 : m][j : 1])
    for (int64_t j = first; j < last; ++j)
      SWEEP_COLUMN
  } else {
#pragma fpm partition name(offload.columns.all) inout(x[0 : m][j : 1])
    for (int64_t j = first; j < last; ++j)
      SWEEP_COLUMN
  }
}

void fpm_bench_blocks(int copy, int m, int n, int b, float *data, int64_t first,
                      int64_t last) {
  float(*c)[n] = (float(*)[n])data;
  if (copy == 0) {
#pragma fpm partition name(offload.blocks.gpu) devices(gpu)                    \
    inout(c[0 : m][k * b : b])
    for (int64_t k = first; k < last; ++k)
      CENTER_BLOCK
  } else if (copy == 1) {
#pragma fpm partition name(offload.blocks.cpu) devices(cpu)                    \
    inout(c[0 : m][k * b : b])
    for (int64_t k = first; k < last; ++k)
      CENTER_BLOCK
  } else {
#pragma fpm partition name(offload.blocks.all) inout(c[0 : m][k * b : b])
    for (int64_t k = first; k < last; ++k)
      CENTER_BLOCK
  }
}
