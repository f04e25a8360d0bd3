//===- device/cpu_driver.cpp - CPU threads as a PE's workers --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/cpu_driver.hpp"

#include "trace/trace.hpp"

namespace fpm {

int runCpuDriver(WorkFeed &feed, fpm_body_fn body, void *context,
                 const TraceTarget *trace) {
  while (!feed.stopped()) {
    const std::optional<Range> range = feed.next();
    if (!range)
      return 0;
    const std::int64_t start = trace::now();
    const int status = body(range->begin, range->end, context);
    const std::int64_t finish = trace::now();
    feed.done(*range, static_cast<double>(finish - start) * 1e-9);
    if (trace)
      trace::chunk(trace->loop, trace->lane, "cpu", range->begin, range->end,
                   start, finish);
    if (status != 0)
      return status;
  }
  return 0;
}

} // namespace fpm
