//===- exec/cpu_adaptation.cpp - `auto` on the CPU team -------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/cpu_adaptation.hpp"

#include <algorithm>
#include <cstdio>

namespace fpm {

void Adaptation::update(const LoopCall &call, std::span<const Sample> timings,
                        std::int64_t units, int threads) {
  double longest = 0, total = 0, slowest = 0, fastest = 0;
  int timed = 0;
  for (const auto &[iterations, seconds] : timings) {
    if (iterations <= 0 || seconds <= 0)
      continue; // a thread of a smaller team than planned
    const double speed = static_cast<double>(iterations) / seconds;
    longest = std::max(longest, seconds);
    total += seconds;
    slowest = timed ? std::min(slowest, speed) : speed;
    fastest = std::max(fastest, speed);
    ++timed;
  }
  if (timed < 2)
    return;
  const bool askToSwitch = guided_
                               ? fastest <= AlikeSpread * slowest
                               : longest > DivergedImbalance * total / timed;
  // One call against among several for does not start over: noise.
  streak_ = askToSwitch ? streak_ + 1 : std::max(streak_ - 1, 0);
  if (streak_ < CallsToSwitch)
    return;
  streak_ = 0;
  guided_ = !guided_;
  if (guided_ && !generator_) {
    ScheduleSpec spec;
    // Factoring: its first chunks are half of gss's, so that a slow
    // thread that draws first is held back half as long.
    spec.scheme = Scheme::Fss;
    spec.iterations = units;
    spec.workers = threads;
    generator_ = std::make_unique<ChunkGenerator>(spec);
  }
  if (call.verbose)
    std::fprintf(stderr,
                 guided_
                     ? "fpm: %s: auto: the CPU threads run at different "
                       "speeds (the slowest at %.2f of the fastest): "
                       "self-scheduled chunks (fss) from now on\n"
                     : "fpm: %s: auto: the CPU threads run alike again (the "
                       "slowest at %.2f of the fastest): equal shares from "
                       "now on\n",
                 loopLabel(call).c_str(), slowest / fastest);
}

} // namespace fpm
