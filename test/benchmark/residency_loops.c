//===- benchmark/residency_loops.c - A heat time loop ---------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Rewritten at build time (fpm_rewrite_sources): one sweep, a partitioned
// loop over the interior rows, called twice per step; the time loop with
// and without a data region around it.
//
//===----------------------------------------------------------------------===//
#include "residency_loops.h"

static void sweep(const double *from, double *to, int n) {
  int i;
#pragma fpm partition name(residency.sweep) in(from[(i - 1) * n : 3 * n])      \
    out(to[i * n + 1 : n - 2])
  for (i = 1; i < n - 1; i++) {
    int j;
    for (j = 1; j < n - 1; j++)
      to[i * n + j] = 0.25 * (from[(i - 1) * n + j] + from[(i + 1) * n + j] +
                              from[i * n + j - 1] + from[i * n + j + 1]);
  }
}

void heatRun(double *a, double *b, int n, int steps, int region,
             void (*after)(int step, void *context), void *context) {
  int t;
  if (!region) {
    for (t = 0; t < steps; t++) {
      sweep(a, b, n);
      sweep(b, a, n);
      after(t, context);
    }
    return;
  }
#pragma fpm data inout(a[0 : n * n], b[0 : n * n])
  {
    for (t = 0; t < steps; t++) {
      sweep(a, b, n);
      sweep(b, a, n);
      after(t, context);
    }
  }
}
