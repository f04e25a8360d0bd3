//===- model/akima.cpp - Akima spline speed functions ---------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Akima (1970) interpolation of a profile's speeds, on the extended model of
// the multidimensional-solvers paper, 3.2. Between knots the spline is the
// cubic Hermite polynomial with Akima's slopes: at knot i, with m1..m4 the
// slopes of the four segments around it,
//
//   t_i = (|m4 - m3| m2 + |m2 - m1| m3) / (|m4 - m3| + |m2 - m1|),
//
// the mean (m2 + m3) / 2 when both weights vanish, and Akima's end rule
// (the two missing slopes extrapolated linearly) at the outermost knots.
//
// The extended model. Seed 002 adds (0, s_1) and (n, s_k) around the k data
// knots and, when k < 5, duplicates of the edge speeds to reach Akima's five
// points. Its printed lists are garbled: for k = 1 "((n - x_1)/2, s_1)" lies
// left of x_1 whenever n < 3 x_1, so the knots would not even be ordered; for
// k = 2 "(n x_2 / 2, s_2)" lies far beyond n. Both can only mean the midpoint
// of the gap to n, ((x_1 + n)/2, s_1) and ((x_2 + n)/2, s_2), mirroring the
// left midpoint x_1 / 2 of k = 1. We keep the paper's left end, (0, s_1)
// (and x_1 / 2 for k = 1), and give every k (k = 3, 4 and more included) the
// right end of k = 1, 2: (x_k + dR, s_k) and (n, s_k), so that there are
// always at least five knots.
//
// Why two segments on the right for every k: Akima's slope at a knot between
// two equal segment slopes is that slope, so the outer segment is exactly
// flat and the speed holds s_k up to n and beyond, as the cost model does
// beyond its points. With the paper's single segment to n (its k = 3),
// Akima's end rule gives x_k a nonzero slope and the cubic over [x_k, n]
// swings by about 0.15 |t_k| (n - x_k), which grows without bound with n.
// dR = min((n - x_k) / 2, x_k - x_{k-1}) is the paper's midpoint, but never
// more than one data spacing: x_k's slope is then 0 unless the last two data
// segments are collinear (see the tie rule), and the swing into the inner
// segment stays below 4/27 of the last data step however far n is. The left
// end stays as printed: [0, x_1] is bounded by the data, and its single
// segment lets Akima's end rule give x_1 a slope along the data's, where a
// flat tail would force 0 and bend the first segment into an S, on which
// x / s(x) stops increasing and the numerical partitioner stalls.
//
// Tie rule at the last data knot: when the last two data segments are
// collinear and the tail is flat, both Akima weights vanish; the mean would
// bend a straight line of data. We take the data side's slope instead, so
// that a linear speed function is reproduced exactly on [x_1, x_k].
//
// Knots at or beyond n: the profile already covers the problem, and the right
// end is 2 x_k; the tail then only serves the five-point minimum and the flat
// end, and the speed beyond x_k matters to no share of n.
//
//===----------------------------------------------------------------------===//

#include "model/speed.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace fpm {

namespace {

/// Relative size below which two segment slopes count as equal: data that
/// lie on one line give slopes that differ only by rounding.
constexpr double TieTolerance = 1e-9;

/// The spline may dip below the slowest measured speed between sharp drops;
/// below this fraction of it the dip is an artefact, and the speed is held
/// there, positive.
constexpr double FloorFraction = 0.5;

} // namespace

