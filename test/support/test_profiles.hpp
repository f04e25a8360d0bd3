//===- support/test_profiles.hpp - Hand-made test profiles ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Small helpers the unit tests share to build profiles by hand or at random,
// and checks that several partitioners' tests run alike.
// The FPM families of the WDAH thesis, 5.2.3, are in fpm_families.hpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"
#include "partition/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fpm::test {

/// A profile of kernel "test" on `device` with the given (size, time) points.
inline Profile
makeProfile(std::string device,
            std::vector<std::pair<std::int64_t, double>> points) {
  Profile profile;
  profile.kernel = "test";
  profile.device = std::move(device);
  for (auto [size, time] : points)
    profile.points.push_back({size, time, {}, {}});
  return profile;
}

/// Uniform in [lo, hi) from the engine's bits, the same on every library
/// (std:: distributions are not).
inline double uniform(std::mt19937_64 &engine, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

/// 1 to 5 points at random sizes in [1, 14] with random times, so that time
/// is far from monotone (or subadditive) in size and the cost model
/// extrapolates beyond them: small cases for brute-force comparisons.
inline Profile randomProfile(std::mt19937_64 &engine, std::string device) {
  std::set<std::int64_t> sizes;
  int count = 1 + static_cast<int>(engine() % 5);
  while (static_cast<int>(sizes.size()) < count)
    sizes.insert(1 + static_cast<std::int64_t>(engine() % 14));
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t size : sizes)
    points.emplace_back(size, uniform(engine, 0.05, 2.0));
  return makeProfile(std::move(device), std::move(points));
}

/// Awkward FPMs: single points, sharp drops and rises, sawtooth, speeds over
/// four orders of magnitude, sizes from 1 to 10^6.
inline Profile awkwardProfile(std::mt19937_64 &engine, std::string device) {
  int count = 1 + static_cast<int>(engine() % 8);
  std::set<std::int64_t> sizes;
  while (static_cast<int>(sizes.size()) < count)
    sizes.insert(
        static_cast<std::int64_t>(std::pow(10, uniform(engine, 0, 6))));
  std::vector<std::pair<std::int64_t, double>> points;
  double speed = std::pow(10, uniform(engine, 0, 4));
  for (std::int64_t size : sizes) {
    if (engine() % 3 == 0) // a cliff or a jump
      speed *= std::pow(10, uniform(engine, -2, 2));
    points.emplace_back(size, static_cast<double>(size) / speed);
  }
  return makeProfile(std::move(device), std::move(points));
}

/// Checks `partition` on 400 random awkward cost models (single points,
/// sharp drops) for N = 1, small, just under G, random up to 10^7 and 2^40:
/// every answer is a valid distribution with a finite makespan.
inline void expectValidOnAwkwardFpms(PartitionFunction partition,
                                     std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  for (int trial = 0; trial < 400; ++trial) {
    int p = 1 + static_cast<int>(engine() % 8);
    std::vector<Profile> profiles;
    for (int pe = 0; pe < p; ++pe)
      profiles.push_back(awkwardProfile(engine, "p" + std::to_string(pe)));
    CostModel model(std::move(profiles));
    const std::int64_t sizes[] = {
        1, 1 + static_cast<std::int64_t>(engine() % 10),
        std::max<std::int64_t>(1, model.defaultGranularity() - 1),
        static_cast<std::int64_t>(std::pow(10, uniform(engine, 0, 7))),
        std::int64_t{1} << 40};
    for (std::int64_t n : sizes) {
      std::int64_t g = trial % 3 == 0
                           ? 1 + static_cast<std::int64_t>(engine() % 9)
                           : std::min(model.defaultGranularity(), n);
      PartitionRequest request{n, g, 100};
      Distribution result = partition(model, request);
      ASSERT_EQ(checkDistribution(result, request, model.size()), "")
          << "trial " << trial << ", N = " << n << ", G = " << g;
      EXPECT_TRUE(std::isfinite(evaluate(model, result).makespan));
    }
  }
}

/// Checks `partition` on three PEs of constant speeds 1, 3 and 6 units per
/// second (some profiles with several points): the shares are 100, 300 and
/// 600 of N = 1000, within a granule for G = 1, 3, 10, and exact for G = 1.
inline void expectProportionalOnConstantSpeeds(PartitionFunction partition) {
  CostModel model({makeProfile("a", {{10, 10.0}}),
                   makeProfile("b", {{3, 1.0}, {30, 10.0}, {300, 100.0}}),
                   makeProfile("c", {{60, 10.0}, {120, 20.0}})});
  for (std::int64_t granularity : {1, 3, 10}) {
    PartitionRequest request{1000, granularity, 100};
    Distribution result = partition(model, request);
    ASSERT_EQ(checkDistribution(result, request, 3), "");
    const double share[] = {100, 300, 600};
    for (std::size_t pe = 0; pe < 3; ++pe)
      EXPECT_NEAR(static_cast<double>(result.iterations(pe)), share[pe],
                  granularity)
          << "G = " << granularity << ", PE " << pe;
  }
  EXPECT_EQ(partition(model, {1000, 1, 100}).packages,
            (std::vector<std::vector<std::int64_t>>{{100}, {300}, {600}}));
}

/// 1 to 3 PEs of randomProfile: the cost models brute force can check.
inline CostModel randomSmallModel(std::mt19937_64 &engine) {
  std::size_t p = 1 + engine() % 3;
  std::vector<Profile> profiles;
  for (std::size_t pe = 0; pe < p; ++pe)
    profiles.push_back(randomProfile(engine, "p" + std::to_string(pe)));
  return CostModel(std::move(profiles));
}

/// A request brute force can check: G in 1..4, N/G in 0..10, and a
/// remainder on odd trials (so half the cases have one).
inline PartitionRequest randomSmallRequest(std::mt19937_64 &engine, int trial) {
  std::int64_t g = 1 + static_cast<std::int64_t>(engine() % 4);
  std::int64_t units = static_cast<std::int64_t>(engine() % 11);
  std::int64_t r = trial % 2 == 0 ? 0 : static_cast<std::int64_t>(engine() % g);
  return PartitionRequest{units * g + r, g, 100};
}

} // namespace fpm::test
