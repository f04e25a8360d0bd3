//===- optimal_test.cpp - The exact minimum makespan, any packages --------===//

#include "partition/algorithms.hpp"
#include "partition/partition.hpp"

#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace fpm;
using namespace fpm::test;

namespace {

/// Brute force: every multiset of packages on every PE. For each PE and k,
/// the least time of k granules in any packages, without the remainder and
/// with it (alone or merged into one of the packages); then every split of
/// the granules and every holder of the remainder.
double bruteForce(const CostModel &model, const PartitionRequest &request) {
  const std::size_t p = model.size();
  const std::int64_t g = request.granularity;
  const std::int64_t r = request.remainder();
  const std::int64_t units = request.units();
  std::vector<std::vector<double>> plain(p, std::vector<double>(units + 1)),
      withRemainder = plain;
  for (std::size_t pe = 0; pe < p; ++pe)
    for (std::int64_t k = 0; k <= units; ++k) {
      double bestPlain = INFINITY, bestRemainder = INFINITY;
      std::vector<std::int64_t> packages;
      // Non-increasing parts, so each multiset is seen once.
      auto visit = [&](auto &self, std::int64_t left,
                       std::int64_t largest) -> void {
        if (left == 0) {
          bestPlain = std::min(bestPlain, model.time(pe, packages));
          if (r == 0)
            return;
          packages.push_back(r);
          bestRemainder = std::min(bestRemainder, model.time(pe, packages));
          packages.pop_back();
          for (std::int64_t &package : packages) {
            package += r;
            bestRemainder = std::min(bestRemainder, model.time(pe, packages));
            package -= r;
          }
          return;
        }
        for (std::int64_t part = std::min(left, largest); part >= 1; --part) {
          packages.push_back(part * g);
          self(self, left - part, part);
          packages.pop_back();
        }
      };
      visit(visit, k, k);
      plain[pe][k] = bestPlain;
      withRemainder[pe][k] = bestRemainder;
    }

  std::vector<std::int64_t> granules(p, 0);
  double best = INFINITY;
  auto split = [&](auto &self, std::size_t pe, std::int64_t left) -> void {
    if (pe + 1 == p) {
      granules[pe] = left;
      for (std::size_t holder = 0; holder < (r > 0 ? p : 1); ++holder) {
        double makespan = 0;
        for (std::size_t j = 0; j < p; ++j)
          makespan = std::max(makespan, r > 0 && j == holder
                                            ? withRemainder[j][granules[j]]
                                            : plain[j][granules[j]]);
        best = std::min(best, makespan);
      }
      return;
    }
    for (std::int64_t k = 0; k <= left; ++k) {
      granules[pe] = k;
      self(self, pe + 1, left - k);
    }
  };
  split(split, 0, units);
  return best;
}

Distribution run(const char *name, const CostModel &model,
                 const PartitionRequest &request) {
  return partition(*findPartitioner(name), model, request);
}

CostModel randomModel(std::mt19937_64 &engine, std::size_t p) {
  std::vector<Profile> profiles;
  for (std::size_t pe = 0; pe < p; ++pe)
    profiles.push_back(randomProfile(engine, "p" + std::to_string(pe)));
  return CostModel(std::move(profiles));
}

} // namespace

TEST(Optimal, MatchesBruteForceOnSmallCases) {
  std::mt19937_64 engine(20240502);
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

    Distribution d = run("optimal", model, request);
    ASSERT_EQ(checkDistribution(d, request, p), "");
    // Sums of up to ten times, added in another order: a few ulps apart.
    double expected = bruteForce(model, request);
    EXPECT_NEAR(evaluate(model, d).makespan, expected, 1e-12 * expected);
  }
}

TEST(Optimal, NeverWorseThanHpoptaNorHpoptaThanEqual) {
  std::mt19937_64 engine(11);
  for (int trial = 0; trial < 100; ++trial) {
    std::size_t p = 1 + engine() % 8;
    CostModel model = randomModel(engine, p);
    PartitionRequest request{1 + static_cast<std::int64_t>(engine() % 400),
                             1 + static_cast<std::int64_t>(engine() % 5), 100};
    SCOPED_TRACE("trial " + std::to_string(trial));
    Distribution optimal = run("optimal", model, request);
    Distribution hpopta = run("hpopta", model, request);
    ASSERT_EQ(checkDistribution(optimal, request, p), "");
    ASSERT_EQ(checkDistribution(hpopta, request, p), "");
    // Exact: each one's answer is among the choices of the one before.
    double equalMakespan =
        evaluate(model, run("equal", model, request)).makespan;
    double hpoptaMakespan = evaluate(model, hpopta).makespan;
    EXPECT_LE(evaluate(model, optimal).makespan, hpoptaMakespan);
    EXPECT_LE(hpoptaMakespan, equalMakespan);
  }
}

