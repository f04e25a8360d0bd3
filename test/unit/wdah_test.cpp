//===- wdah_test.cpp - WDAH and WDAH-Heuristic ----------------------------===//

#include "partition/wdah.hpp"

#include "partition/partition.hpp"
#include "support/fpm_families.hpp"

#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace fpm;
using namespace fpm::test;

namespace {

Distribution run(std::string_view algorithm, const CostModel &model,
                 const PartitionRequest &request) {
  return partition(*findPartitioner(algorithm), model, request);
}

double makespan(const CostModel &model, const Distribution &distribution) {
  return evaluate(model, distribution).makespan;
}

// Thesis 000, 4.5: the columns of matrix A (eq. 4.9) as profiles.
CostModel thesisExample() {
  return CostModel({makeProfile("p0", {{2, 2.0}, {4, 3.0}, {8, 4.0}}),
                    makeProfile("p1", {{2, 3.0}, {4, 4.0}, {8, 6.0}})});
}

// A random FPM: sizes off any grid; speeds either rising then falling (the
// shape the thesis expects) or anything at all.
Profile randomProfile(std::mt19937_64 &rng, int index) {
  std::uniform_int_distribution<int> count(1, 10);
  std::uniform_int_distribution<std::int64_t> step(1, 300);
  std::uniform_real_distribution<double> unit(0.1, 1.0);
  int n = count(rng);
  bool shaped = rng() % 2 == 0;
  double scale = std::uniform_real_distribution<double>(0.5, 20.0)(rng);
  int peak = std::uniform_int_distribution<int>(0, n - 1)(rng);
  std::vector<std::pair<std::int64_t, double>> points;
  std::int64_t size = 0;
  for (int i = 0; i < n; ++i) {
    size += step(rng);
    double speed = shaped ? scale * (1.0 + i - 0.5 * std::max(0, i - peak) -
                                     0.3 * std::max(0, i - peak))
                          : scale * unit(rng);
    speed = std::max(speed, 0.05 * scale);
    points.emplace_back(size, static_cast<double>(size) / speed);
  }
  return makeProfile("r" + std::to_string(index), std::move(points));
}

CostModel randomModel(std::mt19937_64 &rng, std::size_t p) {
  std::vector<Profile> profiles;
  for (std::size_t pe = 0; pe < p; ++pe)
    profiles.push_back(randomProfile(rng, static_cast<int>(pe)));
  return CostModel(std::move(profiles));
}
} // namespace

TEST(WdahPieces, ThesisExamplePackagesAndPriorities) {
  CostModel model = thesisExample();
  auto packages = wdah::workloadPackages(model, model.defaultGranularity());
  ASSERT_EQ(packages.size(), 2u);
  // Table 4.1, fastest first.
  std::vector<std::int64_t> sizes;
  for (const auto &w : packages[0])
    sizes.push_back(w.size);
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{8, 4, 2}));
  EXPECT_DOUBLE_EQ(packages[0][0].speed(), 2.0);
  EXPECT_DOUBLE_EQ(packages[0][1].speed(), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(packages[0][2].speed(), 1.0);
  ASSERT_EQ(packages[1].size(), 3u);
  EXPECT_DOUBLE_EQ(packages[1][0].speed(), 8.0 / 6.0);
  EXPECT_DOUBLE_EQ(packages[1][1].speed(), 1.0);
  EXPECT_DOUBLE_EQ(packages[1][2].speed(), 2.0 / 3.0);
  std::vector<double> priorities = wdah::priorities(packages, 16);
  EXPECT_DOUBLE_EQ(priorities[0], 9.6);
  EXPECT_DOUBLE_EQ(priorities[1], 6.4);

  // What the search runs with: the caps (10 and 8) keep every size, the
  // cost model times the 6 the profile skips, and eq. 4.6 stands.
  wdah::Offer offer = wdah::offer(model, model.defaultGranularity(), 16);
  EXPECT_DOUBLE_EQ(offer.priorities[0], 9.6);
  EXPECT_DOUBLE_EQ(offer.priorities[1], 6.4);
  for (std::size_t pe = 0; pe < 2; ++pe) {
    sizes.clear();
    for (const auto &w : offer.packages[pe]) {
      sizes.push_back(w.size);
      EXPECT_DOUBLE_EQ(w.time, model.time(pe, w.size));
    }
    EXPECT_EQ(sizes, (std::vector<std::int64_t>{8, 6, 4, 2}));
  }
}

