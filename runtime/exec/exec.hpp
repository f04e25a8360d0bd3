//===- exec/exec.hpp - Runs one loop over the PEs --------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: runLoop(), the executor behind fpm_parallel_for.
// See README.md here for how a call flows: plan (plan.hpp) → drivers
// (device/) → traces and profiles.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/loop_call.hpp"

namespace fpm {

/// Runs `call`'s iterations (all of them, or its part) and returns when
/// every chunk handed out has finished: all of them (Completed) or, once a
/// body returned non-zero, those already running (Stopped). Throws
/// std::invalid_argument, before anything runs, for a bad schedule, grain,
/// trip count or part.
///
/// With a kernel and devices selected, the CPU team and the devices
/// run it together (coexec.hpp); otherwise the CPU team alone. What the
/// CPU-only path costs: the parsed schedule and its plan (the chunk
/// generator of a self-scheduling scheme, a static partitioner's packages)
/// are cached per calling thread, keyed by (schedule, iterations, grain,
/// threads), so a loop called again with the same shape allocates nothing
/// and runs one OpenMP parallel region.
LoopStatus runLoop(const LoopCall &call);

} // namespace fpm
