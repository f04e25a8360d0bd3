//===- model/speed.hpp - Continuous speed functions from FPM points -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A speed function s(x) interpolates a profile's speeds S(w) = w / T(w)
// (the WDAH thesis, 2.1.2; the multidimensional-solvers paper, sections 2-3).
// Each gives the speed, the time x / s(x), and ds/dx, which the numerical
// partitioner's Jacobian needs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include <span>
#include <vector>

namespace fpm {

/// A knot of a speed function: speed s at size x (units per second).
struct SpeedKnot {
  double x = 0;
  double s = 0;
};

/// The speeds of a profile's points, as knots.
std::vector<SpeedKnot> speedKnots(const Profile &profile);

class SpeedFunction {
public:
  virtual ~SpeedFunction() = default;
  /// Speed at size x > 0, in units per second; always > 0.
  virtual double speed(double x) const = 0;
  /// d speed / d x at x.
  virtual double derivative(double x) const = 0;
  /// Time to process x units: x / s(x).
  double time(double x) const { return x / speed(x); }
};

/// Linear interpolation between the knots; constant beyond the first and
/// the last. This is the cost model's speed (docs/profiles.md). Its
/// derivative is the slope of the segment holding x (the right-hand one at
/// a knot) and 0 outside the knots.
class PiecewiseLinearSpeed final : public SpeedFunction {
public:
  explicit PiecewiseLinearSpeed(std::vector<SpeedKnot> knots);
  explicit PiecewiseLinearSpeed(const Profile &profile)
      : PiecewiseLinearSpeed(speedKnots(profile)) {}

  double speed(double x) const override;
  double derivative(double x) const override;
  std::span<const SpeedKnot> knots() const { return knots_; }

private:
  std::vector<SpeedKnot> knots_;
};

/// Akima spline through the knots (the multidimensional-solvers paper, 3.2),
/// built on the paper's extended model: a knot (0, s_1) before the first, and a
/// flat tail of two knots holding s_k after the last, ending at `problemSize`
/// (or at twice the last size when the knots already reach it; akima.cpp says
/// why). Beyond the end knots the speed is constant. Between sharp drops the
/// spline may dip below the slowest knot; it is clamped at half of that
/// speed, so that it stays positive.
class AkimaSpeed final : public SpeedFunction {
public:
  /// `problemSize` is the n of the extended models: the whole problem.
  AkimaSpeed(std::vector<SpeedKnot> knots, double problemSize);
  AkimaSpeed(const Profile &profile, double problemSize)
      : AkimaSpeed(speedKnots(profile), problemSize) {}

  double speed(double x) const override;
  double derivative(double x) const override;
  /// The knots the spline passes through, extension included.
  std::span<const SpeedKnot> knots() const { return knots_; }

private:
  /// Index of the segment [k[i], k[i+1]) holding x, inside the knots.
  std::size_t segment(double x) const;
  /// The spline before the floor; its derivative too when asked.
  double raw(double x, double *derivative) const;

  std::vector<SpeedKnot> knots_;
  std::vector<double> slopes_; ///< the spline's derivative at each knot
  std::size_t firstData_ = 0;  ///< index of the first profile knot
  std::size_t lastData_ = 0;   ///< index of the last profile knot
  double floor_ = 0;           ///< the least speed it returns
};

} // namespace fpm
