//===- balance/balance.cpp - Partial FPMs for repeated loops --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "balance/balance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fpm {

LoadBalancer::LoadBalancer(std::size_t pes, BalanceOptions options)
    : options_(options), pes_(pes) {
  if (!(options_.bucket >= 0) || !(options_.change > 0) ||
      options_.confirmations < 1 || options_.maxPoints < 1)
    throw std::invalid_argument("LoadBalancer: bad options");
}

void LoadBalancer::seed(std::size_t pe, std::span<const ProfilePoint> points) {
  for (const ProfilePoint &point : points)
    if (point.size > 0 && point.time > 0 && std::isfinite(point.time))
      add(pes_.at(pe), {point.size, point.time}, 0);
}

std::vector<LoadBalancer::Point>::iterator LoadBalancer::bucket(Pe &pe,
                                                                double size) {
  auto distance = [size](const Point &point) {
    return std::abs(point.size() - size);
  };
  auto nearest = std::min_element(pe.points.begin(), pe.points.end(),
                                  [&](const Point &a, const Point &b) {
                                    return distance(a) < distance(b);
                                  });
  if (nearest != pe.points.end() &&
      distance(*nearest) <= options_.bucket * std::max(nearest->size(), size))
    return nearest;
  return pe.points.end();
}

void LoadBalancer::add(Pe &pe, Observation observation, std::uint64_t stamp) {
  const auto iterations = static_cast<double>(observation.iterations);
  if (auto point = bucket(pe, iterations); point != pe.points.end()) {
    if (options_.estimator == Estimator::Last)
      *point = Point{};
    point->iterations += iterations;
    point->seconds += observation.seconds;
    ++point->samples;
    point->stamp = stamp;
    return;
  }
  const Point added{iterations, observation.seconds, 1, stamp};
  pe.points.insert(std::upper_bound(pe.points.begin(), pe.points.end(), added,
                                    [](const Point &a, const Point &b) {
                                      return a.size() < b.size();
                                    }),
                   added);
  // Too many points: a partial model needs only the region the loop runs
  // in now, so the stalest go, and among those the farthest from it.
  while (pe.points.size() > options_.maxPoints) {
    auto stalest = std::min_element(pe.points.begin(), pe.points.end(),
                                    [&](const Point &a, const Point &b) {
                                      if (a.stamp != b.stamp)
                                        return a.stamp < b.stamp;
                                      return std::abs(a.size() - iterations) >
                                             std::abs(b.size() - iterations);
                                    });
    pe.points.erase(stalest);
  }
}

std::vector<std::size_t>
LoadBalancer::observe(std::span<const Observation> observations) {
  if (observations.size() != pes_.size())
    throw std::invalid_argument(
        "LoadBalancer: " + std::to_string(observations.size()) +
        " observations for " + std::to_string(pes_.size()) + " PEs");
  const std::uint64_t stamp = ++observed_;
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < pes_.size(); ++i) {
    const Observation observation = observations[i];
    if (observation.iterations <= 0 || !(observation.seconds > 0) ||
        !std::isfinite(observation.seconds))
      continue;
    Pe &pe = pes_[i];
    const auto iterations = static_cast<double>(observation.iterations);
    const auto point = bucket(pe, iterations);
    // At a size never measured the model can only be extrapolated, and a
    // sample off the extrapolation is news about the speed function (a
    // cache or memory limit), not a change of the PE.
    if (point == pe.points.end()) {
      add(pe, observation, stamp);
      continue;
    }
    const double ratio = iterations / observation.seconds / point->speed();
    const bool slower = ratio < 1 / (1 + options_.change);
    if (!slower && ratio <= 1 + options_.change) {
      pe.suspects.clear(); // the last disagreement was an outlier
      add(pe, observation, stamp);
      continue;
    }
    // Disagreements are held apart: one outlier must not enter an
    // average, nor throw a good model away.
    if (!pe.suspects.empty() && pe.slower != slower)
      pe.suspects.clear();
    pe.slower = slower;
    pe.suspects.push_back(observation);
    if (pe.suspects.size() < static_cast<std::size_t>(options_.confirmations))
      continue;
    // The PE changed: everything it measured before is stale.
    pe.points.clear();
    for (const Observation &suspect : pe.suspects)
      add(pe, suspect, stamp);
    pe.suspects.clear();
    changed.push_back(i);
  }
  return changed;
}

bool LoadBalancer::ready() const {
  return std::none_of(pes_.begin(), pes_.end(),
                      [](const Pe &pe) { return pe.points.empty(); });
}

Profile LoadBalancer::model(std::size_t pe) const {
  Profile profile;
  profile.kernel = "balance";
  profile.device = "pe" + std::to_string(pe);
  for (const Point &point : pes_.at(pe).points) {
    const std::int64_t size =
        std::max<std::int64_t>(std::llround(point.size()), 1);
    // Points of tiny sizes may round together; the profile format wants
    // sizes strictly increasing.
    if (!profile.points.empty() && size <= profile.points.back().size)
      continue;
    profile.points.push_back(
        {size, static_cast<double>(size) / point.speed(), point.samples, {}});
  }
  return profile;
}

Distribution LoadBalancer::split(const PartitionRequest &request) const {
  if (!ready())
    throw std::logic_error("LoadBalancer: a PE has no observation yet");
  std::vector<Profile> profiles;
  profiles.reserve(pes_.size());
  for (std::size_t pe = 0; pe < pes_.size(); ++pe)
    profiles.push_back(model(pe));
  static const Partitioner &numerical = *findPartitioner("numerical");
  return partition(numerical, CostModel(std::move(profiles)), request);
}

} // namespace fpm
