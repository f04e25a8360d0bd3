//===- partition/cost_model.cpp - The one cost model ----------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "partition/partition.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace fpm {

CostModel::CostModel(std::vector<Profile> profiles)
    : profiles_(std::move(profiles)) {
  speeds_.reserve(profiles_.size());
  for (const Profile &profile : profiles_) {
    if (std::string problem = validate(profile); !problem.empty())
      throw std::invalid_argument("profile of device '" + profile.device +
                                  "': " + problem);
    speeds_.emplace_back(profile);
  }
}

double CostModel::time(std::size_t pe, std::int64_t units) const {
  if (units <= 0)
    return 0;
  const std::vector<ProfilePoint> &points = profiles_[pe].points;
  auto point = std::lower_bound(
      points.begin(), points.end(), units,
      [](const ProfilePoint &p, std::int64_t w) { return p.size < w; });
  // At a measured size the measurement itself is the time: w / (w / T)
  // would round.
  if (point != points.end() && point->size == units)
    return point->time;
  double w = static_cast<double>(units);
  return w / speeds_[pe].speed(w);
}

double CostModel::time(std::size_t pe,
                       std::span<const std::int64_t> packages) const {
  double total = 0;
  for (std::int64_t package : packages)
    total += time(pe, package);
  return total;
}

std::int64_t CostModel::defaultGranularity() const {
  std::int64_t smallest = INT64_MAX;
  for (const Profile &profile : profiles_)
    smallest = std::min(smallest, profile.smallestSize());
  return profiles_.empty() ? 1 : smallest;
}

std::int64_t CostModel::largestSize() const {
  std::int64_t largest = 0;
  for (const Profile &profile : profiles_)
    largest = std::max(largest, profile.largestSize());
  return largest;
}

std::int64_t Distribution::iterations(std::size_t pe) const {
  return std::accumulate(packages[pe].begin(), packages[pe].end(),
                         std::int64_t{0});
}

std::int64_t Distribution::total() const {
  std::int64_t sum = 0;
  for (std::size_t pe = 0; pe < packages.size(); ++pe)
    sum += iterations(pe);
  return sum;
}

Evaluation evaluate(const CostModel &model, const Distribution &distribution) {
  Evaluation result;
  result.times.reserve(distribution.packages.size());
  for (std::size_t pe = 0; pe < distribution.packages.size(); ++pe) {
    result.times.push_back(model.time(pe, distribution.packages[pe]));
    result.makespan = std::max(result.makespan, result.times.back());
  }
  return result;
}

std::string checkDistribution(const Distribution &distribution,
                              const PartitionRequest &request,
                              std::size_t processors) {
  if (distribution.packages.size() != processors)
    return "expected " + std::to_string(processors) + " PEs, got " +
           std::to_string(distribution.packages.size());
  std::int64_t remainder = request.remainder();
  int offGrid = 0;
  std::int64_t total = 0;
  for (std::size_t pe = 0; pe < processors; ++pe) {
    for (std::int64_t package : distribution.packages[pe]) {
      if (package <= 0)
        return "PE " + std::to_string(pe) + " has a package of " +
               std::to_string(package);
      if (package % request.granularity != 0) {
        if (remainder == 0 || package % request.granularity != remainder)
          return "PE " + std::to_string(pe) + " has a package of " +
                 std::to_string(package) + ", not a multiple of G = " +
                 std::to_string(request.granularity);
        ++offGrid;
      }
      total += package;
    }
  }
  if (offGrid > 1)
    return "the remainder is spread over " + std::to_string(offGrid) +
           " packages";
  if (total != request.size)
    return "packages sum to " + std::to_string(total) +
           ", not N = " + std::to_string(request.size);
  return {};
}

} // namespace fpm
