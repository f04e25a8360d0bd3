//===- cluster_plan_test.cpp - Planning one loop across nodes -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The cross-node pieces of cluster/, without MPI: a node's FPM from its
// PEs', which path planCluster() takes and that its splits cover the loop,
// and the self-scheduling master, which must grant every iteration exactly
// once whatever order nodes ask in.
//
//===----------------------------------------------------------------------===//

#include "cluster/cluster_plan.hpp"
#include "cluster/node_model.hpp"
#include "exec/schedule_string.hpp"
#include "partition/partition.hpp"
#include "support/environment.hpp"
#include "support/fpm_families.hpp"
#include "support/scoped.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace fpm {
namespace {

Profile constantSpeed(const std::string &device, double speed,
                      std::int64_t largest = 100000) {
  Profile profile;
  profile.kernel = "loop";
  profile.device = device;
  profile.points = {{1, 1.0 / speed, {}, {}},
                    {largest, static_cast<double>(largest) / speed, {}, {}}};
  return profile;
}

/// Every iteration of [0, trips) in exactly one of `ranges`.
void expectCover(const std::vector<Range> &ranges, std::int64_t trips) {
  std::vector<int> seen(static_cast<std::size_t>(trips), 0);
  for (const Range &range : ranges) {
    ASSERT_LE(0, range.begin);
    ASSERT_LE(range.begin, range.end);
    ASSERT_LE(range.end, trips);
    for (std::int64_t i = range.begin; i < range.end; ++i)
      ++seen[static_cast<std::size_t>(i)];
  }
  for (std::int64_t i = 0; i < trips; ++i)
    ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1) << "iteration " << i;
}

TEST(NodeModelTest, SampleSizesRiseToTheWholeLoop) {
  for (std::int64_t trips : {1, 2, 17, 1000, 123456789}) {
    const std::vector<std::int64_t> sizes = nodeSampleSizes(trips, 4);
    ASSERT_FALSE(sizes.empty());
    EXPECT_LE(sizes.size(), static_cast<std::size_t>(MaxNodeSamples));
    EXPECT_EQ(sizes.front(), 1); // the least share: see FixedCostNode...
    EXPECT_EQ(sizes.back(), trips);
    EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
    EXPECT_EQ(std::adjacent_find(sizes.begin(), sizes.end()), sizes.end());
  }
  EXPECT_TRUE(nodeSampleSizes(0, 4).empty());
}

TEST(NodeModelTest, ConstantSpeedsAddUp) {
  // 100/s and 300/s together run w iterations in w / 400 s at their best
  // split (to one iteration's time).
  const std::vector<Profile> pes = {constantSpeed("a", 100),
                                    constantSpeed("b", 300)};
  const std::vector<std::int64_t> sizes = {4, 400, 40000};
  const Profile node = nodeProfile(pes, sizes, "node");
  ASSERT_EQ(node.points.size(), sizes.size());
  EXPECT_TRUE(validate(node).empty()) << validate(node);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(node.points[i].size, sizes[i]);
    EXPECT_NEAR(node.points[i].time, static_cast<double>(sizes[i]) / 400,
                1.0 / 100);
  }
}

TEST(NodeModelTest, PesPastTheirPeakRunSeveralPackages) {
  // 100/s up to 100 iterations, then slower and slower (20/s at 500): a
  // node of two runs 1000 as ten packages of 100, 5 s, where one share of
  // 500 each would take 25 s. The node FPM is what its planner makes.
  Profile peaked;
  peaked.kernel = "loop";
  peaked.device = "a";
  peaked.points = {{1, 0.01, {}, {}},
                   {100, 1, {}, {}},
                   {500, 25, {}, {}},
                   {1000, 100, {}, {}}};
  Profile other = peaked;
  other.device = "b";
  const std::vector<Profile> pes = {peaked, other};
  const std::vector<std::int64_t> sizes = {200, 1000};
  const Profile node = nodeProfile(pes, sizes, "node");
  EXPECT_NEAR(node.points[0].time, 1, 1e-9);
  EXPECT_NEAR(node.points[1].time, 5, 1e-9);
  EXPECT_NEAR(nodeTime(pes, {}, 1000), 5, 1e-9);
  // A static schedule of one share per PE gets what it plans, no better.
  NodeSplit shares;
  shares.schedule = parseLoopSchedule("hpopta");
  EXPECT_NEAR(nodeTime(pes, shares, 1000), 25, 1e-6);
  // A self-scheduling loop's node FPM is `auto`'s.
  NodeSplit guided;
  guided.schedule = parseLoopSchedule("gss");
  EXPECT_NEAR(nodeTime(pes, guided, 1000), 5, 1e-9);
}

