//===- cluster/node_model.cpp - A node's FPM from its PEs' ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "cluster/node_model.hpp"

#include "exec/plan.hpp"
#include "partition/partition.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fpm {

std::vector<std::int64_t> nodeSampleSizes(std::int64_t tripCount, int nodes) {
  std::vector<std::int64_t> sizes;
  if (tripCount < 1)
    return sizes;
  // Log-spaced points over [from, to], `count` of them at most, rising.
  auto span = [&](double from, double to, int count) {
    const double ratio = count > 1 ? std::pow(to / from, 1.0 / (count - 1)) : 1;
    double size = from;
    for (int i = 0; i < count; ++i, size *= ratio) {
      const std::int64_t w = std::clamp<std::int64_t>(
          i == count - 1 ? std::llround(to) : std::llround(size), 1, tripCount);
      if (sizes.empty() || w > sizes.back())
        sizes.push_back(w);
    }
  };
  // A node's share is about T/R: densely from an eighth of that to four
  // times it, where the partitioner interpolates between points (a slow
  // node's share falls below a quarter of it, and the node's time between
  // points spaced 30% apart was up to 10% off on the semi-random family);
  // then
  // sparsely to all of T (a node may take the whole loop when the others
  // are slow); and below, from 1 (the least share) up to the dense range,
  // for a node so slow that it gets a sliver: a node's time falls slower
  // than its share there (its fixed cost stays), and a partitioner that
  // extrapolated at the first point's speed would give it too much (below
  // its first point the cost model keeps that point's speed, so a node
  // whose time at 2 iterations is all fixed cost would look to run 1 in
  // half that time). Sizes under ExactSolverUnits iterations cost a node's
  // planner a fraction of the others (`auto`'s exact solver is quadratic
  // in the granules, at most 1024), so the points below come cheap.
  const auto whole = static_cast<double>(tripCount);
  const double share = whole / std::max(nodes, 1);
  const double low = std::max(1.0, share / 8);
  const double high = std::min(whole, share * 4);
  if (low > 1)
    span(1, low, BelowPoints + 1); // ends at low, where the dense range starts
  span(low, high, DensePoints);
  if (high < whole)
    span(high, whole, SparsePoints + 1);
  return sizes;
}

namespace {

/// nodeTime() over a cost model built once for all sizes.
double splitTime(const CostModel &model, std::span<const Profile> pes,
                 std::span<const PlanPe> planPes, const LoopSchedule &schedule,
                 const NodeSplit &split, std::int64_t w) {
  if (w <= 0)
    return 0;
  if (model.size() == 1)
    return model.time(0, w);
  PlanRequest request;
  request.schedule = &schedule;
  request.pes = planPes;
  request.tripCount = w;
  request.grain = split.grain;
  request.alignment = std::max<std::int64_t>(split.alignment, 1);
  request.models = pes;
  const Plan plan = makePlan(request);
  double slowest = 0;
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    double time = 0;
    for (const Range &package : plan.packages[pe])
      time += model.time(pe, package.size());
    slowest = std::max(slowest, time);
  }
  return slowest;
}

/// The PEs as the node's planner sees them: every one modelled, so their
/// speeds are never read.
std::vector<PlanPe> planPesOf(std::span<const Profile> pes) {
  std::vector<PlanPe> planPes;
  for (const Profile &pe : pes)
    planPes.push_back({pe.device, 1, 1, false});
  return planPes;
}

const LoopSchedule &staticSchedule(const NodeSplit &split) {
  static const LoopSchedule automatic = parseLoopSchedule("auto");
  return split.schedule.kind == LoopSchedule::Kind::Static ? split.schedule
                                                           : automatic;
}

} // namespace

double nodeTime(std::span<const Profile> pes, const NodeSplit &split,
                std::int64_t w) {
  if (pes.empty())
    throw std::invalid_argument("nodeTime: no PEs");
  const CostModel model(std::vector<Profile>(pes.begin(), pes.end()));
  return splitTime(model, pes, planPesOf(pes), staticSchedule(split), split, w);
}

Profile nodeProfile(std::span<const Profile> pes,
                    std::span<const std::int64_t> sizes,
                    const std::string &device, const NodeSplit &split) {
  if (pes.empty())
    throw std::invalid_argument("nodeProfile: no PEs");
  const CostModel model(std::vector<Profile>(pes.begin(), pes.end()));
  const std::vector<PlanPe> planPes = planPesOf(pes);
  const LoopSchedule &schedule = staticSchedule(split);
  Profile node;
  node.kernel = pes.front().kernel;
  node.device = device;
  for (const std::int64_t w : sizes)
    node.points.push_back(
        {w, splitTime(model, pes, planPes, schedule, split, w), {}, {}});
  return node;
}

} // namespace fpm
