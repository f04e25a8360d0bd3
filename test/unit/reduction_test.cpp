//===- reduction_test.cpp - Reductions on every PE ------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm_parallel_reduce and fpm::parallelReduce: every operator over the
// scalar types, under every schedule, on the CPU team and with the device
// under test (device_under_test.hpp: PoCL, running a hand-written kernel
// storing one partial per work-group, or sim0), with faults,
// with fpm-profile's benchmark runs (which must not add into the
// variable), and partials combined in range order (a static schedule
// gives the same bits every call).
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm.h"
#include "fpm/fpm.hpp"
#include "support/loops.hpp"
#include "support/scoped.hpp"
#include "unit/device_under_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace dut = fpm::test::dut;
using fpm::test::namedLoop;
using fpm::test::ScopedEnv;
using fpm::test::ScopedThreads;
using fpm::test::TempDir;

/// Iteration k's contribution: small integers of both signs, so that sums
/// and products are exact in every type (products over few iterations).
std::int64_t contribution(std::int64_t k) { return (k * 7919) % 13 - 6; }

template <class T> T serialFold(int op, T start, std::int64_t trips) {
  T value = start;
  for (std::int64_t k = 0; k < trips; ++k) {
    const auto x = static_cast<T>(contribution(k));
    switch (op) {
    case FPM_REDUCE_ADD:
      value = static_cast<T>(value + x);
      break;
    case FPM_REDUCE_MUL:
      value = static_cast<T>(value * (x == 0 ? T(1) : x));
      break;
    case FPM_REDUCE_MIN:
      value = x < value ? x : value;
      break;
    case FPM_REDUCE_MAX:
      value = value < x ? x : value;
      break;
    case FPM_REDUCE_AND:
      value = static_cast<T>(value && x);
      break;
    case FPM_REDUCE_OR:
      value = static_cast<T>(value || x);
      break;
    default:
      if constexpr (std::is_integral_v<T>) {
        if (op == FPM_REDUCE_BIT_AND)
          value = static_cast<T>(value & (x | T(0x70)));
        if (op == FPM_REDUCE_BIT_OR)
          value = static_cast<T>(value | (x & T(0x3c)));
        if (op == FPM_REDUCE_BIT_XOR)
          value = static_cast<T>(value ^ x);
      }
    }
  }
  return value;
}

template <class T> struct Fold {
  int op;
  static int body(std::int64_t begin, std::int64_t end, void *context,
                  void *const *partials) {
    const int op = static_cast<Fold *>(context)->op;
    T &value = *static_cast<T *>(partials[0]);
    // The same fold as serialFold, over the chunk.
    value = serialFoldFrom(op, value, begin, end);
    return 0;
  }
  static T serialFoldFrom(int op, T value, std::int64_t begin,
                          std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      const auto x = static_cast<T>(contribution(k));
      switch (op) {
      case FPM_REDUCE_ADD:
        value = static_cast<T>(value + x);
        break;
      case FPM_REDUCE_MUL:
        value = static_cast<T>(value * (x == 0 ? T(1) : x));
        break;
      case FPM_REDUCE_MIN:
        value = x < value ? x : value;
        break;
      case FPM_REDUCE_MAX:
        value = value < x ? x : value;
        break;
      case FPM_REDUCE_AND:
        value = static_cast<T>(value && x);
        break;
      case FPM_REDUCE_OR:
        value = static_cast<T>(value || x);
        break;
      default:
        if constexpr (std::is_integral_v<T>) {
          if (op == FPM_REDUCE_BIT_AND)
            value = static_cast<T>(value & (x | T(0x70)));
          if (op == FPM_REDUCE_BIT_OR)
            value = static_cast<T>(value | (x & T(0x3c)));
          if (op == FPM_REDUCE_BIT_XOR)
            value = static_cast<T>(value ^ x);
        }
      }
    }
    return value;
  }
};

