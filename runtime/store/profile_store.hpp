//===- store/profile_store.hpp - Profiles kept across runs -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: the profile store, where the FPMs that runs
// measure are kept for later runs. It holds one fpm-profile/1 file per loop
// and processing element (PE) in a per-host folder, turns the package
// timings of a run into robust profile points, and merges them into the
// stored files so that concurrent processes (two programs, or an MPI job's
// ranks on one host) never lose each other's measurements.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace fpm {

/// The folder profiles live in: $FPM_PROFILE_DIR when set and non-empty,
/// else $XDG_CACHE_HOME/fpm/profiles/<host> (XDG_CACHE_HOME only when it is
/// an absolute path, as the XDG spec says), else
/// $HOME/.cache/fpm/profiles/<host>. The host name is part of the default
/// because the PEs, and so their speeds, differ between hosts that share a
/// home folder. Empty when none of these can be formed.
std::filesystem::path profileDirectory();

/// The file of one loop on one PE: `<loop>@<device>.json` in `dir`, where
/// every byte outside [A-Za-z0-9._-] (the '@' and '%' included) is written
/// as %XX. So every pair of names maps to its own file, reversibly, and a
/// name never reaches outside `dir`. A name whose encoding is longer than
/// 100 bytes is shortened to its first bytes, '~' and a 64-bit hash of it
/// (file names have at most 255 bytes); the file's `kernel` and `device`
/// fields still hold the whole names.
std::filesystem::path profilePath(const std::filesystem::path &dir,
                                  std::string_view loop,
                                  std::string_view device);

/// t_{0.975, df}: the two-sided 95% quantile of Student's t distribution.
/// From a table (9 digits) for df 1..30; beyond, the Cornish-Fisher
/// expansion around the normal 1.959964 to the 1/df^3 term, whose error is
/// below 2e-6 there and shrinks as 1/df^4. df < 1 has no quantile: 0.
double studentT975(std::int64_t df);

/// The package timings of one loop on one PE, in memory, by size bucket.
/// Not thread-safe: one PE's worker records into its own Samples.
class Samples {
public:
  /// Sizes are bucketed to multiples of `grain`; each bucket keeps the
  /// latest `capacity` samples (a ring), since the latest best describe
  /// the machine as it runs now (clock speed, neighbours).
  explicit Samples(std::int64_t grain = 1, std::size_t capacity = 64);

  /// Records that `size` work units took `seconds`. The size is rounded to
  /// the nearest multiple of the grain (at least one grain) and the time
  /// scaled by bucket / size, so that every sample of a bucket estimates
  /// the time of the bucket's size, as a profile point's time must. A
  /// non-positive size, or a time that is not finite and > 0 or so small
  /// that the speed is infinite, cannot be in a profile and is dropped.
  void add(std::int64_t size, double seconds);

  /// One point per bucket, in increasing size, with a robust mean: samples
  /// above median + 3 * 1.4826 * MAD (above 3 * median when the MAD is 0)
  /// are discarded as outliers (a page fault, a busy neighbour) and the
  /// rest averaged; `reps` is the number kept and `ci` the Student-t 95%
  /// half-width t_{0.975, reps-1} * s / sqrt(reps), absent for reps == 1.
  std::vector<ProfilePoint> summarize() const;

  /// Forgets every sample, as after the points were merged into the store,
  /// so that they are not counted twice.
  void clear() { buckets_.clear(); }
  bool empty() const { return buckets_.empty(); }
  std::int64_t grain() const { return grain_; }

private:
  struct Bucket {
    std::vector<double> seconds; ///< at most capacity_, a ring
    std::size_t next = 0;        ///< the slot the next sample replaces
  };
  std::int64_t grain_;
  std::size_t capacity_;
  std::map<std::int64_t, Bucket> buckets_;
};

/// `stored` with `fresh` merged in. Points of equal size are pooled: reps
/// add up (a point without reps counts as one), the mean is weighted by
/// reps, and ci is the Student-t 95% half-width of the pooled sample, whose
/// variance comes from each side's standard deviation (recovered from its
/// ci and reps) and the spread of the two means; a side without ci (or
/// with reps 1) contributes its mean only. As the format asks, it
/// saturates rather than make what its reader refuses: reps stop at
/// INT64_MAX, and a ci too large for a double is the largest double. Points
/// of new sizes are inserted in order. Throws std::invalid_argument for a
/// fresh point that cannot be in a profile (size <= 0, time not finite and
/// > 0, reps < 1, ci not finite and >= 0).
Profile mergeProfiles(const Profile &stored,
                      std::span<const ProfilePoint> fresh);

/// The profiles of one folder.
class ProfileStore {
public:
  explicit ProfileStore(std::filesystem::path dir);

  const std::filesystem::path &directory() const { return dir_; }

  /// The stored profile of `loop` on `device`, or nullopt. A missing file
  /// is nullopt silently. A file that is corrupt, of another format, or of
  /// another kernel or device is reported once per file and process on
  /// stderr as "fpm: FILE: PROBLEM; ignoring it", and is nullopt: the loop
  /// then runs with a model-free schedule.
  std::optional<Profile> load(std::string_view loop, std::string_view device);

  /// Merges `fresh` into the stored profile of `loop` on `device` (see
  /// mergeProfiles), under an exclusive lock that holds off every other
  /// merge of the same file in any process or thread: create the folder,
  /// lock, re-read, merge, write atomically, unlock. A lock another process
  /// holds for FPM_PROFILE_LOCK_WAIT seconds (5 by default; once per file
  /// and process) is reported once, and nothing is merged: profiles are a
  /// cache, and a stopped holder must not stop every later program. A
  /// stored file that
  /// cannot be read as this loop's profile is reported once, moved aside
  /// to FILE.corrupt for the user, and replaced. `deviceName` is the PE's
  /// description for people (kept from the file when empty); `host` is
  /// this host; `created` is kept from the file, or now. Throws
  /// ProfileError naming the file when it cannot be written.
  /// With `replace`, the stored points are dropped instead (the profile
  /// is made anew, as `fpm-profile --fresh` asks when a loop changed).
  void merge(std::string_view loop, std::string_view device,
             std::string_view deviceName, std::span<const ProfilePoint> fresh,
             bool replace = false);

private:
  std::filesystem::path dir_;
};

} // namespace fpm
