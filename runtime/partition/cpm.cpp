//===- partition/cpm.cpp - Constant performance model ---------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

#include <algorithm>

namespace fpm {

// Thesis 000, 2.1.1: one speed per PE, shares proportional to it. The speed
// is the one at the PE's largest profile point (docs/profiles.md), and
// rounding sees the same constant speeds, not the FPM.
Distribution partitionCpm(const CostModel &model,
                          const PartitionRequest &request) {
  std::vector<double> speeds(model.size());
  double fastest = 0;
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    speeds[pe] = model.profile(pe).points.back().speed();
    fastest = std::max(fastest, speeds[pe]);
  }
  // In units of the fastest speed, and the fraction first: near the
  // largest double, the sum of the speeds or N * speed overflowed, and a
  // share of 0 or +inf left every granule to be handed out one at a time.
  double total = 0;
  for (double speed : speeds)
    total += speed / fastest;
  std::vector<double> shares(model.size());
  for (std::size_t pe = 0; pe < model.size(); ++pe)
    shares[pe] =
        static_cast<double>(request.size) * (speeds[pe] / fastest / total);
  return roundShares(shares, request,
                     [&speeds](std::size_t pe, std::int64_t units) {
                       return static_cast<double>(units) / speeds[pe];
                     });
}

} // namespace fpm
