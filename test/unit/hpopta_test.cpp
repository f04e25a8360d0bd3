//===- hpopta_test.cpp - HPOPTA: exact, one package per PE ----------------===//

#include "partition/partition.hpp"

#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

using namespace fpm;
using namespace fpm::test;

namespace {

/// Every way of giving each PE one share: all compositions of the K
/// granules, and every PE that could hold the remainder.
double bruteForceSingleShare(const CostModel &model,
                             const PartitionRequest &request) {
  const std::size_t p = model.size();
  const std::int64_t g = request.granularity;
  const std::int64_t r = request.remainder();
  std::vector<std::int64_t> granules(p, 0);
  double best = INFINITY;
  auto visit = [&](auto &self, std::size_t pe, std::int64_t left) -> void {
    if (pe + 1 == p) {
      granules[pe] = left;
      for (std::size_t holder = 0; holder < (r > 0 ? p : 1); ++holder) {
        double makespan = 0;
        for (std::size_t j = 0; j < p; ++j)
          makespan = std::max(
              makespan,
              model.time(j, granules[j] * g + (r > 0 && j == holder ? r : 0)));
        best = std::min(best, makespan);
      }
      return;
    }
    for (std::int64_t k = 0; k <= left; ++k) {
      granules[pe] = k;
      self(self, pe + 1, left - k);
    }
  };
  visit(visit, 0, request.units());
  return best;
}

Distribution run(const char *name, const CostModel &model,
                 const PartitionRequest &request) {
  return partition(*findPartitioner(name), model, request);
}

} // namespace

TEST(Hpopta, MatchesBruteForceOnSmallCases) {
  std::mt19937_64 engine(20240501);
  for (int trial = 0; trial < 400; ++trial) {
    CostModel model = randomSmallModel(engine);
    PartitionRequest request = randomSmallRequest(engine, trial);
    std::size_t p = model.size();
    std::int64_t g = request.granularity;
    if (request.size == 0)
      continue;
    SCOPED_TRACE(
        "trial " + std::to_string(trial) + ": p = " + std::to_string(p) +
        ", N = " + std::to_string(request.size) + ", G = " + std::to_string(g));

    Distribution d = run("hpopta", model, request);
    ASSERT_EQ(checkDistribution(d, request, p), "");
    for (const auto &packages : d.packages)
      EXPECT_LE(packages.size(), 1u);
    // Same times, compared by max and min only: exactly equal.
    EXPECT_EQ(evaluate(model, d).makespan,
              bruteForceSingleShare(model, request));
  }
}

TEST(Hpopta, NeverWorseThanEqualOrCpm) {
  std::mt19937_64 engine(7);
  for (int trial = 0; trial < 100; ++trial) {
    std::size_t p = 1 + engine() % 6;
    std::vector<Profile> profiles;
    for (std::size_t pe = 0; pe < p; ++pe)
      profiles.push_back(randomProfile(engine, "p" + std::to_string(pe)));
    CostModel model(std::move(profiles));
    PartitionRequest request{1 + static_cast<std::int64_t>(engine() % 300),
                             1 + static_cast<std::int64_t>(engine() % 5), 100};
    Distribution d = run("hpopta", model, request);
    ASSERT_EQ(checkDistribution(d, request, p), "");
    double makespan = evaluate(model, d).makespan;
    EXPECT_LE(makespan, evaluate(model, run("equal", model, request)).makespan);
    EXPECT_LE(makespan, evaluate(model, run("cpm", model, request)).makespan);
  }
}

TEST(Hpopta, BalancesConstantSpeeds) {
  // 3 and 1 units per second: 6 + 2 finish together in 2 s.
  CostModel model({makeProfile("fast", {{1, 1.0 / 3}, {8, 8.0 / 3}}),
                   makeProfile("slow", {{1, 1.0}, {8, 8.0}})});
  PartitionRequest request{8, 1, 100};
  Distribution d = run("hpopta", model, request);
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{6}, {2}}));
}

TEST(Hpopta, ExtrapolatesBeyondTheProfiles) {
  // The paper's HPOPTA fails when n exceeds the profiled sizes; here the
  // cost model holds the edge speed: 40 and 20 units per second.
  CostModel model({makeProfile("a", {{2, 0.05}, {4, 0.1}}),
                   makeProfile("b", {{2, 0.1}, {4, 0.2}})});
  PartitionRequest request{600, 2, 100};
  Distribution d = run("hpopta", model, request);
  ASSERT_EQ(checkDistribution(d, request, 2), "");
  EXPECT_EQ(d.iterations(0), 400);
  EXPECT_EQ(d.iterations(1), 200);
  EXPECT_DOUBLE_EQ(evaluate(model, d).makespan, 10.0);
}

TEST(Hpopta, RemainderAloneWhenLessThanOneGranule) {
  CostModel model(
      {makeProfile("slow", {{1, 1.0}}), makeProfile("fast", {{1, 0.1}})});
  PartitionRequest request{3, 4, 100}; // no granule, remainder 3
  Distribution d = run("hpopta", model, request);
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{}, {3}}));
}
