//===- benchmark/overhead.cpp - fpm_parallel_for against OpenMP -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What one fpm loop costs over the same loop under `#pragma omp parallel
// for`, both on the same libomp team in this process: for each workload, the
// time per loop call of OpenMP's schedule(static) (the baseline) and of the
// others as ratios to it. Rounds alternate the variants, and each variant's
// median round is reported, so that frequency drift and noise hit all alike.
// Prints a markdown table. Read each fpm column against the OpenMP column
// left of it: equal and wdah against static, pss against dynamic (chunk 1),
// css(1000) against dynamic,1000, gss against guided. The fpm loops are named,
// so online profiling runs as in a program; its profiles go to a scratch
// folder (one name times three bodies: no program should read them).
//
//   fpm-bench-overhead [--quick] [--rounds R] [--busy-neighbour]
//
// With --busy-neighbour, a thread of this process spins beside the team for
// the whole run, as another program would on one core, and `fpm auto` is
// measured too: equal shares until it sees one thread run slower, then
// self-scheduled chunks.
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

/// One workload: `iterations` iterations of a body, the loop called `calls`
/// times per round.
struct Workload {
  std::string name;
  std::int64_t iterations;
  int calls;
  int kind; // 0 empty, 1 cheap, 2 heavy
};

std::vector<double> data;

/// The iteration bodies, the same code under OpenMP and fpm.
inline void cheap(std::int64_t i) {
  data[static_cast<std::size_t>(i)] =
      data[static_cast<std::size_t>(i)] * 0.999 + 1.0;
}
inline void heavy(std::int64_t i) {
  double x = data[static_cast<std::size_t>(i)];
  for (int k = 0; k < 64; ++k)
    x = std::sqrt(x + static_cast<double>(k));
  data[static_cast<std::size_t>(i)] = x;
}

/// Iteration i of workload Kind (0 empty, 1 cheap, 2 heavy).
template <int Kind> inline void body(std::int64_t i) {
  if constexpr (Kind == 1)
    cheap(i);
  else if constexpr (Kind == 2)
    heavy(i);
}

template <int Kind> int fpmBody(std::int64_t begin, std::int64_t end, void *) {
  for (std::int64_t i = begin; i < end; ++i) {
    body<Kind>(i);
  }
  return 0;
}

template <int Kind> void ompStatic(std::int64_t n) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    body<Kind>(i);
  }
}

template <int Kind> void ompDynamic(std::int64_t n) {
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t i = 0; i < n; ++i) {
    body<Kind>(i);
  }
}

template <int Kind> void ompDynamic1000(std::int64_t n) {
#pragma omp parallel for schedule(dynamic, 1000)
  for (std::int64_t i = 0; i < n; ++i) {
    body<Kind>(i);
  }
}

template <int Kind> void ompGuided(std::int64_t n) {
#pragma omp parallel for schedule(guided)
  for (std::int64_t i = 0; i < n; ++i) {
    body<Kind>(i);
  }
}

using Runner = std::function<void(std::int64_t)>;

template <int Kind> Runner fpmRunner(const char *schedule) {
  return [schedule](std::int64_t n) {
    // The same loop object every call, as the rewriter emits it (static).
    static thread_local fpm_loop loop{};
    loop.name = "bench";
    loop.schedule = schedule;
    if (fpm_parallel_for(&loop, n, fpmBody<Kind>, nullptr) != FPM_OK) {
      std::fprintf(stderr, "fpm-bench-overhead: %s\n", fpm_last_error());
      std::exit(1);
    }
  };
}

/// The scratch profile folder, removed at exit after the runtime's last
/// flush (atexit handlers run last registered first, and this one is
/// registered before the first loop).
std::string scratchProfiles;
void removeScratchProfiles() {
  std::error_code ignored;
  std::filesystem::remove_all(scratchProfiles, ignored);
}