TEST(NodeModelTest, OnePeIsItsOwnNode) {
  const std::vector<Profile> pes =
      test::makeFamily(test::Family::Smooth, 1, 4096, 16, 7);
  const std::vector<std::int64_t> sizes = nodeSampleSizes(4096, 2);
  const Profile node = nodeProfile(pes, sizes, "node");
  const CostModel model(pes);
  for (const ProfilePoint &point : node.points)
    EXPECT_NEAR(point.time, model.time(0, point.size),
                1e-5 * model.time(0, point.size));
}

TEST(NodeModelTest, NeverSlowerThanItsFastestPeAloneWhenExact) {
  // With the exact solver inside, all of w on the fastest PE is one of the
  // splits it weighs. (`auto` gives WDAH past 1024 granules, which can do
  // worse on the non-smooth families: the node FPM then says so.)
  NodeSplit exact;
  exact.schedule = parseLoopSchedule("optimal");
  for (test::Family family : test::AllFamilies) {
    const std::vector<Profile> pes = test::makeFamily(family, 3, 8192, 8, 11);
    const CostModel model(pes);
    const std::vector<std::int64_t> sizes = nodeSampleSizes(8192, 4);
    const Profile node = nodeProfile(pes, sizes, "node", exact);
    for (const ProfilePoint &point : node.points) {
      double alone = model.time(0, point.size);
      for (std::size_t pe = 1; pe < pes.size(); ++pe)
        alone = std::min(alone, model.time(pe, point.size));
      EXPECT_LE(point.time, alone * (1 + 1e-9))
          << test::familyName(family) << " w " << point.size;
    }
  }
}

TEST(ClusterPlanTest, MeasuredSpeedsSplitByCpm) {
  const LoopSchedule schedule = parseLoopSchedule("auto");
  std::vector<NodeView> nodes(2);
  nodes[0].speed = 100;
  nodes[1].speed = 300;
  const ClusterPlan plan = planCluster(schedule, nodes, 1000, 0);
  EXPECT_EQ(plan.kind, ClusterPlan::Kind::Static);
  EXPECT_NE(plan.reason.find("cpm"), std::string::npos) << plan.reason;
  expectCover(plan.shares, 1000);
  EXPECT_NEAR(static_cast<double>(plan.shares[0].size()), 250, 2);
  EXPECT_EQ(plan.shares[0].begin, 0); // in rank order
}

TEST(ClusterPlanTest, ARegionKeepsTheLastSplitWhileItIsNearlyAsGood) {
  const LoopSchedule schedule = parseLoopSchedule("auto");
  std::vector<NodeView> nodes(2);
  nodes[0].speed = 100;
  nodes[1].speed = 300;
  const std::vector<Range> last{{0, 245}, {245, 1000}};
  // The speeds measured again, 1% apart from the last call's: the new
  // split's makespan is at most 3% better, and the last one stays.
  nodes[0].speed = 101;
  ClusterPlan plan = planCluster(schedule, nodes, 1000, 0);
  EXPECT_NE(plan.shares, last);
  EXPECT_TRUE(keepPreviousSplit(plan, last, nodes));
  EXPECT_EQ(plan.shares, last);
  EXPECT_NE(plan.reason.find("kept"), std::string::npos) << plan.reason;
  // A node that became twice as slow: the new split gives rank 0 about
  // 402 iterations; the cut moves from 245 only as far as rank 1 must
  // shed rows to finish within 3% of that split's makespan.
  nodes[1].speed = 150;
  plan = planCluster(schedule, nodes, 1000, 0);
  const double makespan = static_cast<double>(plan.shares[1].size()) / 150;
  ASSERT_TRUE(keepPreviousSplit(plan, last, nodes));
  expectCover(plan.shares, 1000);
  EXPECT_EQ(plan.shares[1].size(),
            static_cast<std::int64_t>(makespan * 1.03 * 150));
  EXPECT_LT(plan.shares[0].size(), 402);
  EXPECT_NE(plan.reason.find("moved as little"), std::string::npos);
  // Nor a split of other iterations, or of other ranks.
  const std::vector<Range> shorter{{0, 245}, {245, 900}};
  EXPECT_FALSE(keepPreviousSplit(plan, shorter, nodes));
  const std::vector<Range> three{{0, 245}, {245, 900}, {900, 1000}};
  EXPECT_FALSE(keepPreviousSplit(plan, three, nodes));
}

