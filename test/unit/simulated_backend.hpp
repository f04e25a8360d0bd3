//===- unit/simulated_backend.hpp - A simulated device ----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the unit tests' own backend (device/backend.hpp),
// registered by test/unit/backends.def in fpm-unittests-simulated's
// runtime: "simulated", one device, sim0, that runs the loop's CPU body
// (DeviceRun::body) on its host thread, in the host's memory, taking
// `slowdown` times as long as the body does and half a millisecond more
// (its launch), and fails where
// FPM_INJECT_FAULT says (sim0:k and sim0:k:wait: its k-th range fails
// before its body runs; sim0:0 before its first). It shows what a backend
// must do, and runs the executor's device paths, and the co-execution,
// fault, reduction and region suites (device_under_test.hpp), without
// OpenCL.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fpm {

class Backend;
/// The simulated backend (test/unit/backends.def's line).
Backend &simulatedBackend();

} // namespace fpm

namespace fpm::test {

/// Sets how many times as long as the CPU body sim0 takes per range, from
/// the next loop call on (>= 1).
void setSimulatedSlowdown(double slowdown);

/// The iterations sim0 has completed in this process.
std::int64_t simulatedIterations();

/// True on sim0's host thread while it runs a body: what the CPU team
/// runs and what sim0 runs are told apart by it, as a kernel's work is
/// by not running the body at all.
bool onSimulatedDevice();

} // namespace fpm::test
