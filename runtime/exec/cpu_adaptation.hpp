//===- exec/cpu_adaptation.hpp - `auto` on the CPU team ---------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Adaptation: how a CPU-only `auto` plan (exec.cpp) follows its threads'
// balance, from each thread's busy time in a measured call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/loop_call.hpp"
#include "schedule/schedule.hpp"
#include "store/online_profiles.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace fpm {

/// `auto` on the CPU team starts from equal shares, as its threads are
/// alike; but a core that another program keeps busy holds every call back.
/// Every AdaptEvery-th call of an `auto` plan times each thread's share:
/// when the slowest thread takes DivergedImbalance times the mean on
/// CallsToSwitch such calls more than not, the plan draws self-scheduled
/// chunks instead (factoring: each thread takes work as it can); when the
/// threads' speeds, drawing them, agree within AlikeSpread on as many
/// calls, it goes back to equal shares. Switching allocates once; the calls
/// between allocate nothing.
class Adaptation {
public:
  /// Counts a call of the plan; true for every AdaptEvery-th, which times
  /// each thread's share for update().
  bool measureThisCall() { return ++calls_ % AdaptEvery == 0; }
  /// Whether the threads draw self-scheduled chunks from generator()
  /// instead of running the plan.
  bool guided() const { return guided_; }
  /// The fss chunks, built at the first switch to them.
  ChunkGenerator *generator() const { return generator_.get(); }

  /// Follows the threads' balance in a measured call: per thread, the
  /// iterations it ran and its busy seconds (none for a thread of a smaller
  /// team than planned), over a loop of `units` granules planned for
  /// `threads` threads.
  void update(const LoopCall &call, std::span<const Sample> timings,
              std::int64_t units, int threads);

private:
  static constexpr std::uint32_t AdaptEvery = 4;
  static constexpr double DivergedImbalance = 1.3;
  static constexpr double AlikeSpread = 1.25;
  static constexpr int CallsToSwitch = 3;

  std::uint32_t calls_ = 0;
  int streak_ = 0; ///< measured calls that asked to switch, less those not
  bool guided_ = false;
  std::unique_ptr<ChunkGenerator> generator_; ///< fss, built at the switch
};

} // namespace fpm
