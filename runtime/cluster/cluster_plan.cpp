//===- cluster/cluster_plan.cpp - One loop over many nodes ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "cluster/cluster_plan.hpp"

#include "exec/plan.hpp"
#include "partition/partition.hpp"
#include "support/int_math.hpp"

#include <algorithm>
#include <stdexcept>

namespace fpm {
namespace {

std::string nodeId(std::size_t node) { return "rank" + std::to_string(node); }

/// The dynamic path over `weights`: stage 1 (alpha% by weight, in node
/// order) and the scheme over the rest, in granules.
ClusterPlan dynamicPlan(Scheme scheme, std::int64_t chunk,
                        std::optional<double> alpha,
                        std::vector<double> weights, std::int64_t tripCount,
                        std::int64_t grain) {
  ClusterPlan plan;
  plan.kind = ClusterPlan::Kind::Dynamic;
  plan.tripCount = tripCount;
  plan.granule = std::max<std::int64_t>(grain, 1);
  plan.weights = std::move(weights);
  ScheduleSpec &spec = plan.dynamic;
  spec.scheme = scheme;
  spec.iterations = ceilDiv(tripCount, plan.granule);
  spec.workers = static_cast<int>(plan.weights.size());
  spec.chunk = chunk;
  spec.alpha = alpha;
  plan.shares.assign(plan.weights.size(), Range{});
  if (alpha) {
    spec.weights = plan.weights;
    const std::vector<std::int64_t> shares = stage1Shares(spec);
    std::int64_t begin = 0;
    for (std::size_t node = 0; node < shares.size(); ++node) {
      const std::int64_t end =
          std::min(tripCount, begin + shares[node] * plan.granule);
      plan.shares[node] = {begin, end};
      begin = end;
    }
    plan.dynamicBegin = begin;
  }
  return plan;
}

} // namespace

ClusterPlan planCluster(const LoopSchedule &schedule,
                        std::span<const NodeView> nodes, std::int64_t tripCount,
                        std::int64_t grain, std::string_view loop) {
  if (nodes.empty())
    throw std::invalid_argument("no node takes part in the loop");
  if (tripCount < 0)
    throw std::invalid_argument("the trip count must be >= 0");
  const bool allModelled = std::all_of(
      nodes.begin(), nodes.end(), [](const NodeView &n) { return n.model; });
  const bool allMeasured = std::all_of(
      nodes.begin(), nodes.end(), [](const NodeView &n) { return n.speed; });
  std::vector<double> workers;
  for (const NodeView &node : nodes)
    workers.push_back(std::max(node.workers, 1));

  if (schedule.kind == LoopSchedule::Kind::Dynamic) {
    std::vector<double> weights = workers;
    if (allMeasured)
      for (std::size_t n = 0; n < nodes.size(); ++n)
        weights[n] = *nodes[n].speed;
    ClusterPlan plan =
        dynamicPlan(schedule.scheme, schedule.chunk, schedule.alpha,
                    std::move(weights), tripCount, grain);
    plan.reason = schedule.text + (allMeasured ? " weighted by measured speeds"
                                               : " weighted by workers");
    return plan;
  }

  if (!allModelled && !allMeasured) {
    ClusterPlan plan =
        dynamicPlan(Scheme::Fss, 1, LearningAlpha, workers, tripCount, grain);
    plan.reason = "fss, 80 by workers: node speeds not known yet";
    return plan;
  }

  // One PlanPe per node: the planner and its partitioners split across
  // nodes exactly as across a node's PEs.
  std::vector<PlanPe> pes;
  std::vector<Profile> models;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    PlanPe pe{nodeId(n), 1, 1, false};
    if (allModelled) {
      Profile model = *nodes[n].model;
      model.kernel = std::string(loop);
      model.device = pe.id;
      const std::int64_t share = std::max<std::int64_t>(
          1, tripCount / static_cast<std::int64_t>(nodes.size()));
      const CostModel cost({model});
      pe.speed = static_cast<double>(share) / cost.time(0, share);
      models.push_back(std::move(model));
    } else {
      pe.speed = *nodes[n].speed;
    }
    pes.push_back(std::move(pe));
  }
  PlanRequest request;
  request.schedule = &schedule;
  request.pes = pes;
  request.tripCount = tripCount;
  request.grain = grain;
  request.models = models;
  request.wholeShares = true; // a node runs its share as one range
  request.loop = loop;
  const Plan split = makePlan(request);
  ClusterPlan plan;
  plan.tripCount = tripCount;
  plan.granule = split.granule;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    plan.weights.push_back(pes[n].speed);
    // A node's packages follow one another (makePlan lays each PE's out
    // before the next's): one range.
    const std::vector<Range> &packages = split.packages[n];
    plan.shares.push_back(
        packages.empty() ? Range{}
                         : Range{packages.front().begin, packages.back().end});
  }
  // Empty shares sit where their node's turn was, so that ranges stay in
  // node order for the gather.
  std::int64_t at = 0;
  for (Range &share : plan.shares) {
    if (share.size() == 0)
      share = {at, at};
    at = share.end;
  }
  plan.reason =
      std::string(split.partitioner ? split.partitioner->name : "static") +
      (allModelled ? " on node FPMs from stored profiles"
                   : " on measured node speeds");
  return plan;
}