TEST(ClusterPlanTest, ARegionMovesRowsToRanksOnlyWhenTheGainPaysForThem) {
  const LoopSchedule schedule = parseLoopSchedule("auto");
  std::vector<NodeView> nodes(2);
  nodes[0].speed = 100;
  nodes[1].speed = 150; // rank 1 became twice as slow
  const std::vector<Range> last{{0, 245}, {245, 1000}};
  // The kept split takes rank 1 755 / 150 = 5.03 s; the plan (400 | 600)
  // 4 s, plus what moving rank 0's new rows [245, 400) costs it.
  std::vector<Range> costed;
  auto costing = [&costed](double seconds) {
    return [&costed, seconds](std::size_t node, Range range) {
      EXPECT_EQ(node, 0u);
      costed.push_back(range);
      return seconds;
    };
  };
  ClusterPlan plan = planCluster(schedule, nodes, 1000, 0);
  const std::vector<Range> planned = plan.shares;
  ASSERT_TRUE(keepPreviousSplit(plan, last, nodes, costing(1.5)));
  EXPECT_EQ(plan.shares, last); // 1.5 s of moves outweigh a 1 s gain
  EXPECT_NE(plan.reason.find("kept"), std::string::npos) << plan.reason;
  EXPECT_EQ(costed, (std::vector<Range>{{last[0].end, planned[0].end}}));
  // Cheap moves: the cut moves, as far as keepCuts says.
  plan = planCluster(schedule, nodes, 1000, 0);
  ASSERT_TRUE(keepPreviousSplit(plan, last, nodes, costing(0.1)));
  EXPECT_GT(plan.shares[0].size(), last[0].size());
  EXPECT_NE(plan.reason.find("moved as little"), std::string::npos);
}

TEST(ClusterPlanTest, UnknownNodesStartFromTheTwoStageSchedule) {
  const LoopSchedule schedule = parseLoopSchedule("wdah");
  std::vector<NodeView> nodes(3);
  nodes[0].workers = 2;
  nodes[1].speed = 5; // one measured node is not enough
  nodes[2].workers = 1;
  const ClusterPlan plan = planCluster(schedule, nodes, 1000, 0);
  EXPECT_EQ(plan.kind, ClusterPlan::Kind::Dynamic);
  EXPECT_EQ(plan.dynamic.scheme, Scheme::Fss);
  ASSERT_TRUE(plan.dynamic.alpha);
  EXPECT_EQ(*plan.dynamic.alpha, LearningAlpha);
  // Stage 1: 80% by workers 2 : 1 : 1, in node order.
  EXPECT_EQ(plan.shares[0].begin, 0);
  EXPECT_EQ(plan.shares[0].size(), 400);
  EXPECT_EQ(plan.shares[1].size(), 200);
  EXPECT_EQ(plan.dynamicBegin, 800);
}

TEST(ClusterPlanTest, NodeModelsGoToThePartitioners) {
  for (const char *name : {"auto", "wdah", "hpopta", "geometric", "numerical",
                           "equal", "optimal", "cpm", "wdah-heuristic"}) {
    const LoopSchedule schedule = parseLoopSchedule(name);
    std::vector<NodeView> nodes(3);
    const double speeds[] = {100, 200, 700};
    for (int n = 0; n < 3; ++n) {
      const Profile pe = constantSpeed("cpu", speeds[n]);
      nodes[n].model = nodeProfile({&pe, 1}, nodeSampleSizes(5000, 3), "node");
    }
    const ClusterPlan plan = planCluster(schedule, nodes, 5000, 0);
    EXPECT_EQ(plan.kind, ClusterPlan::Kind::Static) << name;
    EXPECT_NE(plan.reason.find("node FPMs"), std::string::npos) << name;
    expectCover(plan.shares, 5000);
    if (std::string(name) != "equal")
      EXPECT_GT(plan.shares[2].size(), plan.shares[0].size()) << name;
  }
}

