//===- exec/loop_call.cpp - One call of a loop ----------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/loop_call.hpp"

#include <omp.h>

#include <algorithm>

namespace fpm {

std::string loopLabel(const LoopCall &call) {
  std::string label =
      "loop '" +
      (call.name.empty() ? std::string("(unnamed)") : std::string(call.name)) +
      "'";
  if (!call.file.empty())
    label +=
        " (" + std::string(call.file) + ":" + std::to_string(call.line) + ")";
  return label;
}

int cpuThreads() {
  // A region here would get one thread: plan for one.
  if (omp_get_active_level() >= omp_get_max_active_levels())
    return 1;
  return std::max(omp_get_max_threads(), 1);
}

} // namespace fpm
