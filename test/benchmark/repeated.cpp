//===- benchmark/repeated.cpp - A repeated loop balanced by partial FPMs --===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The shape of the multidimensional-solvers paper's Fig. 7 on this machine's
// PEs: an iterative routine calls the same loop again and again, and
// schedule(auto) balances it with partial FPMs refined at every call
// (runtime/balance/): the first call runs the weighted guided schedule, which
// measures every PE, and each later one the numerical partitioner's split on
// what the PEs ran so far. `equal` and `cpm` (one measured speed per PE, the
// traditional baseline of the multidimensional-solvers paper's Fig. 8) run
// beside it.
//
// The loop is fpm-bench-coexec's stencil (one 9-point Perona-Malik sweep,
// (8192 + 2) x 4096 floats by default, one iteration per row), in the same
// co-execution configuration: a team of 2 OpenMP threads, one running the
// C++ body and one feeding PoCL's 1-compute-unit sub-device. Every call's
// output is poisoned before and checked against a serial reference after
// (bit-exact).
//
// After a warm-up under another loop name (program builds, PoCL's
// per-work-group-size compiles), fpm-bench-coexec's oracle sweep finds the
// best static splits; then `calls` rounds each call auto, equal, cpm and
// the sweep's 3 best splits once, in turn, so that the drift of a shared
// machine hits all alike. The oracle is the split with the best median;
// each round's ratio is auto's time over the oracle's in that round.
//
// Columns per call: each schedule's time and the share of the iterations
// OpenCL ran (counted by the CPU body: what it did not run, the kernel
// did); the oracle split's time in that round; auto / oracle, alone and
// as the median over the call before, it and the call after. One call's
// time varies by several per cent on a shared (virtual) machine, the
// oracle's as much (the output says how often the oracle split itself is
// within 5% of its median), so "within 5% of the oracle from call k on"
// is judged on that median.
//
//   fpm-bench-repeated [--quick] [--no-steal] [--calls N] [--stencil M N]
//
// --no-steal turns tail stealing off (FPM_STEAL=0): each schedule's split
// then runs as planned, as the oracle's does, and the table shows how good
// the split itself is (the multidimensional-solvers paper's setting); with
// stealing on, idle PEs repair much of a split's error at the end. --quick runs
// a small grid (the CTest smoke test, bench-repeated-quick); it and the full
// run exit with status 1 when any result is wrong.
//
//===----------------------------------------------------------------------===//

#include "coexec_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace fpm::bench;

/// The target: auto within this factor of the oracle's time.
constexpr double Tolerance = 1.05;

struct Options {
  bool quick = false;
  bool steal = true;
  int calls = 15;
  int stencilRows = 8192;
  int stencilColumns = 4096;
};

/// One schedule's calls.
struct Series {
  const char *schedule;
  std::vector<double> times;
  std::vector<double> openClShares;
};

/// Per call, the median of `ratios` over the calls around it (one before,
/// one after, where there are): one call's time varies by several per
/// cent on a shared (virtual) machine, the oracle's as much.
std::vector<double> smoothed(const std::vector<double> &ratios) {
  std::vector<double> result;
  for (std::size_t k = 0; k < ratios.size(); ++k)
    result.push_back(median(
        {ratios.begin() + static_cast<std::ptrdiff_t>(k > 0 ? k - 1 : 0),
         ratios.begin() +
             static_cast<std::ptrdiff_t>(std::min(k + 2, ratios.size()))}));
  return result;
}

/// The first call (from 1) from which every later ratio is within the
/// tolerance, or 0 when the last is not.
int settledFrom(const std::vector<double> &ratios) {
  int from = 0;
  for (std::size_t call = 0; call < ratios.size(); ++call)
    if (ratios[call] > Tolerance)
      from = 0;
    else if (from == 0)
      from = static_cast<int>(call) + 1;
  return from;
}

