//===- benchmark/reduction.cpp - Reductions against OpenMP's --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A dot product and a 2-norm of N doubles: fpm::parallelReduce on the CPU
// team against `#pragma omp parallel for reduction(+: s)` (the baseline),
// both on the same libomp team in this process, and co-executed on the
// OpenCL devices (PoCL in CI) with the CPU. Rounds alternate the variants;
// each variant's median round is reported as a ratio to OpenMP's median,
// with the range of the per-round ratios (the noise band). Every variant's
// result is checked against OpenMP's, within n * 2^-53 relative: the sums
// add the same terms in different orders (work-groups, chunks, threads).
//
//   fpm-bench-reduction [--quick] [--n N] [--rounds R]
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> x, y;

double ompDot() {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
  for (std::int64_t i = 0; i < n; ++i)
    s += x[static_cast<std::size_t>(i)] * y[static_cast<std::size_t>(i)];
  return s;
}

double ompNorm() {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
  for (std::int64_t i = 0; i < n; ++i)
    s += x[static_cast<std::size_t>(i)] * x[static_cast<std::size_t>(i)];
  return std::sqrt(s);
}

constexpr const char *KernelSource = R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void dot_product(__global const double *x, __global const double *y,
                  __global double *partials) {
  __local double s[64];
  const size_t l = get_local_id(0);
  s[l] = x[get_global_id(0)] * y[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    double a = 0;
    for (size_t j = 0; j < get_local_size(0); ++j)
      a += s[j];
    partials[get_group_id(0)] = a;
  }
}
)";

/// fpm's dot product of x and y (x and x for the norm), on `devices`.
double fpmDot(const char *schedule, const char *devices, bool norm) {
  static fpm_loop loop{};
  loop.name = nullptr; // no profiles: nothing to learn across variants
  loop.schedule = schedule;
  loop.devices = devices;
  loop.grain = 4096;
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const double *a = x.data();
  const double *b = norm ? x.data() : y.data();
  fpm_arg args[3] = {{FPM_ARG_IN, const_cast<double *>(a), sizeof(double), n, 0,
                      1, 1, 0, 0, nullptr, 0, 0, 0},
                     {FPM_ARG_IN, const_cast<double *>(b), sizeof(double), n, 0,
                      1, 1, 0, 0, nullptr, 0, 0, 0},
                     {FPM_ARG_REDUCTION, nullptr, sizeof(double), 0, 0, 0, 0, 0,
                      0, nullptr, 0, 0, 0}};
  fpm_kernel kernel{};
  kernel.source = KernelSource;
  kernel.name = "dot_product";
  kernel.args = args;
  kernel.arg_count = 3;
  double s = 0;
  fpm::parallelReduce(
      loop, n, std::strcmp(devices, "cpu") == 0 ? nullptr : &kernel,
      [&](std::int64_t begin, std::int64_t end, double &sum) {
        for (std::int64_t i = begin; i < end; ++i)
          sum += a[i] * b[i];
      },
      fpm::reduce(FPM_REDUCE_ADD, s));
  return norm ? std::sqrt(s) : s;
}

struct Variant {
  std::string name;
  std::function<double()> run;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::int64_t n = 100'000'000;
  int rounds = 7;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
      n = 1'000'000;
      rounds = 3;
    } else if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = std::max<std::int64_t>(1, std::atoll(argv[++i]));
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: fpm-bench-reduction [--quick] [--n N] "
                           "[--rounds R]\n");
      return 2;
    }
  }
  x.resize(static_cast<std::size_t>(n));
  y.resize(static_cast<std::size_t>(n));
  // First touch by the team, as a program's own initialisation would.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = 1.0 + static_cast<double>(i % 1000) / 999;
    y[static_cast<std::size_t>(i)] = 2.0 - static_cast<double>(i % 777) / 776;
  }

  for (bool norm : {false, true}) {
    const std::vector<Variant> variants = {
        {"omp parallel for reduction(+: s)", norm ? ompNorm : ompDot},
        {"fpm equal, cpu", [=] { return fpmDot("equal", "cpu", norm); }},
        {"fpm auto, cpu", [=] { return fpmDot("auto", "cpu", norm); }},
        {"fpm auto, cpu + OpenCL", [=] { return fpmDot("auto", "all", norm); }},
    };
    std::vector<std::vector<double>> seconds(variants.size());
    std::vector<double> results(variants.size());
    for (int round = 0; round < rounds + 1; ++round)
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const Clock::time_point start = Clock::now();
        results[v] = variants[v].run();
        const double took =
            std::chrono::duration<double>(Clock::now() - start).count();
        if (round > 0) // the first round warms up (pages, kernels)
          seconds[v].push_back(took);
      }
    std::printf("\n%s of %lld doubles on %d CPU threads (median of %d rounds; "
                "ratio to OpenMP, and its range over the rounds)\n\n",
                norm ? "2-norm" : "dot product", static_cast<long long>(n),
                omp_get_max_threads(), rounds);
    std::printf("| variant | seconds | ratio | range |\n|---|---|---|---|\n");
    const double base = median(seconds[0]);
    bool right = true;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      double low = 1e300, high = 0;
      for (int r = 0; r < rounds; ++r) {
        const double ratio = seconds[v][static_cast<std::size_t>(r)] /
                             seconds[0][static_cast<std::size_t>(r)];
        low = std::min(low, ratio);
        high = std::max(high, ratio);
      }
      std::printf("| %s | %.4f | %.3f | %.3f-%.3f |\n",
                  variants[v].name.c_str(), median(seconds[v]),
                  median(seconds[v]) / base, low, high);
      const double bound = static_cast<double>(n) * 0x1p-53;
      if (std::fabs(results[v] - results[0]) > bound * std::fabs(results[0])) {
        std::fprintf(stderr,
                     "fpm-bench-reduction: %s gave %.17g, OpenMP %.17g\n",
                     variants[v].name.c_str(), results[v], results[0]);
        right = false;
      }
    }
    if (!right)
      return 1;
  }
  (void)quick;
  return 0;
}
