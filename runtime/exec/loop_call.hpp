//===- exec/loop_call.hpp - One call of a loop -----------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoopCall: everything the executor is told about one call of a loop, as
// the C API (api/fpm.cpp) fills it in, and the names it goes by.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "exec/devices.hpp"
#include "fpm/fpm.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fpm {

class ReductionPartials;

/// Runs logical iterations [begin, end); non-zero asks the loop to stop.
/// Must not throw (it is called from inside an OpenMP region).
using LoopBody = fpm_body_fn;

/// One call of a loop.
struct LoopCall {
  // Where the loop is, for messages; any may be empty / 0.
  std::string_view name;
  std::string_view file;
  int line = 0;

  /// The schedule string (parseLoopSchedule()); empty is "auto".
  std::string_view schedule;
  /// The minimal package in iterations; 0 lets the runtime choose (1 for
  /// self-scheduling; for static partitioners 1, or coarser so that they
  /// see at most 2^20 granules, 1024 for the exact solvers: exec/plan.hpp).
  std::int64_t grain = 0;
  std::int64_t tripCount = 0; ///< T >= 0
  /// The iterations this call runs: all of [0, T) when unset, else a part
  /// of them (each node of a cluster runs its own). Sections stay those of
  /// the whole loop, indexed by logical iteration.
  std::optional<Range> part;

  LoopBody body = nullptr;
  void *context = nullptr;

  /// The arrays the iterations read and write (fpm_loop::data), checked by
  /// checkLoopData(); empty when the loop did not say.
  std::span<const fpm_arg> data;
  /// The devices' side (an OpenCL kernel), or null for a CPU-only loop.
  const KernelSpec *kernel = nullptr;
  /// Where a device's ranges put their reductions' partial results (the
  /// CPU's do it in `body`, runReduceChunk); null without reductions.
  ReductionPartials *reductions = nullptr;
  /// The PEs that may take part (with a kernel).
  DeviceSelection devices{true, true, {}, {}};

  /// Print on stderr, once per loop and split, how the loop was split.
  bool verbose = false;
  /// FPM_STEAL: whether idle PEs steal the tail of others' queues (with
  /// devices; a CPU team has no queues to steal from). Nothing: the
  /// default, they do.
  std::optional<bool> steal;
  /// Appended to that line (e.g. why the GPU PEs did not take part).
  std::string_view note;

  /// The iterations to run.
  Range iterations() const { return part.value_or(Range{0, tripCount}); }
};

enum class LoopStatus { Completed, Stopped };

/// "loop 'NAME' (FILE:LINE)" for messages ("(unnamed)" without a name, no
/// place without a file).
std::string loopLabel(const LoopCall &call);

/// The number of CPU PEs a loop started now would use: the OpenMP team size
/// (OMP_NUM_THREADS, omp_set_num_threads), or 1 inside a region that cannot
/// nest another.
int cpuThreads();

} // namespace fpm
