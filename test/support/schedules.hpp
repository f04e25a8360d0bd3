//===- support/schedules.hpp - Schedule specs for tests --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The plain ScheduleSpec the self-scheduling tests build over and over.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "schedule/schedule.hpp"

#include <cstdint>

namespace fpm::test {

inline ScheduleSpec makeSpec(Scheme scheme, std::int64_t iterations,
                             int workers, std::int64_t chunk = 1) {
  ScheduleSpec spec;
  spec.scheme = scheme;
  spec.iterations = iterations;
  spec.workers = workers;
  spec.chunk = chunk;
  return spec;
}

} // namespace fpm::test
