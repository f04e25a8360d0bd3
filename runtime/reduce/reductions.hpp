//===- reduce/reductions.hpp - A loop's reduction variables ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: the reductions of a loop call
// (fpm_parallel_reduce, the pragma's reduction(op: list)): each operator's
// identity and combination over every scalar type, and ReductionPartials,
// which collects the partial results of the call's ranges from every PE
// and folds them, in the order of their ranges, into the variables. Ranges
// that failed are never added, so nothing is counted twice.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "fpm/fpm.h"

#include <cstddef>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

namespace fpm {

/// A value of any fpm_scalar_type.
struct ScalarValue {
  alignas(16) std::byte bytes[16] = {};
  void *data() { return bytes; }
  const void *data() const { return bytes; }
};

struct Reduction {
  fpm_reduction_op op = FPM_REDUCE_ADD;
  fpm_scalar_type type = FPM_TYPE_DOUBLE;
  void *variable = nullptr;

  /// The bytes of a value of its type.
  std::size_t size() const;
  /// op's identity.
  ScalarValue identity() const;
  /// into = into op value (both of its type).
  void combine(void *into, const void *value) const;
};

/// Checks a C list (operators and types known, bitwise operators on
/// integers only, variables set). Throws std::invalid_argument naming the
/// entry.
std::vector<Reduction> makeReductions(std::span<const fpm_reduction> list);

/// The partial results of one loop call, by range. Thread-safe.
class ReductionPartials {
public:
  explicit ReductionPartials(std::vector<Reduction> reductions)
      : reductions_(std::move(reductions)) {}

  std::span<const Reduction> reductions() const { return reductions_; }
  /// Sets `values` (one per reduction) to the identities.
  void reset(std::span<ScalarValue> values) const;
  /// The partial results of `range`, one per reduction.
  void add(Range range, std::span<const ScalarValue> values);
  /// Folds the partials, in the order of their ranges, into each variable:
  /// variable = ((variable op p_0) op p_1) op ...
  void apply() const;
  /// Every range's partial results so far, in the order of their ranges
  /// (what apply() folds), e.g. to fold them in another process.
  std::vector<std::pair<Range, std::vector<ScalarValue>>> records() const;

private:
  struct Record {
    Range range;
    std::vector<ScalarValue> values;
  };
  std::vector<Reduction> reductions_;
  mutable std::mutex mutex_;
  std::vector<Record> records_;
};

/// A fpm_reduce_body_fn run as a fpm_body_fn: `context` is a ReduceCall.
/// Each chunk gets fresh accumulators, and their values go to `partials`
/// when the body returns 0.
struct ReduceCall {
  fpm_reduce_body_fn body = nullptr;
  void *context = nullptr;
  ReductionPartials *partials = nullptr;
};
int runReduceChunk(std::int64_t begin, std::int64_t end,
                   void *context) noexcept;

} // namespace fpm
