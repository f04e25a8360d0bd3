//===- cluster/cluster_plan.hpp - One loop over many nodes -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the cross-node half of hierarchical partitioning
// (FuPerMod's: nodes first, then each node's PEs as today), as plain
// functions over values, so that libfpmrt-mpi (runtime/mpi/), the unit
// tests and the simulation benchmark all run the same code and only the
// first needs MPI:
//  - planCluster(): which ranks run which iterations, from the schedule
//    and what is known of each node (a node-level FPM, a measured speed,
//    or only its worker count). Static splits go through makePlan
//    (exec/plan.hpp) with one PlanPe per node, so every registered
//    partitioner serves across nodes as it does across PEs.
//  - ChunkMaster: the master's side of the self-scheduling thesis's cluster
//  self-scheduling
//    (3.2: a% of the iterations by node weight, the rest by GSS, FSS or
//    TSS chunks scaled by the asking node's weight), one request at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "exec/plan.hpp"
#include "exec/schedule_string.hpp"
#include "model/profile.hpp"
#include "schedule/schedule.hpp"

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

/// What the planner knows of one node (rank) for one loop.
struct NodeView {
  /// Its node-level FPM (cluster/node_model.hpp), when every PE of it has a
  /// stored one.
  std::optional<Profile> model;
  /// Iterations per second it ran this loop at in an earlier call, when
  /// measured (> 0).
  std::optional<double> speed;
  /// Its workers (CPU threads and devices): the weight of a node whose
  /// speed is not known yet (the self-scheduling thesis weighs by CPU clock;
  /// fpm by workers).
  int workers = 1;
};

/// The two-stage scheme a loop without known node speeds starts from (seed
/// 001's FSS-80): 80% of the iterations by worker count, the rest by
/// factoring, while each node's time is measured.
inline constexpr double LearningAlpha = 80;

/// Who runs what, across nodes.
struct ClusterPlan {
  enum class Kind { Static, Dynamic };
  Kind kind = Kind::Static;
  std::int64_t tripCount = 0;
  /// Static: one range per node, in node order, covering [0, T) (empty
  /// ranges for nodes without work). Dynamic: each node's stage-1 share.
  std::vector<Range> shares;
  /// Dynamic: the scheme over the iterations after the stage-1 shares,
  /// [dynamicBegin, T), in granules of `granule` iterations.
  ScheduleSpec dynamic;
  std::int64_t dynamicBegin = 0;
  std::int64_t granule = 1;
  /// Relative speed of each node (the dynamic chunks' weights).
  std::vector<double> weights;
  /// For FPM_VERBOSE: how the split was chosen.
  std::string reason;
};

/// Plans `tripCount` iterations over `nodes` (in rank order) by `schedule`:
///  - a self-scheduling schedule (pss, css, gss, fss, tss): the dynamic
///    path, weights from measured speeds where every node has one, else
///    from the nodes' workers;
///  - a static partitioner or `auto`: when every node has a model, makePlan
///    on the node FPMs (`auto`: the exact optimum or WDAH, as across PEs);
///    else when every node has a measured speed, makePlan on the speeds
///    (`auto`: cpm); else the learning schedule above (dynamic path).
/// Throws std::invalid_argument as makePlan does.
ClusterPlan planCluster(const LoopSchedule &schedule,
                        std::span<const NodeView> nodes, std::int64_t tripCount,
                        std::int64_t grain, std::string_view loop = "loop");

/// Inside a data region a row that changes ranks moves its bytes (a rank
/// keeps what it wrote): a static `plan` becomes the last call's split
/// `previous`, whole unless the plan finishes sooner once each node has
/// received the rows it gains (movesPay, by `moveCost(node, range)`, in
/// seconds), else with its cuts moved as little as they must (keepCuts).
/// Each node's time is predicted from `nodes` as the plan's was. Returns
/// whether it kept the split, and then says so in `plan.reason`.
bool keepPreviousSplit(
    ClusterPlan &plan, std::span<const Range> previous,
    std::span<const NodeView> nodes,
    const std::function<double(std::size_t, Range)> &moveCost = {},
    double tolerance = KeptSplitTolerance);

/// The master's side of the dynamic path. Each node runs its stage-1 share
/// (the plan's `shares`, which every node knows) without asking, then asks
/// for chunks: the scheme's next one scaled by its weight. Thread-safe (the
/// master computes too: its own thread asks beside the thread that serves
/// the others' requests).
class ChunkMaster {
public:
  explicit ChunkMaster(const ClusterPlan &plan);
  /// The next chunk for `node`, or nothing when all iterations are handed
  /// out.
  std::optional<Range> next(int node);
  /// Every range granted, and to whom: the stage-1 shares, then the chunks
  /// in grant order.
  struct Grant {
    int node;
    Range range;
  };
  std::vector<Grant> grants() const;

private:
  mutable std::mutex mutex_;
  std::vector<double> share_; ///< each node's weight / the total
  std::optional<WeightedChunker> chunker_;
  std::int64_t granule_;
  std::int64_t tripCount_;
  std::vector<Grant> grants_;
};

/// The ranges `grants` gives each node, merged where one node's ranges
/// touch, sorted by their first iteration: what each node wrote.
std::vector<ChunkMaster::Grant>
mergeGrants(std::span<const ChunkMaster::Grant> grants);

} // namespace fpm
