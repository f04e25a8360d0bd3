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
// With an OpenCL kernel beside the CPU body (rows of C = A * B):
//
//   auto kernel = fpm::Kernel::fromFile("mm.cl", "mm")
//                     .in(a, n * n, fpm::perIteration(n, n))
//                     .in(b, n * n)                  // shared: whole array
//                     .out(c, n * n, fpm::perIteration(n, n))
//                     .scalar(n);
//   fpm::parallelFor(loop, n, kernel, [&](std::int64_t begin,
//                                         std::int64_t end) { ... });
//
// With reductions (OpenMP's reduction(+: sum) reduction(max: top)): the
// body gets its chunk's accumulators, set to each operator's identity.
//
//   fpm::parallelReduce(loop, n, nullptr,
//       [&](std::int64_t begin, std::int64_t end, double &sum, int &top) {
//         for (std::int64_t i = begin; i < end; ++i) { ... }
//       },
//       fpm::reduce(FPM_REDUCE_ADD, sum), fpm::reduce(FPM_REDUCE_MAX, top));
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
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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

/// The elements of an array that logical iteration k touches:
/// [offset + k * stride, offset + k * stride + count), as the pragma's
/// `A[i*n : n]`. The default, all zeros, is the whole array, shared by every
/// iteration.
struct Section {
  std::int64_t offset = 0;
  std::int64_t stride = 0;
  std::int64_t count = 0;
};

/// `count` elements per iteration, `stride` apart, from `offset`.
inline Section perIteration(std::int64_t stride, std::int64_t count,
                            std::int64_t offset = 0) {
  return {offset, stride, count};
}

/// The OpenCL side of a loop: a kernel and its arguments, in its parameter
/// order. Scalars are copied; arrays are the caller's and must outlive the
/// loop call.
class Kernel {
public:
  static Kernel fromSource(std::string source, std::string name) {
    Kernel kernel;
    kernel.source_ = std::move(source);
    kernel.hasSource_ = true;
    kernel.name_ = std::move(name);
    return kernel;
  }
  static Kernel fromFile(std::string path, std::string name) {
    Kernel kernel;
    kernel.file_ = std::move(path);
    kernel.name_ = std::move(name);
    return kernel;
  }

  /// clBuildProgram's options, e.g. "-cl-fast-relaxed-math".
  Kernel &options(std::string text) {
    options_ = std::move(text);
    return *this;
  }
  template <class T> Kernel &scalar(const T &value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "a kernel scalar must be trivially copyable");
    Arg arg;
    arg.kind = FPM_ARG_SCALAR;
    arg.value.resize(sizeof(T));
    std::memcpy(arg.value.data(), &value, sizeof(T));
    args_.push_back(std::move(arg));
    return *this;
  }
  template <class T>
  Kernel &in(const T *data, std::int64_t length, Section section = {}) {
    return array(FPM_ARG_IN, const_cast<T *>(data), length, section);
  }
  template <class T>
  Kernel &out(T *data, std::int64_t length, Section section) {
    return array(FPM_ARG_OUT, data, length, section);
  }
  template <class T>
  Kernel &inout(T *data, std::int64_t length, Section section) {
    return array(FPM_ARG_INOUT, data, length, section);
  }
  /// __local scratch of `bytes` per work-group.
  Kernel &local(std::size_t bytes) {
    Arg arg;
    arg.kind = FPM_ARG_LOCAL;
    arg.bytes = bytes;
    args_.push_back(std::move(arg));
    return *this;
  }

  /// The end of the range each launch runs (FPM_ARG_END, fpm_end_arg): the
  /// kernel then runs in whole work-groups past it, and its work-items
  /// there must do nothing.
  Kernel &end() {
    Arg arg;
    arg.kind = FPM_ARG_END;
    arg.bytes = sizeof(std::uint64_t);
    args_.push_back(std::move(arg));
    return *this;
  }

  /// The write mask of the array argument added last (FPM_ARG_MASK,
  /// fpm_mask_arg), one byte per element of it: its section (written, the
  /// same for every iteration: `Section{}`, all of it) goes to a device
  /// whole, and the kernel stores 1 at `mask[p - a]` for each element p of
  /// a it writes; only those come back.
  Kernel &mask() {
    for (std::size_t i = args_.size(); i-- > 0;)
      if (args_[i].kind == FPM_ARG_IN || args_[i].kind == FPM_ARG_OUT ||
          args_[i].kind == FPM_ARG_INOUT) {
        Arg arg;
        arg.kind = FPM_ARG_MASK;
        arg.bytes = args_[i].bytes;
        arg.section.offset = static_cast<std::int64_t>(i);
        args_.push_back(std::move(arg));
        return *this;
      }
    throw std::invalid_argument("fpm::Kernel::mask(): no array before it");
  }

  /// Calls `use(const fpm_kernel &)` with the C description, valid during
  /// the call.
  template <class Use> decltype(auto) withDescription(Use &&use) const {
    std::vector<fpm_arg> args(args_.size());
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const Arg &arg = args_[i];
      fpm_arg &c = args[i];
      c.kind = arg.kind;
      if (arg.kind == FPM_ARG_SCALAR) {
        c.data = const_cast<unsigned char *>(arg.value.data());
        c.size = arg.value.size();
      } else {
        c.data = arg.data;
        c.size = arg.bytes;
        c.length = arg.length;
        c.offset = arg.section.offset;
        c.stride = arg.section.stride;
        c.count = arg.section.count;
      }
    }
    fpm_kernel kernel{};
    kernel.source = hasSource_ ? source_.c_str() : nullptr;
    kernel.file = hasSource_ ? nullptr : file_.c_str();
    kernel.name = name_.c_str();
    kernel.options = options_.empty() ? nullptr : options_.c_str();
    kernel.args = args.data();
    kernel.arg_count = static_cast<int>(args.size());
    kernel.language = FPM_KERNEL_OPENCL_C;
    return use(static_cast<const fpm_kernel &>(kernel));
  }

