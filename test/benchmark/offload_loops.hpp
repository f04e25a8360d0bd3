//===- benchmark/offload_loops.hpp - The pragma'd loops of fpm-bench-offload
//===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The two loops of coexec_bench.hpp (matmul rows, a Perona-Malik sweep) as
// `#pragma fpm partition` loops that the build rewrites with fpm-rewrite
// (offload_loops.cpp): each over rows [first, last), in three copies that
// differ only in their devices clause, since a pragma cannot take a devices
// string at run time and the oracle runs two of them at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fpm::bench::offload {

/// Rows [first, last) of C = A * B (n x n floats, ikj), on OpenCL devices
/// only (the generated kernel), on the CPU team only, and on both.
void matmulGpu(const float *a, const float *b, float *c, int n,
               std::int64_t first, std::int64_t last);
void matmulCpu(const float *a, const float *b, float *c, int n,
               std::int64_t first, std::int64_t last);
void matmulAll(const float *a, const float *b, float *c, int n,
               std::int64_t first, std::int64_t last);

/// Rows [first, last) of `out` (1 <= first, last <= m + 1, of an (m + 2) x n
/// grid) from rows first - 1 .. last of `in`: one Perona-Malik sweep.
void diffuseGpu(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t first, std::int64_t last);
void diffuseCpu(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t first, std::int64_t last);
void diffuseAll(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t first, std::int64_t last);

} // namespace fpm::bench::offload