template <class T>
void checkEveryOperator(const char *schedule, std::int64_t trips) {
  const int type = fpm::scalarType<T>();
  for (int op = FPM_REDUCE_ADD; op <= FPM_REDUCE_OR; ++op) {
    const bool bitwise = op >= FPM_REDUCE_BIT_AND && op <= FPM_REDUCE_BIT_XOR;
    if (bitwise && !std::is_integral_v<T>)
      continue;
    // Products only over a few iterations, so that they stay exact.
    const std::int64_t n =
        op == FPM_REDUCE_MUL ? std::min<std::int64_t>(trips, 20) : trips;
    SCOPED_TRACE("op " + std::to_string(op) + ", type " + std::to_string(type) +
                 ", " + schedule);
    T variable = static_cast<T>(op == FPM_REDUCE_MUL ? 1 : 3);
    const T expected = serialFold<T>(op, variable, n);
    Fold<T> fold{op};
    const fpm_reduction reduction{op, type, &variable};
    const fpm_loop loop = namedLoop(nullptr, schedule);
    ASSERT_EQ(fpm_parallel_reduce(&loop, n, &Fold<T>::body, &fold, &reduction,
                                  1, nullptr),
              FPM_OK)
        << fpm_last_error();
    EXPECT_EQ(variable, expected);
  }
}

TEST(ReductionTest, EveryOperatorAndTypeUnderEverySchedule) {
  for (int threads : {1, 3}) {
    const ScopedThreads team(threads);
    for (const char *schedule : {"auto", "equal", "wdah", "optimal", "pss",
                                 "css(5)", "gss", "fss", "tss, 50"})
      for (std::int64_t trips : {0, 1, 1000}) {
        checkEveryOperator<bool>(schedule, trips);
        checkEveryOperator<std::int8_t>(schedule, trips);
        checkEveryOperator<std::uint16_t>(schedule, trips);
        checkEveryOperator<int>(schedule, trips);
        checkEveryOperator<unsigned>(schedule, trips);
        checkEveryOperator<long long>(schedule, trips);
        checkEveryOperator<std::uint64_t>(schedule, trips);
        checkEveryOperator<float>(schedule, trips);
        checkEveryOperator<double>(schedule, trips);
        checkEveryOperator<long double>(schedule, trips);
      }
  }
}

/// A floating-point sum whose rounding depends on the order of its terms.
struct Harmonic {
  static int body(std::int64_t begin, std::int64_t end, void *,
                  void *const *partials) {
    double &sum = *static_cast<double *>(partials[0]);
    for (std::int64_t k = begin; k < end; ++k)
      sum += 1.0 / static_cast<double>(k + 1);
    return 0;
  }
};

double harmonic(const char *schedule) {
  double sum = 0;
  const fpm_reduction reduction{FPM_REDUCE_ADD, FPM_TYPE_DOUBLE, &sum};
  const fpm_loop loop = namedLoop(nullptr, schedule, 16);
  EXPECT_EQ(fpm_parallel_reduce(&loop, 100000, &Harmonic::body, nullptr,
                                &reduction, 1, nullptr),
            FPM_OK)
      << fpm_last_error();
  return sum;
}

TEST(ReductionTest, AStaticScheduleGivesTheSameBitsEveryCall) {
  const ScopedThreads team(4);
  for (const char *schedule : {"equal", "wdah"}) {
    const double first = harmonic(schedule);
    for (int call = 0; call < 20; ++call) {
      const double again = harmonic(schedule);
      EXPECT_EQ(std::memcmp(&first, &again, sizeof first), 0)
          << schedule << ": " << first << " then " << again;
    }
  }
  // Dynamic schedules stay close to the serial sum.
  double serial = 0;
  for (std::int64_t k = 0; k < 100000; ++k)
    serial += 1.0 / static_cast<double>(k + 1);
  EXPECT_NEAR(harmonic("gss"), serial, 1e-12 * serial);
}

TEST(ReductionTest, AStoppedLoopLeavesTheVariableAlone) {
  int sum = 5;
  const fpm_reduction reduction{FPM_REDUCE_ADD, FPM_TYPE_INT32, &sum};
  const fpm_loop loop = namedLoop(nullptr, "gss");
  auto stop = [](std::int64_t begin, std::int64_t, void *,
                 void *const *partials) {
    *static_cast<int *>(partials[0]) += 1;
    return begin >= 50 ? 1 : 0;
  };
  EXPECT_EQ(
      fpm_parallel_reduce(&loop, 100, stop, nullptr, &reduction, 1, nullptr),
      FPM_ERROR_STOPPED);
  EXPECT_EQ(sum, 5);
}

