//===- residency/copy_cost.cpp - What moving bytes costs ------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "residency/copy_cost.hpp"

#include <algorithm>
#include <cmath>

namespace fpm::residency {

void CopyCost::add(std::size_t bytes, double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    return;
  const auto x = static_cast<double>(bytes);
  weight_ = weight_ * Decay + 1;
  x_ = x_ * Decay + x;
  y_ = y_ * Decay + seconds;
  xx_ = xx_ * Decay + x * x;
  xy_ = xy_ * Decay + x * seconds;
}

double CopyCost::secondsPerByte() const {
  if (!known())
    return 0;
  // Copies of about one size say nothing of the slope: then the line is
  // flat (their mean), unless it must go through the origin (below).
  const double spread = weight_ * xx_ - x_ * x_;
  double slope = 0;
  if (spread > 1e-4 * x_ * x_)
    slope = std::max(0.0, (weight_ * xy_ - x_ * y_) / spread);
  if ((y_ - slope * x_) / weight_ < 0 && x_ > 0)
    slope = y_ / x_; // a negative latency: the line through the origin
  return slope;
}

double CopyCost::latency() const {
  if (!known())
    return 0;
  return std::max(0.0, (y_ - secondsPerByte() * x_) / weight_);
}

double CopyCost::seconds(std::size_t bytes) const {
  if (!known())
    return 0;
  return latency() + secondsPerByte() * static_cast<double>(bytes);
}

} // namespace fpm::residency
