//===- cluster/node_model.hpp - A node's FPM from its PEs' -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: nodeProfile(), the functional performance model of
// a whole node (an MPI rank with its CPU team and OpenCL devices) derived
// from its PEs' FPMs, as FuPerMod's hierarchical partitioning needs: the
// node's time for w iterations is the time of the split of w that the
// node's own planner (exec/plan.hpp: makePlan, the loop's schedule over the
// PEs' stored FPMs) makes, each PE running its packages in turn. So the
// cross-node split is made on what each node will do with its share, with
// as many packages per PE as its partitioner gives (a PE that slows down
// past a peak runs several smaller ones). Pure arithmetic over the cost
// model (partition/), so that the cross-node planner and the simulation
// benchmark use it without MPI.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/schedule_string.hpp"
#include "model/profile.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fpm {

/// The sizes at which nodeProfile() samples a node for a loop of
/// `tripCount` iterations over `nodes` nodes, log-spaced: densely
/// (DensePoints) from an eighth of an equal share to four times one (T/8R
/// to 4T/R), sparsely (SparsePoints) from there to the whole loop, and
/// from 1 up to T/8R (BelowPoints): at most MaxNodeSamples, strictly
/// increasing, the first 1, the last T; empty for T < 1.
inline constexpr int DensePoints = 16, SparsePoints = 4, BelowPoints = 8;
inline constexpr int MaxNodeSamples = DensePoints + SparsePoints + BelowPoints;
std::vector<std::int64_t> nodeSampleSizes(std::int64_t tripCount, int nodes);

/// How a node splits a share over its PEs: what its planner is given for
/// the loop (the runtime's co-execution path, api/part.hpp's runLoopPart).
struct NodeSplit {
  /// The loop's schedule. A self-scheduling one is planned as `auto`: its
  /// node FPM serves only static splits across nodes, which `auto` makes.
  LoopSchedule schedule = parseLoopSchedule("auto");
  std::int64_t grain = 0;     ///< the loop's grain (0: 1)
  std::int64_t alignment = 1; ///< packages start at multiples of this
};

/// The node's time for a share of `w` iterations: makePlan over `pes` (in
/// that order) by `split`, each PE running its packages one after another
/// (t_j of each, docs/profiles.md's cost model), the slowest PE's sum.
/// A node of one PE runs w as one package (the CPU team alone splits w
/// equally over its threads, which its team-scaled FPM already says).
/// 0 for w <= 0.
double nodeTime(std::span<const Profile> pes, const NodeSplit &split,
                std::int64_t w);

/// The node's FPM at `sizes` (strictly increasing, each >= 1): nodeTime()
/// at each. It costs one makePlan per size (up to MaxNodeSamples from
/// nodeSampleSizes(), those under 1024 iterations a fraction of the others';
/// `auto` is the exact optimum up to 1024 granules and WDAH beyond): callers
/// cache it per
/// loop shape. `pes` must hold at least one valid profile. The result's
/// kernel is the first PE's, its device `device`.
Profile nodeProfile(std::span<const Profile> pes,
                    std::span<const std::int64_t> sizes,
                    const std::string &device, const NodeSplit &split = {});

} // namespace fpm