TEST(ReductionTest, BadListsAreRefusedBeforeAnythingRuns) {
  double sum = 0;
  int calls = 0;
  auto count = [](std::int64_t, std::int64_t, void *context, void *const *) {
    ++*static_cast<int *>(context);
    return 0;
  };
  const fpm_loop loop = namedLoop(nullptr, "equal");
  const fpm_reduction bitwiseOnDouble{FPM_REDUCE_BIT_OR, FPM_TYPE_DOUBLE, &sum};
  EXPECT_EQ(fpm_parallel_reduce(&loop, 10, count, &calls, &bitwiseOnDouble, 1,
                                nullptr),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("bitwise"), std::string::npos);
  const fpm_reduction unknown{42, FPM_TYPE_DOUBLE, &sum};
  EXPECT_EQ(fpm_parallel_reduce(&loop, 10, count, &calls, &unknown, 1, nullptr),
            FPM_ERROR_INVALID_ARGUMENT);
  const fpm_reduction noVariable{FPM_REDUCE_ADD, FPM_TYPE_DOUBLE, nullptr};
  EXPECT_EQ(
      fpm_parallel_reduce(&loop, 10, count, &calls, &noVariable, 1, nullptr),
      FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fpm_parallel_reduce(&loop, 10, count, &calls, nullptr, 1, nullptr),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(calls, 0);
}

TEST(ReductionTest, CxxLayerReducesSeveralVariables) {
  const ScopedThreads team(3);
  std::vector<double> x(5000);
  for (std::size_t k = 0; k < x.size(); ++k)
    x[k] = static_cast<double>(contribution(static_cast<std::int64_t>(k)));
  double sum = 1;
  long long top = std::numeric_limits<long long>::min();
  bool anyNegative = false;
  const fpm_loop loop = namedLoop(nullptr, "fss");
  fpm::parallelReduce(
      loop, static_cast<std::int64_t>(x.size()), nullptr,
      [&](std::int64_t begin, std::int64_t end, double &s, long long &t,
          bool &negative) {
        for (std::int64_t k = begin; k < end; ++k) {
          const double v = x[static_cast<std::size_t>(k)];
          s += v;
          t = std::max(t, static_cast<long long>(v));
          negative = negative || v < 0;
        }
      },
      fpm::reduce(FPM_REDUCE_ADD, sum), fpm::reduce(FPM_REDUCE_MAX, top),
      fpm::reduce(FPM_REDUCE_OR, anyNegative));
  double serialSum = 1;
  for (double v : x)
    serialSum += v;
  EXPECT_EQ(sum, serialSum);
  EXPECT_EQ(top, 6);
  EXPECT_TRUE(anyNegative);
  // A body that throws: rethrown, the variables untouched.
  const double before = sum;
  EXPECT_THROW(fpm::parallelReduce(
                   loop, 100, nullptr,
                   [](std::int64_t begin, std::int64_t, double &) {
                     if (begin > 10)
                       throw std::runtime_error("no");
                   },
                   fpm::reduce(FPM_REDUCE_ADD, sum)),
               std::runtime_error);
  EXPECT_EQ(sum, before);
}

//===----------------------------------------------------------------------===//
// On OpenCL devices (PoCL in CI).
//===----------------------------------------------------------------------===//

/// x's sum and largest element, one partial per work-group (any size up
/// to 64), reduced by its first work-item in order.
constexpr const char *SumMaxSource = R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void summax(__global const double *x, __global double *sum,
                     __global long *top) {
  __local double s[64];
  __local long t[64];
  const size_t l = get_local_id(0);
  s[l] = x[get_global_id(0)];
  t[l] = (long)x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    double a = 0;
    long m = LONG_MIN;
    for (size_t j = 0; j < get_local_size(0); ++j) {
      a += s[j];
      m = max(m, t[j]);
    }
    sum[get_group_id(0)] = a;
    top[get_group_id(0)] = m;
  }
}
)";

/// SumMaxSource for a kernel that takes the launch's end (FPM_ARG_END):
/// its last work-group runs past the range, whose work-items there keep
/// each operator's identity but take part in the group's reduction.
constexpr const char *SumMaxEndSource = R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void summax(__global const double *x, __global double *sum,
                     __global long *top, const ulong end) {
  __local double s[64];
  __local long t[64];
  const size_t l = get_local_id(0);
  const bool in = get_global_id(0) < end;
  s[l] = in ? x[get_global_id(0)] : 0;
  t[l] = in ? (long)x[get_global_id(0)] : LONG_MIN;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    double a = 0;
    long m = LONG_MIN;
    for (size_t j = 0; j < get_local_size(0); ++j) {
      a += s[j];
      m = max(m, t[j]);
    }
    sum[get_group_id(0)] = a;
    top[get_group_id(0)] = m;
  }
}
)";

class ReductionOnDevicesTest : public testing::Test {
protected:
  void SetUp() override {
    if (!dut::present())
      GTEST_SKIP() << "no " << dut::Title << " device on this machine";
  }

