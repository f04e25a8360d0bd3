//===- cluster/node_model.hpp - A node's FPM from its PEs' -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: nodeProfile(), the functional performance model of
// a whole node (an MPI rank with its CPU team and OpenCL devices) derived
// from its PEs' FPMs, as FuPerMod's hierarchical partitioning needs: the
// node's time for w iterations is the time of its best internal split of
// w, max_j t_j(w_j) minimised over w_1 + ... + w_p = w. Pure arithmetic over
// the cost model (partition/), so that the cross-node planner and the
// simulation benchmark use it without MPI.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fpm {

/// The sizes at which nodeProfile() samples a node for a loop of
/// `tripCount` iterations over `nodes` nodes: log-spaced from a quarter of
/// an equal share (T / 4R) to the whole loop, at most 16, strictly
/// increasing, each >= 1; empty for T < 1.
std::vector<std::int64_t> nodeSampleSizes(std::int64_t tripCount, int nodes);

/// The node's FPM at `sizes` (strictly increasing, each >= 1): for each w,
/// the least time t such that the PEs can run w iterations together within
/// t, each PE j the most iterations whose time t_j (the cost model of
/// spec/fpm-partition.md) stays within t. An approximation where a PE's
/// time is not increasing in its size (the largest such size counts), and
/// exact to the bisection's 1e-6 relative tolerance otherwise. `pes` must
/// hold at least one valid profile. The result's kernel is the first PE's,
/// its device `device`.
Profile nodeProfile(std::span<const Profile> pes,
                    std::span<const std::int64_t> sizes,
                    const std::string &device);

} // namespace fpm
