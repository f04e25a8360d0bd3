//===- support/int_math.hpp - Integer arithmetic ---------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace fpm {

/// ceil(a / b) for a >= 0, b > 0.
constexpr std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// `value` in decimal: bounds computed in 128 bits, for messages, which a
/// cast to 64 bits would wrap (std::to_string has no 128-bit overload).
inline std::string decimal(__int128 value) {
  const bool negative = value < 0;
  auto magnitude = negative ? -static_cast<unsigned __int128>(value)
                            : static_cast<unsigned __int128>(value);
  std::string digits;
  do {
    digits += static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative)
    digits += '-';
  return {digits.rbegin(), digits.rend()};
}

} // namespace fpm
