//===- partition/equal.cpp - N/p to every PE ------------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

namespace fpm {

// The classic baseline: blind to speed, so every PE is treated as equally
// fast, and the granules that do not divide evenly go to the first PEs.
Distribution partitionEqual(const CostModel &model,
                            const PartitionRequest &request) {
  std::vector<double> shares(model.size(),
                             static_cast<double>(request.size) /
                                 static_cast<double>(model.size()));
  return roundShares(shares, request, [](std::size_t, std::int64_t units) {
    return static_cast<double>(units);
  });
}

} // namespace fpm
