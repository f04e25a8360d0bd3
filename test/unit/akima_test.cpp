//===- akima_test.cpp - Akima spline speed functions ----------------------===//

#include "model/speed.hpp"
#include "support/test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace fpm;
using fpm::test::uniform;

namespace {

std::vector<SpeedKnot> knotsOf(std::vector<double> sizes,
                               std::vector<double> speeds) {
  std::vector<SpeedKnot> knots;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    knots.push_back({sizes[i], speeds[i]});
  return knots;
}

/// Random knots: increasing sizes, speeds over three orders of magnitude,
/// with sharp drops.
std::vector<SpeedKnot> randomKnots(std::mt19937_64 &random, int count) {
  std::vector<SpeedKnot> knots;
  double x = 0;
  for (int i = 0; i < count; ++i) {
    x += uniform(random, 1, 100);
    knots.push_back({x, std::pow(10.0, uniform(random, 0, 3))});
  }
  return knots;
}

double slowest(const std::vector<SpeedKnot> &knots) {
  double least = INFINITY;
  for (const SpeedKnot &knot : knots)
    least = std::min(least, knot.s);
  return least;
}

/// The extended model holds these knots, in order.
void expectKnots(const AkimaSpeed &spline,
                 const std::vector<SpeedKnot> &expected) {
  ASSERT_EQ(spline.knots().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_DOUBLE_EQ(spline.knots()[i].x, expected[i].x) << "knot " << i;
    EXPECT_DOUBLE_EQ(spline.knots()[i].s, expected[i].s) << "knot " << i;
  }
}

} // namespace

TEST(Akima, PassesThroughTheKnots) {
  std::mt19937_64 random(1);
  for (int count = 1; count <= 12; ++count) {
    std::vector<SpeedKnot> knots = randomKnots(random, count);
    AkimaSpeed spline(knots, 3 * knots.back().x);
    for (const SpeedKnot &knot : knots)
      EXPECT_NEAR(spline.speed(knot.x), knot.s, 1e-12 * knot.s);
    // The extension's knots too.
    for (const SpeedKnot &knot : spline.knots())
      EXPECT_NEAR(spline.speed(knot.x), knot.s, 1e-12 * knot.s);
  }
}

TEST(Akima, ReproducesALinearFunctionExactly) {
  // s(x) = 50 + 3x at uneven sizes; the right tail is flat.
  std::vector<double> sizes{10, 20, 35, 40, 70, 100, 130};
  std::vector<double> speeds;
  for (double x : sizes)
    speeds.push_back(50 + 3 * x);
  AkimaSpeed spline(knotsOf(sizes, speeds), 1000);
  for (double x = 10; x <= 130; x += 0.25) {
    EXPECT_NEAR(spline.speed(x), 50 + 3 * x, 1e-9) << "x = " << x;
    EXPECT_NEAR(spline.derivative(x), 3, 1e-9) << "x = " << x;
  }
  // Beyond the tails the last speed holds.
  EXPECT_DOUBLE_EQ(spline.speed(1000), 440);
  EXPECT_DOUBLE_EQ(spline.speed(5000), 440);
  EXPECT_DOUBLE_EQ(spline.derivative(5000), 0);
}

TEST(Akima, DoesNotOvershootAStep) {
  // A cubic spline rings on both sides of the step; Akima's is flat where
  // the data are, and monotone across the step.
  AkimaSpeed spline(knotsOf({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, 1, 5, 5, 5, 5}),
                    8);
  double previous = 0;
  for (double x = 1; x <= 8; x += 0.01) {
    double s = spline.speed(x);
    if (x <= 4)
      EXPECT_DOUBLE_EQ(s, 1) << "x = " << x;
    if (x >= 5)
      EXPECT_DOUBLE_EQ(s, 5) << "x = " << x;
    EXPECT_GE(s, previous - 1e-12) << "x = " << x;
    EXPECT_GE(s, 1 - 1e-12);
    EXPECT_LE(s, 5 + 1e-12);
    previous = s;
  }
}

