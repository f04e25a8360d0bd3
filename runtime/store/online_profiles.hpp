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
// Two ways in: recordProfile() for coarse chunks (co-execution), and a
// ProfileRecorder for calls too short and frequent to take a global lock
// each (the CPU-only executor).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include "store/profile_store.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fpm {

/// One chunk's size (iterations) and time (seconds) on a PE.
using Sample = std::pair<std::int64_t, double>;

/// The CPU PE as the store knows it: one OpenMP thread, whose profile both
/// executors and fpm-profile store (a team of c threads runs c*w
/// iterations in the time one thread takes for w), and its description.
inline constexpr std::string_view CpuProfileId = "cpu";
inline constexpr std::string_view CpuProfileName = "1 OpenMP thread";

/// The stored profile of `loop` on PE `device` in profileDirectory(), read
/// once per process (a bad file is reported once and is nullopt).
std::optional<Profile> storedProfile(const std::string &loop,
                                     const std::string &device);

/// Adds chunk timings of `loop` on PE `device` (`deviceName` for people),
/// bucketed to `grain`. Thread-safe.
void recordProfile(const std::string &loop, const std::string &device,
                   const std::string &deviceName, std::int64_t grain,
                   std::span<const Sample> samples);

/// A named loop's online profile on one PE, for a hot path: looked up once
/// (profileRecorder()) and kept, then per call
///  - due() says whether to time this call, with one relaxed atomic load
///    when not: the loop's first call in the process is left out (it pays
///    for cold caches, first-touch page faults and the team's start), and
///    after it one call per RecordGap is timed, so that every call of a
///    loop that runs longer than that is recorded and shorter ones are
///    sampled at a bounded rate;
///  - record() adds the timed call's samples under this recorder's own
///    lock, never a global one (the periodic flush aside), to storage
///    allocated with the recorder: the latest BucketSamples times of each
///    of up to Buckets sizes (the size used least recently makes way for a
///    new one), so that a loop's calls never allocate.
/// Every flush (flushProfiles(), the one every 30 s, the one at exit)
/// merges what was recorded into the store, as robust means (Samples).
/// Thread-safe; never destroyed.
class ProfileRecorder {
public:
  /// Nanoseconds (trace::now()) between the starts of two timed calls.
  static constexpr std::int64_t RecordGap = 1'000'000;
  /// What is kept between two flushes: ~9 KiB a loop.
  static constexpr std::size_t Buckets = 32;
  static constexpr std::size_t BucketSamples = 32;

  ProfileRecorder(std::string loop, std::string device, std::string deviceName);
  ProfileRecorder(const ProfileRecorder &) = delete;
  ProfileRecorder &operator=(const ProfileRecorder &) = delete;

  const std::string &loop() const { return loop_; }
  const std::string &device() const { return device_; }
  const std::string &deviceName() const { return deviceName_; }

  /// Whether the call that starts at `now` (trace::now()) is to be timed;
  /// true for at most one of the calls that ask within RecordGap.
  bool due(std::int64_t now) {
    std::int64_t next = next_.load(std::memory_order_relaxed);
    if (now < next || !next_.compare_exchange_strong(next, now + RecordGap,
                                                     std::memory_order_relaxed))
      return false;
    return next != FirstCall;
  }

  /// Adds one timed call's samples: (iterations, seconds) of each of its
  /// workers; empty ones (a worker that ran nothing) are skipped. A size is
  /// rounded to the nearest multiple of `grain` and, from 32 grains on, to
  /// 5 significant bits of grains (within 3.2%), its time scaled alike, so
  /// that a loop whose calls split differently every time (self-
  /// scheduling) keeps a bounded profile: at most 16 points per doubling.
  /// `now` is when the call ended, for the periodic flush.
  void record(std::int64_t grain, std::span<const Sample> samples,
              std::int64_t now);

  /// The points of everything recorded since the last take(), which
  /// forgets it: a flush's work.
  std::vector<ProfilePoint> take();

private:
  static constexpr std::int64_t FirstCall =
      std::numeric_limits<std::int64_t>::min();

  /// The times of one bucketed size since the last flush.
  struct Bucket {
    std::int64_t size = 0; ///< 0: free
    std::uint64_t lastUse = 0;
    std::size_t count = 0; ///< valid entries of `seconds`
    std::size_t next = 0;  ///< the entry the next time replaces, once full
    std::array<double, BucketSamples> seconds{};
  };

  void add(std::int64_t size, double seconds);

  const std::string loop_, device_, deviceName_;
  std::atomic<std::int64_t> next_{FirstCall}; ///< when the next call is due
  std::mutex mutex_;
  // Guarded by mutex_.
  std::array<Bucket, Buckets> buckets_{};
  std::uint64_t clock_ = 0;
};

/// The recorder of `loop` on PE `device` (`deviceName` for people), made on
/// the first request and the same one ever after. Takes a global lock:
/// callers keep what it returns.
ProfileRecorder &profileRecorder(std::string_view loop, std::string_view device,
                                 std::string_view deviceName);

/// Merges every timing recorded so far into the store now (as happens at
/// exit): for tests and tools. A store that cannot be written is reported
/// once on stderr.
void flushProfiles();

} // namespace fpm
