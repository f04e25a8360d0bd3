//===- speed_test.cpp - Speed functions -----------------------------------===//

#include "model/speed.hpp"

#include <gtest/gtest.h>

using namespace fpm;

TEST(PiecewiseLinearSpeed, InterpolatesAndHoldsBeyondTheEnds) {
  PiecewiseLinearSpeed s(
      std::vector<SpeedKnot>{{10, 100}, {20, 200}, {40, 100}});
  EXPECT_DOUBLE_EQ(s.speed(1), 100);
  EXPECT_DOUBLE_EQ(s.speed(10), 100);
  EXPECT_DOUBLE_EQ(s.speed(15), 150);
  EXPECT_DOUBLE_EQ(s.speed(20), 200);
  EXPECT_DOUBLE_EQ(s.speed(30), 150);
  EXPECT_DOUBLE_EQ(s.speed(40), 100);
  EXPECT_DOUBLE_EQ(s.speed(1000), 100);
  EXPECT_DOUBLE_EQ(s.time(15), 15.0 / 150);
  EXPECT_DOUBLE_EQ(s.derivative(15), 10);
  EXPECT_DOUBLE_EQ(s.derivative(20), -5); // the right-hand segment at a knot
  EXPECT_DOUBLE_EQ(s.derivative(5), 0);
  EXPECT_DOUBLE_EQ(s.derivative(50), 0);
}

TEST(PiecewiseLinearSpeed, SinglePointIsConstant) {
  Profile profile{"k", "d", "", "", "", {{4, 2.0, {}, {}}}};
  PiecewiseLinearSpeed s(profile);
  EXPECT_DOUBLE_EQ(s.speed(1), 2);
  EXPECT_DOUBLE_EQ(s.speed(4), 2);
  EXPECT_DOUBLE_EQ(s.time(8), 4);
}