TEST(WdahPieces, SmallProfilesKeepTheThesisPackagesAndPriorities) {
  // Profiles of every multiple of G up to 64 G, N = 4096 G: the thesis'
  // setting (4.2), where no cap binds.
  CostModel model(
      fpm::test::makeFamily(fpm::test::Family::Smooth, 4, 256, 4, 1));
  auto packages = wdah::workloadPackages(model, 4);
  wdah::Offer offer = wdah::offer(model, 4, 16384);
  EXPECT_EQ(offer.priorities, wdah::priorities(packages, 16384));
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    ASSERT_EQ(offer.packages[pe].size(), packages[pe].size());
    for (std::size_t i = 0; i < packages[pe].size(); ++i) {
      EXPECT_EQ(offer.packages[pe][i].size, packages[pe][i].size);
      EXPECT_DOUBLE_EQ(offer.packages[pe][i].time, packages[pe][i].time);
    }
  }
}

TEST(WdahPieces, PackagesStayWithinThePriority) {
  // Rising FPMs up to N: their fastest size is N. Capped, each PE offers
  // every multiple of G up to its priority rounded up, and the priorities
  // are eq. 4.6 over those sizes, settled: shares that take about as long.
  const std::int64_t g = 4, size = 16384;
  CostModel model(
      fpm::test::makeFamily(fpm::test::Family::Smooth, 4, size, g, 1, 128));
  wdah::Offer offer = wdah::offer(model, g, size);
  double total = 0;
  for (double priority : offer.priorities)
    total += priority;
  EXPECT_NEAR(total, static_cast<double>(size), 1e-6);
  std::vector<double> shareTimes;
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    const auto &w = offer.packages[pe];
    auto cap =
        static_cast<std::int64_t>(std::ceil(offer.priorities[pe] / g)) * g;
    std::int64_t largest = 0;
    double top = 0;
    for (const auto &package : w) {
      EXPECT_EQ(package.size % g, 0);
      largest = std::max(largest, package.size);
      top = std::max(top, package.speed());
    }
    EXPECT_EQ(largest, std::max(g, cap));
    EXPECT_EQ(std::ssize(w), std::max(g, cap) / g); // every multiple of G
    EXPECT_DOUBLE_EQ(w.front().speed(), top);       // fastest first
    if (offer.priorities[pe] >= 64 * g)
      shareTimes.push_back(offer.priorities[pe] / top);
  }
  ASSERT_GE(shareTimes.size(), 2u);
  auto [low, high] = std::ranges::minmax(shareTimes);
  EXPECT_LT(high / low, 1.05);
}

TEST(WdahPieces, PackagesComeFromTheIncreasingRegionOnTheGrid) {
  // Speeds 1, 2, 3, 2.5, 1: the region ends at size 300.
  CostModel model({makeProfile(
      "a",
      {{100, 100.0}, {200, 100.0}, {300, 100.0}, {400, 160.0}, {500, 500.0}})});
  auto packages = wdah::workloadPackages(model, 100);
  std::vector<std::int64_t> sizes;
  for (const auto &w : packages[0])
    sizes.push_back(w.size);
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{300, 200, 100}));

  // Off the grid of G = 64 the sizes round down to 64, 192, 256, 384, 448,
  // timed by the cost model: speeds 1, 1.92, 2.56, 2.58, 1.78. The fastest
  // is now 384, and G itself, the smallest workload, is always offered.
  packages = wdah::workloadPackages(model, 64);
  sizes.clear();
  for (const auto &w : packages[0]) {
    sizes.push_back(w.size);
    EXPECT_DOUBLE_EQ(w.time, model.time(0, w.size));
  }
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{384, 256, 192, 64}));

  // A falling FPM offers only its smallest size.
  CostModel falling({makeProfile("b", {{10, 1.0}, {20, 4.0}})});
  packages = wdah::workloadPackages(falling, 5);
  ASSERT_EQ(packages[0].size(), 2u); // G = 5 and 10: equally fast
  EXPECT_EQ(packages[0][0].size, 10);
  EXPECT_EQ(packages[0][1].size, 5);
}

TEST(WdahPieces, GetProcessorPicksTheHighestAndResets) {
  std::vector<double> initial{3.0, 5.0, 5.0};
  std::vector<double> priorities{-1.0, 2.0, 2.0};
  EXPECT_EQ(wdah::getProcessor(priorities, initial), 1u); // lowest of equals
  EXPECT_EQ(priorities, (std::vector<double>{-1.0, 2.0, 2.0}));
  priorities = {-1.0, -3.0, -0.5};
  EXPECT_EQ(wdah::getProcessor(priorities, initial), 1u);
  EXPECT_EQ(priorities, initial); // all negative: reset
}

