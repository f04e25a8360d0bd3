//===- partition/algorithms.hpp - The registered partitioners ---*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One function per algorithm, each in its own file, declared here from
// fpm/schedules.def; registry.cpp names them.
// Callers outside this folder reach them through partitioners().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "partition/partition.hpp"

#include <functional>

namespace fpm {

// Distribution <Function>(const CostModel &, const PartitionRequest &), one
// per FPM_PARTITIONER line of fpm/schedules.def.
#define FPM_PARTITIONER(Name, Function, Shape, Cost, Argument, Summary)        \
  Distribution Function(const CostModel &, const PartitionRequest &);
#include "fpm/schedules.def"

/// HPOPTA's search: the least makespan with one package per PE, or the
/// equal distribution where none is finite (partitionHpopta then turns to
/// partitionOptimal, which starts from this bound).
Distribution leastOnePackageEach(const CostModel &model,
                                 const PartitionRequest &request);

/// Time of one share of `units` on PE `pe`, as a single-share partitioner
/// sees it while rounding.
using ShareTime = std::function<double(std::size_t pe, std::int64_t units)>;

/// Turns real-valued shares (in units, summing to about N) into one package
/// per PE: each share is rounded down to a multiple of G, the leftover
/// granules go one at a time to the PE that would finish first with it, and
/// the remainder N mod G joins the share where it raises the makespan least.
/// Used by every single-share partitioner.
Distribution roundShares(std::span<const double> shares,
                         const PartitionRequest &request,
                         const ShareTime &shareTime);

} // namespace fpm
