//===- partition/wdah.hpp - WDAH's pieces, for tests -----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The steps of WDAH (the WDAH thesis, chapter 4) that partitionWdah is built
// from: the workload packages W_j of each PE, their priorities (eq. 4.6), the
// packages and priorities the search runs with, and GetProcessor
// (Algorithm 3). Callers outside this folder use the registry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "partition/partition.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace fpm::wdah {

/// One entry of W_j: a package size and its time under the cost model.
struct WorkloadPackage {
  std::int64_t size = 0;
  double time = 0;

  double speed() const { return static_cast<double>(size) / time; }
};

/// W_j for every PE, fastest first (ties: larger first). Each profile size is
/// rounded down to a multiple of G (at least G); W_j holds G and those sizes
/// up to and including the fastest one: the increasing region of the FPM.
std::vector<std::vector<WorkloadPackage>>
workloadPackages(const CostModel &model, std::int64_t granularity);

/// Eq. 4.6: each PE's share of `size` in proportion to its top speed.
std::vector<double>
priorities(std::span<const std::vector<WorkloadPackage>> packages,
           std::int64_t size);

/// What the search runs with: per PE, its packages (fastest first, ties:
/// larger first) and its priority.
struct Offer {
  std::vector<std::vector<WorkloadPackage>> packages;
  std::vector<double> priorities;
};

/// W_j and eq. 4.6 for `size` units (a positive multiple of G), made fit for
/// profiles of any reach: W_j holds every multiple of G up to its largest
/// size (timed by the cost model) and none above the PE's priority rounded up
/// to a multiple of G (G is always there), and the priorities are eq. 4.6
/// over those capped W_j, iterated until the caps settle.
Offer offer(const CostModel &model, std::int64_t granularity,
            std::int64_t size);

/// Algorithm 3: the PE with the highest priority, the lowest index among
/// equals. When even the highest is negative, every priority is first reset
/// to its initial value.
std::size_t getProcessor(std::span<double> priorities,
                         std::span<const double> initial);

} // namespace fpm::wdah
