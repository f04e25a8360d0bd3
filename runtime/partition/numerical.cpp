//===- partition/numerical.cpp - Partitioning by multidimensional roots ---===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The numerical partitioner of the multidimensional-solvers paper, section 3:
// with speeds s_i interpolated by Akima splines (model/akima.cpp), the
// partition where all PEs finish together is a root of
//
//   F_1(x) = n - sum x_i,   F_i(x) = x_i / s_i(x_i) - x_1 / s_1(x_1), i >= 2,
//
// (eq. 2) whose Jacobian (eq. 5) has -1 along the first row and, in row i,
// t_i'(x_i) = (s_i - x_i s_i') / s_i^2 on the diagonal and -t_1'(x_1) in the
// first column. MINPACK's HYBRJ (Powell's hybrid method) finds the root.
//
// We solve for fractions y_i = x_i / n and divide the time rows by a time
// scale, so that both kinds of equation are O(1) and HYBRJ's tolerance means
// the same for every n and every speed.
//
// Guesses. The paper starts from the equal split (eq. 4). We start from the
// proportional split at the speeds the PEs have at n/p, which is nearer the
// root when the PEs differ, then from the paper's equal split, then from the
// geometric partition (near the root wherever Akima's curve and the cost
// model's chords agree). The paper notes that F may have several roots; of
// those found, the one where all finish soonest is kept. HYBRJ's own status
// is not trusted: an answer counts as a root only if it is finite,
// non-negative, sums to n and balances the times to 1e-6.
//
// Guards. Proposition 2 of the paper (no stationary points) needs each t_i
// increasing; Akima's curve between sparse points can break that even where
// the data do not, and HYBRJ then stalls from every guess. Where t_i is not
// monotone, equal finish is also not optimal: a partition with unequal
// times may beat every root. So the answer is the geometric partition when
// no root is found, or when it is faster by the Akima speeds themselves.
// Shares are rounded by roundShares with the cost model's times.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

#include <cminpack.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace fpm {

namespace {

/// What HYBRJ's callback needs: the speed functions and the scales.
struct System {
  std::span<const AkimaSpeed> speeds;
  double size;      ///< n
  double timeScale; ///< seconds that count as 1 in the time rows
};

/// t'(x) = (s - x s') / s^2, the slope of x / s(x).
double timeSlope(const AkimaSpeed &speed, double x) {
  double s = speed.speed(x);
  return (s - x * speed.derivative(x)) / (s * s);
}

/// HYBRJ's callback: F(y) for flag 1, its Jacobian (column-major) for 2.
int evaluate(void *context, int count, const double *y, double *f,
             double *jacobian, int leading, int flag) {
  const System &system = *static_cast<const System *>(context);
  const auto p = static_cast<std::size_t>(count);
  const auto ld = static_cast<std::size_t>(leading);
  const double n = system.size, scale = system.timeScale;
  if (flag == 1) {
    double sum = 0;
    for (std::size_t i = 0; i < p; ++i)
      sum += y[i];
    f[0] = 1 - sum;
    double first = system.speeds[0].time(n * y[0]);
    for (std::size_t i = 1; i < p; ++i)
      f[i] = (system.speeds[i].time(n * y[i]) - first) / scale;
  } else if (flag == 2) {
    std::fill(jacobian, jacobian + ld * p, 0.0);
    for (std::size_t j = 0; j < p; ++j)
      jacobian[j * ld] = -1;
    double first = n * timeSlope(system.speeds[0], n * y[0]) / scale;
    for (std::size_t i = 1; i < p; ++i) {
      jacobian[i] = -first;
      jacobian[i + i * ld] = n * timeSlope(system.speeds[i], n * y[i]) / scale;
    }
  }
  return 0;
}

/// A root of F: shares in units, and the time in which all finish.
struct Root {
  std::vector<double> shares;
  double time = INFINITY;
};

/// Runs HYBRJ from the fractions `y`; returns the root when the answer is a
/// partition of n with balanced times.
std::optional<Root> solve(System system, std::vector<double> y) {
  const int p = static_cast<int>(y.size());
  const auto count = static_cast<std::size_t>(p);
  std::vector<double> f(count), jacobian(count * count), diag(count, 1.0),
      r(count * (count + 1) / 2), qtf(count), wa1(count), wa2(count),
      wa3(count), wa4(count);
  int evaluations = 0, jacobians = 0;
  hybrj(evaluate, &system, p, y.data(), f.data(), jacobian.data(), p,
        /*xtol=*/1e-12, /*maxfev=*/100 * (p + 1), diag.data(), /*mode=*/1,
        /*factor=*/100, /*nprint=*/0, &evaluations, &jacobians, r.data(),
        static_cast<int>(r.size()), qtf.data(), wa1.data(), wa2.data(),
        wa3.data(), wa4.data());

  // Judge the answer ourselves: HYBRJ may report success on a stationary
  // point, or give up one rounding short of a root.
  constexpr double Tolerance = 1e-6;
  std::vector<double> shares(count);
  double sum = 0, slowest = 0, fastest = INFINITY;
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(y[i]) || y[i] < -Tolerance)
      return std::nullopt;
    shares[i] = std::max(y[i], 0.0) * system.size;
    sum += shares[i];
    double time = system.speeds[i].time(shares[i]);
    slowest = std::max(slowest, time);
    fastest = std::min(fastest, time);
  }
  if (std::abs(sum - system.size) > Tolerance * system.size ||
      slowest - fastest > Tolerance * slowest)
    return std::nullopt;
  // Sum to n exactly, so that rounding has no more than p granules to move.
  for (double &share : shares)
    share *= system.size / sum;
  return Root{std::move(shares), slowest};
}

} // namespace

