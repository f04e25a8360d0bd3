//===- exec/loop_pes.hpp - The PEs a loop call runs on ----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Which PEs a co-executed loop call gets: the devices of every backend
// (device/backend.hpp) it selects that have not failed it before, opened
// (a device that shares the host's cores narrowed to those the CPU team
// leaves free, the autonomic-framework thesis, 4.1), one host thread each
// taken from the OpenMP team, and the CPU team with the threads left.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "device/backend.hpp"
#include "exec/loop_call.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fpm {

/// A PE a loop call runs on, as the profile store names it.
struct LoopPe {
  std::string id;   ///< "cpu" (one OpenMP thread), "opencl0", "opencl0.1cu"
  std::string name; ///< for people
  int threads = 1;  ///< the CPU team's threads, for "cpu"
  /// Its ranges start at multiples of this (PeDevice::alignment()).
  std::int64_t alignment = 1;
};

/// The devices a loop call runs on, opened, and the CPU team beside them.
struct LoopDevices {
  /// Empty: none usable (see the note).
  std::vector<std::unique_ptr<PeDevice>> devices;
  int cpuWorkers = 0; ///< the CPU PE's threads
  int team = 0;       ///< the whole team, host threads included
};

/// The devices `call` selects that run its kernel and did not fail for loop
/// `key` before, opened (a CPU device narrowed to the cores the CPU team
/// leaves free), one host thread each taken from the team. `note` says why
/// there are none. Throws std::invalid_argument when a variable that tunes
/// a device is malformed.
LoopDevices openLoopDevices(const LoopCall &call, const std::string &key,
                            std::string &note);

/// The PEs `call` (whose kernel and devices are set) would run on now: the
/// devices it selects that can be opened, then the CPU team when it takes
/// part. Empty when no device can be used (the loop then runs on the
/// CPU alone).
std::vector<LoopPe> coexecutionPes(const LoopCall &call);

/// Prints, once per process, the devices every backend found
/// (FPM_VERBOSE).
void describeDevicesOnce();

} // namespace fpm