/// A node's FPM of a fixed cost `fixed` (seconds, whatever the share) and
/// then `speed` iterations per second: t(w) = fixed + w / speed, at `sizes`.
Profile fixedCostNode(double fixed, double speed,
                      std::span<const std::int64_t> sizes) {
  Profile node;
  node.kernel = "loop";
  node.device = "node";
  for (const std::int64_t w : sizes)
    node.points.push_back({w, fixed + static_cast<double>(w) / speed, {}, {}});
  return node;
}

TEST(ClusterPlanTest, AutoGivesNodesOneShareEachToTheIteration) {
  // 64 nodes of fixed costs 10 ... 73 ms and speeds 1000 ... 64000/s: a
  // node runs its share as one range in t(w), so the best split has every
  // node that takes part finish together, at the T where
  // sum (T - fixed) * speed = N over them. `auto` across node FPMs must
  // reach it to within an iteration. WDAH (`auto` beyond 16 nodes before
  // it knew that nodes run one range) times a node's packages one after
  // another, each paying the fixed cost, and is 2.6% slower here.
  constexpr int Nodes = 64;
  constexpr std::int64_t Trips = 64 * 2048;
  const std::vector<std::int64_t> sizes = nodeSampleSizes(Trips, Nodes);
  std::vector<NodeView> nodes(Nodes);
  std::vector<double> fixed, speed;
  for (int n = 0; n < Nodes; ++n) {
    fixed.push_back(0.010 + 0.001 * n);
    speed.push_back(1000.0 * (1 + (n * 37) % 64));
    nodes[n].model = fixedCostNode(fixed.back(), speed.back(), sizes);
  }
  // The least T, by bisection over the nodes that take part at T.
  double low = 0, high = 100;
  for (int step = 0; step < 200; ++step) {
    const double mid = (low + high) / 2;
    double total = 0;
    for (int n = 0; n < Nodes; ++n)
      total += std::max(0.0, (mid - fixed[n]) * speed[n]);
    (total >= Trips ? high : low) = mid;
  }
  auto makespan = [&](const ClusterPlan &plan) {
    double slowest = 0;
    for (int n = 0; n < Nodes; ++n)
      if (const std::int64_t w = plan.shares[n].size(); w > 0)
        slowest =
            std::max(slowest, fixed[n] + static_cast<double>(w) / speed[n]);
    return slowest;
  };
  const ClusterPlan automatic =
      planCluster(parseLoopSchedule("auto"), nodes, Trips, 0);
  expectCover(automatic.shares, Trips);
  EXPECT_NE(automatic.reason.find("geometric"), std::string::npos)
      << automatic.reason;
  // Within one iteration of the slowest node past the continuous optimum.
  EXPECT_LE(makespan(automatic), high + 1.0 / 1000);
  const ClusterPlan wdah =
      planCluster(parseLoopSchedule("wdah"), nodes, Trips, 0);
  EXPECT_GT(makespan(wdah), makespan(automatic) * 1.02);
}

TEST(ClusterPlanTest, FixedCostNodeGetsNoSliver) {
  // 15 nodes at 50000/s share 100000 iterations in 0.13 s; one node takes
  // 0.33 s for anything. Its FPM must say so down to one iteration: from a
  // first point at 2 or more, the cost model would extrapolate a faster
  // time for 1 and the bisection would hand it one (or two) iterations,
  // making the loop take 0.33 s.
  constexpr std::int64_t Trips = 100000;
  const std::vector<std::int64_t> sizes = nodeSampleSizes(Trips, 16);
  std::vector<NodeView> nodes(16);
  for (int n = 0; n < 15; ++n)
    nodes[n].model = fixedCostNode(0, 50000, sizes);
  nodes[15].model = fixedCostNode(0.33, 1e9, sizes);
  const ClusterPlan plan =
      planCluster(parseLoopSchedule("auto"), nodes, Trips, 0);
  expectCover(plan.shares, Trips);
  EXPECT_EQ(plan.shares[15].size(), 0);
}

TEST(ClusterPlanTest, SelfSchedulingIsTheDynamicPath) {
  const LoopSchedule schedule = parseLoopSchedule("gss");
  std::vector<NodeView> nodes(4);
  const ClusterPlan plan = planCluster(schedule, nodes, 999, 0);
  EXPECT_EQ(plan.kind, ClusterPlan::Kind::Dynamic);
  EXPECT_FALSE(plan.dynamic.alpha);
  EXPECT_EQ(plan.dynamicBegin, 0);
}

