//===- exec/trip_count.hpp - How many times a C for loop runs --*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The trip count of `for (v = lower; v CMP upper; v += step)` as C runs it,
// computed once before the loop (fpm_trip_count_typed in fpm.h). C tests
// `(C)v CMP upper` in the comparison's type C (the usual arithmetic
// conversions of v's type and the bound's), and `v += step` wraps around
// v's type where C defines it to (unsigned types; signed ones narrower than
// int, computed in int and converted back). The count follows both, so an
// `unsigned char` loop from 250 to `!= 4` runs 10 times, and a bound of -1
// compared as long with an unsigned variable stops it at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace fpm {

/// An integer type as fpm.h's FPM_INT_TYPE spells it: its size in bytes,
/// negative for a signed type.
struct IntType {
  int bits = 64;
  bool isSigned = true;

  /// The type of code `FPM_INT_TYPE(T)`; nullopt-like `bits == 0` for a
  /// size other than 1, 2, 4 or 8 bytes.
  static IntType fromCode(int code);
};

/// The trip count, or -1 when the loop never ends, wraps around its type
/// more often than fpm follows, or runs more than INT64_MAX times. lower
/// is a value of `var`, upper one of `compare`, each converted to 64 bits
/// (an unsigned 64-bit value as its bit pattern).
std::int64_t tripCount(std::int64_t lower, std::int64_t upper,
                       std::int64_t step, int compare, IntType var,
                       IntType compareType);

/// The error a loop call with a negative trip count fails with; for -1, it
/// says what the trip-count functions mean by it.
std::string negativeTripCount(std::int64_t tripCount);

} // namespace fpm
