//===- reduce/reductions.cpp - A loop's reduction variables ---------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "reduce/reductions.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fpm {
namespace {

/// Calls use(T{}) with the C++ type of `type`.
template <class Use> decltype(auto) withType(fpm_scalar_type type, Use &&use) {
  switch (type) {
  case FPM_TYPE_BOOL:
    return use(bool{});
  case FPM_TYPE_INT8:
    return use(std::int8_t{});
  case FPM_TYPE_UINT8:
    return use(std::uint8_t{});
  case FPM_TYPE_INT16:
    return use(std::int16_t{});
  case FPM_TYPE_UINT16:
    return use(std::uint16_t{});
  case FPM_TYPE_INT32:
    return use(std::int32_t{});
  case FPM_TYPE_UINT32:
    return use(std::uint32_t{});
  case FPM_TYPE_INT64:
    return use(std::int64_t{});
  case FPM_TYPE_UINT64:
    return use(std::uint64_t{});
  case FPM_TYPE_FLOAT:
    return use(float{});
  case FPM_TYPE_DOUBLE:
    return use(double{});
  case FPM_TYPE_LONG_DOUBLE:
    return use(static_cast<long double>(0));
  }
  throw std::invalid_argument("unknown reduction type " + std::to_string(type));
}

template <class T> T identityOf(fpm_reduction_op op) {
  switch (op) {
  case FPM_REDUCE_ADD:
  case FPM_REDUCE_BIT_OR:
  case FPM_REDUCE_BIT_XOR:
  case FPM_REDUCE_OR:
    return T(0);
  case FPM_REDUCE_MUL:
  case FPM_REDUCE_AND:
    return T(1);
  case FPM_REDUCE_MIN:
    if constexpr (std::numeric_limits<T>::has_infinity)
      return std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::max();
  case FPM_REDUCE_MAX:
    if constexpr (std::numeric_limits<T>::has_infinity)
      return -std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  case FPM_REDUCE_BIT_AND:
    if constexpr (std::is_same_v<T, bool>)
      return true;
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(~T(0));
    break;
  }
  return T(0);
}

template <class T> T combined(fpm_reduction_op op, T a, T b) {
  switch (op) {
  case FPM_REDUCE_ADD:
    return static_cast<T>(a + b);
  case FPM_REDUCE_MUL:
    // An unsigned type narrower than int is promoted to int, where
    // 65530 * 65532 overflows (UBSan): multiply in a wide unsigned type,
    // modulo 2^N as the unsigned type's own arithmetic is meant to be.
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
      return static_cast<T>(static_cast<unsigned long long>(a) *
                            static_cast<unsigned long long>(b));
    else
      return static_cast<T>(a * b);
  // As `a = b < a ? b : a` would: a NaN partial is kept only on the left.
  case FPM_REDUCE_MIN:
    return b < a ? b : a;
  case FPM_REDUCE_MAX:
    return a < b ? b : a;
  case FPM_REDUCE_AND:
    return static_cast<T>(a && b);
  case FPM_REDUCE_OR:
    return static_cast<T>(a || b);
  default:
    break;
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (op == FPM_REDUCE_BIT_AND)
      return static_cast<T>(a & b);
    if (op == FPM_REDUCE_BIT_OR)
      return static_cast<T>(a | b);
    if (op == FPM_REDUCE_BIT_XOR)
      return static_cast<T>(a ^ b);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (op == FPM_REDUCE_BIT_AND)
      return a && b;
    if (op == FPM_REDUCE_BIT_OR)
      return a || b;
    if (op == FPM_REDUCE_BIT_XOR)
      return a != b;
  }
  return a;
}

/// At most this many reductions get their accumulators on the stack.
constexpr std::size_t StackReductions = 8;

} // namespace

std::size_t Reduction::size() const {
  return withType(type, [](auto value) { return sizeof value; });
}

ScalarValue Reduction::identity() const {
  ScalarValue value;
  withType(type, [&](auto zero) {
    const auto id = identityOf<decltype(zero)>(op);
    std::memcpy(value.data(), &id, sizeof id);
  });
  return value;
}

