/*===- benchmark/offload_columns.h - Column loops of fpm-bench-offload ---===*
 *
 * Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * Two loops whose sections move in a later dimension than their first, as
 * `#pragma fpm partition` loops in C (offload_columns.c, rewritten by the
 * build): a sweep down each column of an m x n matrix, in place, and an
 * update of blocks of b columns. `copy` picks the pragma's devices clause:
 * 0 gpu, 1 cpu, 2 all (a pragma cannot take devices at run time).
 *
 *===----------------------------------------------------------------------===*/
#ifndef FPM_BENCH_OFFLOAD_COLUMNS_H
#define FPM_BENCH_OFFLOAD_COLUMNS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Columns [first, last) of x (m x n floats, row-major): each element from
   the one above, acc = acc * 0.5 + x[r][j]. */
void fpm_bench_sweep(int copy, int m, int n, float *x, int64_t first,
                     int64_t last);

/* Blocks [first, last) of b columns of c (m x n floats): each row of a
   block loses its mean. */
void fpm_bench_blocks(int copy, int m, int n, int b, float *c, int64_t first,
                      int64_t last);

#ifdef __cplusplus
}
#endif

#endif
