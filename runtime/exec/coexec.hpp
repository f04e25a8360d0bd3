//===- exec/coexec.hpp - One loop over CPU threads and devices -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: runCoexecution(), which runs one loop call split
// across the CPU team and devices (device/backend.hpp) at once. It opens the
// PEs (one host thread per device taken from the team; a device that shares
// the host's cores gets those the team leaves free, the autonomic-framework
// thesis, 4.1), asks the planner (plan.hpp) for the split by what the
// loop's PEs are known to run at, fills a WorkPool with it, and runs one
// OpenMP region whose threads are the PEs' drivers (device/). What they
// measured goes back into the loop's state (loop_state.hpp), its partial
// FPMs and its stored profiles.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/loop_call.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

/// Runs `call` (whose kernel and devices are set) over the CPU team and the
/// devices it selects. Returns nothing when no selected device can
/// be used (the caller then runs the loop on the CPU alone, with `note`
/// saying why); otherwise as runLoop().
std::optional<LoopStatus> runCoexecution(const LoopCall &call,
                                         std::string &note);

/// Runs `call` on the one PE `pe` (a LoopPe id) of those coexecutionPes()
/// gives, configured as when they all take part: a plan of one PE, for
/// fpm-profile's benchmarks. Throws std::runtime_error when the PE does not
/// take part, or when it failed (its iterations then still ran, on the
/// CPU).
LoopStatus runOnOnePe(const LoopCall &call, std::string_view pe);

} // namespace fpm
