//===- partition/hpopta.cpp - Exact minimum makespan, one package per PE --===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// HPOPTA (Khaleghzadeh et al.; the WDAH thesis, 3.1): one partition x_i per PE,
// sum x_i = n (3.2), minimising max_i x_i / s_i(x_i) (3.1). As the thesis
// describes it, an exhaustive search starts from the cost of the equal
// distribution as its upper bound and prunes every branch that cannot beat
// it. Here the search runs PE by PE over the number of granules handed out
// so far (minMaxSplit): the states a recursive search would revisit are
// solved once, which makes it exact and O(p K^2) at worst.
//
// Two departures from the paper's setting, both from docs/profiles.md:
// a share is any multiple of G up to N, not only a profiled size (sizes
// beyond the profile are extrapolated by the cost model, so the search never
// fails where the paper's may), and the remainder N mod G joins one share.
// Where no one-package split has a finite time, it hands out packages as
// `optimal` does.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"
#include "partition/min_max.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace fpm {
namespace {

constexpr double Infinity = std::numeric_limits<double>::infinity();

/// out[k] = min(out[k], max(prev[k - a], times[a])) over every a whose time
/// is within `bound`: one more PE taking a granules after the PEs in `prev`.
/// Only the finite part of `prev` is read, so sparse layers stay cheap.
void relax(std::span<double> out, std::span<const double> prev,
           std::span<const double> times, double bound) {
  auto isFinite = [](double v) { return v != Infinity; };
  auto firstIt = std::find_if(prev.begin(), prev.end(), isFinite);
  if (firstIt == prev.end())
    return;
  const std::size_t first = firstIt - prev.begin();
  const std::size_t last =
      prev.size() - 1 -
      (std::find_if(prev.rbegin(), prev.rend(), isFinite) - prev.rbegin());
  const std::size_t width = out.size();
  for (std::size_t a = 0; first + a < width; ++a) {
    const double time = times[a];
    if (!(time <= bound))
      continue;
    // Contiguous and branch-free, so that it vectorises.
    const std::size_t end = std::min(width, last + a + 1);
    for (std::size_t k = first + a; k < end; ++k)
      out[k] = std::min(out[k], std::max(prev[k - a], time));
  }
}

/// Makespans beyond the bound can never be part of the answer.
void clip(std::span<double> values, double bound) {
  for (double &value : values)
    if (!(value <= bound))
      value = Infinity;
}

} // namespace

std::optional<std::vector<GranuleShare>>
minMaxSplit(std::span<const GranuleTimes> pes, std::int64_t granules,
            bool remainder, double bound) {
  const std::size_t p = pes.size();
  const std::size_t width = static_cast<std::size_t>(granules) + 1;
  const int target = remainder ? 1 : 0;
  auto times = [&](std::size_t pe, int withRemainder) -> const auto & {
    return withRemainder ? pes[pe].withRemainder : pes[pe].plain;
  };

  // best[j][s][k]: the least makespan of PEs 0..j doing k granules, holding
  // the remainder when s = 1; +inf beyond the bound. The last PE needs only
  // k = K, so it gets no layer.
  using Layer = std::array<std::vector<double>, 2>;
  std::vector<Layer> best(p - 1);
  for (std::size_t j = 0; j + 1 < p; ++j) {
    for (int s = 0; s <= target; ++s)
      best[j][s].assign(width, Infinity);
    if (j == 0) {
      for (int s = 0; s <= target; ++s) {
        std::copy(times(0, s).begin(), times(0, s).end(), best[0][s].begin());
        clip(best[0][s], bound);
      }
      continue;
    }
    relax(best[j][0], best[j - 1][0], times(j, 0), bound);
    if (remainder) {
      relax(best[j][1], best[j - 1][1], times(j, 0), bound);
      relax(best[j][1], best[j - 1][0], times(j, 1), bound);
    }
    for (int s = 0; s <= target; ++s)
      clip(best[j][s], bound);
  }

  // The PEs before `pe`, in state (s, k): 0 for nothing at all.
  auto before = [&](std::size_t pe, int s, std::size_t k) {
    if (pe == 0)
      return s == 0 && k == 0 ? 0.0 : Infinity;
    return best[pe - 1][s][k];
  };

  // The last PE: every share it could take, against the rest.
  const std::size_t lastPe = p - 1;
  double makespan = Infinity;
  GranuleShare lastShare;
  for (std::size_t a = 0; a < width; ++a)
    for (int s = 0; s <= target; ++s) {
      double value = std::max(before(lastPe, target - s, width - 1 - a),
                              times(lastPe, s)[a]);
      if (value < makespan) {
        makespan = value;
        lastShare = {static_cast<std::int64_t>(a), s == 1};
      }
    }
  // Every split takes forever (times past the largest double): none is
  // within any bound, and all shares left at 0 would lose the work.
  if (makespan == Infinity || !(makespan <= bound))
    return std::nullopt;

  // Walk back: any choice within the makespan that leaves a state the PEs
  // before can finish within it belongs to an optimal split.
  std::vector<GranuleShare> shares(p);
  shares[lastPe] = lastShare;
  std::size_t k = width - 1 - static_cast<std::size_t>(lastShare.granules);
  int s = target - (lastShare.remainder ? 1 : 0);
  for (std::size_t pe = lastPe; pe-- > 0;) {
    bool found = false;
    for (std::size_t a = 0; a <= k && !found; ++a)
      for (int here = 0; here <= s && !found; ++here)
        if (times(pe, here)[a] <= makespan &&
            before(pe, s - here, k - a) <= makespan) {
          shares[pe] = {static_cast<std::int64_t>(a), here == 1};
          k -= a;
          s -= here;
          found = true;
        }
  }
  return shares;
}

Distribution leastOnePackageEach(const CostModel &model,
                                 const PartitionRequest &request) {
  const std::size_t p = model.size();
  const std::int64_t g = request.granularity;
  const std::int64_t granules = request.units();
  const std::int64_t remainder = request.remainder();

  std::vector<GranuleTimes> pes(p);
  for (std::size_t pe = 0; pe < p; ++pe) {
    pes[pe].plain.resize(granules + 1);
    for (std::int64_t k = 0; k <= granules; ++k)
      pes[pe].plain[k] = model.time(pe, k * g);
    if (remainder > 0) {
      pes[pe].withRemainder.resize(granules + 1);
      for (std::int64_t k = 0; k <= granules; ++k)
        pes[pe].withRemainder[k] = model.time(pe, k * g + remainder);
    }
  }

  // The thesis' first upper bound: the cost of the equal distribution. It is
  // one of the splits searched, so the search finds one within it.
  Distribution equal = partitionEqual(model, request);
  const double bound = evaluate(model, equal).makespan;
  std::optional<std::vector<GranuleShare>> split =
      minMaxSplit(pes, granules, remainder > 0, bound);
  if (!split)
    return equal;

  Distribution result;
  result.packages.resize(p);
  for (std::size_t pe = 0; pe < p; ++pe) {
    const GranuleShare &share = (*split)[pe];
    std::int64_t size = share.granules * g + (share.remainder ? remainder : 0);
    if (size > 0)
      result.packages[pe].push_back(size);
  }
  return result;
}

Distribution partitionHpopta(const CostModel &model,
                             const PartitionRequest &request) {
  Distribution best = leastOnePackageEach(model, request);
  // No one-package split finishes (a profile whose last point takes 1e308 s
  // extrapolates past the largest double): packages of any size may, where
  // HPOPTA alone would give up.
  if (!std::isfinite(evaluate(model, best).makespan))
    return partitionOptimal(model, request);
  return best;
}

} // namespace fpm
