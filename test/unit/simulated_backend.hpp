//===- unit/simulated_backend.hpp - A simulated device ----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the unit tests' own backend (device/backend.hpp),
// registered by test/unit/backends.def in fpm-unittests-simulated's
// runtime: "simulated", one device, sim0, that runs the loop's CPU body
// (DeviceRun::body) on its host thread, taking `slowdown` times as long
// as the body does, and fails where FPM_INJECT_FAULT says (sim0:k: before
// it runs its k-th range; sim0:0 before its first). It shows what a
// backend must do, and runs the executor's device paths without OpenCL.
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

} // namespace fpm::test
