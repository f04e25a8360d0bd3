//===- support/fpm_families.cpp - Synthetic FPM families ------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "support/fpm_families.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <string>

namespace fpm::test {
namespace {

/// Peak speeds are this many units per second times a PE's scale factor, so
/// that times come out between microseconds and seconds, like measured ones.
constexpr double BaseSpeed = 1e6;

/// splitmix64's finaliser: nearby seeds (1, 2, 3) and PE indices give
/// unrelated engines.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Draws from std::mt19937_64 with our own arithmetic: the engine's output
/// is fixed by the standard, the std:: distributions differ between
/// libraries, and a seed must name the same profiles everywhere.
class Random {
public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Log-uniform in [lo, hi): scale factors spread evenly over decades.
  double logUniform(double lo, double hi) {
    return lo * std::pow(hi / lo, uniform());
  }
  bool chance(double probability) { return uniform() < probability; }
  /// Uniform in [0, n), n >= 1, without modulo bias: draws below 2^64 mod n
  /// are the surplus that would favour small values.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t surplus = (0 - n) % n;
    for (;;)
      if (std::uint64_t r = engine_(); r >= surplus)
        return r % n;
  }

private:
  std::mt19937_64 engine_;
};

/// n of the multiples 1..k (in granules), evenly spread, the first being 1.
std::vector<std::int64_t> evenGranules(std::int64_t k, std::int64_t n) {
  std::vector<std::int64_t> granules;
  granules.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    granules.push_back(
        n == 1 ? 1 : 1 + (2 * i * (k - 1) + (n - 1)) / (2 * (n - 1)));
  return granules;
}

/// n of the multiples 1..k drawn at random, increasing (Knuth's selection
/// sampling: each is taken with the probability that keeps n in reach).
std::vector<std::int64_t> randomGranules(std::int64_t k, std::int64_t n,
                                         Random &random) {
  std::vector<std::int64_t> granules;
  granules.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 1; i <= k && std::ssize(granules) < n; ++i) {
    auto left = static_cast<std::uint64_t>(k - i + 1);
    auto wanted = static_cast<std::uint64_t>(n - std::ssize(granules));
    if (random.below(left) < wanted)
      granules.push_back(i);
  }
  return granules;
}

/// Rising and saturating: s(u) = peak * u / (u + h), scaled to reach peak at
/// u = 1. h, the half-saturation size, is where a PE's fixed cost (a kernel
/// launch, a thread fork) stops dominating.
struct Saturating {
  double peak;
  double h;

  explicit Saturating(Random &random)
      : peak(BaseSpeed * random.logUniform(1, 10)),
        h(random.logUniform(0.005, 0.3)) {}
  double operator()(double u) const { return peak * (1 + h) * u / (u + h); }
};

/// Speeds for the sizes u in (0, 1] (fractions of the largest size).
std::vector<double> speedsFor(Family family, std::span<const double> us,
                              Random &random) {
  std::vector<double> speeds;
  speeds.reserve(us.size());
  switch (family) {
  case Family::Smooth: {
    Saturating shape(random);
    for (double u : us)
      speeds.push_back(shape(u));
    break;
  }
  case Family::Real: {
    // Cliffs: past each, the working set has left a cache level (or the
    // device's memory) and every larger size is slower by a fixed factor.
    Saturating shape(random);
    struct Cliff {
      double at, factor;
    };
    std::vector<Cliff> cliffs(1 + random.below(3));
    for (Cliff &cliff : cliffs)
      cliff = {random.logUniform(0.05, 0.9), random.uniform(0.35, 0.8)};
    for (double u : us) {
      double speed = shape(u);
      for (const Cliff &cliff : cliffs)
        if (u > cliff.at)
          speed *= cliff.factor;
      // Single slow sizes, as FFT sizes with large prime factors are.
      if (random.chance(0.15))
        speed *= random.uniform(0.4, 0.85);
      speeds.push_back(speed * random.uniform(0.98, 1.02));
    }
    break;
  }
  case Family::SemiRandom: {
    // Section 3.4: increasing and concave on [0, top] (1 - (1 - u/top)^a
    // with a > 1, zero at 0, so a line through the origin meets it once),
    // then decreasing, or constant a quarter of the time.
    double peak = BaseSpeed * random.logUniform(1, 10);
    double top = random.uniform(0.15, 0.85);
    double a = random.uniform(1.5, 4);
    double fall = random.chance(0.25) ? 0 : random.uniform(0.1, 0.7);
    double b = random.uniform(0.7, 2);
    for (double u : us) {
      double speed =
          u <= top ? peak * (1 - std::pow(1 - u / top, a))
                   : peak * (1 - fall * std::pow((u - top) / (1 - top), b));
      speeds.push_back(speed * random.uniform(0.95, 1.05));
    }
    break;
  }
  case Family::FullyRandom: {
    double scale = BaseSpeed * random.logUniform(1, 10);
    for (std::size_t i = 0; i < us.size(); ++i)
      speeds.push_back(scale * random.logUniform(0.05, 1));
    break;
  }
  }
  return speeds;
}

} // namespace

std::string_view familyName(Family family) {
  switch (family) {
  case Family::Smooth:
    return "smooth";
  case Family::Real:
    return "real";
  case Family::SemiRandom:
    return "semi-random";
  case Family::FullyRandom:
    return "fully-random";
  }
  return "?";
}

std::optional<Family> parseFamily(std::string_view name) {
  for (Family family : AllFamilies)
    if (familyName(family) == name)
      return family;
  return std::nullopt;
}

std::vector<Profile> makeFamily(Family family, int p, std::int64_t maxSize,
                                std::int64_t granularity, std::uint64_t seed,
                                int points) {
  if (p < 1)
    throw std::invalid_argument("makeFamily: p must be >= 1");
  if (granularity < 1 || maxSize < granularity)
    throw std::invalid_argument("makeFamily: need 1 <= granularity <= maxSize");
  if (points < 0)
    throw std::invalid_argument("makeFamily: points must be >= 0");

  const std::int64_t k = maxSize / granularity;
  const std::int64_t n = std::min<std::int64_t>(k, points > 0 ? points : 64);
  const std::vector<std::int64_t> even = evenGranules(k, n);
  const std::string name(familyName(family));

  std::vector<Profile> profiles;
  profiles.reserve(static_cast<std::size_t>(p));
  for (int pe = 0; pe < p; ++pe) {
    Random random(mix(mix(mix(seed) ^ static_cast<std::uint64_t>(family)) ^
                      static_cast<std::uint64_t>(pe)));
    std::vector<std::int64_t> granules =
        family == Family::FullyRandom ? randomGranules(k, n, random) : even;
    std::vector<double> us;
    us.reserve(granules.size());
    for (std::int64_t granule : granules)
      us.push_back(static_cast<double>(granule) / static_cast<double>(k));
    std::vector<double> speeds = speedsFor(family, us, random);

    Profile profile;
    profile.kernel = "synthetic-" + name;
    profile.device = "p" + std::to_string(pe);
    profile.deviceName = name + " PE " + std::to_string(pe);
    profile.host = "fpm-families";
    for (std::size_t i = 0; i < granules.size(); ++i) {
      std::int64_t size = granules[i] * granularity;
      profile.points.push_back(
          {size, static_cast<double>(size) / speeds[i], {}, {}});
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

} // namespace fpm::test
