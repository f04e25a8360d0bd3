//===- device/cpu_driver.hpp - CPU threads as a PE's workers ---*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The CPU driver: one thread of the CPU team, running the loop's compiled
// body over the ranges its feed gives it. A team is these, one per thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "device/driver.hpp"
#include "fpm/fpm.h"

namespace fpm {

/// Runs `body` over ranges from `feed` until it has none left or a body
/// returns non-zero (returned then: the loop must stop). Each range is a
/// chunk in the trace, when `trace` is set.
int runCpuDriver(WorkFeed &feed, fpm_body_fn body, void *context,
                 const TraceTarget *trace);

} // namespace fpm
