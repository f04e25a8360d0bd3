//===- profiling/benchmark.hpp - fpm-profile inside the program -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: what `fpm-profile -- ./app` does inside the
// program. fpm-profile sets FPM_BENCHMARK; then the first call of each named
// loop, before it runs as usual, benchmarks the loop on each of its
// processing elements (PEs) over a ladder of sizes (multiples of the grain
// up to the trip count), repeating each size until the Student-t 95%
// confidence interval of its mean time is within a relative error, or a
// time limit is reached (as FuPerMod does), and merges the points into the
// loop's stored profiles.
//
// Benchmarking runs iterations more than once, so it first saves what the
// loop writes (the out and inout sections of fpm_loop::data, or the written
// arguments of its kernel) and puts it back after every run: the program's
// results do not change. A loop that does not say what it writes is not
// benchmarked; one line on stderr says so, and online profiling still
// records its runs.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "fpm/fpm.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fpm {

struct LoopCall;

/// How hard fpm-profile benchmarks: FPM_BENCHMARK's fields.
struct BenchmarkSettings {
  int points = 10;      ///< sizes per PE
  double error = 0.05;  ///< the CI's half-width / mean to stop at
  int minReps = 3;      ///< runs per size at least (if time allows)
  int maxReps = 30;     ///< and at most
  double seconds = 1.0; ///< per size: no new run starts after this
  double budget = 0;    ///< per loop and PE, 0: no limit
  bool fresh = false;   ///< replace the stored points instead of adding

  /// Reads "points=10,error=0.05,reps=3:30,time=1,budget=60,fresh=1" (any
  /// subset, in any order; "1" is every default). Throws std::invalid_argument
  /// naming the field.
  static BenchmarkSettings parse(std::string_view text);
  /// The text parse() reads back.
  std::string format() const;
};

/// The settings of FPM_BENCHMARK's `text` (LoopEnvironment::benchmark;
/// the C API reads it on every call, so that a program may switch it), or
/// nullopt when it is empty or "0". A value that cannot be read is reported
/// once on stderr and benchmarks nothing.
std::optional<BenchmarkSettings> benchmarkSettings(std::string_view text);

/// The sizes benchmarked on a PE that may get up to `maxSize` iterations:
/// up to `points` multiples of `grain`, spread geometrically from one grain
/// to maxSize (rounded down to a multiple of the grain), ascending, no
/// repeats. Empty when maxSize < grain.
std::vector<std::int64_t> benchmarkSizes(std::int64_t grain,
                                         std::int64_t maxSize, int points);

/// Benchmarks `call` as the header says, if its loop is named, was not
/// benchmarked before in this process, and says what it writes. Each loop
/// is benchmarked once per process, at its first call with at least one
/// iteration. Failures (a PE that fails, a store that cannot be written)
/// are reported on stderr and never reach the caller: the loop then runs as
/// usual.
void benchmarkLoop(const LoopCall &call, const BenchmarkSettings &settings);

} // namespace fpm
