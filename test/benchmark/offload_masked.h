/*===- benchmark/offload_masked.h - A scattered-write loop ---------------===*
 *
 * Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * A covariance matrix filled symmetrically, as a `#pragma fpm partition`
 * loop in C (offload_masked.c, rewritten by the build): iteration i computes
 * cov[i][j] for j >= i and mirrors it to cov[j][i], so its written section
 * is all of cov at every iteration and a device merges its writes through a
 * write mask. `copy` picks the pragma: 0 devices(gpu), 1 devices(cpu), 2
 * all, and 3 the same rows without the mirror, `inout(cov[i:1][0:n])`, on
 * devices(gpu): no mask, what a device costs without one.
 *
 *===----------------------------------------------------------------------===*/
#ifndef FPM_BENCH_OFFLOAD_MASKED_H
#define FPM_BENCH_OFFLOAD_MASKED_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows [first, last) of the n x n covariance of data (m samples of n
   variables, row-major) into cov (n x n). */
void fpm_bench_covariance(int copy, int m, int n, const double *data,
                          double *cov, int64_t first, int64_t last);

#ifdef __cplusplus
}
#endif

#endif
