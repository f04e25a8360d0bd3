//===- numerical_test.cpp - Partitioning by HYBRJ on Akima speeds ---------===//

#include "partition/algorithms.hpp"
#include "support/fpm_families.hpp"
#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace fpm;
using namespace fpm::test;

namespace {

/// The times, under the Akima speeds the solver used, of a distribution.
std::vector<double> akimaTimes(const CostModel &model,
                               const Distribution &distribution,
                               double problemSize) {
  std::vector<double> times;
  for (std::size_t pe = 0; pe < model.size(); ++pe)
    times.push_back(
        AkimaSpeed(model.profile(pe), problemSize)
            .time(static_cast<double>(distribution.iterations(pe))));
  return times;
}

} // namespace

TEST(Numerical, ConstantSpeedsGiveTheProportionalSplit) {
  expectProportionalOnConstantSpeeds(partitionNumerical);
}

TEST(Numerical, SmoothFpmsFinishTogether) {
  // Equal finish under the Akima speeds it solves with, and close to it
  // under the cost model's linear ones.
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    int p = 2 + static_cast<int>(seed % 7);
    CostModel model(
        test::makeFamily(test::Family::Smooth, p, 1 << 20, 1, seed, 64));
    PartitionRequest request{std::int64_t{3} << 19, 1, 100};
    Distribution result = partitionNumerical(model, request);
    ASSERT_EQ(checkDistribution(result, request, model.size()), "");
    std::vector<double> times = akimaTimes(model, result, 3 << 19);
    Evaluation cost = evaluate(model, result);
    double fastest = INFINITY, slowest = 0, costFastest = INFINITY;
    for (std::size_t pe = 0; pe < model.size(); ++pe) {
      if (result.iterations(pe) == 0) {
        // Too slow for even one unit in the time the others take.
        EXPECT_GT(model.time(pe, 1), cost.makespan) << "seed " << seed;
        continue;
      }
      fastest = std::min(fastest, times[pe]);
      slowest = std::max(slowest, times[pe]);
      costFastest = std::min(costFastest, cost.times[pe]);
    }
    EXPECT_LT(slowest - fastest, 1e-4 * slowest) << "seed " << seed;
    EXPECT_LT(cost.makespan - costFastest, 1e-2 * cost.makespan)
        << "seed " << seed;
  }
}

TEST(Numerical, SolvesWithFewPoints) {
  // One to four points per PE: the extended models of the
  // multidimensional-solvers paper, 3.2.
  CostModel model(
      {makeProfile("one", {{500, 1.0}}),
       makeProfile("two", {{100, 0.05}, {2000, 2.0}}),
       makeProfile("three", {{100, 0.5}, {1000, 2.0}, {4000, 20.0}}),
       makeProfile("four", {{50, 0.5}, {400, 1.0}, {1600, 2.0}, {6400, 8.0}})});
  for (std::int64_t n : {100, 3000, 20000, 1000000}) {
    PartitionRequest request{n, 1, 100};
    Distribution result = partitionNumerical(model, request);
    ASSERT_EQ(checkDistribution(result, request, 4), "") << "N = " << n;
    std::vector<double> times = akimaTimes(model, result, n);
    auto [fastest, slowest] = std::minmax_element(times.begin(), times.end());
    // Rounding (which sees the cost model's times) moves at most p units.
    double unit = 0;
    for (std::size_t pe = 0; pe < 4; ++pe) {
      AkimaSpeed speed(model.profile(pe), n);
      auto x = static_cast<double>(result.iterations(pe));
      unit = std::max(unit, speed.time(x + 1) - speed.time(x));
    }
    EXPECT_LT(*slowest - *fastest, 4 * unit + 1e-9 * *slowest) << "N = " << n;
  }
}

