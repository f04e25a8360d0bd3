//===- partition/registry.cpp - Every partitioner by name -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

#include <array>
#include <stdexcept>

namespace fpm {
namespace {

// The exact solvers take about half a second at p = 8 and N/G = 8192 on a
// 2-core machine (README); four times that many granules is seconds.
constexpr std::int64_t ExactSolverMaxUnits = 32768;
// WDAH creates a package of at least one granule per level of its search:
// 2^20 granules are at most a million packages, a tenth of a second and
// 40 MB; N = 10^11 in granules of 4000 was 11 s, 2.5 GB and 25 million
// packages printed. (The runtime never asks for more: exec.cpp.)
constexpr std::int64_t WdahMaxUnits = std::int64_t{1} << 20;

/// The granules N/G a partitioner of this cost takes (0: no limit).
constexpr std::int64_t maxUnits(PartitionCost cost) {
  switch (cost) {
  case PartitionCost::Fast:
    return 0;
  case PartitionCost::Exact:
    return ExactSolverMaxUnits;
  case PartitionCost::Search:
    return WdahMaxUnits;
  }
  return 0;
}

/// Every FPM_PARTITIONER of fpm/schedules.def, in its order.
constexpr std::array Registry = {
#define FPM_PARTITIONER(Name, Function, Shape, Cost, Argument, Summary)        \
  Partitioner{Name,                                                            \
              Summary,                                                         \
              Function,                                                        \
              PartitionShape::Shape == PartitionShape::OneShare,               \
              maxUnits(PartitionCost::Cost),                                   \
              PartitionCost::Cost == PartitionCost::Exact},
#include "fpm/schedules.def"
};

} // namespace

std::span<const Partitioner> partitioners() { return Registry; }

const Partitioner *findPartitioner(std::string_view name) {
  for (const Partitioner &partitioner : Registry)
    if (partitioner.name == name)
      return &partitioner;
  return nullptr;
}

Distribution partition(const Partitioner &partitioner, const CostModel &model,
                       const PartitionRequest &request) {
  if (model.size() == 0)
    throw std::invalid_argument("no processing elements to partition over");
  if (request.size < 0)
    throw std::invalid_argument("the size N must be >= 0, got " +
                                std::to_string(request.size));
  if (request.granularity < 1)
    throw std::invalid_argument("the granularity G must be >= 1, got " +
                                std::to_string(request.granularity));
  if (request.backtrack < 1)
    throw std::invalid_argument("the backtrack budget B must be >= 1, got " +
                                std::to_string(request.backtrack));
  if (request.backtrack > MaxBacktrack)
    throw std::invalid_argument("the backtrack budget B must be at most " +
                                std::to_string(MaxBacktrack) + ", got " +
                                std::to_string(request.backtrack));
  if (partitioner.maxUnits > 0 && request.units() > partitioner.maxUnits)
    throw std::invalid_argument(
        std::string(partitioner.name) +
        (partitioner.exact ? " is exact and takes at most "
                           : " takes at most ") +
        std::to_string(partitioner.maxUnits) +
        " granules; N/G = " + std::to_string(request.units()) +
        " is more: choose a larger granularity G");
  if (request.size == 0)
    return Distribution{std::vector<std::vector<std::int64_t>>(model.size())};
  return partitioner.partition(model, request);
}

} // namespace fpm