private:
  struct Arg {
    int kind = FPM_ARG_SCALAR;
    std::vector<unsigned char> value; // a scalar's bytes
    void *data = nullptr;
    std::size_t bytes = 0; // per element, or local bytes
    std::int64_t length = 0;
    Section section;
  };

  template <class T>
  Kernel &array(int kind, T *data, std::int64_t length, Section section) {
    Arg arg;
    arg.kind = kind;
    arg.data = data;
    arg.bytes = sizeof(T);
    arg.length = length;
    arg.section = section;
    args_.push_back(std::move(arg));
    return *this;
  }

  std::string source_, file_, name_, options_;
  bool hasSource_ = false;
  std::vector<Arg> args_;
};

/// parallelFor with `kernel`, a C description, running the chunks that go
/// to OpenCL devices, `body` the others; a null kernel is the CPU only (what
/// fpm-rewrite's code passes).
template <class Body>
void parallelFor(const fpm_loop &loop, std::int64_t tripCount,
                 const fpm_kernel *kernel, Body &&body) {
  using BodyType = std::remove_reference_t<Body>;
  detail::ChunkContext<BodyType> state(body);
  const int status = fpm_parallel_for_kernel(
      &loop, tripCount, &detail::chunkTrampoline<BodyType>, &state, kernel);
  if (state.error)
    std::rethrow_exception(state.error);
  if (status != FPM_OK)
    detail::throwError(status);
}

/// parallelFor with `kernel` running the chunks that go to OpenCL devices,
/// `body` the others.
template <class Body>
void parallelFor(const fpm_loop &loop, std::int64_t tripCount,
                 const Kernel &kernel, Body &&body) {
  kernel.withDescription([&](const fpm_kernel &c) {
    parallelFor(loop, tripCount, &c, std::forward<Body>(body));
  });
}

/// The fpm_scalar_type of T, an arithmetic type.
template <class T> constexpr int scalarType() {
  static_assert(std::is_arithmetic_v<T>,
                "a reduction variable must be of an arithmetic type");
  if constexpr (std::is_same_v<T, bool>)
    return FPM_TYPE_BOOL;
  else if constexpr (std::is_same_v<T, float>)
    return FPM_TYPE_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return FPM_TYPE_DOUBLE;
  else if constexpr (std::is_same_v<T, long double>)
    return FPM_TYPE_LONG_DOUBLE;
  else if constexpr (sizeof(T) == 1)
    return std::is_signed_v<T> ? FPM_TYPE_INT8 : FPM_TYPE_UINT8;
  else if constexpr (sizeof(T) == 2)
    return std::is_signed_v<T> ? FPM_TYPE_INT16 : FPM_TYPE_UINT16;
  else if constexpr (sizeof(T) == 4)
    return std::is_signed_v<T> ? FPM_TYPE_INT32 : FPM_TYPE_UINT32;
  else
    return std::is_signed_v<T> ? FPM_TYPE_INT64 : FPM_TYPE_UINT64;
}

/// One reduction: `variable` combined with `op` (enum fpm_reduction_op).
template <class T> struct Reduce {
  int op;
  T &variable;
};
template <class T> Reduce<T> reduce(int op, T &variable) {
  return {op, variable};
}

