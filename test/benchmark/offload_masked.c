/*===- benchmark/offload_masked.c - A scattered-write loop, rewritten -----===*
 *
 * Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * fpm_rewrite_sources (CMakeLists.txt) offloads each loop; the symmetric
 * ones' section out(cov[0:n][0:n]) is the same for every iteration, and
 * the generated kernel marks the elements it writes. C, for the matrices'
 * variable-length row type.
 *
 *===----------------------------------------------------------------------===*/

#include "offload_masked.h"

/* Row i of the covariance from its diagonal on; MIRROR after each element.
   A macro, so that every copy of the loop computes the same operations. */
#define COVARIANCE_ROW(MIRROR)                                                 \
  for (int64_t j = i; j < n; ++j) {                                            \
    double s = 0.0;                                                            \
    for (int k = 0; k < m; ++k)                                                \
      s += d[k][i] * d[k][j];                                                  \
    cov[i][j] = s / (m - 1);                                                   \
    MIRROR                                                                     \
  }

void fpm_bench_covariance(int copy, int m, int n, const double *data,
                          double *out, int64_t first, int64_t last) {
  const double(*d)[n] = (const double(*)[n])data;
  double(*cov)[n] = (double(*)[n])out;
  if (copy == 0) {
#pragma fpm partition name(offload.masked.gpu) devices(gpu)                    \
    in(d[0 : m][0 : n]),                                                       \
    out(cov[0 : n][0 : n])
    for (int64_t i = first; i < last; ++i)
      COVARIANCE_ROW(cov[j][i] = cov[i][j];)
  } else if (copy == 1) {
#pragma fpm partition name(offload.masked.cpu) devices(cpu)                    \
    in(d[0 : m][0 : n]),                                                       \
    out(cov[0 : n][0 : n])
    for (int64_t i = first; i < last; ++i)
      COVARIANCE_ROW(cov[j][i] = cov[i][j];)
  } else if (copy == 2) {
#pragma fpm partition name(offload.masked.all) in(d[0 : m][0 : n]),            \
    out(cov[0 : n][0 : n])
    for (int64_t i = first; i < last; ++i)
      COVARIANCE_ROW(cov[j][i] = cov[i][j];)
  } else {
#pragma fpm partition name(offload.masked.rows) devices(gpu)                   \
    in(d[0 : m][0 : n]),                                                       \
    inout(cov[i : 1][0 : n])
    for (int64_t i = first; i < last; ++i)
      COVARIANCE_ROW()
  }
}
