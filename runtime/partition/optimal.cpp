//===- partition/optimal.cpp - Exact minimum makespan, any packages -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The yardstick every other partitioner is measured against: the least
// makespan under the cost model of docs/profiles.md, with any number of
// packages per PE (the WDAH thesis, 4.1, eq. 4.2-4.4, with packages restricted
// to multiples of G).
//
// Per PE, f(k) is the least time of k granules in any packages (an unbounded
// knapsack, since t need not be subadditive nor monotone), and h(k) that of
// k granules plus the remainder. Then minMaxSplit finds the split over PEs.
// Time O(p K^2) at worst for K = N / G, memory O(p K); the HPOPTA makespan,
// which can never be beaten by less, prunes both steps.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"
#include "partition/min_max.hpp"

#include <algorithm>
#include <limits>

namespace fpm {
namespace {

constexpr double Infinity = std::numeric_limits<double>::infinity();

/// One PE's least times and how they were reached.
struct PeTimes {
  GranuleTimes least;
  /// The last package of the best way to do k granules (0 for k = 0).
  std::vector<std::int64_t> lastPackage;
  /// The granules merged with the remainder in the best way to do k
  /// granules and the remainder (0: the remainder is a package of its own).
  std::vector<std::int64_t> mergedGranules;
};

PeTimes leastTimes(const CostModel &model, std::size_t pe, std::int64_t g,
                   std::int64_t granules, std::int64_t remainder,
                   double bound) {
  const std::size_t width = static_cast<std::size_t>(granules) + 1;
  PeTimes result;
  std::vector<double> &f = result.least.plain;
  f.assign(width, Infinity);
  f[0] = 0;
  result.lastPackage.assign(width, 0);
  // No package exceeds N, so the spec's cap of max(N, largest profile size)
  // never binds. Larger packages first, so that ties keep fewer packages;
  // inside one package size, k rising lets it be used again and again.
  for (std::size_t a = width - 1; a >= 1; --a) {
    const double time = model.time(pe, static_cast<std::int64_t>(a) * g);
    if (!(time <= bound))
      continue;
    for (std::size_t k = a; k < width; ++k)
      if (double candidate = f[k - a] + time;
          candidate < f[k] && candidate <= bound) {
        f[k] = candidate;
        result.lastPackage[k] = static_cast<std::int64_t>(a);
      }
  }
  if (remainder == 0)
    return result;

  // The remainder is a package of its own (a = 0) or merged into one of the
  // PE's packages (a > 0): docs/profiles.md makes it "one extra
  // package", but single-share partitioners merge it into their share and
  // checkDistribution accepts that, so optimal must allow it too or another
  // algorithm could beat it.
  std::vector<double> &h = result.least.withRemainder;
  h.assign(width, Infinity);
  result.mergedGranules.assign(width, 0);
  for (std::size_t a = 0; a < width; ++a) {
    const double time =
        model.time(pe, static_cast<std::int64_t>(a) * g + remainder);
    if (!(time <= bound))
      continue;
    for (std::size_t k = a; k < width; ++k)
      if (double candidate = f[k - a] + time;
          candidate < h[k] && candidate <= bound) {
        h[k] = candidate;
        result.mergedGranules[k] = static_cast<std::int64_t>(a);
      }
  }
  return result;
}

/// The packages behind f(k), in the order the knapsack added them, so that
/// their time summed left to right is at most f(k).
std::vector<std::int64_t> packagesOf(const PeTimes &times, std::int64_t k,
                                     std::int64_t g) {
  std::vector<std::int64_t> packages;
  for (; k > 0; k -= times.lastPackage[k])
    packages.push_back(times.lastPackage[k] * g);
  std::reverse(packages.begin(), packages.end());
  return packages;
}

} // namespace

Distribution partitionOptimal(const CostModel &model,
                              const PartitionRequest &request) {
  const std::size_t p = model.size();
  const std::int64_t g = request.granularity;
  const std::int64_t granules = request.units();
  const std::int64_t remainder = request.remainder();

  // One package per PE is one of the choices here, so HPOPTA's makespan is
  // an upper bound: nothing slower needs to be looked at.
  Distribution incumbent = leastOnePackageEach(model, request);
  const double bound = evaluate(model, incumbent).makespan;

  std::vector<PeTimes> times;
  times.reserve(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    times.push_back(leastTimes(model, pe, g, granules, remainder, bound));
  std::vector<GranuleTimes> least;
  least.reserve(p);
  for (PeTimes &pe : times)
    least.push_back(std::move(pe.least));

  std::optional<std::vector<GranuleShare>> split =
      minMaxSplit(least, granules, remainder > 0, bound);
  if (!split)
    return incumbent;

  Distribution result;
  result.packages.resize(p);
  for (std::size_t pe = 0; pe < p; ++pe) {
    const GranuleShare &share = (*split)[pe];
    if (!share.remainder) {
      result.packages[pe] = packagesOf(times[pe], share.granules, g);
      continue;
    }
    std::int64_t merged = times[pe].mergedGranules[share.granules];
    result.packages[pe] = packagesOf(times[pe], share.granules - merged, g);
    result.packages[pe].push_back(merged * g + remainder);
  }
  return result;
}

} // namespace fpm