/// Draws every grant with nodes asking in a random order, some never.
std::vector<ChunkMaster::Grant> drain(const ClusterPlan &plan, int askers,
                                      unsigned seed) {
  ChunkMaster master(plan);
  std::mt19937 random(seed);
  std::vector<bool> done(static_cast<std::size_t>(askers), false);
  int left = askers;
  while (left > 0) {
    const int node = static_cast<int>(random() % askers);
    if (done[static_cast<std::size_t>(node)])
      continue;
    if (!master.next(node)) {
      done[static_cast<std::size_t>(node)] = true;
      --left;
    }
  }
  return master.grants();
}

TEST(ChunkMasterTest, GrantsEveryIterationOnce) {
  for (const char *name :
       {"gss", "fss", "tss", "gss, 80", "fss, 50", "tss, 80", "css(7)", "pss"})
    for (std::int64_t grain : {0, 1, 3, 64})
      for (std::int64_t trips : {1, 10, 997, 10007}) {
        const LoopSchedule schedule = parseLoopSchedule(name);
        std::vector<NodeView> nodes(5);
        nodes[1].workers = 4;
        const ClusterPlan plan = planCluster(schedule, nodes, trips, grain);
        for (int askers : {5, 1}) { // only node 0 asks: the master alone
          std::vector<Range> ranges;
          for (const ChunkMaster::Grant &grant :
               drain(plan, askers, static_cast<unsigned>(trips)))
            ranges.push_back(grant.range);
          SCOPED_TRACE(std::string(name) + " grain " + std::to_string(grain) +
                       " trips " + std::to_string(trips));
          expectCover(ranges, trips);
        }
      }
}

TEST(ChunkMasterTest, StageOneSharesAreGrantedWithoutAsking) {
  const ClusterPlan plan = planCluster(parseLoopSchedule("fss, 80"),
                                       std::vector<NodeView>(2), 100, 0);
  ChunkMaster master(plan);
  const std::vector<ChunkMaster::Grant> stageOne = master.grants();
  ASSERT_EQ(stageOne.size(), 2u);
  EXPECT_EQ(stageOne[0].range, (Range{0, 40}));
  EXPECT_EQ(stageOne[1].range, (Range{40, 80}));
  const std::optional<Range> next = master.next(1);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->begin, 80);
}

TEST(ChunkMasterTest, MergeGrantsJoinsTouchingRangesOfANode) {
  const std::vector<ChunkMaster::Grant> grants = {
      {1, {10, 20}}, {0, {0, 10}}, {1, {20, 25}}, {0, {25, 30}}, {2, {30, 30}}};
  const std::vector<ChunkMaster::Grant> merged = mergeGrants(grants);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].node, 0);
  EXPECT_EQ(merged[1].node, 1);
  EXPECT_EQ(merged[1].range, (Range{10, 25}));
  EXPECT_EQ(merged[2].range, (Range{25, 30}));
}

TEST(MpiEnvironmentTest, SlowRankIsRankColonFactor) {
  {
    test::ScopedEnv slow("FPM_TEST_SLOW_RANK", "2:3.5");
    const MpiEnvironment environment = readMpiEnvironment();
    ASSERT_TRUE(environment.slowRank);
    EXPECT_EQ(environment.slowRank->rank, 2);
    EXPECT_EQ(environment.slowRank->factor, 3.5);
  }
  for (const char *bad : {"2", ":3", "x:3", "1:0.5", "1:3x", "-1:2", "1:"}) {
    test::ScopedEnv slow("FPM_TEST_SLOW_RANK", bad);
    try {
      readMpiEnvironment();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find("FPM_TEST_SLOW_RANK"),
                std::string::npos);
    }
  }
  test::ScopedEnv all("FPM_MPI_ALL_STDOUT", "1");
  EXPECT_TRUE(readMpiEnvironment().allStdout);
}

TEST(MpiEnvironmentTest, TimeoutIsSecondsFromOneToAWeek) {
  EXPECT_EQ(readMpiEnvironment().timeoutSeconds, 60);
  {
    test::ScopedEnv timeout("FPM_MPI_TIMEOUT", "5");
    EXPECT_EQ(readMpiEnvironment().timeoutSeconds, 5);
  }
  for (const char *bad : {"0", "-1", "x", "1.5", "604801"}) {
    test::ScopedEnv timeout("FPM_MPI_TIMEOUT", bad);
    try {
      readMpiEnvironment();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find("FPM_MPI_TIMEOUT"),
                std::string::npos);
    }
  }
}

} // namespace
} // namespace fpm
