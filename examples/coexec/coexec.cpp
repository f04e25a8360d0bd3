//===- examples/coexec/coexec.cpp - One loop on CPU threads and OpenCL ----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Matrix multiply, C = A * B, split by rows across the CPU team and every
// OpenCL device at once, from one pragma: fpm-rewrite (through
// fpm_rewrite_sources in CMake) turns the loop into a CPU body and an
// OpenCL C kernel generated from the same body. The loop runs a few times,
// as an iterative code would, so that fpm learns the PEs' speeds; each
// call's time is printed beside the serial loop's (the same body and flags,
// timed the same way), and C is checked against it.
//
//   fpm-example-coexec [n] [calls]
//
// Try FPM_VERBOSE=1 (the split and, at exit, each PE's utilisation),
// FPM_SCHEDULE=..., FPM_DEVICES=cpu|gpu|all, FPM_TRACE=trace.json (open it
// in https://ui.perfetto.dev), and FPM_INJECT_FAULT=opencl0:2 (the device
// fails at its second chunk; the result is still right). `fpm-rewrite -Rfpm
// coexec.cpp -- -std=c++20` says whether the loop offloads.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

/// Rows [first, last) of C = A * B, in ikj order.
void multiplyRows(const float *a, const float *b, float *c, int n,
                  std::int64_t first, std::int64_t last) {
  for (std::int64_t i = first; i < last; ++i) {
    for (int j = 0; j < n; ++j)
      c[i * n + j] = 0.0f;
    for (int k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (int j = 0; j < n; ++j)
        c[i * n + j] += aik * b[k * n + j];
    }
  }
}

/// The same rows, all of them, split across the machine: row i reads
/// A[i*n : n] and B whole, and writes C[i*n : n].
void multiply(const float *a, const float *b, float *c, int n) {
#pragma fpm partition name(coexec.matmul_rows) in(a[i * n : n], b[0 : n * n])  \
    out(c[i * n : n])
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

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 4;
  if (n < 1 || calls < 1) {
    std::fprintf(stderr, "usage: %s [n >= 1] [calls >= 1]\n", argv[0]);
    return 2;
  }
  const auto size = static_cast<std::int64_t>(n) * n;
  std::vector<float> a(size), b(size), c(size), expected(size);
  for (std::int64_t i = 0; i < size; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) / 13.0f;
    b[i] = static_cast<float>((i * 5) % 11) / 11.0f;
  }
  // The serial baseline, timed as fpm's calls are: the same loop body,
  // compiled with the same flags, into memory already touched; the median
  // of three runs (a single cold run is slower than fpm's own CPU PE).
  std::vector<double> serialRuns;
  for (int run = 0; run < 3; ++run) {
    std::fill(expected.begin(), expected.end(), -1.0f);
    const auto start = std::chrono::steady_clock::now();
    multiplyRows(a.data(), b.data(), expected.data(), n, 0, n);
    serialRuns.push_back(secondsSince(start));
  }
  std::sort(serialRuns.begin(), serialRuns.end());
  const double serial = serialRuns[1];

  std::printf("coexec: %d x %d matrices, serial %.3f s (median of 3 runs); "
              "fpm splits the loop across %u CPU cores and the OpenCL "
              "devices\n",
              n, n, serial, std::thread::hardware_concurrency());
  for (int call = 0; call < calls; ++call) {
    std::fill(c.begin(), c.end(), -1.0f);
    const auto start = std::chrono::steady_clock::now();
    multiply(a.data(), b.data(), c.data(), n);
    const double time = secondsSince(start);
    // The generated kernel computes what the C++ loop computes, bit for bit
    // (no contraction to fma on either side).
    for (std::int64_t i = 0; i < size; ++i)
      if (c[i] != expected[i]) {
        std::fprintf(stderr, "coexec: C[%lld] = %g, expected %g\n",
                     static_cast<long long>(i), c[i], expected[i]);
        return 1;
      }
    std::printf("coexec: call %d: %.3f s (%.2fx the serial loop), C is right\n",
                call + 1, time, serial / time);
  }
  return 0;
}