TEST(Optimal, SplitsIntoPackagesWhenSmallOnesAreFaster) {
  // Two packages of 2 take 2 s; one of 4 takes 10 s.
  CostModel model({makeProfile("a", {{2, 1.0}, {4, 10.0}})});
  PartitionRequest request{4, 2, 100};
  Distribution d = run("optimal", model, request);
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{2, 2}}));
  EXPECT_DOUBLE_EQ(evaluate(model, d).makespan, 2.0);
  EXPECT_DOUBLE_EQ(evaluate(model, run("hpopta", model, request)).makespan,
                   10.0);
}

TEST(Optimal, MergingTheRemainderCanBeStrictlyBetter) {
  // N = 9, G = 4: remainder 1. The 9 takes 1 s; 8 and 1 apart take 2 s.
  CostModel model({makeProfile("a", {{1, 1.0}, {4, 1.0}, {8, 1.0}, {9, 1.0}}),
                   makeProfile("b", {{1, 5.0}})});
  PartitionRequest request{9, 4, 100};
  Distribution d = run("optimal", model, request);
  ASSERT_EQ(checkDistribution(d, request, 2), "");
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{9}, {}}));
  EXPECT_DOUBLE_EQ(evaluate(model, d).makespan, 1.0);
}

TEST(Optimal, KeepingTheRemainderApartCanBeStrictlyBetter) {
  // N = 9, G = 4: 8 + 1 take 2.1 s, while 9 (100 s) or 4 + 5 (51 s) do not.
  CostModel model(
      {makeProfile("a", {{1, 0.1}, {4, 1.0}, {5, 50.0}, {8, 2.0}, {9, 100.0}}),
       makeProfile("b", {{1, 1000.0}})});
  PartitionRequest request{9, 4, 100};
  Distribution d = run("optimal", model, request);
  ASSERT_EQ(checkDistribution(d, request, 2), "");
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{8, 1}, {}}));
  EXPECT_DOUBLE_EQ(evaluate(model, d).makespan, 2.1);
  // One share per PE must merge it, and b is too slow to take it: HPOPTA
  // pays 100 s.
  EXPECT_DOUBLE_EQ(evaluate(model, run("hpopta", model, request)).makespan,
                   100.0);
}

TEST(Optimal, RemainderAloneWhenLessThanOneGranule) {
  CostModel model(
      {makeProfile("slow", {{1, 1.0}}), makeProfile("fast", {{1, 0.1}})});
  PartitionRequest request{3, 4, 100};
  Distribution d = run("optimal", model, request);
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{}, {3}}));
}

TEST(Optimal, FindsTheFiniteSplitWhenLargePackagesTakeForever) {
  // A last point's time of 1e308 makes every package past it take longer
  // than the largest double: the cost model says +inf. optimal and hpopta
  // took their bound from such a split and returned no packages at all
  // ("internal error: ... packages sum to 0"), where wdah found 100 packages
  // of 1 in 100 s.
  CostModel model({makeProfile("v", {{1, 1.0}, {2, 1e308}})});
  for (std::int64_t n : {3, 100, 1000}) {
    const PartitionRequest request{n, 1, 100};
    const Distribution best = partitionOptimal(model, request);
    EXPECT_EQ(checkDistribution(best, request, 1), "") << n;
    EXPECT_EQ(evaluate(model, best).makespan, static_cast<double>(n)) << n;
    // One package per PE cannot avoid the infinite time, but it must still
    // hand out every unit.
    const Distribution one = partitionHpopta(model, request);
    EXPECT_EQ(checkDistribution(one, request, 1), "") << n;
  }
  // Two PEs, each finite only for small packages.
  CostModel two({makeProfile("a", {{1, 1.0}, {100, 1e308}}),
                 makeProfile("b", {{1, 1.0}, {100, 1e308}})});
  const PartitionRequest request{1000, 1, 100};
  const Distribution split = partitionOptimal(two, request);
  EXPECT_EQ(checkDistribution(split, request, 2), "");
  EXPECT_TRUE(std::isfinite(evaluate(two, split).makespan));
  EXPECT_EQ(checkDistribution(partitionHpopta(two, request), request, 2), "");

  // Nothing finite at all: still every unit, somewhere.
  CostModel forever({makeProfile("u", {{1, 1e308}})});
  for (const Partitioner &p : partitioners()) {
    const Distribution d = partition(p, forever, {5, 1, 100});
    EXPECT_EQ(checkDistribution(d, {5, 1, 100}, 1), "") << p.name;
  }
}
