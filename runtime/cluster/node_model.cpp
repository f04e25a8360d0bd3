//===- cluster/node_model.cpp - A node's FPM from its PEs' ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "cluster/node_model.hpp"

#include "partition/partition.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fpm {

std::vector<std::int64_t> nodeSampleSizes(std::int64_t tripCount, int nodes) {
  std::vector<std::int64_t> sizes;
  if (tripCount < 1)
    return sizes;
  // A node's share is about T/R; the partitioner interpolates between
  // points, so cover from a quarter of that to all of T (a node may take
  // the whole loop when the others are slow), evenly in log scale.
  const std::int64_t low = std::max<std::int64_t>(
      1, tripCount / (4 * static_cast<std::int64_t>(std::max(nodes, 1))));
  constexpr int Points = 16;
  const double ratio =
      std::pow(static_cast<double>(tripCount) / static_cast<double>(low),
               1.0 / (Points - 1));
  double size = static_cast<double>(low);
  for (int i = 0; i < Points; ++i, size *= ratio) {
    const std::int64_t w =
        i == Points - 1 ? tripCount
                        : std::min<std::int64_t>(tripCount, std::llround(size));
    if (sizes.empty() || w > sizes.back())
      sizes.push_back(w);
  }
  return sizes;
}

namespace {

/// The most iterations PE `pe` runs within `seconds` (0 when not even one),
/// at most `limit`.
std::int64_t withinTime(const CostModel &model, std::size_t pe, double seconds,
                        std::int64_t limit) {
  if (model.time(pe, 1) > seconds)
    return 0;
  std::int64_t low = 1, high = limit; // time(low) <= seconds
  if (model.time(pe, high) <= seconds)
    return high;
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    (model.time(pe, middle) <= seconds ? low : high) = middle;
  }
  return low;
}

} // namespace

Profile nodeProfile(std::span<const Profile> pes,
                    std::span<const std::int64_t> sizes,
                    const std::string &device) {
  if (pes.empty())
    throw std::invalid_argument("nodeProfile: no PEs");
  const CostModel model(std::vector<Profile>(pes.begin(), pes.end()));
  Profile node;
  node.kernel = pes.front().kernel;
  node.device = device;
  for (const std::int64_t w : sizes) {
    // All w on the PE that runs it fastest is one split: an upper bound.
    double high = model.time(0, w);
    for (std::size_t pe = 1; pe < model.size(); ++pe)
      high = std::min(high, model.time(pe, w));
    double low = 0;
    while (high - low > 1e-6 * high) {
      const double middle = 0.5 * (low + high);
      std::int64_t total = 0;
      for (std::size_t pe = 0; pe < model.size() && total < w; ++pe)
        total += withinTime(model, pe, middle, w);
      (total >= w ? high : low) = middle;
    }
    node.points.push_back({w, high, {}, {}});
  }
  return node;
}

} // namespace fpm
