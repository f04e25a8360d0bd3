//===- model/profile.hpp - The fpm-profile/1 file format --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One Profile is the discrete functional performance model (FPM) of one
// kernel on one processing element: measured (size, time) points. This header
// reads and writes it exactly as docs/profiles.md says.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

inline constexpr std::string_view ProfileFormat = "fpm-profile/1";

/// One measured point: `size` work units took `time` seconds on average.
struct ProfilePoint {
  std::int64_t size = 0;
  double time = 0;
  std::optional<std::int64_t> reps; ///< timed repetitions behind the mean
  std::optional<double> ci;         ///< half-width of its confidence interval

  /// Speed in work units per second, S(w) = w / T(w); finite in a valid
  /// profile (validate()).
  double speed() const { return static_cast<double>(size) / time; }
};

/// The FPM of one kernel on one processing element.
struct Profile {
  std::string kernel;
  std::string device;
  std::string deviceName; ///< optional metadata; empty when absent
  std::string host;
  std::string created;
  std::vector<ProfilePoint> points; ///< sizes strictly increasing

  std::int64_t smallestSize() const { return points.front().size; }
  std::int64_t largestSize() const { return points.back().size; }
};

/// Thrown for any file that breaks the format; what() names the file and
/// the problem, as "FILE: problem".
class ProfileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Checks a profile against the reading rules and returns the first problem,
/// or an empty string when it is valid. Besides the format's rules, a
/// point's speed size / time must be finite: a time such as 5e-324 is
/// refused, naming the point.
std::string validate(const Profile &profile);

/// Parses a profile from JSON text; `origin` names the source in errors.
Profile parseProfile(std::string_view json, const std::string &origin);

/// The largest profile file a reader reads: about 200,000 points, far more
/// than any run measures.
inline constexpr std::uintmax_t MaxProfileBytes = std::uintmax_t{16} << 20;

/// Reads and validates one profile file. Only a regular file (or a link to
/// one) of at most MaxProfileBytes is read: a FIFO, a device or a directory
/// of the name is an error naming it, never a hang. Throws ProfileError.
Profile readProfile(const std::filesystem::path &path);

/// Serialises a profile to JSON text (pretty, one point per line). A byte
/// of a name that is not part of valid UTF-8 is written as U+FFFD.
std::string formatProfile(const Profile &profile);

/// `text` as formatProfile() writes it and parseProfile() reads it back:
/// each byte that is not part of valid UTF-8 replaced by U+FFFD. A name
/// read from a file is compared with the storedText() of the name asked
/// for.
std::string storedText(std::string_view text);

/// Replaces `path` atomically: writes a temporary file in the same folder,
/// flushes it, then renames it over `path`. Throws ProfileError.
void writeProfile(const std::filesystem::path &path, const Profile &profile);

} // namespace fpm
