//===- cost_model_test.cpp - The cost model, equal and cpm ----------------===//

#include "partition/partition.hpp"

#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <limits>

using namespace fpm;
using namespace fpm::test;

namespace {} // namespace

TEST(CostModel, TimesFollowTheSpec) {
  CostModel model({makeProfile("a", {{2, 1.0}, {4, 1.0}, {8, 4.0}})});
  // At a profile point: the measured time.
  EXPECT_DOUBLE_EQ(model.time(0, 4), 1.0);
  // Between points: w / s(w), s linear between 4 (speed 4) and 2 (speed 2).
  EXPECT_DOUBLE_EQ(model.time(0, 6), 6.0 / 3.0);
  // Beyond the ends: the edge speed held constant.
  EXPECT_DOUBLE_EQ(model.time(0, 1), 1.0 / 2.0);
  EXPECT_DOUBLE_EQ(model.time(0, 16), 16.0 / 2.0);
  EXPECT_DOUBLE_EQ(model.time(0, 0), 0.0);
  std::vector<std::int64_t> packages{4, 4, 6};
  EXPECT_DOUBLE_EQ(model.time(0, packages), 4.0);
  EXPECT_EQ(model.defaultGranularity(), 2);
  EXPECT_EQ(model.largestSize(), 8);
}

TEST(CostModel, RefusesInvalidProfiles) {
  EXPECT_THROW(CostModel({makeProfile("a", {{2, 1.0}, {1, 1.0}})}),
               std::invalid_argument);
  EXPECT_THROW(CostModel({makeProfile("a", {})}), std::invalid_argument);
}

TEST(CheckDistribution, FindsEachProblem) {
  PartitionRequest request{10, 4, 100};
  EXPECT_EQ(checkDistribution({{{4}, {4, 2}}}, request, 2), "");
  EXPECT_EQ(checkDistribution({{{4}, {6}}}, request, 2), ""); // merged
  EXPECT_NE(checkDistribution({{{4}, {4, 2}}}, request, 3), "");
  EXPECT_NE(checkDistribution({{{4}, {4, 1}}}, request, 2), "");
  EXPECT_NE(checkDistribution({{{4}, {4}}}, request, 2), "");
  EXPECT_NE(checkDistribution({{{4, 0}, {4, 2}}}, request, 2), "");
  EXPECT_NE(checkDistribution({{{3}, {7}}}, request, 2), "");
  PartitionRequest even{8, 4, 100};
  EXPECT_NE(checkDistribution({{{2}, {6}}}, even, 2), "");
}

TEST(Equal, SplitsGranulesEvenlyAndIgnoresSpeed) {
  CostModel model({makeProfile("fast", {{1, 0.001}}),
                   makeProfile("slow", {{1, 1.0}}),
                   makeProfile("mid", {{1, 0.1}})});
  PartitionRequest request{11, 2, 100}; // 5 granules of 2, remainder 1
  Distribution d = partition(*findPartitioner("equal"), model, request);
  EXPECT_EQ(checkDistribution(d, request, 3), "");
  EXPECT_EQ(d.iterations(0), 4);
  EXPECT_EQ(d.iterations(1), 4);
  EXPECT_EQ(d.iterations(2), 3); // the fewest granules gets the remainder
}

TEST(Cpm, SharesFollowTheLargestPointsSpeed) {
  // Speeds at the largest points: 300 and 100 units/s; small sizes ignored.
  CostModel model({makeProfile("a", {{1, 1.0}, {300, 1.0}}),
                   makeProfile("b", {{1, 0.001}, {100, 1.0}})});
  PartitionRequest request{400, 1, 100};
  Distribution d = partition(*findPartitioner("cpm"), model, request);
  EXPECT_EQ(checkDistribution(d, request, 2), "");
  EXPECT_EQ(d.iterations(0), 300);
  EXPECT_EQ(d.iterations(1), 100);
}

TEST(Partition, RefusesBadRequestsAndHandlesZero) {
  CostModel model({makeProfile("a", {{1, 1.0}})});
  const Partitioner &equal = *findPartitioner("equal");
  EXPECT_THROW(partition(equal, model, {-1, 1, 100}), std::invalid_argument);
  EXPECT_THROW(partition(equal, model, {4, 0, 100}), std::invalid_argument);
  EXPECT_THROW(partition(equal, model, {4, 1, 0}), std::invalid_argument);
  EXPECT_THROW(partition(equal, CostModel({}), {4, 1, 100}),
               std::invalid_argument);
  Distribution none = partition(equal, model, {0, 1, 100});
  ASSERT_EQ(none.packages.size(), 1u);
  EXPECT_TRUE(none.packages[0].empty());
  EXPECT_EQ(findPartitioner("nope"), nullptr);
  EXPECT_EQ(partitioners().size(), 8u);
}