Distribution partitionNumerical(const CostModel &model,
                                const PartitionRequest &request) {
  const std::size_t p = model.size();
  const double n = static_cast<double>(request.size);
  auto costTime = [&model](std::size_t pe, std::int64_t units) {
    return model.time(pe, units);
  };
  if (p == 1 || n <= 0)
    return roundShares(std::vector<double>(p, n / static_cast<double>(p)),
                       request, costTime);

  std::vector<AkimaSpeed> speeds;
  speeds.reserve(p);
  for (const Profile &profile : model.profiles())
    speeds.emplace_back(profile, n);

  std::vector<double> proportional(p), equal(p, 1.0 / static_cast<double>(p));
  double total = 0;
  for (std::size_t pe = 0; pe < p; ++pe) {
    proportional[pe] = speeds[pe].speed(n / static_cast<double>(p));
    total += proportional[pe];
  }
  for (double &share : proportional)
    share /= total;
  // The time of n units at the summed speeds: the order of the root's time.
  const System system{speeds, n, n / total};

  // The geometric partition: the third guess, and the answer if no root is
  // found or the root is slower.
  Distribution geometric = partitionGeometric(model, request);
  std::vector<double> near(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    near[pe] = static_cast<double>(geometric.iterations(pe)) / n;

  // F may have several roots; the one where all finish soonest is best.
  std::optional<Root> best;
  for (const std::vector<double> &guess : {proportional, equal, near})
    if (std::optional<Root> root = solve(system, guess);
        root && (!best || root->time < best->time))
      best = std::move(root);
  if (!best)
    return geometric;
  Distribution result = roundShares(best->shares, request, costTime);
  // Judged by the solver's own (Akima) speeds, not the cost model's, so that
  // the interpolation the paper argues for is what decides.
  auto akimaMakespan = [&speeds](const Distribution &distribution) {
    double makespan = 0;
    for (std::size_t pe = 0; pe < speeds.size(); ++pe)
      makespan = std::max(makespan, speeds[pe].time(static_cast<double>(
                                        distribution.iterations(pe))));
    return makespan;
  };
  return akimaMakespan(geometric) < akimaMakespan(result) ? geometric : result;
}

} // namespace fpm
