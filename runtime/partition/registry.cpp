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

constexpr std::array Registry = {
    Partitioner{"equal", "N/p to every PE", partitionEqual, true, 0},
    Partitioner{"cpm", "shares proportional to one speed per PE", partitionCpm,
                true, 0},
    Partitioner{"geometric", "Lastovetsky-Reddy bisection of speed functions",
                partitionGeometric, true, 0},
    Partitioner{"numerical", "HYBRJ root finding on Akima speed functions",
                partitionNumerical, true, 0},
    Partitioner{"hpopta", "exact minimum makespan, one package per PE",
                partitionHpopta, true, ExactSolverMaxUnits},
    Partitioner{"wdah", "WDAH tree search with a backtrack budget",
                partitionWdah, false, 0},
    Partitioner{"wdah-heuristic", "WDAH with one backtrack (Algorithm 4)",
                partitionWdahHeuristic, false, 0},
    Partitioner{"optimal", "exact minimum makespan, any packages",
                partitionOptimal, false, ExactSolverMaxUnits},
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
  if (partitioner.maxUnits > 0 && request.units() > partitioner.maxUnits)
    throw std::invalid_argument(
        std::string(partitioner.name) + " is exact and takes at most " +
        std::to_string(partitioner.maxUnits) +
        " granules; N/G = " + std::to_string(request.units()) +
        " is more: choose a larger granularity G");
  if (request.size == 0)
    return Distribution{std::vector<std::vector<std::int64_t>>(model.size())};
  return partitioner.partition(model, request);
}

} // namespace fpm