bool keepPreviousSplit(
    ClusterPlan &plan, std::span<const Range> previous,
    std::span<const NodeView> nodes,
    const std::function<double(std::size_t, Range)> &moveCost,
    double tolerance) {
  if (plan.kind != ClusterPlan::Kind::Static ||
      nodes.size() != plan.shares.size())
    return false;
  const bool modelled = std::ranges::all_of(
      nodes, [](const NodeView &node) { return node.model.has_value(); });
  std::vector<Profile> models;
  if (modelled)
    for (const NodeView &node : nodes)
      models.push_back(*node.model);
  const CostModel model(std::move(models));
  // The node's time, as planCluster's split saw it.
  auto time = [&](std::size_t n, std::int64_t share) {
    if (share <= 0)
      return 0.0;
    if (modelled)
      return model.time(n, share);
    return static_cast<double>(share) /
           std::max(nodes[n].speed.value_or(0), 1e-300);
  };
  std::optional<std::vector<Range>> kept;
  if (moveCost && previous.size() == plan.shares.size() && !previous.empty() &&
      previous.front().begin == 0 && previous.back().end == plan.tripCount &&
      !movesPay(plan.shares, previous, time, moveCost))
    kept.emplace(previous.begin(), previous.end());
  else
    kept = keepCuts(plan.shares, previous, time, 1, tolerance);
  if (!kept)
    return false;
  const bool same = std::ranges::equal(*kept, previous);
  plan.shares = std::move(*kept);
  plan.reason += same ? "; the last call's split kept (a region's rows stay)"
                      : "; the last call's split moved as little as it must "
                        "(a region's rows stay)";
  return true;
}

ChunkMaster::ChunkMaster(const ClusterPlan &plan)
    : granule_(plan.granule), tripCount_(plan.tripCount) {
  double total = 0;
  for (double weight : plan.weights)
    total += weight;
  for (double weight : plan.weights)
    share_.push_back(total > 0
                         ? weight / total
                         : 1.0 / static_cast<double>(plan.weights.size()));
  // Every node knows its stage-1 share from the plan and runs it without
  // asking (the self-scheduling thesis: stage 1 saves the master's messages).
  for (std::size_t node = 0; node < plan.shares.size(); ++node)
    if (plan.shares[node].size() > 0)
      grants_.push_back({static_cast<int>(node), plan.shares[node]});
  if (plan.kind == ClusterPlan::Kind::Dynamic)
    chunker_.emplace(plan.dynamic, ceilDiv(plan.dynamicBegin, granule_));
}

std::optional<Range> ChunkMaster::next(int node) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto n = static_cast<std::size_t>(node);
  if (n >= share_.size())
    throw std::out_of_range("ChunkMaster: no node " + std::to_string(node));
  if (!chunker_)
    return std::nullopt;
  const std::optional<Chunk> chunk = chunker_->next(share_[n]);
  if (!chunk)
    return std::nullopt;
  // Granules to iterations; the last granule ends at the trip count.
  const Range range{
      chunk->begin * granule_,
      std::min(tripCount_, (chunk->begin + chunk->size) * granule_)};
  grants_.push_back({node, range});
  return range;
}

std::vector<ChunkMaster::Grant> ChunkMaster::grants() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return grants_;
}

std::vector<ChunkMaster::Grant>
mergeGrants(std::span<const ChunkMaster::Grant> grants) {
  std::vector<ChunkMaster::Grant> sorted(grants.begin(), grants.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
    return a.range.begin < b.range.begin;
  });
  std::vector<ChunkMaster::Grant> merged;
  for (const ChunkMaster::Grant &grant : sorted) {
    if (grant.range.size() == 0)
      continue;
    if (!merged.empty() && merged.back().node == grant.node &&
        merged.back().range.end == grant.range.begin)
      merged.back().range.end = grant.range.end;
    else
      merged.push_back(grant);
  }
  return merged;
}

} // namespace fpm
