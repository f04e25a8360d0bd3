//===- partition/geometric.cpp - Geometric bisection partitioning ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The Lastovetsky-Reddy algorithm (the multidimensional-solvers paper, 2.1; the
// WDAH thesis, 3.4): a line s = x / T through the origin of the (x, s) plane
// meets every speed function where x / s(x) = T, so its intersections are a
// partition in which every PE takes time T. Bisecting the line's slope 1/T
// until the intersections sum to N finds the partition where all finish
// together. The speed functions are the cost model's: linear between profile
// points, constant beyond.
//
// The paper assumes shapes (increasing and concave, then decreasing; one
// intersection per line) that real profiles break: a line may cross a
// speed function several times, and then "the" intersection is undefined
// and the sum of intersections may fall as the slope does. We take, for
// every PE and line, the largest intersection: X_i(T), the most units the
// PE finishes within time T, i.e. the largest x with t_i(x) = x / s_i(x) <=
// T (capped at N, more than which no PE needs). X_i(T) never decreases in T,
// so the bisection is well defined whatever the shapes, and its answer T*,
// the least T with sum X_i(T) >= N, is a lower bound on the makespan of any
// real-valued partition; on the paper's shapes it is the paper's solution.
//
// Where t_i is not monotone, X_i(T) jumps at T* (a sharp rise in speed makes
// a larger share faster than a smaller one), and sum X_i(T*) overshoots N.
// The PEs that jump then keep their larger share, which they finish within
// T*, and the others are bisected again for what is left; each round fixes
// at least one PE. The shares then go to roundShares with the cost model's
// times.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

#include <algorithm>
#include <cmath>

namespace fpm {

namespace {

/// The most units (at most `cap`) that `speed` finishes within time `time`:
/// the largest x in [0, cap] at which the speed function lies on or above
/// the line s = x / time. Between knots both are linear in x, so
/// g(x) = s(x) - x / time is too, and the crossing is exact.
double mostWithin(const PiecewiseLinearSpeed &speed, double time, double cap) {
  auto gap = [&](double x) { return speed.speed(x) - x / time; };
  double right = cap, gapRight = gap(cap);
  if (gapRight >= 0)
    return cap;
  // Breakpoints below cap, right to left, ending at 0 where g = s > 0.
  std::span<const SpeedKnot> knots = speed.knots();
  auto below = std::lower_bound(
      knots.begin(), knots.end(), cap,
      [](const SpeedKnot &knot, double value) { return knot.x < value; });
  for (auto knot = below; knot != knots.begin();) {
    --knot;
    double left = knot->x, gapLeft = gap(left);
    if (gapLeft >= 0)
      return left + gapLeft / (gapLeft - gapRight) * (right - left);
    right = left;
    gapRight = gapLeft;
  }
  double gapZero = speed.speed(0);
  return gapZero / (gapZero - gapRight) * right;
}

/// The largest time t(x) = x / s(x) over [0, cap]; on each piece of s it is
/// monotone, so a breakpoint holds it.
double slowestWithin(const PiecewiseLinearSpeed &speed, double cap) {
  double slowest = cap / speed.speed(cap);
  for (const SpeedKnot &knot : speed.knots())
    if (knot.x < cap)
      slowest = std::max(slowest, knot.x / knot.s);
  return slowest;
}

/// The final bracket [lo, hi] of a bisection, as the shares X_i there: they
/// sum to less than the target at lo, to at least the target at hi.
struct Bracket {
  std::vector<double> low, high;
};

/// Bisects the line's time T for the PEs in `active` until sum X_i(T)
/// reaches `target`; no share exceeds `cap`.

Bracket bisect(const CostModel &model, std::span<const std::size_t> active,
               double target, double cap) {
  const std::size_t p = model.size();
  auto within = [&](double time) {
    std::vector<double> shares(p, 0);
    double total = 0;
    for (std::size_t pe : active) {
      shares[pe] = mostWithin(model.speed(pe), time, cap);
      total += shares[pe];
    }
    return std::pair{shares, total};
  };

  // Bounds: no PE beats its top speed, so below target / sum(top) the sum
  // falls short; at the largest time any one PE can need for `cap`, that
  // PE alone reaches it.
  double fastest = 0, hi = INFINITY;
  for (std::size_t pe : active) {
    double top = 0;
    for (const SpeedKnot &knot : model.speed(pe).knots())
      top = std::max(top, knot.s);
    fastest += top;
    hi = std::min(hi, slowestWithin(model.speed(pe), cap));
  }
  hi *= 1 + 1e-12; // so that rounding cannot keep that PE short of cap
  double lo = std::min(target / fastest, hi) * (1 - 1e-12);

  Bracket bracket{within(lo).first, within(hi).first};
  for (int step = 0; step < 200; ++step) {
    double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi || hi - lo <= 1e-15 * hi)
      break;
    auto [shares, total] = within(mid);
    if (total >= target) {
      hi = mid;
      bracket.high = std::move(shares);
    } else {
      lo = mid;
      bracket.low = std::move(shares);
    }
  }
  return bracket;
}

} // namespace

Distribution partitionGeometric(const CostModel &model,
                                const PartitionRequest &request) {
  const std::size_t p = model.size();
  const double n = static_cast<double>(request.size);
  // Shares smaller than this are rounding noise, not a jump in X_i(T).
  const double noise = 1e-9 * n;

  std::vector<double> shares(p, 0);
  std::vector<std::size_t> active(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    active[pe] = pe;
  double target = n;

  while (!active.empty() && target > noise) {
    Bracket bracket = bisect(model, active, target, n);
    double low = 0, high = 0, jumped = 0;
    std::vector<std::size_t> rest;
    for (std::size_t pe : active) {
      low += bracket.low[pe];
      high += bracket.high[pe];
      if (bracket.high[pe] - bracket.low[pe] > noise)
        jumped += bracket.high[pe];
      else
        rest.push_back(pe);
    }
    if (high - target <= noise || rest.size() == active.size() ||
        jumped > target) {
      // Continuous at T* (or jumps that cannot all be kept): fill what the
      // lower line misses in proportion to what each PE gains up to the
      // upper line.
      double deficit = std::max(target - low, 0.0), gain = high - low;
      for (std::size_t pe : active) {
        double share = bracket.low[pe];
        if (gain > 0)
          share += deficit * (bracket.high[pe] - bracket.low[pe]) / gain;
        shares[pe] = share;
      }
      break;
    }
    for (std::size_t pe : active)
      if (bracket.high[pe] - bracket.low[pe] > noise)
        shares[pe] = bracket.high[pe];
    target -= jumped;
    active = std::move(rest);
  }

  return roundShares(shares, request,
                     [&model](std::size_t pe, std::int64_t units) {
                       return model.time(pe, units);
                     });
}

} // namespace fpm
