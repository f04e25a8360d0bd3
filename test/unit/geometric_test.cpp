//===- geometric_test.cpp - Geometric bisection partitioning --------------===//

#include "partition/algorithms.hpp"
#include "support/fpm_families.hpp"
#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

using namespace fpm;
using namespace fpm::test;

namespace {

/// The PEs with work finish within `tolerance` of each other; one without
/// would take longer than the makespan for a single unit (the slow PEs of
/// the smooth family are that slow at small sizes).
void expectFinishTogether(const CostModel &model,
                          const Distribution &distribution, double tolerance) {
  Evaluation evaluation = evaluate(model, distribution);
  double fastest = INFINITY;
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    if (distribution.iterations(pe) > 0)
      fastest = std::min(fastest, evaluation.times[pe]);
    else
      EXPECT_GT(model.time(pe, 1), evaluation.makespan) << "PE " << pe;
  }
  EXPECT_LT(evaluation.makespan - fastest, tolerance * evaluation.makespan);
}

} // namespace

TEST(Geometric, ConstantSpeedsGiveTheProportionalSplit) {
  expectProportionalOnConstantSpeeds(partitionGeometric);
}

TEST(Geometric, SmoothFpmsFinishTogether) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    int p = 2 + static_cast<int>(seed % 7);
    CostModel model(
        test::makeFamily(test::Family::Smooth, p, 1 << 20, 1, seed, 64));
    PartitionRequest request{std::int64_t{3} << 19, 1, 100};
    Distribution result = partitionGeometric(model, request);
    ASSERT_EQ(checkDistribution(result, request, model.size()), "");
    expectFinishTogether(model, result, 1e-4);
  }
}

TEST(Geometric, PaperShapesFinishTogether) {
  // Increasing and concave, then decreasing: the shapes of the
  // multidimensional-solvers paper, 2.1, where the line meets each speed
  // function once.
  CostModel model(
      {makeProfile("a",
                   {{100, 1.0}, {1000, 5.0}, {10000, 40.0}, {100000, 800.0}}),
       makeProfile("b",
                   {{100, 0.5}, {1000, 2.0}, {10000, 15.0}, {100000, 400.0}}),
       makeProfile("c", {{100, 4.0}, {1000, 30.0}, {100000, 2500.0}})});
  for (std::int64_t n : {50, 1000, 25000, 300000, 5000000}) {
    PartitionRequest request{n, 1, 100};
    Distribution result = partitionGeometric(model, request);
    ASSERT_EQ(checkDistribution(result, request, 3), "");
    double slowest = evaluate(model, result).makespan;
    // One unit more or less on any PE is all rounding may leave.
    for (std::size_t pe = 0; pe < 3; ++pe)
      EXPECT_GE(model.time(pe, result.iterations(pe) + 1),
                slowest * (1 - 1e-12))
          << "N = " << n << ", PE " << pe;
  }
}

TEST(Geometric, TakesTheLargestIntersection) {
  // PE 0's speed rises tenfold between 10 and 20 units, so its time falls
  // there (10 s at 10 units, 2 s at 20): a line through the origin meets
  // its speed function three times. The slow PE 1 runs 1 unit per second.
  CostModel model({makeProfile("jump", {{10, 10.0}, {20, 2.0}, {100, 10.0}}),
                   makeProfile("slow", {{1, 1.0}})});
  // N = 30: the best split is 27 + 3 or 28 + 2 (makespan 2.8); the first
  // intersection would balance at 15 + 15.
  PartitionRequest request{30, 1, 100};
  Distribution result = partitionGeometric(model, request);
  ASSERT_EQ(checkDistribution(result, request, 2), "");
  EXPECT_NEAR(evaluate(model, result).makespan, 2.8, 1e-12);

  // N = 12: X_0(T) jumps from 4.29 to 12 at T = 12 / 2.8; keeping the jump
  // gives all 12 units to PE 0 (4.29 s); splitting it would cost 7.7 s.
  request.size = 12;
  result = partitionGeometric(model, request);
  ASSERT_EQ(checkDistribution(result, request, 2), "");
  EXPECT_EQ(result.packages,
            (std::vector<std::vector<std::int64_t>>{{12}, {}}));
}

TEST(Geometric, IsValidOnAwkwardFpms) {
  expectValidOnAwkwardFpms(partitionGeometric, 11);
}

TEST(Geometric, IsCloseToTheBestSingleShare) {
  // HPOPTA is exact with one package per PE; bisection plus rounding should
  // lose little to it on the FPM families the thesis uses.
  for (test::Family family : {test::Family::Smooth, test::Family::SemiRandom}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      CostModel model(test::makeFamily(family, 4, 4096, 8, seed, 32));
      PartitionRequest request{4000, 8, 100};
      Distribution geometric = partitionGeometric(model, request);
      Distribution best = partitionHpopta(model, request);
      ASSERT_EQ(checkDistribution(geometric, request, 4), "");
      double ours = evaluate(model, geometric).makespan,
             exact = evaluate(model, best).makespan;
      EXPECT_GE(ours, exact * (1 - 1e-12));
      EXPECT_LE(ours, exact * 1.01)
          << test::familyName(family) << ", seed " << seed;
    }
  }
}
