//===- support/int_math.hpp - Integer arithmetic ---------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fpm {

/// ceil(a / b) for a >= 0, b > 0.
constexpr std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

} // namespace fpm
