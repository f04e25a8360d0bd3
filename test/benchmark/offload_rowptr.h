/*===- benchmark/offload_rowptr.h - A row loop over row pointers ---------===*
 *
 * Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * A loop over the rows of a matrix allocated row by row (`double **a`), as
 * a `#pragma fpm partition` loop in C (offload_rowptr.c, rewritten by the
 * build): the runtime packs the rows a range touches into one device
 * buffer and copies the written ones back through their pointers. `copy`
 * picks the pragma's devices clause: 0 gpu, 1 cpu, 2 all.
 *
 *===----------------------------------------------------------------------===*/
#ifndef FPM_BENCH_OFFLOAD_ROWPTR_H
#define FPM_BENCH_OFFLOAD_ROWPTR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows [first, last) of the m x n matrices a (read) and c (written), each
   row its own block: c[i][j] = a[i][j] * x[j] + s, s the sum of row i of
   a. */
void fpm_bench_rowptr(int copy, int n, double **a, const double *x, double **c,
                      int64_t first, int64_t last);

#ifdef __cplusplus
}
#endif

#endif
