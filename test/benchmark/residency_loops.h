//===- benchmark/residency_loops.h - A heat time loop -----------*- C -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef FPM_BENCHMARK_RESIDENCY_LOOPS_H
#define FPM_BENCHMARK_RESIDENCY_LOOPS_H

#ifdef __cplusplus
extern "C" {
#endif

/// `steps` steps of a 2-D heat stencil on n x n grids a and b (a to b, then
/// b to a: two partitioned sweeps), inside `#pragma fpm data` when
/// `region`; after each step, after(step, context).
void heatRun(double *a, double *b, int n, int steps, int region,
             void (*after)(int step, void *context), void *context);

#ifdef __cplusplus
}
#endif

#endif