TEST(Akima, ExtendedModelOfOnePointIsConstant) {
  // Seed 002, k = 1: (0, s1), (x1/2, s1), (x1, s1), ((x1+n)/2, s1), (n, s1).
  AkimaSpeed spline(knotsOf({40}, {7}), 100);
  expectKnots(spline, {{0, 7}, {20, 7}, {40, 7}, {70, 7}, {100, 7}});
  for (double x : {0.5, 10.0, 40.0, 55.0, 100.0, 1e9}) {
    EXPECT_DOUBLE_EQ(spline.speed(x), 7);
    EXPECT_DOUBLE_EQ(spline.derivative(x), 0);
  }
}

TEST(Akima, ExtendedModelOfTwoPoints) {
  // Seed 002, k = 2: (0, s1), (x1, s1), (x2, s2), ((x2 + n)/2, s2), (n, s2).
  AkimaSpeed spline(knotsOf({10, 20}, {4, 8}), 30);
  expectKnots(spline, {{0, 4}, {10, 4}, {20, 8}, {25, 8}, {30, 8}});
  // A flat right tail, a monotone rise between the points.
  EXPECT_DOUBLE_EQ(spline.speed(27), 8);
  EXPECT_DOUBLE_EQ(spline.speed(1e6), 8);
  for (double x = 10; x < 20; x += 0.1)
    EXPECT_GT(spline.derivative(x + 0.05), 0) << "x = " << x;
  // A far n: the inner tail knot stays one spacing from the data.
  AkimaSpeed far(knotsOf({10, 20}, {4, 8}), 1e6);
  expectKnots(far, {{0, 4}, {10, 4}, {20, 8}, {30, 8}, {1e6, 8}});
  for (double x = 20; x <= 1e6; x *= 1.5)
    EXPECT_DOUBLE_EQ(far.speed(x), 8) << "x = " << x;
}

TEST(Akima, ExtendedModelsOfThreeAndFourPoints) {
  for (std::vector<SpeedKnot> data :
       {knotsOf({100, 200, 400}, {10, 30, 20}),
        knotsOf({100, 200, 400, 500}, {10, 30, 20, 25})}) {
    const double n = 2000;
    AkimaSpeed spline(data, n);
    std::span<const SpeedKnot> knots = spline.knots();
    // Seed 002's extra points (0, s1) and (n, sk), the data, and the inner
    // knot of the right tail, one data spacing past x_k.
    ASSERT_EQ(knots.size(), data.size() + 3);
    EXPECT_EQ(knots.front().x, 0);
    EXPECT_EQ(knots.front().s, data.front().s);
    EXPECT_EQ(knots.back().x, n);
    EXPECT_EQ(knots.back().s, data.back().s);
    double spacing = data.back().x - data[data.size() - 2].x;
    EXPECT_EQ(knots[knots.size() - 2].x, data.back().x + spacing);
    EXPECT_EQ(knots[knots.size() - 2].s, data.back().s);
    for (std::size_t i = 0; i < data.size(); ++i) {
      EXPECT_EQ(knots[i + 1].x, data[i].x);
      EXPECT_DOUBLE_EQ(spline.speed(data[i].x), data[i].s);
    }
    // The tail holds the last speed: no swing over the long gap to n.
    for (double x = knots[knots.size() - 2].x; x <= 2 * n; x += 10)
      EXPECT_DOUBLE_EQ(spline.speed(x), data.back().s) << "x = " << x;
    // Below the first point the spline may dip, not below the floor.
    for (double x = 0; x <= data.front().x; x += 1)
      EXPECT_GE(spline.speed(x), data.front().s / 2);
  }
}

