//===- exec/loop_state.cpp - What the process knows of each loop ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/loop_state.hpp"

#include <mutex>

namespace fpm {

std::string loopKey(const LoopCall &call) {
  if (!call.name.empty())
    return std::string(call.name);
  if (!call.file.empty())
    return std::string(call.file) + ":" + std::to_string(call.line);
  if (call.kernel)
    return "kernel " + call.kernel->name;
  return "(unnamed)";
}

void withLoopState(const std::string &key,
                   const std::function<void(LoopState &)> &use) {
  // Never destroyed: a loop body that calls exit() runs the static
  // destructors while loops on other threads may still use their state.
  struct States {
    std::mutex mutex;
    std::map<std::string, LoopState, std::less<>> byKey;
  };
  static States &states = *new States;
  const std::lock_guard<std::mutex> lock(states.mutex);
  use(states.byKey[key]);
}

} // namespace fpm