  struct Result {
    int status = FPM_OK;
    double sum = 0;
    long long top = 0;
    int onCpu = 0; ///< iterations the CPU body ran
  };

  /// x[k] = contribution(k) + k / 1024 (exact in binary), summed and
  /// maxed from sum = 0.5, top = -100.
  /// `end`: the kernel takes the launch's end (SumMaxEndSource).
  Result run(const char *name, const char *schedule, std::int64_t trips,
             bool end = false) {
    x_.resize(static_cast<std::size_t>(trips));
    for (std::int64_t k = 0; k < trips; ++k)
      x_[static_cast<std::size_t>(k)] =
          static_cast<double>(contribution(k)) + static_cast<double>(k) / 1024;
    Result result;
    result.sum = 0.5;
    result.top = -100;
    const fpm_reduction reductions[] = {
        {FPM_REDUCE_ADD, FPM_TYPE_DOUBLE, &result.sum},
        {FPM_REDUCE_MAX, FPM_TYPE_INT64, &result.top}};
    fpm_arg args[4] = {{FPM_ARG_IN, x_.data(), sizeof(double),
                        static_cast<std::int64_t>(x_.size()), 0, 1, 1, 0, 0,
                        nullptr, 0, 0, 0},
                       {FPM_ARG_REDUCTION, nullptr, sizeof(double), 0, 0, 0, 0,
                        0, 0, nullptr, 0, 0, 0},
                       {FPM_ARG_REDUCTION, nullptr, sizeof(long long), 0, 1, 0,
                        0, 0, 0, nullptr, 0, 0, 0},
                       fpm_end_arg()};
    fpm_kernel kernel{};
    kernel.source = end ? SumMaxEndSource : SumMaxSource;
    kernel.name = "summax";
    kernel.args = args;
    kernel.arg_count = end ? 4 : 3;
    struct Host {
      const double *x;
      std::atomic<int> onCpu{0};
      static int body(std::int64_t begin, std::int64_t end, void *context,
                      void *const *partials) {
        auto &self = *static_cast<Host *>(context);
        double &sum = *static_cast<double *>(partials[0]);
        long long &top = *static_cast<long long *>(partials[1]);
        for (std::int64_t k = begin; k < end; ++k) {
          sum += self.x[k];
          top = std::max(top, static_cast<long long>(self.x[k]));
        }
        if (!dut::onDevice())
          self.onCpu += static_cast<int>(end - begin);
        return 0;
      }
    } host{x_.data()};
    const fpm_loop loop = namedLoop(name, schedule, 64);
    result.status = fpm_parallel_reduce(&loop, trips, &Host::body, &host,
                                        reductions, 2, &kernel);
    result.onCpu = host.onCpu;
    return result;
  }

  double expectedSum(std::int64_t trips) const {
    // Every term and partial sum is a multiple of 2^-10 below 2^40:
    // exact, whatever the order.
    double sum = 0.5;
    for (std::int64_t k = 0; k < trips; ++k)
      sum += x_[static_cast<std::size_t>(k)];
    return sum;
  }

  std::vector<double> x_;
  TempDir profiles_;
  ScopedEnv profileDir_{"FPM_PROFILE_DIR", profiles_.path().string()};
  ScopedEnv units_{"FPM_OPENCL_CPU_UNITS", "1"};
  ScopedEnv devices_{"FPM_DEVICES", dut::defaultDevices()};
};

TEST_F(ReductionOnDevicesTest, EverySchedule) {
  const ScopedThreads team(2);
  for (const char *devices : {dut::Alone, dut::WithCpu}) {
    const ScopedEnv selection("FPM_DEVICES", devices);
    for (const char *schedule : {"equal", "auto", "gss", "fss, 50", "wdah"})
      for (std::int64_t trips : {1, 100, 4099}) {
        SCOPED_TRACE(std::string(devices) + ", " + schedule + ", " +
                     std::to_string(trips));
        const Result result = run(nullptr, schedule, trips);
        ASSERT_EQ(result.status, FPM_OK) << fpm_last_error();
        EXPECT_EQ(result.sum, expectedSum(trips));
        long long top = -100;
        for (std::int64_t k = 0; k < trips; ++k)
          top = std::max(
              top, static_cast<long long>(x_[static_cast<std::size_t>(k)]));
        EXPECT_EQ(result.top, top);
        if (std::string_view(devices) == dut::Alone)
          EXPECT_EQ(result.onCpu, 0);
      }
  }
}

