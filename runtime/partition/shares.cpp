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

  // Round down to granules, never below zero, never above what there is;
  // clamped as doubles, since N near 2^63 is 2^63 as a double, which no
  // int64 holds.
  std::vector<std::int64_t> granules(p, 0);
  for (std::size_t pe = 0; pe < p; ++pe) {
    const double share = std::isfinite(shares[pe]) ? shares[pe] : 0.0;
    const double whole = std::floor(share / static_cast<double>(g));
    granules[pe] = !(whole > 0) ? 0
                   : whole >= static_cast<double>(units)
                       ? units
                       : static_cast<std::int64_t>(whole);
  }
  // What follows moves one granule at a time, which is right for a solver's
  // rounding error; shares far from a split of N (a solver that failed)
  // would take forever, so beyond this many granules are moved in bulk
  // first. The sum is exact in 128 bits: p shares of up to 2^63 each.
  constexpr std::int64_t OneByOne = std::int64_t{1} << 20;
  __int128 given = 0;
  for (std::int64_t count : granules)
    given += count;
  if (given > static_cast<__int128>(units) + OneByOne) {
    // Far too many: each PE keeps what remains after those before it.
    std::int64_t left = units;
    for (std::int64_t &count : granules) {
      count = std::min(count, left);
      left -= count;
    }
    given = units - left;
  }
  if (units - given > OneByOne) {
    // Far too few: an equal split of what the shares left out.
    const auto each = static_cast<std::int64_t>((units - given - OneByOne) /
                                                static_cast<__int128>(p));
    for (std::int64_t &count : granules)
      count += each;
    given += static_cast<__int128>(each) * static_cast<__int128>(p);
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
    // A PE holding every granule takes no more; (units + 1) * G may not
    // even fit in an int64 when N is near 2^63.
    if (granules[pe] < units)
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
