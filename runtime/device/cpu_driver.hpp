//===- device/cpu_driver.hpp - CPU threads as a PE's workers ---*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The CPU driver: one thread of the CPU team, running the loop's compiled
// body over the ranges its feed gives it. A team is these, one per thread.
// CpuChunkRunner is how every CPU thread runs a chunk, whether a feed
// (runCpuDriver, co-execution) or the CPU-only executor's plan
// (exec/exec.cpp) gives it: the body, timed and traced when asked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "device/driver.hpp"
#include "fpm/fpm.h"
#include "trace/trace.hpp"

#include <cstdint>

namespace fpm {

/// One CPU thread's chunks of one call. Timed, it reads the clock around
/// each chunk and sums the thread's busy time (its chunks', not the gaps
/// between them: a thread that woke up late or waited to draw is not a
/// slow one); with a trace target, each chunk is a "cpu" chunk on its lane.
/// Allocates nothing: it runs on the executor's hot path.
class CpuChunkRunner {
public:
  /// `trace`, when set, outlives the runner and implies `timed`.
  CpuChunkRunner(fpm_body_fn body, void *context, bool timed,
                 const TraceTarget *trace)
      : body_(body), context_(context), timed_(timed || trace), trace_(trace) {}

  /// Runs `range`; returns the body's status (non-zero: stop the loop).
  int run(Range range) {
    iterations_ += range.size();
    if (!timed_)
      return body_(range.begin, range.end, context_);
    const std::int64_t start = trace::now();
    const int status = body_(range.begin, range.end, context_);
    const std::int64_t finish = trace::now();
    last_ = finish - start;
    busy_ += last_;
    if (trace_)
      trace::chunk(trace_->loop, trace_->lane, "cpu", range.begin, range.end,
                   start, finish);
    return status;
  }

  /// When timed: the last chunk's seconds, and all of them.
  double lastSeconds() const { return static_cast<double>(last_) * 1e-9; }
  double busySeconds() const { return static_cast<double>(busy_) * 1e-9; }
  /// The iterations of every chunk run.
  std::int64_t iterations() const { return iterations_; }

private:
  fpm_body_fn body_;
  void *context_;
  bool timed_;
  const TraceTarget *trace_;
  std::int64_t iterations_ = 0;
  std::int64_t busy_ = 0; ///< nanoseconds
  std::int64_t last_ = 0;
};

/// Runs `body` over ranges from `feed` until it has none left or a body
/// returns non-zero (returned then: the loop must stop). Each range is a
/// chunk in the trace, when `trace` is set.
int runCpuDriver(WorkFeed &feed, fpm_body_fn body, void *context,
                 const TraceTarget *trace);

} // namespace fpm