TEST_F(ReductionOnDevicesTest, AKernelThatTakesTheEndRunsWholeGroups) {
  // Ranges of every rest past their whole work-groups, each one launch of
  // whole groups: one partial result per group, the padding's identities
  // among them.
  const ScopedThreads team(2);
  for (const char *devices : {dut::Alone, dut::WithCpu}) {
    const ScopedEnv selection("FPM_DEVICES", devices);
    for (const char *schedule : {"equal", "auto", "gss", "fss, 50"})
      for (std::int64_t trips : {1, 63, 65, 100, 4099}) {
        SCOPED_TRACE(std::string(devices) + ", " + schedule + ", " +
                     std::to_string(trips));
        const Result result = run(nullptr, schedule, trips, true);
        ASSERT_EQ(result.status, FPM_OK) << fpm_last_error();
        EXPECT_EQ(result.sum, expectedSum(trips));
        long long top = -100;
        for (std::int64_t k = 0; k < trips; ++k)
          top = std::max(
              top, static_cast<long long>(x_[static_cast<std::size_t>(k)]));
        EXPECT_EQ(result.top, top);
        if (std::string_view(devices) == dut::Alone)
          EXPECT_EQ(result.onCpu, 0);
      }
  }
}

TEST_F(ReductionOnDevicesTest, AFailedChunkIsCountedOnce) {
  const ScopedThreads team(2);
  const std::string device = dut::Device;
  for (const std::string &fault :
       {device + ":1", device + ":2", device + ":1:wait", device + ":2:wait",
        device + ":0"}) {
    SCOPED_TRACE(fault);
    const ScopedEnv inject("FPM_INJECT_FAULT", fault);
    const ScopedEnv pipeline("FPM_OPENCL_PIPELINE", "2");
    // The device alone, so that it reaches the faulty chunk; its host
    // thread then runs the rest on the CPU.
    const ScopedEnv selection("FPM_DEVICES", dut::Alone);
    testing::internal::CaptureStderr();
    // A loop of its own: a device that failed a loop is not used for it
    // again.
    const std::string name = "reduction.fault." + fault;
    const Result result = run(name.c_str(), "css(64)", 2048);
    const std::string said = testing::internal::GetCapturedStderr();
    ASSERT_EQ(result.status, FPM_OK) << fpm_last_error();
    EXPECT_EQ(result.sum, expectedSum(2048));
    EXPECT_EQ(result.top, 6 + 2047 / 1024);
    EXPECT_NE(said.find("failed"), std::string::npos) << said;
  }
}

TEST_F(ReductionOnDevicesTest, BenchmarkRunsDoNotAddIntoTheVariable) {
  const ScopedThreads team(2);
  const ScopedEnv benchmark("FPM_BENCHMARK", "points=2,reps=1:2,time=0.2");
  testing::internal::CaptureStderr();
  const Result result = run("reduction.benchmarked", "equal", 2048);
  const std::string said = testing::internal::GetCapturedStderr();
  // Benchmarked on each PE (a loop that writes nothing but its reductions
  // can be run again and again).
  EXPECT_NE(said.find(std::string("fpm-profile: loop 'reduction.benchmarked' "
                                  "on ") +
                      dut::Device),
            std::string::npos)
      << said;
  ASSERT_EQ(result.status, FPM_OK) << fpm_last_error();
  EXPECT_EQ(result.sum, expectedSum(2048));
  EXPECT_EQ(result.top, 6 + 2047 / 1024);
}

TEST_F(ReductionOnDevicesTest, AKernelMustPassEveryReductionOnce) {
  double sum = 0;
  const fpm_reduction reduction{FPM_REDUCE_ADD, FPM_TYPE_DOUBLE, &sum};
  std::vector<double> x(64, 1.0);
  fpm_arg args[1] = {{FPM_ARG_IN, x.data(), sizeof(double), 64, 0, 1, 1, 0, 0,
                      nullptr, 0, 0, 0}};
  fpm_kernel kernel{};
  kernel.source = SumMaxSource;
  kernel.name = "summax";
  kernel.args = args;
  kernel.arg_count = 1;
  const fpm_loop loop = namedLoop(nullptr, "equal");
  auto body = [](std::int64_t, std::int64_t, void *, void *const *) {
    return 0;
  };
  EXPECT_EQ(
      fpm_parallel_reduce(&loop, 64, body, nullptr, &reduction, 1, &kernel),
      FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("passed 0 times"),
            std::string::npos)
      << fpm_last_error();
}

} // namespace
