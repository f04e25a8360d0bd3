//===- support/loops.hpp - Loop descriptions for tests ---------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The fpm_loop the runtime's tests describe their loops with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fpm/fpm.h"

#include <cstdint>
#include <span>

namespace fpm::test {

/// A loop named `name` (which must outlive the loop's calls) with a
/// schedule and a grain.
inline fpm_loop namedLoop(const char *name, const char *schedule,
                          std::int64_t grain = 0) {
  fpm_loop loop{};
  loop.name = name;
  loop.schedule = schedule;
  loop.grain = grain;
  return loop;
}

/// `loop` with `data` as the arrays it reads and writes (which must outlive
/// the loop's calls).
inline fpm_loop withData(fpm_loop loop, std::span<const fpm_arg> data) {
  loop.data = data.data();
  loop.data_count = static_cast<int>(data.size());
  return loop;
}

} // namespace fpm::test
