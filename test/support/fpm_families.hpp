//===- support/fpm_families.hpp - Synthetic FPM families --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Synthetic functional performance models for tests and benchmarks, after the
// four FPM families of the WDAH thesis, 5.2.3: smooth, real (abrupt drops),
// semi-random (the speed shape of 3.4) and fully random. A family is a list
// of profiles, one per PE, a pure function of its arguments and the seed, so
// a failing case can be rebuilt from the four numbers that name it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fpm::test {

enum class Family {
  /// Speeds rise with size and saturate (x / (x + h)), one PE up to 10x
  /// faster than another: the thesis' "FFT smooth".
  Smooth,
  /// The smooth shape with abrupt drops: cliffs where a cache or memory
  /// level is exceeded, and single slow sizes, as in "FFT real".
  Real,
  /// Random, but shaped as section 3.4 asks: increasing and concave up to a
  /// peak, then decreasing or constant; a few percent of noise on top.
  SemiRandom,
  /// A random speed at every point, and random sizes: no shape at all.
  FullyRandom,
};

inline constexpr std::array AllFamilies = {
    Family::Smooth, Family::Real, Family::SemiRandom, Family::FullyRandom};

/// "smooth", "real", "semi-random" or "fully-random".
std::string_view familyName(Family family);
/// The family called `name`, or nothing.
std::optional<Family> parseFamily(std::string_view name);

/// The profiles of p PEs (devices "p0", "p1", ...). Every size is a multiple
/// of `granularity` no larger than `maxSize` (>= granularity); times are > 0.
/// The sizes are `points` multiples of the granularity (default: every one,
/// up to 64), spread evenly from the granularity to the largest multiple in
/// maxSize; FullyRandom draws them at random from those multiples instead.
/// PE j's profile depends on (family, maxSize, granularity, points, seed, j)
/// only, so the first PEs of a larger p are the PEs of a smaller one.
/// Throws std::invalid_argument on p < 1, granularity < 1,
/// maxSize < granularity or points < 0.
std::vector<Profile> makeFamily(Family family, int p, std::int64_t maxSize,
                                std::int64_t granularity, std::uint64_t seed,
                                int points = 0);

} // namespace fpm::test