TEST(Akima, KnotsAtOrBeyondTheProblemSize) {
  // n inside the data: the data still hold, and the speed is constant
  // beyond the tail at 2 x_k.
  std::vector<SpeedKnot> data = knotsOf({10, 20, 30}, {5, 9, 6});
  for (double n : {0.0, 5.0, 15.0, 30.0}) {
    AkimaSpeed spline(data, n);
    for (const SpeedKnot &knot : data)
      EXPECT_DOUBLE_EQ(spline.speed(knot.x), knot.s);
    EXPECT_EQ(spline.knots().back().x, 60);
    EXPECT_DOUBLE_EQ(spline.speed(45), 6);
    EXPECT_DOUBLE_EQ(spline.speed(1e6), 6);
    EXPECT_GT(spline.speed(n / 2 + 1), 0);
  }
  // A single knot beyond n is the constant model.
  AkimaSpeed one(knotsOf({50}, {3}), 10);
  for (double x : {1.0, 10.0, 50.0, 80.0, 1e4})
    EXPECT_DOUBLE_EQ(one.speed(x), 3);
}

TEST(Akima, StaysPositiveBetweenSharpDrops) {
  // Sawtooth speeds spanning three orders of magnitude.
  AkimaSpeed spline(
      knotsOf({1, 2, 3, 4, 5, 6, 7}, {1000, 1, 1000, 1, 1000, 2, 900}), 10);
  for (double x = 0; x <= 12; x += 0.001) {
    EXPECT_GE(spline.speed(x), 0.5) << "x = " << x;
    EXPECT_TRUE(std::isfinite(spline.time(x + 1e-3)));
  }
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<SpeedKnot> knots = randomKnots(random, 1 + trial % 9);
    AkimaSpeed spline(knots, knots.back().x * 2);
    for (double x = 0; x <= knots.back().x * 3; x += knots.back().x / 997)
      ASSERT_GE(spline.speed(x), slowest(knots) / 2);
  }
}

TEST(Akima, DerivativeMatchesFiniteDifferences) {
  std::mt19937_64 random(3);
  int checked = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<SpeedKnot> knots = randomKnots(random, 1 + trial % 10);
    AkimaSpeed spline(knots, knots.back().x * uniform(random, 1, 5));
    double end = spline.knots().back().x, h = 1e-6 * end;
    double floor = slowest(knots) / 2;
    for (int sample = 0; sample < 50; ++sample) {
      double x = uniform(random, 0, 1.2 * end);
      double lo = spline.speed(x - h), hi = spline.speed(x + h);
      // Not across a knot or onto the floor, where the derivative jumps.
      bool nearKnot = false;
      for (const SpeedKnot &knot : spline.knots())
        nearKnot |= std::abs(knot.x - x) < 2 * h;
      if (nearKnot || std::min(lo, hi) <= floor)
        continue;
      double difference = (hi - lo) / (2 * h);
      double scale = std::max(std::abs(difference), 1e-3 * lo / end);
      EXPECT_NEAR(spline.derivative(x), difference, 1e-4 * scale)
          << "trial " << trial << ", x = " << x;
      ++checked;
    }
  }
  EXPECT_GT(checked, 4000);
}

TEST(Akima, FirstDerivativeIsContinuousAtKnots) {
  // Akima's splines are C1 (the multidimensional-solvers paper, Proposition 1),
  // tails included.
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<SpeedKnot> knots = randomKnots(random, 1 + trial % 10);
    AkimaSpeed spline(knots, knots.back().x * 4);
    double floor = slowest(knots) / 2, h = 1e-12 * spline.knots().back().x;
    // Within h of a knot the derivative moves by about h s'', which is
    // below this.
    double steepest = 0;
    for (std::size_t i = 1; i < knots.size(); ++i)
      steepest = std::max(steepest, std::abs(knots[i].s - knots[i - 1].s) /
                                        (knots[i].x - knots[i - 1].x));
    // Not at 0: speeds are for x > 0, and the time x / s(x) is C1 there
    // however s is held below it.
    for (const SpeedKnot &knot : spline.knots().subspan(1)) {
      if (spline.speed(knot.x - h) <= floor ||
          spline.speed(knot.x + h) <= floor)
        continue;
      double left = spline.derivative(knot.x - h),
             right = spline.derivative(knot.x + h);
      EXPECT_NEAR(left, right, 1e-5 * steepest)
          << "trial " << trial << ", knot at " << knot.x;
    }
  }
}