TEST(Wdah, ThesisExample) {
  CostModel model = thesisExample();
  PartitionRequest request{16, model.defaultGranularity(), 100};
  for (std::string_view algorithm : {"wdah", "wdah-heuristic"}) {
    SCOPED_TRACE(algorithm);
    Distribution d = run(algorithm, model, request);
    EXPECT_EQ(checkDistribution(d, request, 2), "");
    EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{8}, {8}}));
    Evaluation e = evaluate(model, d);
    EXPECT_DOUBLE_EQ(e.times[0], 4.0);
    EXPECT_DOUBLE_EQ(e.times[1], 6.0);
    EXPECT_DOUBLE_EQ(e.makespan, 6.0);
  }
}

TEST(Wdah, BacktrackingImprovesOnTheFirstDescent) {
  // p1 (top speed 4) has priority 10.67, p0 (top speed 2) 5.33, so p0
  // offers no package above 6. The first descent gives p1 4 + 4, then p0
  // its 6 (as fast as 4 and 8), and the last 2 go to p1 at its slowest;
  // backtracking finds p0 better off with 4 and p1 with a third 4.
  CostModel model({makeProfile("p0", {{2, 7.0}, {4, 2.0}, {8, 4.0}}),
                   makeProfile("p1", {{2, 5.0}, {4, 1.0}})});
  PartitionRequest request{16, 2, 1};
  Distribution greedy = run("wdah", model, request);
  EXPECT_EQ(checkDistribution(greedy, request, 2), "");
  EXPECT_EQ(greedy.packages,
            (std::vector<std::vector<std::int64_t>>{{6}, {4, 4, 2}}));
  EXPECT_DOUBLE_EQ(makespan(model, greedy), 7.0);
  request.backtrack = 100;
  Distribution searched = run("wdah", model, request);
  EXPECT_EQ(checkDistribution(searched, request, 2), "");
  EXPECT_EQ(searched.packages,
            (std::vector<std::vector<std::int64_t>>{{4}, {4, 4, 4}}));
  EXPECT_DOUBLE_EQ(makespan(model, searched), 3.0);
}

TEST(Wdah, RemainderGoesWhereTheMakespanGrowsLeast) {
  CostModel model = thesisExample();
  PartitionRequest request{17, 2, 100}; // 16 as above, then 1 unit
  Distribution d = run("wdah", model, request);
  EXPECT_EQ(checkDistribution(d, request, 2), "");
  // On p0 the makespan stays 6; on p1 it would grow.
  EXPECT_EQ(d.packages, (std::vector<std::vector<std::int64_t>>{{8, 1}, {8}}));
  EXPECT_DOUBLE_EQ(makespan(model, d), 6.0);
}

TEST(Wdah, SmallAndOffGridProblems) {
  CostModel model({makeProfile("a", {{64, 1.0}, {128, 1.5}}),
                   makeProfile("b", {{100, 2.0}, {300, 3.0}})});
  struct Case {
    std::int64_t size, granularity;
  };
  // N below every package and every profile size; N below G; G off every
  // profile size; N not reachable by sums of profile sizes; p = 1 below.
  for (Case c : {Case{1, 64}, Case{10, 64}, Case{63, 64}, Case{65, 64},
                 Case{1000, 7}, Case{1001, 3}, Case{129, 128}, Case{5, 1}}) {
    for (int backtrack : {1, 100}) {
      PartitionRequest request{c.size, c.granularity, backtrack};
      SCOPED_TRACE(testing::Message() << "N=" << c.size << " G="
                                      << c.granularity << " B=" << backtrack);
      EXPECT_EQ(checkDistribution(run("wdah", model, request), request, 2), "");
      CostModel single({model.profile(1)});
      EXPECT_EQ(checkDistribution(run("wdah", single, request), request, 1),
                "");
    }
  }
}

TEST(Wdah, HeuristicEqualsBacktrackOne) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    CostModel model = randomModel(rng, 1 + rng() % 6);
    PartitionRequest request{static_cast<std::int64_t>(1 + rng() % 3000),
                             static_cast<std::int64_t>(1 + rng() % 40), 1};
    Distribution heuristic = run("wdah-heuristic", model, request);
    EXPECT_EQ(heuristic.packages, run("wdah", model, request).packages);
    request.backtrack = 100; // the heuristic ignores B
    EXPECT_EQ(heuristic.packages,
              run("wdah-heuristic", model, request).packages);
  }
}

TEST(Wdah, MoreBacktrackIsNeverWorse) {
  std::mt19937_64 rng(11);
  int improved = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CostModel model = randomModel(rng, 2 + rng() % 4);
    PartitionRequest request{static_cast<std::int64_t>(1 + rng() % 2000),
                             static_cast<std::int64_t>(1 + rng() % 30), 1};
    double previous = makespan(model, run("wdah", model, request));
    double first = previous;
    for (int backtrack : {2, 10, 100, 1000, 10000}) {
      request.backtrack = backtrack;
      Distribution d = run("wdah", model, request);
      ASSERT_EQ(checkDistribution(d, request, model.size()), "");
      double current = makespan(model, d);
      EXPECT_LE(current, previous) << "B=" << backtrack;
      previous = current;
    }
    improved += previous < first;
  }
  EXPECT_GT(improved, 0); // the search does find better solutions
}

