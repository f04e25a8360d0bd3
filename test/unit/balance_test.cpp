//===- balance_test.cpp - Load balancing with partial FPMs ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoadBalancer on model PEs whose speed functions are known: a simulated
// iterative routine runs the even split first (the multidimensional-solvers
// paper, section 4, k = 0), then whatever the balancer gives, each PE taking
// exactly x / s(x) seconds for its x iterations (times a known noise, where a
// test says so). The optimum it is held to is found here by brute force over
// every split on the granule grid, under the same speed functions.
//
//===----------------------------------------------------------------------===//

#include "balance/balance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace fpm;

namespace {

/// Iterations per second of a PE at size x (> 0), at call k (from 1).
using SpeedFunction = std::function<double(int call, double x)>;

SpeedFunction constant(double speed) {
  return [speed](int, double) { return speed; };
}

/// Seed 002's paging: beyond `memory` iterations every further one costs
/// `penalty` times as much.
SpeedFunction paging(double speed, double memory, double penalty) {
  return [=](int, double x) {
    return x / ((x + (penalty - 1) * std::max(x - memory, 0.0)) / speed);
  };
}

/// A device with a fixed cost per call (a kernel launch, transfers) of
/// `overhead` iterations' worth.
SpeedFunction launchCost(double speed, double overhead) {
  return [=](int, double x) { return speed * x / (x + overhead); };
}

/// `before` until call `at`, then `after`.
SpeedFunction changesAt(int at, SpeedFunction before, SpeedFunction after) {
  return [=](int call, double x) {
    return call < at ? before(call, x) : after(call, x);
  };
}

double time(const SpeedFunction &speed, int call, std::int64_t iterations) {
  if (iterations == 0)
    return 0;
  const auto x = static_cast<double>(iterations);
  return x / speed(call, x);
}

double makespan(std::span<const SpeedFunction> pes, int call,
                std::span<const std::int64_t> split) {
  double slowest = 0;
  for (std::size_t pe = 0; pe < pes.size(); ++pe)
    slowest = std::max(slowest, time(pes[pe], call, split[pe]));
  return slowest;
}

/// The least makespan of any split of `size` (a multiple of `granule`) into
/// multiples of `granule`, by enumeration.
double optimum(std::span<const SpeedFunction> pes, int call, std::int64_t size,
               std::int64_t granule) {
  std::vector<std::int64_t> split(pes.size(), 0);
  double best = std::numeric_limits<double>::infinity();
  std::function<void(std::size_t, std::int64_t, double)> place =
      [&](std::size_t pe, std::int64_t left, double slowest) {
        if (slowest >= best)
          return;
        if (pe + 1 == pes.size()) {
          best = std::min(best, std::max(slowest, time(pes[pe], call, left)));
          return;
        }
        for (std::int64_t give = 0; give <= left; give += granule)
          place(pe + 1, left - give,
                std::max(slowest, time(pes[pe], call, give)));
      };
  place(0, size, 0);
  return best;
}

std::vector<std::int64_t> iterations(const Distribution &distribution) {
  std::vector<std::int64_t> split;
  for (std::size_t pe = 0; pe < distribution.packages.size(); ++pe)
    split.push_back(distribution.iterations(pe));
  return split;
}

/// What a simulated routine did: per call (from 1), its split, makespan
/// and the optimum's, and the PEs whose change the balancer caught.
struct Routine {
  std::vector<std::vector<std::int64_t>> splits;
  std::vector<double> times, best;
  std::vector<std::vector<std::size_t>> changed;