TEST(Numerical, TakesTheGeometricAnswerWhenEqualFinishIsNotBest) {
  // PE 0's speed rises tenfold between 10 and 20 units, so its time falls
  // there. For N = 12 the balanced root (about 5 units each) takes twice as
  // long as giving PE 0 all 12 units, which is the geometric answer.
  CostModel model({makeProfile("jump", {{10, 10.0}, {20, 2.0}, {100, 10.0}}),
                   makeProfile("slow", {{1, 1.0}})});
  PartitionRequest request{12, 1, 100};
  EXPECT_EQ(partitionNumerical(model, request).packages,
            (std::vector<std::vector<std::int64_t>>{{12}, {}}));
  // For N = 30 the root is the best partition: 28 + 2 (2.8 s).
  request.size = 30;
  Distribution result = partitionNumerical(model, request);
  ASSERT_EQ(checkDistribution(result, request, 2), "");
  EXPECT_NEAR(evaluate(model, result).makespan, 2.8, 1e-12);
}

TEST(Numerical, IsValidOnAwkwardFpms) {
  // Single points, sharp drops, N below the smallest size, N huge: HYBRJ
  // may fail on some; the answer must still be a partition.
  expectValidOnAwkwardFpms(partitionNumerical, 13);
}

TEST(Numerical, AgreesWithGeometricOnDenseSmoothFpms) {
  // Saturating speeds A x / (x + h), slower beyond a memory limit c, at 40
  // sizes spread evenly in log scale: Akima's curve and the cost model's
  // chords nearly agree, and so must the two partitions.
  std::mt19937_64 engine(17);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Profile> profiles;
    for (int pe = 0; pe < 5; ++pe) {
      double a = std::pow(10, uniform(engine, 3, 6)),
             h = std::pow(10, uniform(engine, 1, 3)),
             c = std::pow(10, uniform(engine, 5, 7));
      std::vector<std::pair<std::int64_t, double>> points;
      for (int i = 0; i < 40; ++i) {
        auto x = static_cast<std::int64_t>(10 * std::pow(1e5, i / 39.0));
        double speed = a * x / (x + h) / (1 + x / c);
        points.emplace_back(x, static_cast<double>(x) / speed);
      }
      profiles.push_back(makeProfile("p" + std::to_string(pe), points));
    }
    CostModel model(std::move(profiles));
    for (std::int64_t n : {10000, 300000, 1000000}) {
      PartitionRequest request{n, 1, 100};
      Distribution numerical = partitionNumerical(model, request);
      Distribution geometric = partitionGeometric(model, request);
      ASSERT_EQ(checkDistribution(numerical, request, 5), "");
      double ours = evaluate(model, numerical).makespan,
             theirs = evaluate(model, geometric).makespan;
      EXPECT_NEAR(ours, theirs, 0.01 * theirs)
          << "trial " << trial << ", N = " << n;
      for (std::size_t pe = 0; pe < 5; ++pe)
        EXPECT_NEAR(static_cast<double>(numerical.iterations(pe)),
                    static_cast<double>(geometric.iterations(pe)),
                    0.01 * static_cast<double>(n))
            << "trial " << trial << ", N = " << n << ", PE " << pe;
    }
  }
}

TEST(Numerical, IsNeverFarFromGeometric) {
  // On sparse profiles of every family the interpolations disagree more
  // (Akima is the better guess of a smooth truth; the cost model scores
  // with chords), and where a root is poor the geometric answer is taken,
  // so neither is far off the other.
  for (test::Family family : test::AllFamilies) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      CostModel model(test::makeFamily(family, 5, 1 << 16, 16, seed, 48));
      PartitionRequest request{50000, 16, 100};
      Distribution numerical = partitionNumerical(model, request);
      Distribution geometric = partitionGeometric(model, request);
      ASSERT_EQ(checkDistribution(numerical, request, 5), "");
      double ours = evaluate(model, numerical).makespan,
             theirs = evaluate(model, geometric).makespan;
      EXPECT_LT(ours, theirs * 1.25)
          << test::familyName(family) << ", seed " << seed;
    }
  }
}