TEST(Wdah, ValidOnRandomProfiles) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 500; ++trial) {
    std::size_t p = 1 + rng() % 8;
    CostModel model = randomModel(rng, p);
    std::int64_t g = rng() % 3 == 0
                         ? model.defaultGranularity()
                         : static_cast<std::int64_t>(1 + rng() % 100);
    PartitionRequest request{static_cast<std::int64_t>(1 + rng() % 5000), g,
                             static_cast<int>(1 + rng() % 300)};
    Distribution d = run("wdah", model, request);
    ASSERT_EQ(checkDistribution(d, request, p), "")
        << "trial " << trial << " N=" << request.size << " G=" << g;
  }
}

TEST(Wdah, FullRangeProfilesComeCloseToOptimal) {
  // Profiles from G to N, where the fastest size of a smooth FPM is N: the
  // caps keep WDAH within 5% of optimal at the median (the target);
  // before them, the first package went to one PE whole.
  const std::int64_t g = 4, size = 4096;
  for (fpm::test::Family family :
       {fpm::test::Family::Smooth, fpm::test::Family::Real}) {
    std::vector<double> ratios;
    for (int p : {2, 4, 8})
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        CostModel model(fpm::test::makeFamily(family, p, size, g, seed, 128));
        PartitionRequest request{size, g, 100};
        Distribution d = run("wdah", model, request);
        ASSERT_EQ(checkDistribution(d, request, model.size()), "");
        ratios.push_back(makespan(model, d) /
                         makespan(model, run("optimal", model, request)));
      }
    std::ranges::sort(ratios);
    SCOPED_TRACE(fpm::test::familyName(family));
    EXPECT_GE(ratios.front(), 1 - 1e-9);
    EXPECT_LT(ratios[ratios.size() / 2], 1.05);
  }
}

TEST(Wdah, MillionGranulesAreValid) {
  // p = 8, N/G = 10^6: a deep search where the fastest package is G (falling
  // FPMs), a shallow one over rising FPMs with many points, and one over
  // FPMs rising up to N, whose packages are too many to offer every one.
  std::vector<Profile> falling, rising, wide;
  for (int pe = 0; pe < 8; ++pe) {
    double speed = 1.0 + pe;
    falling.push_back(
        makeProfile("f" + std::to_string(pe),
                    {{1, 1.0 / speed}, {1000, 1000.0 / (0.5 * speed)}}));
    std::vector<std::pair<std::int64_t, double>> points;
    for (std::int64_t size = 1; size <= 4096; size *= 2)
      points.emplace_back(size, static_cast<double>(size) /
                                    (speed * (1.0 + std::log2(size))));
    rising.push_back(makeProfile("r" + std::to_string(pe), points));
    wide.push_back(makeProfile("w" + std::to_string(pe),
                               {{1, 1.0 / speed}, {1'000'000, 1e5 / speed}}));
  }
  for (const CostModel &model :
       {CostModel(falling), CostModel(rising), CostModel(wide)}) {
    PartitionRequest request{1'000'000, 1, 100};
    EXPECT_EQ(checkDistribution(run("wdah", model, request), request, 8), "");
  }
}

TEST(Wdah, TheLargestSizeStaysInInt64) {
  // N = 2^63 - 1 is 2^63 in doubles: a priority of all of it, rounded up to
  // a multiple of G, overflowed (UBSan: signed overflow in capFor).
  constexpr std::int64_t N = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t G = std::int64_t{1} << 43; // N/G = 2^20 - 1
  CostModel model({makeProfile("a", {{G, 1.0}, {N, 2.0}})});
  PartitionRequest request{N, G, 100};
  EXPECT_EQ(checkDistribution(run("wdah", model, request), request, 1), "");
}

TEST(Wdah, NoProfileGivesAnInfiniteSpeed) {
  // A time of 5e-324 made size / time infinite: priorities of inf / inf
  // (NaN) were converted to integers. Such a point is refused, named.
  try {
    CostModel model({makeProfile("tiny", {{1, 5e-324}, {2, 1.0}})});
    ADD_FAILURE() << "a profile with an infinite speed was accepted";
  } catch (const std::invalid_argument &error) {
    EXPECT_EQ(std::string(error.what()),
              "profile of device 'tiny': points[0].time 4.94066e-324 is too "
              "small: size 1 / time is not a finite speed");
  }
}