  double ratio(int call) const { return times[call - 1] / best[call - 1]; }
  /// The first call from which every later one is within `tolerance` of
  /// the optimum, or 0.
  int settledFrom(double tolerance) const {
    int from = 0;
    for (int call = 1; call <= static_cast<int>(times.size()); ++call)
      if (ratio(call) > 1 + tolerance)
        from = 0;
      else if (from == 0)
        from = call;
    return from;
  }
};

/// Noise as a factor on each PE's time: call, PE -> factor.
using Noise = std::function<double(int call, std::size_t pe)>;

Routine simulate(std::span<const SpeedFunction> pes, std::int64_t size,
                 std::int64_t granule, int calls, BalanceOptions options = {},
                 const Noise &noise = {}) {
  LoadBalancer balancer(pes.size(), options);
  Routine run;
  const PartitionRequest request{size, granule, 100};
  for (int call = 1; call <= calls; ++call) {
    std::vector<std::int64_t> split;
    if (call == 1) {
      // d^0: the even split, in granules.
      const auto p = static_cast<std::int64_t>(pes.size());
      for (std::int64_t pe = 0; pe < p; ++pe)
        split.push_back(
            (size / granule * (pe + 1) / p - size / granule * pe / p) *
            granule);
    } else {
      EXPECT_TRUE(balancer.ready());
      const Distribution distribution = balancer.split(request);
      EXPECT_EQ(checkDistribution(distribution, request, pes.size()), "");
      split = iterations(distribution);
    }
    run.splits.push_back(split);
    run.times.push_back(makespan(pes, call, split));
    run.best.push_back(optimum(pes, call, size, granule));
    std::vector<Observation> observed;
    for (std::size_t pe = 0; pe < pes.size(); ++pe)
      observed.push_back({split[pe], time(pes[pe], call, split[pe]) *
                                         (noise ? noise(call, pe) : 1.0)});
    run.changed.push_back(balancer.observe(observed));
  }
  return run;
}

std::string describe(const Routine &run) {
  std::string text;
  for (std::size_t call = 0; call < run.times.size(); ++call) {
    text += "call " + std::to_string(call + 1) + ":";
    for (std::int64_t share : run.splits[call])
      text += " " + std::to_string(share);
    text += " -> " + std::to_string(run.times[call] / run.best[call]) + "\n";
  }
  return text;
}

/// Every call from the 5th on, up to `calls`, within 5% of the optimum.
void expectBalancedByCallFive(std::span<const SpeedFunction> pes,
                              std::int64_t size, std::int64_t granule,
                              BalanceOptions options = {}, int calls = 15) {
  const Routine run = simulate(pes, size, granule, calls, options);
  for (int call = 5; call <= calls; ++call)
    EXPECT_LE(run.ratio(call), 1.05) << "call " << call << "\n"
                                     << describe(run);
}

/// A deterministic noise of up to +-`amplitude` on every time.
Noise jitter(double amplitude) {
  return [amplitude](int call, std::size_t pe) {
    std::uint64_t state = static_cast<std::uint64_t>(call) * 7919 + pe * 104729;
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(state >> 40) * 0x1p-24; // [0, 1)
    return 1 + amplitude * (2 * unit - 1);
  };
}

//===----------------------------------------------------------------------===//
// Convergence
//===----------------------------------------------------------------------===//

TEST(Balance, ConstantSpeedsBalanceAfterOneCall) {
  // One observation each is the constant model itself: call 2 is optimal.
  const std::vector<SpeedFunction> pes = {constant(1000), constant(3000)};
  const Routine run = simulate(pes, 4096, 64, 8);
  EXPECT_GT(run.ratio(1), 1.4) << describe(run); // the even split is poor
  for (int call = 2; call <= 8; ++call)
    EXPECT_LE(run.ratio(call), 1.02) << "call " << call << "\n"
                                     << describe(run);
}

TEST(Balance, FourConstantPes) {
  const std::vector<SpeedFunction> pes = {constant(100), constant(250),
                                          constant(400), constant(1250)};
  expectBalancedByCallFive(pes, 6000, 100);
}

TEST(Balance, PagingPeConvergesWithinFiveCalls) {
  // Seed 002's Fig. 7 situation: the fast PE pages beyond 2500 iterations,
  // so the split by its small-size speed overloads it; the partial model
  // learns the drop where the loop runs.
  const std::vector<SpeedFunction> pes = {paging(3000, 2500, 6),
                                          constant(1000)};
  const Routine run = simulate(pes, 6000, 60, 15);
  for (int call = 5; call <= 15; ++call)
    EXPECT_LE(run.ratio(call), 1.05) << "call " << call << "\n"
                                     << describe(run);
  // The first balanced split puts the paging PE beyond its memory, where a
  // constant model would not.
  EXPECT_GT(run.ratio(2), 1.05) << describe(run);
}

TEST(Balance, MixedSpeedFunctionsConvergeWithinFiveCalls) {
  const std::vector<SpeedFunction> pes = {constant(1000), launchCost(4000, 800),
                                          paging(2500, 1500, 8)};
  expectBalancedByCallFive(pes, 6000, 60);
}

TEST(Balance, FourMixedPesConvergeWithinFiveCalls) {
  const std::vector<SpeedFunction> pes = {constant(500), launchCost(3000, 500),
                                          paging(2000, 1200, 5),
                                          paging(1500, 3000, 10)};
  expectBalancedByCallFive(pes, 5000, 50);
}

TEST(Balance, LastSampleEstimatorConvergesToo) {
  BalanceOptions options;
  options.estimator = Estimator::Last;
  const std::vector<SpeedFunction> pes = {constant(1000), launchCost(4000, 800),
                                          paging(2500, 1500, 8)};
  expectBalancedByCallFive(pes, 6000, 60, options);
}

TEST(Balance, StaysBalancedUnderNoise) {
  // Times off by up to 3% at random: the average keeps the split near the
  // optimum and steadier than the last sample does.
  const std::vector<SpeedFunction> pes = {constant(1000), launchCost(4000, 800),
                                          paging(2500, 1500, 8)};
  double mean[2] = {0, 0};
  for (Estimator estimator : {Estimator::Average, Estimator::Last}) {
    BalanceOptions options;
    options.estimator = estimator;
    const Routine run = simulate(pes, 6000, 60, 30, options, jitter(0.03));
    double sum = 0;
    for (int call = 5; call <= 30; ++call) {
      EXPECT_LE(run.ratio(call), 1.05) << "call " << call << "\n"
                                       << describe(run);
      sum += run.ratio(call);
    }
    mean[estimator == Estimator::Last] = sum / 26;
    for (const std::vector<std::size_t> &changed : run.changed)
      EXPECT_TRUE(changed.empty()) << "noise taken for a change\n"
                                   << describe(run);
  }
  EXPECT_LE(mean[0], mean[1] + 1e-3)
      << "average " << mean[0] << ", last " << mean[1];
}

//===----------------------------------------------------------------------===//
// Re-adaptation
//===----------------------------------------------------------------------===//

TEST(Balance, FollowsAPeThatSlowsDown) {
  // Converged by call 10; then PE 0 runs at a third of its speed (another
  // program took its cores). Two disagreeing calls confirm the change, its
  // stale points go, and the split balances again.
  for (Estimator estimator : {Estimator::Average, Estimator::Last}) {
    SCOPED_TRACE(estimator == Estimator::Average ? "average" : "last");
    BalanceOptions options;
    options.estimator = estimator;
    const std::vector<SpeedFunction> pes = {
        changesAt(11, paging(3000, 3000, 4), constant(1000)),
        launchCost(2000, 300), constant(1500)};
    const Routine run = simulate(pes, 6000, 60, 25, options);
    for (int call = 5; call <= 10; ++call)
      EXPECT_LE(run.ratio(call), 1.05) << "call " << call << "\n"
                                       << describe(run);
    EXPECT_GT(run.ratio(11), 1.3) << describe(run); // the change hits
    // Caught on the second call that disagrees, and only for PE 0.
    EXPECT_TRUE(run.changed[11 - 1].empty()) << describe(run);
    EXPECT_EQ(run.changed[12 - 1], std::vector<std::size_t>{0})
        << describe(run);
    for (int call = 16; call <= 25; ++call)
      EXPECT_LE(run.ratio(call), 1.05) << "call " << call << "\n"
                                       << describe(run);
  }
}

TEST(Balance, FollowsAPeThatSpeedsUp) {
  const std::vector<SpeedFunction> pes = {
      changesAt(9, constant(500), constant(2000)), constant(1000)};
  const Routine run = simulate(pes, 4000, 40, 20);
  EXPECT_EQ(run.changed[10 - 1], std::vector<std::size_t>{0}) << describe(run);
  for (int call = 12; call <= 20; ++call)
    EXPECT_LE(run.ratio(call), 1.05) << "call " << call << "\n"
                                     << describe(run);
}

TEST(Balance, OneOutlierIsNotAChange) {
  // Converged; then one call where PE 1 is twice as slow (a hiccup). The
  // outlier is held apart: nothing changes, and the next split is the
  // same as before it.
  LoadBalancer balancer(2);
  const PartitionRequest request{4000, 40, 100};
  const std::vector<double> speeds = {1000, 3000};
  auto observeSplit = [&](const Distribution &split, double slowdown) {
    std::vector<Observation> observed;
    for (std::size_t pe = 0; pe < 2; ++pe) {
      const std::int64_t x = split.iterations(pe);
      observed.push_back(
          {x, static_cast<double>(x) / speeds[pe] * (pe == 1 ? slowdown : 1)});
    }
    return balancer.observe(observed);
  };
  Distribution even;
  even.packages = {{2000}, {2000}};
  observeSplit(even, 1);
  const Distribution balanced = balancer.split(request);
  observeSplit(balanced, 1);
  EXPECT_TRUE(observeSplit(balancer.split(request), 2).empty());
  EXPECT_EQ(iterations(balancer.split(request)), iterations(balanced));
  EXPECT_TRUE(observeSplit(balancer.split(request), 1).empty());
  EXPECT_EQ(iterations(balancer.split(request)), iterations(balanced));
}

//===----------------------------------------------------------------------===//
// Estimators
//===----------------------------------------------------------------------===//

/// PE 0's speed at its only point, after samples of 1000 iterations at
/// `speeds`.
double speedAfter(Estimator estimator, std::span<const double> speeds) {
  BalanceOptions options;
  options.estimator = estimator;
  LoadBalancer balancer(1, options);
  for (double speed : speeds) {
    const Observation observation{1000, 1000 / speed};
    balancer.observe(std::span(&observation, 1));
  }
  const Profile model = balancer.model(0);
  EXPECT_EQ(model.points.size(), 1u);
  return model.points.front().speed();
}

TEST(Balance, AverageEstimatorAveragesNoise) {
  const std::vector<double> speeds = {90, 110, 95, 105, 100, 92};
  // Iterations over seconds of all samples: the harmonic mean of speeds.
  double seconds = 0;
  for (double speed : speeds)
    seconds += 1000 / speed;
  EXPECT_NEAR(speedAfter(Estimator::Average, speeds),
              1000 * speeds.size() / seconds, 1e-9);
  EXPECT_NEAR(speedAfter(Estimator::Last, speeds), 92, 1e-9);
}

TEST(Balance, LastSampleFollowsADriftAtOnce) {
  // 15% slower: within the noise band, so not a change; the last sample
  // follows it, the average only part of the way.
  const std::vector<double> speeds = {100, 100, 100, 100, 85};
  EXPECT_NEAR(speedAfter(Estimator::Last, speeds), 85, 1e-9);
  const double average = speedAfter(Estimator::Average, speeds);
  EXPECT_GT(average, 95);
  EXPECT_LT(average, 100);
}

TEST(Balance, SizesWithinTheBucketAreOnePoint) {
  LoadBalancer balancer(1);
  for (std::int64_t size : {1000, 1020, 990, 1500}) {
    const Observation observation{size, static_cast<double>(size) / 100};
    balancer.observe(std::span(&observation, 1));
  }
  const Profile model = balancer.model(0);
  ASSERT_EQ(model.points.size(), 2u);
  EXPECT_EQ(model.points[0].size, 1003); // the mean of 1000, 1020, 990
  EXPECT_EQ(model.points[1].size, 1500);
  EXPECT_NEAR(model.points[0].speed(), 100, 1e-9);
}

TEST(Balance, KeepsTheLatestPoints) {
  BalanceOptions options;
  options.maxPoints = 3;
  LoadBalancer balancer(1, options);
  for (std::int64_t size : {100, 200, 400, 800, 1600}) {
    const Observation observation{size, static_cast<double>(size) / 100};
    balancer.observe(std::span(&observation, 1));
  }
  const Profile model = balancer.model(0);
  ASSERT_EQ(model.points.size(), 3u);
  EXPECT_EQ(model.points[0].size, 400);
  EXPECT_EQ(model.points[2].size, 1600);
}

//===----------------------------------------------------------------------===//
// Seeding and edge cases
//===----------------------------------------------------------------------===//

TEST(Balance, StoredPointsMakeTheFirstSplitStatic) {
  LoadBalancer balancer(2);
  EXPECT_FALSE(balancer.ready());
  EXPECT_THROW(balancer.split({100, 1, 100}), std::logic_error);
  const std::vector<ProfilePoint> slow = {{100, 0.1, {}, {}},
                                          {1000, 1.0, {}, {}}};
  const std::vector<ProfilePoint> fast = {{100, 0.05, {}, {}},
                                          {1000, 0.5, {}, {}}};
  balancer.seed(0, slow);
  EXPECT_FALSE(balancer.ready());
  balancer.seed(1, fast);
  ASSERT_TRUE(balancer.ready());
  EXPECT_EQ(iterations(balancer.split({3000, 1, 100})),
            (std::vector<std::int64_t>{1000, 2000}));
}

TEST(Balance, EdgeCases) {
  LoadBalancer balancer(4);
  const std::vector<Observation> first = {
      {100, 1.0}, {100, 0.5}, {100, 0.25}, {0, 0}};
  balancer.observe(first);
  EXPECT_FALSE(balancer.ready()); // PE 3 ran nothing: nothing learnt
  const std::vector<Observation> second = {
      {100, 1.0}, {100, 0.5}, {100, 0.25}, {100, 0.125}};
  balancer.observe(second);
  ASSERT_TRUE(balancer.ready());
  // T = 0.
  EXPECT_EQ(iterations(balancer.split({0, 1, 100})),
            (std::vector<std::int64_t>{0, 0, 0, 0}));
  // T smaller than the PE count: still every iteration exactly once.
  for (std::int64_t size : {1, 3}) {
    const PartitionRequest request{size, 1, 100};
    const Distribution split = balancer.split(request);
    EXPECT_EQ(checkDistribution(split, request, 4), "");
    EXPECT_EQ(split.total(), size);
  }
  // T not a multiple of the granule.
  const PartitionRequest ragged{1000, 64, 100};
  EXPECT_EQ(checkDistribution(balancer.split(ragged), ragged, 4), "");
  EXPECT_THROW(balancer.split({-1, 1, 100}), std::invalid_argument);
  EXPECT_THROW(balancer.observe(std::span(first).first(3)),
               std::invalid_argument);
}

TEST(Balance, OnePeTakesEverything) {
  LoadBalancer balancer(1);
  const Observation observation{50, 0.5};
  balancer.observe(std::span(&observation, 1));
  EXPECT_EQ(iterations(balancer.split({777, 8, 100})),
            std::vector<std::int64_t>{777});
}

} // namespace
