//===- exec/trip_count.cpp - How many times a C for loop runs -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/trip_count.hpp"

#include "fpm/fpm.h"

#include <climits>
#include <optional>

namespace fpm {

namespace {

// Every value below fits: operands are under 2^64 in magnitude, and counts
// are followed only while they fit in 64 bits.
using Wide = __int128;

/// A count that is not there: the test never fails.
constexpr Wide Never = -1;

Wide spanOf(IntType type) { return Wide{1} << type.bits; }
Wide minOf(IntType type) { return type.isSigned ? -spanOf(type) / 2 : 0; }
Wide maxOf(IntType type) { return minOf(type) + spanOf(type) - 1; }

/// v taken modulo the type's span into its range, as C converts to it.
Wide wrapInto(Wide v, IntType type) {
  const Wide span = spanOf(type);
  Wide offset = (v - minOf(type)) % span;
  if (offset < 0)
    offset += span;
  return minOf(type) + offset;
}

/// A 64-bit argument read as a value of `type`.
Wide valueOf(std::int64_t value, IntType type) {
  if (!type.isSigned && type.bits == 64)
    return static_cast<std::uint64_t>(value);
  return wrapInto(value, type);
}

/// Whether `v += step` wraps: C defines it for unsigned types, and for
/// signed ones narrower than int (the sum is an int, converted back; every
/// compiler fpm supports takes it modulo). Overflow of the others is
/// undefined, so no defined loop wraps them.
bool wraps(IntType var) {
  return !var.isSigned || var.bits < static_cast<int>(sizeof(int) * CHAR_BIT);
}

/// The count of an exact (non-wrapping) sequence from `lower`: the first k
/// whose `lower + k * step` fails the test, or Never.
Wide exactCount(Wide lower, Wide upper, Wide step, int compare) {
  switch (compare) {
  case FPM_LT:
    if (!(lower < upper))
      return 0;
    return step > 0 ? (upper - lower + step - 1) / step : Never;
  case FPM_LE:
    if (!(lower <= upper))
      return 0;
    return step > 0 ? (upper - lower) / step + 1 : Never;
  case FPM_GT:
    if (!(lower > upper))
      return 0;
    return step < 0 ? (lower - upper - step - 1) / -step : Never;
  case FPM_GE:
    if (!(lower >= upper))
      return 0;
    return step < 0 ? (lower - upper) / -step + 1 : Never;
  case FPM_NE: {
    if (lower == upper)
      return 0;
    if (step == 0)
      return Never;
    const Wide distance = upper - lower;
    // Must hit the bound exactly, walking towards it.
    if (distance % step != 0 || (distance > 0) != (step > 0))
      return Never;
    return distance / step;
  }
  default:
    return Never;
  }
}

/// The least k >= 0 with `k * step == distance` modulo 2^bits, or Never.
/// With step = 2^a * u (u odd) there is one iff 2^a divides the distance,
/// and then k = (distance / 2^a) * u^-1 modulo 2^(bits - a).
Wide modularCount(Wide distance, Wide step, IntType var) {
  using U = unsigned __int128;
  const U span = static_cast<U>(spanOf(var));
  U d = static_cast<U>(wrapInto(distance, IntType{var.bits, false}));
  U s = static_cast<U>(wrapInto(step, IntType{var.bits, false}));
  if (d == 0)
    return 0;
  if (s == 0)
    return Never;
  int twos = 0;
  while ((s & 1) == 0) {
    s >>= 1;
    ++twos;
  }
  if ((d & ((U{1} << twos) - 1)) != 0)
    return Never;
  d >>= twos;
  const U modulus = span >> twos;
  // Newton's iteration for the inverse of an odd number modulo 2^64: each
  // step doubles the correct low bits (3 at the start).
  const auto odd = static_cast<std::uint64_t>(s);
  std::uint64_t inverse = odd;
  for (int i = 0; i < 5; ++i)
    inverse *= 2 - odd * inverse;
  return static_cast<Wide>((d * inverse) & (modulus - 1));
}

Wide countNotEqual(Wide lower, Wide upper, Wide step, IntType var,
                   IntType compareType) {
  // The value of the variable that compares equal to the bound: a negative
  // one read as unsigned is itself plus 2^bits of the comparison's type.
  const bool negativeReadsUnsigned = var.isSigned && !compareType.isSigned;
  Wide target = upper;
  if (negativeReadsUnsigned && upper > maxOf(var))
    target = upper - spanOf(compareType);
  if (target < minOf(var) || target > maxOf(var))
    return Never; // the test never fails
  if (!wraps(var))
    return exactCount(lower, target, step, FPM_NE);
  return modularCount(target - lower, step, var);
}

/// Relational tests: the tested value moves by step until the variable
/// wraps (or, signed and compared as unsigned, crosses zero); each such
/// stretch is an exact sequence. A loop still running after this many
/// stretches gets Never (it runs forever, or wraps more often than is worth
/// following: the call then fails, saying so).
constexpr int StretchesFollowed = 1024;

Wide countRelational(Wide lower, Wide upper, Wide step, int compare,
                     IntType var, IntType compareType) {
  const bool wrap = wraps(var);
  const bool negativeReadsUnsigned = var.isSigned && !compareType.isSigned;
  Wide k = 0;
  for (int stretch = 0; stretch < StretchesFollowed && k <= INT64_MAX;
       ++stretch) {
    const Wide exact = lower + k * step;
    const Wide value = wrap ? wrapInto(exact, var) : exact;
    // The exact values [low, high] keep this stretch's offset (tested -
    // exact); an end that is not there is empty.
    std::optional<Wide> low, high;
    if (wrap) {
      low = exact - (value - minOf(var));
      high = exact + (maxOf(var) - value);
    }
    Wide tested = value;
    if (negativeReadsUnsigned && value < 0) {
      tested += spanOf(compareType);
      high = exact - value - 1;
    } else if (negativeReadsUnsigned) {
      low = exact - value;
    }
    const Wide count = exactCount(tested, upper, step, compare);
    std::optional<Wide> leave; // steps until the values leave the stretch
    if (step > 0 && high)
      leave = (*high - exact) / step + 1;
    else if (step < 0 && low)
      leave = (exact - *low) / -step + 1;
    if (count != Never && (!leave || count < *leave))
      return k + count;
    if (!leave)
      return Never;
    k += *leave;
  }
  return Never;
}

} // namespace

std::string negativeTripCount(std::int64_t tripCount) {
  std::string message =
      "the trip count must be >= 0, got " + std::to_string(tripCount);
  if (tripCount == -1)
    message += " (fpm_trip_count's answer for a loop that never ends, wraps "
               "around its variable's type more than a thousand times, or "
               "runs more than 2^63 times)";
  return message;
}

IntType IntType::fromCode(int code) {
  const int bytes = code < 0 ? -code : code;
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    return IntType{0, code < 0};
  return IntType{bytes * 8, code < 0};
}

std::int64_t tripCount(std::int64_t lower, std::int64_t upper,
                       std::int64_t step, int compare, IntType var,
                       IntType compareType) {
  if (var.bits == 0 || compareType.bits == 0)
    return -1;
  const Wide first = valueOf(lower, var);
  const Wide bound = valueOf(upper, compareType);
  const Wide count =
      compare == FPM_NE
          ? countNotEqual(first, bound, step, var, compareType)
          : countRelational(first, bound, step, compare, var, compareType);
  if (count == Never || count > INT64_MAX)
    return -1;
  return static_cast<std::int64_t>(count);
}

} // namespace fpm