TEST(Partition, ExactSolversRefuseMoreGranulesThanTheyTake) {
  CostModel model({makeProfile("a", {{1, 1.0}}), makeProfile("b", {{1, 2.0}})});
  for (const char *name : {"optimal", "hpopta"}) {
    const Partitioner &exact = *findPartitioner(name);
    ASSERT_GT(exact.maxUnits, 0) << name;
    std::int64_t n = exact.maxUnits + 1;
    EXPECT_THROW(partition(exact, model, {n, 1, 100}), std::invalid_argument);
    // The same N in coarser granules is fine.
    Distribution d = partition(exact, model, {n, 2, 100});
    EXPECT_EQ(checkDistribution(d, {n, 2, 100}, 2), "") << name;
  }
}

TEST(Partition, WdahsWorkIsBoundedAsTheExactSolversIs) {
  // B = 10^7 ran for minutes and N = 10^11 made 25 million packages: both
  // are refused, as the exact solvers refuse more granules than they take.
  CostModel model({makeProfile("a", {{1, 1.0}}), makeProfile("b", {{1, 2.0}})});
  for (const char *name : {"wdah", "wdah-heuristic"}) {
    const Partitioner &wdah = *findPartitioner(name);
    EXPECT_FALSE(wdah.exact) << name;
    ASSERT_EQ(wdah.maxUnits, std::int64_t{1} << 20) << name;
    const std::int64_t n = wdah.maxUnits + 1;
    try {
      partition(wdah, model, {n, 1, 100});
      ADD_FAILURE() << name << " took " << n << " granules";
    } catch (const std::invalid_argument &error) {
      EXPECT_EQ(std::string(error.what()),
                std::string(name) + " takes at most 1048576 granules; N/G = " +
                    std::to_string(n) +
                    " is more: choose a larger granularity G");
    }
    Distribution d = partition(wdah, model, {n, 2, 100});
    EXPECT_EQ(checkDistribution(d, {n, 2, 100}, 2), "") << name;
  }
  const Partitioner &wdah = *findPartitioner("wdah");
  EXPECT_THROW(partition(wdah, model, {16, 1, MaxBacktrack + 1}),
               std::invalid_argument);
  Distribution d = partition(wdah, model, {16, 1, MaxBacktrack});
  EXPECT_EQ(checkDistribution(d, {16, 1, MaxBacktrack}, 2), "");
  for (const char *name : {"optimal", "hpopta"})
    EXPECT_TRUE(findPartitioner(name)->exact) << name;
}

TEST(Partition, EveryPartitionerCopesWithExtremeButValidProfiles) {
  // Speeds near the largest double and N near 2^63: equal and the rest
  // overflowed (2 * 9e18) rounding their shares, and cpm's sum of speeds
  // or N * speed was +inf, leaving 9e18 granules to hand out one at a time
  // (for hours); N = 2^63 - 1 is 2^63 as a double, which no int64 holds.
  constexpr std::int64_t Big = 9'000'000'000'000'000'000;
  const Profile fastest = makeProfile("fastest", {{Big, 5.2e-290}});
  const Profile slow = makeProfile("slow", {{1, 1e-308}, {2, 1.0}});
  for (const std::vector<Profile> &profiles :
       {std::vector{fastest, fastest}, std::vector{slow, fastest},
        std::vector{slow, slow, slow}})
    for (std::int64_t n : {Big, std::numeric_limits<std::int64_t>::max()}) {
      CostModel model(profiles);
      for (std::int64_t g :
           {std::int64_t{1}, n / 4, model.defaultGranularity()})
        for (const Partitioner &p : partitioners()) {
          PartitionRequest request{n, g, 100};
          if (p.maxUnits > 0 && request.units() > p.maxUnits)
            continue;
          SCOPED_TRACE(std::string(p.name) + " N=" + std::to_string(n) +
                       " G=" + std::to_string(g));
          const Distribution d = partition(p, model, request);
          EXPECT_EQ(checkDistribution(d, request, model.size()), "");
        }
    }
}