AkimaSpeed::AkimaSpeed(std::vector<SpeedKnot> data, double problemSize) {
  assert(!data.empty() && "a speed function needs at least one knot");
  assert(std::adjacent_find(data.begin(), data.end(),
                            [](const SpeedKnot &a, const SpeedKnot &b) {
                              return a.x >= b.x;
                            }) == data.end() &&
         "knot sizes must be strictly increasing");
  assert(std::all_of(data.begin(), data.end(),
                     [](const SpeedKnot &knot) { return knot.s > 0; }) &&
         "speeds must be positive");
  const std::size_t k = data.size();
  const SpeedKnot first = data.front(), last = data.back();

  double slowest = first.s;
  for (const SpeedKnot &knot : data)
    slowest = std::min(slowest, knot.s);
  floor_ = FloorFraction * slowest;

  double right = problemSize > last.x && std::isfinite(problemSize)
                     ? problemSize
                     : 2 * last.x;
  double rightGap = (right - last.x) / 2;
  if (k > 1)
    rightGap = std::min(rightGap, last.x - data[k - 2].x);

  knots_.reserve(k + 4);
  if (first.x > 0) {
    knots_.push_back({0, first.s});
    if (k == 1)
      knots_.push_back({first.x / 2, first.s});
  }
  firstData_ = knots_.size();
  knots_.insert(knots_.end(), data.begin(), data.end());
  lastData_ = knots_.size() - 1;
  knots_.push_back({last.x + rightGap, last.s});
  knots_.push_back({right, last.s});

  // Segment slopes, with Akima's two extrapolated slopes at each end:
  // slope[j + 2] is the slope of segment j, from knot j to knot j + 1.
  const std::size_t m = knots_.size();
  std::vector<double> slope(m + 3);
  double steepest = 0;
  for (std::size_t j = 0; j + 1 < m; ++j) {
    slope[j + 2] =
        (knots_[j + 1].s - knots_[j].s) / (knots_[j + 1].x - knots_[j].x);
    steepest = std::max(steepest, std::abs(slope[j + 2]));
  }
  slope[1] = 2 * slope[2] - slope[3];
  slope[0] = 2 * slope[1] - slope[2];
  slope[m + 1] = 2 * slope[m] - slope[m - 1];
  slope[m + 2] = 2 * slope[m + 1] - slope[m];

  const double tie = TieTolerance * steepest;
  slopes_.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    // Knot i sits between segments i - 1 and i: slope[i + 1], slope[i + 2].
    double m1 = slope[i], m2 = slope[i + 1], m3 = slope[i + 2],
           m4 = slope[i + 3];
    double w2 = std::abs(m4 - m3), w3 = std::abs(m2 - m1);
    if (w2 <= tie && w3 <= tie) {
      slopes_[i] = i == lastData_ && i != firstData_ ? m2 : (m2 + m3) / 2;
    } else {
      slopes_[i] = (w2 * m2 + w3 * m3) / (w2 + w3);
    }
  }
}

std::size_t AkimaSpeed::segment(double x) const {
  auto above = std::upper_bound(
      knots_.begin(), knots_.end(), x,
      [](double value, const SpeedKnot &knot) { return value < knot.x; });
  return static_cast<std::size_t>(above - knots_.begin()) - 1;
}

double AkimaSpeed::raw(double x, double *derivative) const {
  // A solver driven to extreme values may ask at NaN: no segment holds it.
  if (std::isnan(x)) {
    if (derivative)
      *derivative = x;
    return x;
  }
  if (x <= knots_.front().x || x >= knots_.back().x) {
    if (derivative)
      *derivative = 0;
    return x <= knots_.front().x ? knots_.front().s : knots_.back().s;
  }
  std::size_t i = segment(x);
  const SpeedKnot &a = knots_[i], &b = knots_[i + 1];
  double h = b.x - a.x, t = (x - a.x) / h;
  double ta = slopes_[i] * h, tb = slopes_[i + 1] * h;
  // Cubic Hermite basis on [0, 1].
  double t2 = t * t, t3 = t2 * t;
  double value = (2 * t3 - 3 * t2 + 1) * a.s + (t3 - 2 * t2 + t) * ta +
                 (-2 * t3 + 3 * t2) * b.s + (t3 - t2) * tb;
  if (derivative)
    *derivative = ((6 * t2 - 6 * t) * a.s + (3 * t2 - 4 * t + 1) * ta +
                   (-6 * t2 + 6 * t) * b.s + (3 * t2 - 2 * t) * tb) /
                  h;
  return value;
}

double AkimaSpeed::speed(double x) const {
  return std::max(raw(x, nullptr), floor_);
}

double AkimaSpeed::derivative(double x) const {
  double slope = 0;
  double value = raw(x, &slope);
  // Where the floor holds the speed, it is flat.
  return value > floor_ ? slope : 0;
}

} // namespace fpm