bool run(const Options &options) {
  Stencil stencil(options.stencilRows, options.stencilColumns);
  Bench bench(stencil, options.quick);
  const Clock::time_point started = Clock::now();
  const CpuUse before = CpuUse::now();
  const auto rows = static_cast<double>(stencil.rows);

  std::vector<Series> series = {
      {"auto", {}, {}}, {"equal", {}, {}}, {"cpm", {}, {}}};
  auto call = [&](const std::string &name, const char *schedule, Series *into) {
    std::int64_t cpuRows = 0;
    const double seconds = bench.fpmCall(std::string("fpm ") + schedule, name,
                                         "all", schedule, cpuRows);
    if (into) {
      into->times.push_back(seconds);
      into->openClShares.push_back(1 - static_cast<double>(cpuRows) / rows);
    }
  };
  // Warm-up under other names: the loops measured below start cold in
  // the runtime (no speeds, no models) but not in PoCL.
  for (const Series &warm : series)
    call(bench.loopName(std::string("repeated.warm.") + warm.schedule),
         warm.schedule, nullptr);

  SplitRunner runner(bench);
  const Oracle oracle = findOracle(bench, runner);
  std::vector<std::vector<double>> candidateTimes(oracle.candidates.size());
  for (int round = 0; round < options.calls; ++round) {
    // Each round starts with another schedule: none always runs right
    // after the oracle's threads.
    for (std::size_t i = 0; i < series.size(); ++i) {
      Series &schedule =
          series[(i + static_cast<std::size_t>(round)) % series.size()];
      call(bench.loopName(std::string("repeated.") + schedule.schedule),
           schedule.schedule, &schedule);
    }
    setDeviceUnits("1");
    for (std::size_t c = 0; c < oracle.candidates.size(); ++c) {
      candidateTimes[c].push_back(runner.run(oracle.candidates[c]));
      bench.verify("oracle split " + std::to_string(oracle.candidates[c]));
    }
    setDeviceUnits(nullptr);
  }
  std::size_t best = 0;
  for (std::size_t c = 1; c < candidateTimes.size(); ++c)
    if (median(candidateTimes[c]) < median(candidateTimes[best]))
      best = c;
  const std::vector<double> &oracleTimes = candidateTimes[best];
  const double oracleShare =
      static_cast<double>(oracle.candidates[best]) / rows;

  std::printf("### %s, called %d times\n\n", stencil.title.c_str(),
              options.calls);
  std::vector<double> ratios;
  for (int k = 0; k < options.calls; ++k)
    ratios.push_back(series[0].times[k] / oracleTimes[k]);
  const std::vector<double> around = smoothed(ratios);
  std::printf("| call | auto ms | auto OpenCL | equal ms | equal OpenCL | "
              "cpm ms | cpm OpenCL | oracle ms | auto / oracle | median of 3 "
              "|\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
              "---: | ---: |\n");
  for (int k = 0; k < options.calls; ++k) {
    std::printf("| %d |", k + 1);
    for (const Series &schedule : series)
      std::printf(" %s | %.1f%% |", milliseconds(schedule.times[k]).c_str(),
                  100 * schedule.openClShares[k]);
    std::printf(" %s | %.3f | %.3f |\n", milliseconds(oracleTimes[k]).c_str(),
                ratios[k], around[k]);
  }
  std::printf("\noracle: static split, OpenCL share %.2f, median %s ms "
              "(the sweep's best %zu splits in the rounds)\n",
              oracleShare, milliseconds(median(oracleTimes)).c_str(),
              oracle.candidates.size());
  std::printf("oracle sweep, %d splits (OpenCL share: ms):", oracle.points);
  for (const auto &[split, seconds] : oracle.sweep)
    std::printf(" %.2f: %s", static_cast<double>(split) / rows,
                milliseconds(seconds).c_str());
  std::printf("\n");
  // The noise floor: how often the oracle split itself is within the
  // tolerance of its own median.
  int steady = 0;
  for (double seconds : oracleTimes)
    steady += seconds <= Tolerance * median(oracleTimes) ? 1 : 0;
  std::printf("noise: the oracle split's calls within %.0f%% of their "
              "median: %d of %d\n",
              (Tolerance - 1) * 100, steady, options.calls);
  for (const Series &schedule : series) {
    // From the second call: auto's first measures, cpm's first knows no
    // speeds.
    std::vector<double> later, shares;
    for (int k = 1; k < options.calls; ++k) {
      later.push_back(schedule.times[k] / oracleTimes[k]);
      shares.push_back(schedule.openClShares[k]);
    }
    std::printf("%s, calls 2-%d: median time / oracle %.3f, median OpenCL "
                "share %.1f%%\n",
                schedule.schedule, options.calls, median(later),
                100 * median(shares));
  }
  const int settled = settledFrom(around);
  if (settled > 0)
    std::printf("auto within %.0f%% of the oracle (median of 3 calls) from "
                "call %d on%s\n",
                (Tolerance - 1) * 100, settled,
                settled <= 5 ? " (target: by call 5)"
                             : " (target: by call 5, missed)");
  else
    std::printf("auto not within %.0f%% of the oracle (median of 3 calls) "
                "at the last call\n",
                (Tolerance - 1) * 100);
  std::printf("%s\n\n", machineNote(before, started).c_str());
  std::fflush(stdout);
  return bench.ok;
}

} // namespace

int main(int argc, char **argv) {
  program = "fpm-bench-repeated";
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      options.quick = true;
      options.calls = 6;
      options.stencilRows = 256;
      options.stencilColumns = 256;
    } else if (std::strcmp(argv[i], "--no-steal") == 0) {
      options.steal = false;
    } else if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      options.calls = std::max(2, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--stencil") == 0 && i + 2 < argc) {
      options.stencilRows = std::max(64, std::atoi(argv[++i]));
      options.stencilColumns = std::max(3, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: fpm-bench-repeated [--quick] [--no-steal] "
                           "[--calls N] [--stencil M N]\n");
      return 2;
    }
  }
  for (const char *variable : {"FPM_DEVICES", "FPM_SCHEDULE", "FPM_STEAL"})
    if (std::getenv(variable)) {
      std::fprintf(stderr, "fpm-bench-repeated: ignoring %s\n", variable);
      unsetenv(variable);
    }
  const PrivateProfiles profiles;
  if (!cpuDevice()) {
    std::printf("fpm-bench-repeated: no CPU OpenCL device (PoCL): skipped\n");
    return 77; // CTest's SKIP_RETURN_CODE
  }
  setDeviceUnits(nullptr);
  if (!options.steal)
    setenv("FPM_STEAL", "0", 1);
  omp_set_num_threads(2);
  std::printf("fpm-bench-repeated: %d cores, %d calls per schedule after a "
              "warm-up%s%s\n\n",
              omp_get_num_procs(), options.calls,
              options.quick ? " (--quick)" : "",
              options.steal ? "" : ", tail stealing off (FPM_STEAL=0)");
  if (omp_get_num_procs() != 2)
    std::printf("(written for 2 cores: the co-execution configuration is a "
                "team of 2 threads)\n\n");
  const bool ok = run(options);
  if (!ok)
    std::fprintf(stderr, "fpm-bench-repeated: some results were wrong\n");
  return ok ? 0 : 1;
}
