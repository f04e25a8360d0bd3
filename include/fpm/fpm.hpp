//===- fpm/fpm.hpp - The fpm runtime's C++ layer ----------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A thin header-only layer over fpm.h (C++17 and later):
//
//   fpm::parallelFor(0, n, [&](int i) { c[i] = a[i] + b[i]; });
//   fpm::parallelFor(0, n, body, {"mm", "gss, 80"});
//   fpm::parallelFor(loop, tripCount, [&](std::int64_t begin,
//                                         std::int64_t end) { ... });
//
// A body may throw: the first exception stops the loop (no new chunks are
// handed out) and is rethrown to the caller once the loop has returned; any
// later ones are dropped. A bad schedule throws std::invalid_argument with
// fpm_last_error()'s text.
//
//===----------------------------------------------------------------------===//
#ifndef FPM_FPM_HPP
#define FPM_FPM_HPP

#include "fpm/fpm.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace fpm {

/// What fpm_loop says, for the convenience overload. Strings may be null.
struct LoopOptions {
  const char *name = nullptr;
  const char *schedule = nullptr; ///< as in the pragma; null is "auto"
  std::int64_t grain = 0;         ///< 0: the runtime chooses
  const char *devices = nullptr;  ///< "cpu", "gpu", "all"; null is "all"
};

namespace detail {

template <class Body> struct ChunkContext {
  explicit ChunkContext(Body &chunkBody) : body(chunkBody) {}
  Body &body;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
};

/// Calls the body on a chunk; turns an exception into "stop" and keeps the
/// first one (the flag makes exactly one thread write `error`).
template <class Body>
int chunkTrampoline(std::int64_t begin, std::int64_t end,
                    void *context) noexcept {
  auto &state = *static_cast<ChunkContext<Body> *>(context);
  try {
    state.body(begin, end);
    return 0;
  } catch (...) {
    if (!state.failed.exchange(true))
      state.error = std::current_exception();
    return 1;
  }
}

[[noreturn]] inline void throwError(int status) {
  if (status == FPM_ERROR_INVALID_ARGUMENT)
    throw std::invalid_argument(fpm_last_error());
  throw std::runtime_error(fpm_last_error());
}

} // namespace detail

/// Runs body(begin, end) over chunks of logical iterations [0, tripCount),
/// split by `loop`'s schedule.
template <class Body>
void parallelFor(const fpm_loop &loop, std::int64_t tripCount, Body &&body) {
  using BodyType = std::remove_reference_t<Body>;
  detail::ChunkContext<BodyType> state(body);
  const int status = fpm_parallel_for(
      &loop, tripCount, &detail::chunkTrampoline<BodyType>, &state);
  // Read after fpm_parallel_for returned: every chunk has finished.
  if (state.error)
    std::rethrow_exception(state.error);
  if (status != FPM_OK)
    detail::throwError(status);
}

/// Runs body(i) for i in [first, last), like tbb::parallel_for. Index is the
/// common type of the bounds, any integer type but bool.
template <
    class First, class Last, class Body,
    class Index = std::common_type_t<First, Last>,
    std::enable_if_t<std::is_integral_v<Index> && !std::is_same_v<Index, bool>,
                     int> = 0>
void parallelFor(First first, Last last, Body &&body,
                 LoopOptions options = {}) {
  const auto low = static_cast<Index>(first);
  const auto high = static_cast<Index>(last);
  if (!(low < high))
    return;
  // Unsigned differences are exact: the true one is in [1, 2^64).
  const std::uint64_t count =
      static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  if (count > static_cast<std::uint64_t>(INT64_MAX))
    throw std::invalid_argument(
        "fpm::parallelFor: more than INT64_MAX iterations");
  fpm_loop loop{};
  loop.name = options.name;
  loop.schedule = options.schedule;
  loop.devices = options.devices;
  loop.grain = options.grain;
  parallelFor(loop, static_cast<std::int64_t>(count),
              [&](std::int64_t begin, std::int64_t end) {
                // first + k in Index's arithmetic: modular, so no overflow
                // on the way for narrow or signed types.
                for (std::int64_t k = begin; k < end; ++k)
                  body(static_cast<Index>(static_cast<std::uint64_t>(low) +
                                          static_cast<std::uint64_t>(k)));
              });
}

} // namespace fpm

#endif // FPM_FPM_HPP