struct Variant {
  std::string name;
  Runner runners[3];
  /// Calls divided by this: schedule(dynamic)'s one-iteration chunks make
  /// a cheap 1e5-iteration loop a thousand times slower.
  int callDivisor = 1;
};

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  bool busyNeighbour = false;
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
      rounds = 3;
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--busy-neighbour") == 0) {
      busyNeighbour = true;
    } else {
      std::fprintf(stderr, "usage: fpm-bench-overhead [--quick] [--rounds R] "
                           "[--busy-neighbour]\n");
      return 2;
    }
  }
  scratchProfiles =
      (std::filesystem::temp_directory_path() / "fpm-bench-overhead-XXXXXX")
          .string();
  if (!::mkdtemp(scratchProfiles.data())) {
    std::fprintf(stderr, "fpm-bench-overhead: cannot create a temporary "
                         "profile folder\n");
    return 1;
  }
  setenv("FPM_PROFILE_DIR", scratchProfiles.c_str(), 1);
  std::atexit(removeScratchProfiles);

  const int scale = quick ? 10 : 1;
  const std::vector<Workload> workloads = {
      {"empty body, 1e5 iterations", 100000, 10000 / scale, 0},
      {"cheap body (a[i] = a[i]*c + 1), 1e5 iterations", 100000, 10000 / scale,
       1},
      {"cheap body, 1e3 iterations", 1000, 10000 / scale, 1},
      {"heavy body (64 sqrt), 1e5 iterations", 100000, std::max(2, 50 / scale),
       2},
  };
  data.assign(100000, 1.0);

  std::vector<Variant> variants = {
      {"omp static", {ompStatic<0>, ompStatic<1>, ompStatic<2>}},
      {"fpm equal",
       {fpmRunner<0>("equal"), fpmRunner<1>("equal"), fpmRunner<2>("equal")}},
      {"fpm wdah",
       {fpmRunner<0>("wdah"), fpmRunner<1>("wdah"), fpmRunner<2>("wdah")}},
      {"omp dynamic", {ompDynamic<0>, ompDynamic<1>, ompDynamic<2>}, 100},
      {"fpm pss",
       {fpmRunner<0>("pss"), fpmRunner<1>("pss"), fpmRunner<2>("pss")},
       100},
      {"omp dynamic,1000",
       {ompDynamic1000<0>, ompDynamic1000<1>, ompDynamic1000<2>}},
      {"fpm css(1000)",
       {fpmRunner<0>("css(1000)"), fpmRunner<1>("css(1000)"),
        fpmRunner<2>("css(1000)")}},
      {"omp guided", {ompGuided<0>, ompGuided<1>, ompGuided<2>}},
      {"fpm gss",
       {fpmRunner<0>("gss"), fpmRunner<1>("gss"), fpmRunner<2>("gss")}},
  };

  std::atomic<bool> running{true};
  std::thread neighbour;
  if (busyNeighbour) {
    variants.insert(
        variants.begin() + 2,
        {"fpm auto",
         {fpmRunner<0>("auto"), fpmRunner<1>("auto"), fpmRunner<2>("auto")}});
    neighbour = std::thread([&] {
      volatile double x = 1;
      while (running.load(std::memory_order_relaxed))
        x = x * 1.0000001 + 1e-9;
    });
  }
  std::printf("fpm-bench-overhead: %d OpenMP threads%s, %d rounds%s; time per "
              "loop call (median round), ratio to omp static\n\n",
              omp_get_max_threads(),
              busyNeighbour ? " and a busy neighbour thread" : "", rounds,
              quick ? " (--quick)" : "");
  std::printf("| workload | calls | omp static |");
  for (std::size_t v = 1; v < variants.size(); ++v)
    std::printf(" %s |", variants[v].name.c_str());
  std::printf("\n| --- | ---: | ---: |");
  for (std::size_t v = 1; v < variants.size(); ++v)
    std::printf(" ---: |");
  std::printf("\n");

  for (const Workload &workload : workloads) {
    std::vector<std::vector<double>> seconds(variants.size());
    for (int round = 0; round < rounds; ++round)
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const Runner &run = variants[v].runners[workload.kind];
        const int calls = std::max(1, workload.calls / variants[v].callDivisor);
        run(workload.iterations); // warm: the team, the plan cache
        const Clock::time_point start = Clock::now();
        for (int call = 0; call < calls; ++call)
          run(workload.iterations);
        seconds[v].push_back(
            std::chrono::duration<double>(Clock::now() - start).count() /
            calls);
      }
    std::vector<double> median;
    for (std::vector<double> &times : seconds) {
      std::sort(times.begin(), times.end());
      median.push_back(times[times.size() / 2]);
    }
    std::printf("| %s | %d | %.2f us |", workload.name.c_str(), workload.calls,
                median[0] * 1e6);
    for (std::size_t v = 1; v < variants.size(); ++v)
      std::printf(" %.2fx |", median[v] / median[0]);
    std::printf("\n");
    std::fflush(stdout);
  }
  running = false;
  if (neighbour.joinable())
    neighbour.join();
  return 0;
}
