//===- model/speed.cpp - Piecewise linear speed functions -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "model/speed.hpp"

#include <algorithm>
#include <cassert>

namespace fpm {

std::vector<SpeedKnot> speedKnots(const Profile &profile) {
  std::vector<SpeedKnot> knots;
  knots.reserve(profile.points.size());
  for (const ProfilePoint &point : profile.points)
    knots.push_back({static_cast<double>(point.size), point.speed()});
  return knots;
}

PiecewiseLinearSpeed::PiecewiseLinearSpeed(std::vector<SpeedKnot> knots)
    : knots_(std::move(knots)) {
  assert(!knots_.empty() && "a speed function needs at least one knot");
}

namespace {
/// Index of the segment [k[i], k[i+1]) holding x, for x inside the knots.
std::size_t segmentOf(std::span<const SpeedKnot> knots, double x) {
  auto above = std::upper_bound(
      knots.begin(), knots.end(), x,
      [](double value, const SpeedKnot &knot) { return value < knot.x; });
  return static_cast<std::size_t>(above - knots.begin()) - 1;
}
} // namespace

double PiecewiseLinearSpeed::speed(double x) const {
  if (x <= knots_.front().x)
    return knots_.front().s;
  if (x >= knots_.back().x)
    return knots_.back().s;
  std::size_t i = segmentOf(knots_, x);
  const SpeedKnot &a = knots_[i], &b = knots_[i + 1];
  return a.s + (b.s - a.s) * (x - a.x) / (b.x - a.x);
}

double PiecewiseLinearSpeed::derivative(double x) const {
  if (x < knots_.front().x || x >= knots_.back().x)
    return 0;
  std::size_t i = segmentOf(knots_, x);
  const SpeedKnot &a = knots_[i], &b = knots_[i + 1];
  return (b.s - a.s) / (b.x - a.x);
}

} // namespace fpm
