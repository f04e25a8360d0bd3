//===- partition/min_max.hpp - Exact min-max split of granules --*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The search hpopta and optimal share: given, for every PE, the least time
// it needs for k granules (k = 0..K), with and without the remainder N mod G,
// split K granules and the remainder over the PEs so that the largest time is
// least. Defined in hpopta.cpp; private to this folder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace fpm {

/// What one PE can do: `plain[k]` is its time for k granules (plain[0] is
/// 0), `withRemainder[k]` its time for k granules and the remainder (empty
/// when there is no remainder). Both have K + 1 entries otherwise.
struct GranuleTimes {
  std::vector<double> plain;
  std::vector<double> withRemainder;
};

/// One PE's part of a split.
struct GranuleShare {
  std::int64_t granules = 0;
  bool remainder = false;
};

/// The split of `granules` (K) over the PEs, and of the remainder onto exactly
/// one PE when `remainder` is set, whose largest time is least; ties are
/// broken the same way every time. Only times <= `bound` are considered
/// (an upper bound from a known split prunes the search; +inf prunes
/// nothing); nothing is returned when no split stays within it, nor when
/// every split takes an infinite time (times too large for a double).
/// O(K * sum over PEs of the sizes within `bound`) <= O(p K^2) time, O(p K)
/// memory.
std::optional<std::vector<GranuleShare>>
minMaxSplit(std::span<const GranuleTimes> pes, std::int64_t granules,
            bool remainder, double bound);

} // namespace fpm
