//===- exec/exec.hpp - Runs one loop over the PEs --------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: runLoop(), the executor behind fpm_parallel_for.
// It splits logical iterations [0, T) by a schedule string
// (schedule_string.hpp) across the PEs and runs every chunk, each iteration
// exactly once: on the threads of one OpenMP team, each a PE, when the loop
// has no OpenCL kernel or no device takes part; otherwise over the CPU team
// and the OpenCL devices together (coexec.hpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/devices.hpp"
#include "fpm/fpm.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fpm {

struct KernelSpec;
struct Partitioner;

/// Runs logical iterations [begin, end); non-zero asks the loop to stop.
/// Must not throw (it is called from inside an OpenMP region).
using LoopBody = int (*)(std::int64_t begin, std::int64_t end, void *context);

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
  /// see at most 2^20 granules, 1024 for the exact solvers).
  std::int64_t grain = 0;
  std::int64_t tripCount = 0; ///< T >= 0

  LoopBody body = nullptr;
  void *context = nullptr;

  /// The arrays the iterations read and write (fpm_loop::data), checked by
  /// checkLoopData(); empty when the loop did not say.
  std::span<const fpm_arg> data;
  /// The OpenCL side, or null for a CPU-only loop.
  const KernelSpec *kernel = nullptr;
  /// The PEs that may take part (with a kernel).
  DeviceSelection devices{true, true, {}, {}};
  /// When set, only this PE (its profile id, coexecutionPes()) runs the
  /// loop, configured as when all the selected PEs take part: fpm-profile's
  /// benchmarks. A device that fails then throws std::runtime_error once
  /// the call is over (its iterations still ran, on the CPU).
  std::string_view onlyPe;

  /// Print on stderr, once per loop and split, how the loop was split.
  bool verbose = false;
  /// FPM_STEAL: whether idle PEs steal the tail of others' queues (with
  /// OpenCL devices; a CPU team has no queues to steal from). Nothing: the
  /// default, they do.
  std::optional<bool> steal;
  /// Appended to that line (e.g. why the GPU PEs did not take part).
  std::string_view note;
};

enum class LoopStatus { Completed, Stopped };

/// Runs `call` and returns when every chunk handed out has finished: all of
/// them (Completed) or, once a body returned non-zero, those already running
/// (Stopped). Throws std::invalid_argument, before anything runs, for a bad
/// schedule, grain or trip count.
///
/// What it costs: the parsed schedule and the split (the chunk table of a
/// self-scheduling scheme, the distribution of a static partitioner) are
/// cached per calling thread, keyed by (schedule, T, grain, threads), so a
/// loop called again with the same shape allocates nothing and runs one
/// OpenMP parallel region.
LoopStatus runLoop(const LoopCall &call);

/// "loop 'NAME' (FILE:LINE)" for messages ("(unnamed)" without a name, no
/// place without a file).
std::string loopLabel(const LoopCall &call);

/// The granule a static partitioner works in for `tripCount` iterations:
/// the grain, or coarser so that it sees at most 2^20 granules (1024 for
/// the exact solvers), which it splits in milliseconds.
std::int64_t staticGranule(const Partitioner &partitioner,
                           std::int64_t tripCount, std::int64_t grain);

/// The number of CPU PEs a loop started now would use: the OpenMP team size
/// (OMP_NUM_THREADS, omp_set_num_threads), or 1 inside a region that cannot
/// nest another.
int cpuThreads();

} // namespace fpm
