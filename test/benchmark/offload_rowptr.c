/*===- benchmark/offload_rowptr.c - A row loop over row pointers ----------===*
 *
 * Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * fpm_rewrite_sources (CMakeLists.txt) offloads each copy of the loop: the
 * sections a[i:1][0:n] and c[i:1][0:n] reach the runtime as rows through
 * their pointers (fpm_arg::row_length). The body computes what offload.cpp's
 * hand-written kernel computes over a flat matrix, the same double
 * operations in the same order.
 *
 *===----------------------------------------------------------------------===*/

#include "offload_rowptr.h"

#define SCALE_ROW                                                              \
  {                                                                            \
    double s = 0;                                                              \
    for (int j = 0; j < n; ++j)                                                \
      s += a[i][j];                                                            \
    for (int j = 0; j < n; ++j)                                                \
      c[i][j] = a[i][j] * x[j] + s;                                            \
  }

void fpm_bench_rowptr(int copy, int n, double **a, const double *x, double **c,
                      int64_t first, int64_t last) {
  if (copy == 0) {
#pragma fpm partition name(offload.rowptr.gpu) devices(gpu)                    \
    in(a[i : 1][0 : n], x[0 : n])out(c[i : 1][0 : n])
    for (int64_t i = first; i < last; ++i)
      SCALE_ROW
  } else if (copy == 1) {
#pragma fpm partition name(offload.rowptr.cpu) devices(cpu)                    \
    in(a[i : 1][0 : n], x[0 : n])out(c[i : 1][0 : n])
    for (int64_t i = first; i < last; ++i)
      SCALE_ROW
  } else {
#pragma fpm partition name(offload.rowptr.all)                                 \
    in(a[i : 1][0 : n], x[0 : n])out(c[i : 1][0 : n])
    for (int64_t i = first; i < last; ++i)
      SCALE_ROW
  }
}
