//===- benchmark/starpu_pragma.cpp - Matmul rows from one pragma ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-bench-starpu's matmul loop as a user writes it for fpm: one pragma,
// rewritten at build time (fpm_rewrite_sources), its OpenCL C kernel
// generated from the body. The same float operations in the same order as
// coexec_bench.hpp's matmulRows, indexed without local pointers, which
// would keep the loop on the CPU.
//
//===----------------------------------------------------------------------===//

#include "starpu_pragma.hpp"

void pragmaMatmulRows(const float *a, const float *b, float *c, int n) {
#pragma fpm partition name(starpu.matmul_pragma)                               \
    in(a[i * n : n], b[0 : n * n]) out(c[i * n : n])
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      c[i * n + j] = 0.0f;
    for (int k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (int j = 0; j < n; ++j)
        c[i * n + j] += aik * b[k * n + j];
    }
  }
}
