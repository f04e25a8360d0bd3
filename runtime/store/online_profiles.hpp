//===- store/online_profiles.hpp - Profiles from running loops -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Online profiling: the executors hand in how long each chunk of a named
// loop took on its PE; the timings are kept in memory (Samples) and merged
// into the profile store (profile_store.hpp) at exit and at most every 30 s
// while loops run. The stored profiles of a loop are read once per process.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace fpm {

/// One chunk's size (iterations) and time (seconds) on a PE.
using Sample = std::pair<std::int64_t, double>;

/// The stored profile of `loop` on PE `device` in profileDirectory(), read
/// once per process (a bad file is reported once and is nullopt).
std::optional<Profile> storedProfile(const std::string &loop,
                                     const std::string &device);

/// Adds chunk timings of `loop` on PE `device` (`deviceName` for people),
/// bucketed to `grain`. Thread-safe.
void recordProfile(const std::string &loop, const std::string &device,
                   const std::string &deviceName, std::int64_t grain,
                   std::span<const Sample> samples);

/// Merges every timing recorded so far into the store now (as happens at
/// exit): for tests and tools. A store that cannot be written is reported
/// once on stderr.
void flushProfiles();

} // namespace fpm
