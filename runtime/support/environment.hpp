//===- support/environment.hpp - FPM_* variables, read one way -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the one place the runtime reads its environment.
// A loop call reads every variable that tunes it once, at its start
// (readLoopEnvironment(), and readDeviceEnvironment() when devices take
// part; a program may change them between loops), and hands the values
// down; the process-wide ones (FPM_TRACE, FPM_PROFILE_DIR, FPM_CACHE_DIR)
// and those that tune one kind of device (device/opencl/: FPM_OPENCL_*)
// are read where they are used, through the same readers. Unset or empty is
// "not set", and a malformed value is an error naming the variable, never a
// silent default.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string_view>

namespace fpm {

/// The variables a loop call reads (docs/pragma.md), read and checked
/// together. Texts are empty when unset; they point into the environment
/// and live until it changes.
struct LoopEnvironment {
  std::string_view schedule;  ///< FPM_SCHEDULE
  std::string_view devices;   ///< FPM_DEVICES
  bool verbose = false;       ///< FPM_VERBOSE
  std::optional<bool> steal;  ///< FPM_STEAL
  std::string_view benchmark; ///< FPM_BENCHMARK (fpm-profile's protocol)
  bool checkData = false;     ///< FPM_CHECK_DATA
};

/// Reads them. Throws std::invalid_argument naming the first malformed
/// one.
LoopEnvironment readLoopEnvironment();

/// The variables that tune every kind of device, read once per call that
/// uses devices (a CPU-only call does not pay for them).
struct DeviceEnvironment {
  std::string_view injectFault; ///< FPM_INJECT_FAULT (device/faults)
};

/// Reads them, as readLoopEnvironment() does.
DeviceEnvironment readDeviceEnvironment();

/// The variables of libfpmrt-mpi (runtime/mpi/), read when a process joins
/// a cluster loop.
struct MpiEnvironment {
  /// FPM_MPI_ALL_STDOUT: keep every rank's stdout (default: only rank 0's,
  /// for a pragma program whose loops the runtime spreads over the ranks).
  bool allStdout = false;
  /// FPM_TEST_SLOW_RANK=r:f (tests only): rank r runs f >= 1 times slower
  /// than it does (it sleeps f-1 times each part's time after it).
  struct SlowRank {
    long rank = 0;
    double factor = 1;
  };
  std::optional<SlowRank> slowRank;
  /// FPM_MPI_TIMEOUT: how many seconds a rank waits for the others to call
  /// the same loop before it aborts the job (a loop only some ranks reach).
  long timeoutSeconds = 60;
};
/// Reads them, as readLoopEnvironment() does.
MpiEnvironment readMpiEnvironment();

/// The value of environment variable `name`, or null when it is unset or
/// empty: an empty value counts as unset everywhere (as the XDG
/// specification asks of its variables).
const char *textFromEnvironment(const char *name);

/// The integer in environment variable `name`, nothing when it is unset or
/// empty. Throws std::invalid_argument naming the variable when it is not
/// an integer in [low, high].
std::optional<long> integerFromEnvironment(const char *name, long low,
                                           long high);

/// The on/off in environment variable `name`: 1, yes, true or on; 0, no,
/// false or off, in any case; nothing when it is unset or empty. Throws
/// std::invalid_argument naming the variable for anything else.
std::optional<bool> flagFromEnvironment(const char *name);

} // namespace fpm
