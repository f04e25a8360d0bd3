//===- exec/loop_state.hpp - What the process knows of each loop -*- C++ -*-=//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The one registry of per-loop state, keyed one way (loopKey()): what a
// loop's PEs measured in earlier calls of this process, the devices that
// failed it, its partial FPMs, whether fpm-profile benchmarked it and
// whether the runtime said why it runs on the CPU only (the verbose lines
// it printed are verbose_splits.hpp's). The CPU-only
// executor's plan cache is not here: it holds splits by shape (schedule,
// trip count, grain, team), which loops share, per thread so that a lookup
// takes no lock.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "balance/balance.hpp"
#include "exec/loop_call.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace fpm {

/// What one PE ran of a loop, per worker thread: a CPU PE's speed is this
/// times its threads.
struct PeRecord {
  std::int64_t iterations = 0;
  double seconds = 0;
};

struct LoopState {
  std::map<std::string, PeRecord, std::less<>> pes; ///< by profile id
  int calls = 0; ///< co-executed calls finished in this process
  std::set<std::string, std::less<>> failed; ///< devices that failed it
  /// The partial FPMs of `auto` and `numerical` calls, per set of PEs
  /// (their ids): another set of PEs is another balancing problem.
  std::map<std::string, LoadBalancer, std::less<>> balancers;
  /// The last static split, one range per PE, per set of PEs (as
  /// balancers), as the call ended it (steals included): a data region's
  /// next call keeps its cuts where it can.
  std::map<std::string, std::vector<Range>, std::less<>> lastSplits;
  bool benchmarked = false; ///< by fpm-profile, in this process
  /// Whether the runtime said why it keeps the loop on the CPU (it says it
  /// once).
  bool saidCpuOnly = false;
};

/// The key of `call`'s state: its name, else FILE:LINE, else its kernel's
/// name, else "(unnamed)".
std::string loopKey(const LoopCall &call);

/// Runs `use` on the state of loop `key` (made on first use), under the
/// registry's lock: `use` must not call back into the runtime.
void withLoopState(const std::string &key,
                   const std::function<void(LoopState &)> &use);

} // namespace fpm
