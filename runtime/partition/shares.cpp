//===- partition/shares.cpp - Rounding real shares to packages ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

namespace fpm {

Distribution roundShares(std::span<const double> shares,
                         const PartitionRequest &request,
                         const ShareTime &shareTime) {
  const std::size_t p = shares.size();
  const std::int64_t g = request.granularity;
  const std::int64_t units = request.units();

  // Round down to granules, never below zero, never above what there is.
  std::vector<std::int64_t> granules(p, 0);
  std::int64_t given = 0;
  for (std::size_t pe = 0; pe < p; ++pe) {
    double share = std::isfinite(shares[pe]) ? shares[pe] : 0.0;
    granules[pe] = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(std::floor(share / static_cast<double>(g))),
        0, units);
    given += granules[pe];
  }
  // Shares that overshoot N (rounding error in a solver) give back granules
  // from the PE that would finish last.
  while (given > units) {
    std::size_t slowest = 0;
    double worst = -1;
    for (std::size_t pe = 0; pe < p; ++pe)
      if (granules[pe] > 0 && shareTime(pe, granules[pe] * g) > worst) {
        worst = shareTime(pe, granules[pe] * g);
        slowest = pe;
      }
    --granules[slowest];
    --given;
  }

  // Leftover granules, one at a time, to the PE that finishes first with one
  // more; ties go to the lower index.
  using Candidate = std::pair<double, std::size_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> next;
  if (given < units)
    for (std::size_t pe = 0; pe < p; ++pe)
      next.emplace(shareTime(pe, (granules[pe] + 1) * g), pe);
  for (; given < units; ++given) {
    auto [time, pe] = next.top();
    next.pop();
    ++granules[pe];
    next.emplace(shareTime(pe, (granules[pe] + 1) * g), pe);
  }

  std::vector<std::int64_t> sizes(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    sizes[pe] = granules[pe] * g;

  // The remainder joins the share where the makespan grows least.
  if (std::int64_t remainder = request.remainder(); remainder > 0) {
    std::vector<double> times(p);
    for (std::size_t pe = 0; pe < p; ++pe)
      times[pe] = shareTime(pe, sizes[pe]);
    std::size_t best = 0;
    double bestMakespan = INFINITY;
    for (std::size_t pe = 0; pe < p; ++pe) {
      double makespan = shareTime(pe, sizes[pe] + remainder);
      for (std::size_t other = 0; other < p; ++other)
        if (other != pe)
          makespan = std::max(makespan, times[other]);
      if (makespan < bestMakespan) {
        bestMakespan = makespan;
        best = pe;
      }
    }
    sizes[best] += remainder;
  }

  Distribution result;
  result.packages.resize(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    if (sizes[pe] > 0)
      result.packages[pe].push_back(sizes[pe]);
  return result;
}

} // namespace fpm
