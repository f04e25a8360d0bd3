//===- extension/first_only.cpp - A partitioner the tests add -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// first-only: every unit on the first PE. A partitioner added as
// include/fpm/schedules.def says one is: this file, and the one line of
// schedules.def beside it. CMakeLists.txt here builds the runtime,
// fpm-partition and fpm-rewrite with both; the lit test
// extension/added-partitioner.test checks that each of them takes it.
//
//===----------------------------------------------------------------------===//

#include "partition/algorithms.hpp"

namespace fpm {

Distribution partitionFirstOnly(const CostModel &model,
                                const PartitionRequest &request) {
  Distribution distribution{
      std::vector<std::vector<std::int64_t>>(model.size())};
  if (request.size > 0)
    distribution.packages.front().push_back(request.size);
  return distribution;
}

} // namespace fpm