void Reduction::combine(void *into, const void *value) const {
  withType(type, [&](auto zero) {
    using T = decltype(zero);
    T a, b;
    std::memcpy(&a, into, sizeof a);
    std::memcpy(&b, value, sizeof b);
    a = combined<T>(op, a, b);
    std::memcpy(into, &a, sizeof a);
  });
}

std::vector<Reduction> makeReductions(std::span<const fpm_reduction> list) {
  std::vector<Reduction> reductions;
  for (std::size_t r = 0; r < list.size(); ++r) {
    const fpm_reduction &in = list[r];
    const std::string where = "reduction " + std::to_string(r) + ": ";
    if (in.op < FPM_REDUCE_ADD || in.op > FPM_REDUCE_OR)
      throw std::invalid_argument(where + "unknown operator " +
                                  std::to_string(in.op));
    if (in.type < FPM_TYPE_BOOL || in.type > FPM_TYPE_LONG_DOUBLE)
      throw std::invalid_argument(where + "unknown type " +
                                  std::to_string(in.type));
    const bool floating = in.type >= FPM_TYPE_FLOAT;
    if (floating && in.op >= FPM_REDUCE_BIT_AND && in.op <= FPM_REDUCE_BIT_XOR)
      throw std::invalid_argument(where +
                                  "a bitwise operator on a floating type");
    if (!in.variable)
      throw std::invalid_argument(where + "no variable");
    reductions.push_back({static_cast<fpm_reduction_op>(in.op),
                          static_cast<fpm_scalar_type>(in.type), in.variable});
  }
  return reductions;
}

void ReductionPartials::reset(std::span<ScalarValue> values) const {
  for (std::size_t r = 0; r < reductions_.size(); ++r)
    values[r] = reductions_[r].identity();
}

void ReductionPartials::add(Range range, std::span<const ScalarValue> values) {
  Record record{range, {values.begin(), values.end()}};
  const std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back(std::move(record));
}

void ReductionPartials::apply() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const Record *> order;
  for (const Record &record : records_)
    order.push_back(&record);
  std::sort(order.begin(), order.end(), [](const Record *a, const Record *b) {
    return a->range.begin < b->range.begin;
  });
  for (std::size_t r = 0; r < reductions_.size(); ++r) {
    const Reduction &reduction = reductions_[r];
    ScalarValue total;
    std::memcpy(total.data(), reduction.variable, reduction.size());
    for (const Record *record : order)
      reduction.combine(total.data(), record->values[r].data());
    std::memcpy(reduction.variable, total.data(), reduction.size());
  }
}

std::vector<std::pair<Range, std::vector<ScalarValue>>>
ReductionPartials::records() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<Range, std::vector<ScalarValue>>> sorted;
  for (const Record &record : records_)
    sorted.emplace_back(record.range, record.values);
  std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
    return a.first.begin < b.first.begin;
  });
  return sorted;
}

int runReduceChunk(std::int64_t begin, std::int64_t end, void *context) noexcept
    try {
  const auto &call = *static_cast<const ReduceCall *>(context);
  const std::size_t count = call.partials->reductions().size();
  std::array<ScalarValue, StackReductions> onStack;
  std::array<void *, StackReductions> pointersOnStack;
  std::vector<ScalarValue> onHeap;
  std::vector<void *> pointersOnHeap;
  std::span<ScalarValue> values(onStack.data(), count);
  std::span<void *> pointers(pointersOnStack.data(), count);
  if (count > StackReductions) {
    onHeap.resize(count);
    pointersOnHeap.resize(count);
    values = onHeap;
    pointers = pointersOnHeap;
  }
  call.partials->reset(values);
  for (std::size_t r = 0; r < count; ++r)
    pointers[r] = values[r].data();
  const int status = call.body(begin, end, call.context, pointers.data());
  if (status == 0)
    call.partials->add({begin, end}, values);
  return status;
} catch (...) {
  return 1; // out of memory keeping the partials: stop the loop
}

} // namespace fpm
