//===- benchmark/offload_loops.cpp - Pragma'd loops, rewritten by the build
//===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm_rewrite_sources (CMakeLists.txt) turns each loop into a call of the
// runtime with an outlined CPU body and an OpenCL C kernel generated from
// the body; `fpm-rewrite -Rfpm offload_loops.cpp -- -std=c++20` says that
// every loop is offloaded. The bodies compute what coexec_bench.hpp's
// hand-written kernels compute, the same float operations in the same
// order, with plain subscripts where the hand-written kernels keep row
// pointers (`ai = a + i * n`): a generated kernel cannot have a pointer
// that is not a data-clause array. Each row is a function that the three
// copies of a loop call (and that the kernel gets as a helper function).
//
//===----------------------------------------------------------------------===//

#include "offload_loops.hpp"

namespace fpm::bench::offload {
namespace {

/// Row i of C = A * B, ikj: the row is a sum of rows of B.
void matmulRow(const float *a, const float *b, float *c, int n,
               std::int64_t i) {
  for (int j = 0; j < n; ++j)
    c[i * n + j] = 0.0f;
  for (int k = 0; k < n; ++k) {
    const float aik = a[i * n + k];
    for (int j = 0; j < n; ++j)
      c[i * n + j] += aik * b[static_cast<std::int64_t>(k) * n + j];
  }
}

/// The flux from a neighbour d away, for K^2 = 1 / inverseK2.
float flux(float d, float inverseK2) { return d / (1.0f + d * d * inverseK2); }

/// Row i of `out` from rows i - 1 .. i + 1 of `in`; the first and last
/// columns are copied.
void diffuseRow(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t i) {
  out[i * n] = in[i * n];
  for (int j = 1; j < n - 1; ++j) {
    const float c = in[i * n + j];
    const float side = flux(in[(i - 1) * n + j] - c, inverseK2) +
                       flux(in[(i + 1) * n + j] - c, inverseK2) +
                       flux(in[i * n + j - 1] - c, inverseK2) +
                       flux(in[i * n + j + 1] - c, inverseK2);
    const float diagonal = flux(in[(i - 1) * n + j - 1] - c, inverseK2) +
                           flux(in[(i - 1) * n + j + 1] - c, inverseK2) +
                           flux(in[(i + 1) * n + j - 1] - c, inverseK2) +
                           flux(in[(i + 1) * n + j + 1] - c, inverseK2);
    out[i * n + j] = c + dt * (side + 0.5f * diagonal);
  }
  out[i * n + n - 1] = in[i * n + n - 1];
}

} // namespace

void matmulGpu(const float *a, const float *b, float *c, int n,
               std::int64_t first, std::int64_t last) {
#pragma fpm partition name(offload.matmul.gpu) devices(gpu)                    \
    in(a[i * n : n], b[0 : n * n]) out(c[i * n : n])
  for (std::int64_t i = first; i < last; ++i)
    matmulRow(a, b, c, n, i);
}

void matmulCpu(const float *a, const float *b, float *c, int n,
               std::int64_t first, std::int64_t last) {
#pragma fpm partition name(offload.matmul.cpu) devices(cpu)                    \
    in(a[i * n : n], b[0 : n * n]) out(c[i * n : n])
  for (std::int64_t i = first; i < last; ++i)
    matmulRow(a, b, c, n, i);
}

void matmulAll(const float *a, const float *b, float *c, int n,
               std::int64_t first, std::int64_t last) {
#pragma fpm partition name(offload.matmul.all) in(a[i * n : n], b[0 : n * n])  \
    out(c[i * n : n])
  for (std::int64_t i = first; i < last; ++i)
    matmulRow(a, b, c, n, i);
}

void diffuseGpu(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t first, std::int64_t last) {
#pragma fpm partition name(offload.stencil.gpu) devices(gpu)                   \
    in(in[(i - 1) * n : 3 * n]) out(out[i * n : n])
  for (std::int64_t i = first; i < last; ++i)
    diffuseRow(in, out, n, dt, inverseK2, i);
}

void diffuseCpu(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t first, std::int64_t last) {
#pragma fpm partition name(offload.stencil.cpu) devices(cpu)                   \
    in(in[(i - 1) * n : 3 * n]) out(out[i * n : n])
  for (std::int64_t i = first; i < last; ++i)
    diffuseRow(in, out, n, dt, inverseK2, i);
}

void diffuseAll(const float *in, float *out, int n, float dt, float inverseK2,
                std::int64_t first, std::int64_t last) {
#pragma fpm partition name(offload.stencil.all) in(in[(i - 1) * n : 3 * n])    \
    out(out[i * n : n])
  for (std::int64_t i = first; i < last; ++i)
    diffuseRow(in, out, n, dt, inverseK2, i);
}

} // namespace fpm::bench::offload
