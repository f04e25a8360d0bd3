//===- benchmark/residency.cpp - What a data region saves -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A 2-D heat time loop (residency_loops.c: two partitioned sweeps per step,
// generated kernels) with and without `#pragma fpm data` around it, on the
// OpenCL devices alone (FPM_DEVICES=gpu) and on one CPU thread and the
// devices (all). Per configuration, over the second half of the steps (the
// split settled): the bytes the drivers copied to and from the devices per
// step (deviceTraffic(): ranges, shared inputs, a region's stale parts and
// what the host asked back), the median time of a step, and the halo
// minimum beside them: with two PEs sharing the rows, each sweep's PEs read
// one row the other wrote, four rows a step (nothing on the devices alone).
// Schedules: auto (the split follows measured speeds, and moves) and
// equal with FPM_STEAL=0 (a split that stays). Every run's grids are
// checked against the serial loop's, bit for bit; a wrong result makes the
// exit status 1. Profiles go to a private folder, removed at the end.
//
//   fpm-bench-residency [--quick] [--size N] [--steps S] [--only PES]
//                       [--schedule auto|equal] [--region none|data]
//                       [--per-step]
//
// --only, --schedule and --region run those configurations alone;
// --per-step prints each step's bytes and time under its run's line.
//
// --quick (64 x 64, 6 steps) is the CTest test bench-residency-quick: it
// checks results, never times. Exit status 77 without an OpenCL device.
//
//===----------------------------------------------------------------------===//

#include "residency_loops.h"

#include "device/opencl/opencl.hpp"
#include "device/opencl/opencl_driver.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Run {
  std::vector<double> seconds;             ///< per step
  std::vector<fpm::DeviceTraffic> traffic; ///< after each step
  std::chrono::steady_clock::time_point last;
};

void afterStep(int, void *context) {
  Run &run = *static_cast<Run *>(context);
  const auto now = std::chrono::steady_clock::now();
  run.seconds.push_back(std::chrono::duration<double>(now - run.last).count());
  run.last = now;
  run.traffic.push_back(fpm::deviceTraffic());
}

void initial(std::vector<double> &a, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[static_cast<std::size_t>(i) * n + j] = (i * 7 + j * 3) % 17;
}

} // namespace

int main(int argc, char **argv) {
  int n = 512, steps = 60;
  bool quick = false;
  std::string only;         // gpu or all: those configurations alone
  std::string onlySchedule; // auto or equal: those alone
  int onlyRegion = -1;      // 0 (none) or 1 (data): those alone
  bool perStep = false;     // a line per step of each run
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
      n = 64;
      steps = 6;
    } else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) {
      n = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--schedule") && i + 1 < argc) {
      onlySchedule = argv[++i];
    } else if (!std::strcmp(argv[i], "--region") && i + 1 < argc) {
      onlyRegion = std::strcmp(argv[++i], "data") ? 0 : 1;
    } else if (!std::strcmp(argv[i], "--per-step")) {
      perStep = true;
    } else {
      std::fprintf(stderr,
                   "usage: fpm-bench-residency [--quick] [--size N] "
                   "[--steps S] [--only gpu|all] [--schedule auto|equal] "
                   "[--region none|data] [--per-step]\n");
      return 2;
    }
  }
  // Profiles of a folder of its own, empty: every run starts from the
  // same knowledge, and nothing reaches the user's store.
  char folder[] = "/tmp/fpm-bench-residency.XXXXXX";
  if (!mkdtemp(folder)) {
    std::perror("fpm-bench-residency: mkdtemp");
    return 1;
  }
  setenv("FPM_PROFILE_DIR", folder, 1);
  if (fpm::opencl::devices().empty()) {
    std::puts("fpm-bench-residency: no OpenCL device: skipped");
    return 77;
  }
  const std::size_t cells = static_cast<std::size_t>(n) * n;
  std::vector<double> serialA(cells), serialB(cells);
  initial(serialA, n);
  initial(serialB, n);
  {
    setenv("FPM_DEVICES", "cpu", 1);
    Run ignored;
    ignored.last = std::chrono::steady_clock::now();
    heatRun(serialA.data(), serialB.data(), n, steps, 0, afterStep, &ignored);
  }
  // Two threads: one CPU thread, one feeding the device under `all`.
  omp_set_num_threads(2);
  const double rowBytes = n * sizeof(double);
  std::printf("fpm-bench-residency: %d x %d grids of doubles (%.1f MiB "
              "each), %d steps; per step over the last %d\n",
              n, n, cells * sizeof(double) / 1048576.0, steps, steps / 2);
  std::printf("%-6s %-16s %-9s %14s %14s %14s %10s\n", "PEs", "schedule",
              "region", "to devices", "from devices", "halo minimum",
              "step (ms)");
  bool wrong = false;
  for (const char *devices : {"gpu", "all"})
    for (const char *schedule : {"auto", "equal"})
      for (int region : {0, 1}) {
        if ((!only.empty() && only != devices) ||
            (!onlySchedule.empty() && onlySchedule != schedule) ||
            (onlyRegion >= 0 && onlyRegion != region))
          continue;
        setenv("FPM_DEVICES", devices, 1);
        setenv("FPM_SCHEDULE", schedule, 1);
        setenv("FPM_STEAL", std::strcmp(schedule, "equal") ? "1" : "0", 1);
        std::vector<double> a(cells), b(cells);
        initial(a, n);
        initial(b, n);
        Run run;
        run.last = std::chrono::steady_clock::now();
        heatRun(a.data(), b.data(), n, steps, region, afterStep, &run);
        const bool same = a == serialA && b == serialB;
        wrong |= !same;
        const auto half = static_cast<std::size_t>(steps / 2);
        const fpm::DeviceTraffic from = run.traffic[half - 1];
        const fpm::DeviceTraffic to = run.traffic.back();
        const double per = static_cast<double>(steps - half);
        std::vector<double> late(run.seconds.begin() +
                                     static_cast<std::ptrdiff_t>(half),
                                 run.seconds.end());
        std::nth_element(late.begin(), late.begin() + late.size() / 2,
                         late.end());
        const double halo = std::strcmp(devices, "all") ? 0 : 4 * rowBytes;
        std::printf(
            "%-6s %-16s %-9s %12.0f B %12.0f B %12.0f B %10.3f%s\n", devices,
            std::strcmp(schedule, "equal") ? schedule : "equal, no steal",
            region ? "data" : "none",
            static_cast<double>(to.toDevices - from.toDevices) / per,
            static_cast<double>(to.fromDevices - from.fromDevices) / per, halo,
            late[late.size() / 2] * 1e3,
            same ? "" : "  WRONG: not the serial grids");
        if (perStep)
          for (std::size_t t = 0; t < run.traffic.size(); ++t) {
            const fpm::DeviceTraffic before =
                t ? run.traffic[t - 1] : fpm::DeviceTraffic{};
            std::printf("  step %3zu: %10llu B to, %10llu B from, %8.3f ms\n",
                        t,
                        static_cast<unsigned long long>(
                            run.traffic[t].toDevices - before.toDevices),
                        static_cast<unsigned long long>(
                            run.traffic[t].fromDevices - before.fromDevices),
                        run.seconds[t] * 1e3);
          }
      }
  (void)quick;
  std::filesystem::remove_all(folder);
  return wrong ? 1 : 0;
}
