//===- benchmark/residency_mpi.cpp - What a data region saves across ranks ===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-bench-residency's heat time loop (residency_loops.c) with its loops
// routed across the ranks of an MPI job (fpm_rewrite_sources MPI), with and
// without `#pragma fpm data` around it. Per configuration, over the second
// half of the steps: the bytes of arrays a rank received from other ranks
// per step (the mean over ranks, and the most one rank received), beside
// the halo minimum (each sweep, a rank reads one row from each neighbour:
// four rows a step for a rank with two), and the median step time (the
// slowest rank's). Schedules across ranks: auto (the split follows
// measured speeds) and equal (a split that stays). Every rank's grids are
// checked against the serial loop's; a wrong result makes the exit status
// 1. Each rank's profiles go to a private folder, removed at the end.
//
//   mpirun -np 3 fpm-bench-residency-mpi [--size N] [--steps S]
//
//===----------------------------------------------------------------------===//

#include "residency_loops.h"

#include "mpi/section_broadcast.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace {

struct Run {
  std::vector<double> seconds;         ///< per step
  std::vector<std::uint64_t> received; ///< after each step
  double last = 0;
};

void afterStep(int, void *context) {
  Run &run = *static_cast<Run *>(context);
  const double now = MPI_Wtime();
  run.seconds.push_back(now - run.last);
  run.last = now;
  run.received.push_back(fpm::mpi::bytesReceived());
}

void initial(std::vector<double> &a, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[static_cast<std::size_t>(i) * n + j] = (i * 7 + j * 3) % 17;
}

/// residency_loops.c's sweep, serial and not routed: the reference.
void serialSweep(const std::vector<double> &from, std::vector<double> &to,
                 int n) {
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < n - 1; ++j) {
      const auto at = static_cast<std::size_t>(i) * n + j;
      to[at] =
          0.25 * (from[at - n] + from[at + n] + from[at - 1] + from[at + 1]);
    }
}

} // namespace

int main(int argc, char **argv) {
  int n = 512, steps = 60;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc) {
      n = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: mpirun -np R fpm-bench-residency-mpi "
                           "[--size N] [--steps S]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  char folder[] = "/tmp/fpm-bench-residency-mpi.XXXXXX";
  if (!mkdtemp(folder)) {
    std::perror("fpm-bench-residency-mpi: mkdtemp");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  setenv("FPM_PROFILE_DIR", folder, 1);
  setenv("FPM_DEVICES", "cpu", 1);
  const std::size_t cells = static_cast<std::size_t>(n) * n;
  std::vector<double> serialA(cells), serialB(cells);
  initial(serialA, n);
  initial(serialB, n);
  for (int t = 0; t < steps; ++t) {
    serialSweep(serialA, serialB, n);
    serialSweep(serialB, serialA, n);
  }
  const double rowBytes = n * sizeof(double);
  if (rank == 0) {
    std::printf("fpm-bench-residency-mpi: %d ranks, %d x %d grids of doubles "
                "(%.1f MiB each), %d steps; per step over the last %d\n",
                ranks, n, n, cells * sizeof(double) / 1048576.0, steps,
                steps / 2);
    std::printf("%-9s %-7s %16s %16s %16s %10s\n", "schedule", "region",
                "received (mean)", "most one rank", "halo (mean)", "step (ms)");
  }
  bool wrong = false;
  for (const char *schedule : {"auto", "equal"})
    for (int region : {0, 1}) {
      setenv("FPM_SCHEDULE", schedule, 1);
      std::vector<double> a(cells), b(cells);
      initial(a, n);
      initial(b, n);
      Run run;
      MPI_Barrier(MPI_COMM_WORLD);
      run.last = MPI_Wtime();
      heatRun(a.data(), b.data(), n, steps, region, afterStep, &run);
      const bool same = a == serialA && b == serialB;
      int anyWrong = !same;
      MPI_Allreduce(MPI_IN_PLACE, &anyWrong, 1, MPI_INT, MPI_MAX,
                    MPI_COMM_WORLD);
      wrong |= anyWrong != 0;
      const auto half = static_cast<std::size_t>(steps / 2);
      const double per = static_cast<double>(steps - half);
      const double mine =
          static_cast<double>(run.received.back() - run.received[half - 1]) /
          per;
      double total = 0, most = 0;
      MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Reduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      std::vector<double> slowest(run.seconds.size());
      MPI_Reduce(run.seconds.data(), slowest.data(),
                 static_cast<int>(run.seconds.size()), MPI_DOUBLE, MPI_MAX, 0,
                 MPI_COMM_WORLD);
      if (rank != 0)
        continue;
      std::vector<double> late(
          slowest.begin() + static_cast<std::ptrdiff_t>(half), slowest.end());
      std::nth_element(late.begin(), late.begin() + late.size() / 2,
                       late.end());
      // Two sweeps a step; a rank reads a row from each neighbour it has.
      const double halo = 2 * 2.0 * (ranks - 1) / ranks * rowBytes;
      std::printf("%-9s %-7s %14.0f B %14.0f B %14.0f B %10.3f%s\n", schedule,
                  region ? "data" : "none", total / ranks, most, halo,
                  late[late.size() / 2] * 1e3,
                  anyWrong ? "  WRONG: not the serial grids" : "");
    }
  std::filesystem::remove_all(folder);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
