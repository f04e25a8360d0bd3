//===- device/cpu_driver.cpp - CPU threads as a PE's workers --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/cpu_driver.hpp"

namespace fpm {

int runCpuDriver(WorkFeed &feed, fpm_body_fn body, void *context,
                 const TraceTarget *trace) {
  CpuChunkRunner runner(body, context, true, trace);
  while (!feed.stopped()) {
    const std::optional<Range> range = feed.next();
    if (!range)
      return 0;
    const int status = runner.run(*range);
    feed.done(*range, runner.lastSeconds());
    if (status != 0)
      return status;
  }
  return 0;
}

} // namespace fpm