namespace detail {

template <class Body, class... Ts> struct ReduceContext {
  explicit ReduceContext(Body &reduceBody) : body(reduceBody) {}
  Body &body;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
};

template <class Body, class... Ts, std::size_t... I>
void callWithPartials(Body &body, std::int64_t begin, std::int64_t end,
                      void *const *partials, std::index_sequence<I...>) {
  body(begin, end, *static_cast<Ts *>(partials[I])...);
}

template <class Body, class... Ts>
int reduceTrampoline(std::int64_t begin, std::int64_t end, void *context,
                     void *const *partials) noexcept {
  auto &state = *static_cast<ReduceContext<Body, Ts...> *>(context);
  try {
    callWithPartials<Body, Ts...>(state.body, begin, end, partials,
                                  std::index_sequence_for<Ts...>{});
    return 0;
  } catch (...) {
    if (!state.failed.exchange(true))
      state.error = std::current_exception();
    return 1;
  }
}

} // namespace detail

/// Runs body(begin, end, partial...) over chunks of logical iterations
/// [0, tripCount), each partial a chunk's accumulator of one reduction (of
/// its variable's type, set to its operator's identity); with `kernel`
/// (null: the CPU only) running the chunks that go to OpenCL devices, its
/// reduction arguments FPM_ARG_REDUCTION with `offset` the reduction's
/// position here. The variables receive the results when the loop
/// completes (fpm_parallel_reduce).
template <class Body, class... Ts>
void parallelReduce(const fpm_loop &loop, std::int64_t tripCount,
                    const fpm_kernel *kernel, Body &&body,
                    Reduce<Ts>... reductions) {
  static_assert(sizeof...(Ts) > 0, "parallelReduce needs a reduction");
  using BodyType = std::remove_reference_t<Body>;
  detail::ReduceContext<BodyType, Ts...> state(body);
  const fpm_reduction list[] = {
      {reductions.op, scalarType<Ts>(), &reductions.variable}...};
  const int status = fpm_parallel_reduce(
      &loop, tripCount, &detail::reduceTrampoline<BodyType, Ts...>, &state,
      list, static_cast<int>(sizeof...(Ts)), kernel);
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

/// One array of a data region: `count` elements from `data`, mapped as
/// `map` (FPM_DATA_IN, _OUT, _INOUT or _CREATE); `name` for messages.
template <class T>
fpm_data mapped(int map, T *data, std::size_t count,
                const char *name = nullptr) {
  return {map, const_cast<void *>(static_cast<const volatile void *>(data)),
          count * sizeof(T), name};
}

/// A data region (fpm_data_begin) for the life of the object: the arrays
/// keep their device copies from loop call to loop call, and OUT and INOUT
/// ones are whole on the host again when it ends.
///
///   fpm::DataRegion region{fpm::mapped(FPM_DATA_INOUT, a, n),
///                          fpm::mapped(FPM_DATA_INOUT, b, n)};
class DataRegion {
public:
  DataRegion(std::initializer_list<fpm_data> arrays) : arrays_(arrays) {
    const int status =
        fpm_data_begin(arrays_.data(), static_cast<int>(arrays_.size()));
    if (status != FPM_OK)
      detail::throwError(status);
  }
  DataRegion(const DataRegion &) = delete;
  DataRegion &operator=(const DataRegion &) = delete;
  /// Ends it now; throws what fpm_data_end reports (a device that could
  /// not give back what only it held).
  void end() {
    if (ended_)
      return;
    ended_ = true;
    const int status =
        fpm_data_end(arrays_.data(), static_cast<int>(arrays_.size()));
    if (status != FPM_OK)
      detail::throwError(status);
  }
  /// Ends it if end() did not; an error goes to stderr (a destructor does
  /// not throw).
  ~DataRegion() {
    if (!ended_ && fpm_data_end(arrays_.data(),
                                static_cast<int>(arrays_.size())) != FPM_OK)
      std::fprintf(stderr, "fpm: fpm::DataRegion: %s\n", fpm_last_error());
  }
  /// `update host` and `update device` of `count` elements from `data`.
  template <class T> static void updateHost(const T *data, std::size_t count) {
    if (const int status = fpm_update_host(data, count * sizeof(T)))
      detail::throwError(status);
  }
  template <class T>
  static void updateDevice(const T *data, std::size_t count) {
    if (const int status = fpm_update_device(data, count * sizeof(T)))
      detail::throwError(status);
  }

private:
  std::vector<fpm_data> arrays_;
  bool ended_ = false;
};

} // namespace fpm

#endif // FPM_FPM_HPP
