//===- coexec_test.cpp - Loops over CPU threads and OpenCL devices --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Through the public API (fpm.h, fpm.hpp), on the device under test
// (device_under_test.hpp): the machine's OpenCL device (PoCL's CPU device in
// CI; skipped without one) in fpm-unittests, the simulated sim0 in
// fpm-unittests-simulated: every schedule runs every
// iteration exactly once whether the CPU body or the kernel ran it, with
// row, strided, shared, OUT and INOUT sections and scalars; injected and
// real device failures lose and repeat nothing, say so once, and drop the
// device for the loop; FPM_DEVICES picks the PEs; bad kernel descriptions
// are refused before anything runs; a body that stops the loop or throws
// ends it cleanly; FPM_VERBOSE describes the split.
//
// Loops are named per test and case: the runtime keeps speeds and failed
// devices per loop name for the life of the process.
//
//===----------------------------------------------------------------------===//

#include "device/opencl/opencl.hpp"
#include "fpm/fpm.h"
#include "fpm/fpm.hpp"
#include "unit/device_under_test.hpp"

#include <gtest/gtest.h>

#include <omp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/loops.hpp"
#include "support/scoped.hpp"

#include "model/profile.hpp"
#include "store/online_profiles.hpp"
#include "store/profile_store.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace dut = fpm::test::dut;

using fpm::test::namedLoop;
using fpm::test::ScopedEnv;
using fpm::test::ScopedThreads;
using fpm::test::TempDir;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The binary cache of this test program: private, not the user's.
const std::string &cacheDirectory() {
  static TempDir directory;
  static const std::string path = directory.path().string();
  return path;
}

const char *const EverySchedule[] = {
    "auto",    "equal",   "cpm",      "geometric",      "numerical", "hpopta",
    "optimal", "wdah",    "wdah, 10", "wdah_heuristic", "pss",       "css(3)",
    "gss",     "gss, 80", "fss",      "fss, 50",        "tss",       "tss, 30"};

/// The work-group size the runtime launches kernels with on PoCL
/// (OpenClWorkGroupSize).
constexpr int OpenClGroup = 64;

/// The device's program build, its first and second ranges, and its second
/// while it is waited for.
const std::string Faults[] = {dut::id(0) + ":0", dut::id(0) + ":1",
                              dut::id(0) + ":2", dut::id(0) + ":2:wait"};

/// The lines of `text` that contain every one of `words`.
int linesWith(const std::string &text,
              std::initializer_list<std::string_view> words) {
  std::istringstream in(text);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    bool all = true;
    for (std::string_view word : words)
      all = all && line.find(word) != std::string::npos;
    count += all ? 1 : 0;
  }
  return count;
}

/// Counts what the CPU bodies ran (not a device's that runs the body: what
/// it runs is as a kernel's). The first calls (one per CPU thread) may
/// wait a little, so that the device surely gets work before the CPU
/// threads could take it all (stealing moves work to whoever is idle).
struct CpuSide {
  std::atomic<std::int64_t> iterations{0};
  std::atomic<std::int64_t> calls{0};
  std::atomic<int> holds{0};
  std::chrono::milliseconds hold{15};
  /// With grain > 1: set when a chunk is not whole granules (but the last).
  std::int64_t grain = 0;
  std::int64_t trips = 0;
  std::atomic<bool> ragged{false};

  void enter(std::int64_t begin, std::int64_t end) {
    if (dut::onDevice())
      return;
    calls.fetch_add(1);
    iterations.fetch_add(end - begin);
    if (grain > 1 && (begin % grain != 0 || (end % grain != 0 && end != trips)))
      ragged = true;
    if (holds.fetch_sub(1) > 0)
      std::this_thread::sleep_for(hold);
  }
  void reset(int firstCallsHeld = 0) {
    iterations = 0;
    calls = 0;
    holds = firstCallsHeld;
    ragged = false;
  }
};

//===----------------------------------------------------------------------===//
// The increment loop: x[k] = 2 * x[k] + 1 from x[k] = k. Twice is 4k + 3,
// never is k.
//===----------------------------------------------------------------------===//

const char *const IncrementSource = R"(
__kernel void increment(__global int *x) {
  size_t k = get_global_id(0);
  x[k] = x[k] * 2 + 1;
}
)";

/// The same, slowly: a chunk on the device takes long enough that the CPU
/// thread surely runs chunks too (a fast device may otherwise steal all of
/// the CPU's queue before the CPU thread asks for its first chunk).
const char *const SlowIncrementSource = R"(
__kernel void increment(__global int *x, const int spin) {
  size_t k = get_global_id(0);
  uint state = (uint)k;
  for (int i = 0; i < spin; ++i)
    state = state * 1103515245u + 12345u;
  x[k] = x[k] * 2 + 1 + (state == 0xfffffffeu && spin < 0 ? 1 : 0);
}
)";
constexpr int SlowSpin = 20000;

/// The slow increment kernel over `array`, with SlowSpin steps per item.
struct SlowKernel {
  explicit SlowKernel(const fpm_arg &array) : args{array, {}} {
    args[1].kind = FPM_ARG_SCALAR;
    args[1].data = const_cast<int *>(&SlowSpin);
    args[1].size = sizeof(int);
    kernel.source = SlowIncrementSource;
    kernel.name = "increment";
    kernel.args = args;
    kernel.arg_count = 2;
  }
  SlowKernel(const SlowKernel &) = delete; // kernel points into args
  SlowKernel &operator=(const SlowKernel &) = delete;

  fpm_arg args[2];
  fpm_kernel kernel{};
};

struct Increment {
  explicit Increment(std::int64_t trips) : x(static_cast<std::size_t>(trips)) {
    reset();
  }
  void reset() {
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<int>(k);
    cpu.reset();
  }

  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Increment *>(context);
    self.cpu.enter(begin, end);
    for (std::int64_t k = begin; k < end; ++k)
      self.x[static_cast<std::size_t>(k)] =
          self.x[static_cast<std::size_t>(k)] * 2 + 1;
    return 0;
  }

  /// "" when every iteration ran exactly once, else the first that did not.
  std::string problem() const {
    for (std::size_t k = 0; k < x.size(); ++k) {
      const int want = 2 * static_cast<int>(k) + 1;
      if (x[k] != want)
        return "x[" + std::to_string(k) + "] = " + std::to_string(x[k]) +
               ", expected " + std::to_string(want) +
               (x[k] == static_cast<int>(k) ? " (never ran)"
                                            : " (ran more than once)");
    }
    return "";
  }

  fpm_arg arg() {
    fpm_arg a{};
    a.kind = FPM_ARG_INOUT;
    a.data = x.data();
    a.size = sizeof(int);
    a.length = static_cast<std::int64_t>(x.size());
    a.offset = 0;
    a.stride = 1;
    a.count = 1;
    return a;
  }

  std::vector<int> x;
  CpuSide cpu;
};

/// fpm_parallel_for_kernel of the increment loop.
int runIncrement(const std::string &name, const char *schedule,
                 Increment &state, const char *source = IncrementSource,
                 const char *kernelName = "increment", std::int64_t grain = 0) {
  const fpm_loop loop = namedLoop(name.c_str(), schedule, grain);
  const fpm_arg arg = state.arg();
  fpm_kernel kernel{};
  kernel.source = source;
  kernel.name = kernelName;
  kernel.args = &arg;
  kernel.arg_count = 1;
  return fpm_parallel_for_kernel(&loop,
                                 static_cast<std::int64_t>(state.x.size()),
                                 Increment::body, &state, &kernel);
}

//===----------------------------------------------------------------------===//
// The everything loop: row sections of a matrix product with a shared
// matrix, an INOUT element, an INOUT strided pair (stride > count), an OUT
// strided element, an IN strided pair, an IN section shared by every
// iteration (not the whole array), and two scalars.
//===----------------------------------------------------------------------===//

const char *const ComboSource = R"(
__kernel void combo(__global const int *a, __global const int *b,
                    __global int *c, __global int *x, __global int *y,
                    __global int *z, __global const int *w,
                    __global const int *s, const int n, const int bias) {
  const int k = (int)get_global_id(0);
  for (int j = 0; j < n; ++j) {
    int sum = 0;
    for (int l = 0; l < n; ++l)
      sum += a[k * n + l] * b[l * n + j];
    c[k * n + j] = sum + bias;
  }
  x[k] = x[k] * 2 + 1;
  y[1 + 4 * k] = y[1 + 4 * k] * 2 + 1;
  y[2 + 4 * k] = y[2 + 4 * k] * 3;
  z[3 * k] = k * 5 + bias + w[2 + 5 * k] - w[3 + 5 * k] + s[3 + k % 4];
}
)";

struct Combo {
  static constexpr int N = 4;
  static constexpr int Bias = 7;

  explicit Combo(std::int64_t tripCount)
      : trips(tripCount), a(static_cast<std::size_t>(trips * N)), b(N * N),
        c(a.size()), x(static_cast<std::size_t>(trips)),
        y(static_cast<std::size_t>(4 * trips)),
        z(static_cast<std::size_t>(3 * trips)),
        w(static_cast<std::size_t>(5 * trips)), s(10) {
    for (std::size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<int>(i % 7) - 3;
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<int>(i * i % 97);
    for (std::size_t i = 0; i < s.size(); ++i)
      s[i] = static_cast<int>(1000 * i);
    for (int l = 0; l < N; ++l)
      for (int j = 0; j < N; ++j)
        b[static_cast<std::size_t>(l * N + j)] = l - 2 * j + 1;
    reset();
  }
  void reset() {
    std::fill(c.begin(), c.end(), -12345);
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<int>(k);
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = static_cast<int>(i);
    std::fill(z.begin(), z.end(), -1);
    cpu.reset();
  }

  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Combo *>(context);
    self.cpu.enter(begin, end);
    for (std::int64_t k = begin; k < end; ++k)
      self.iteration(static_cast<int>(k));
    return 0;
  }
  void iteration(int k) {
    auto at = [](int i) { return static_cast<std::size_t>(i); };
    for (int j = 0; j < N; ++j) {
      int sum = 0;
      for (int l = 0; l < N; ++l)
        sum += a[at(k * N + l)] * b[at(l * N + j)];
      c[at(k * N + j)] = sum + Bias;
    }
    x[at(k)] = x[at(k)] * 2 + 1;
    y[at(1 + 4 * k)] = y[at(1 + 4 * k)] * 2 + 1;
    y[at(2 + 4 * k)] = y[at(2 + 4 * k)] * 3;
    z[at(3 * k)] = extra(k);
  }
  int extra(int k) const {
    auto at = [](int i) { return static_cast<std::size_t>(i); };
    return k * 5 + Bias + w[at(2 + 5 * k)] - w[at(3 + 5 * k)] +
           s[at(3 + k % 4)];
  }

  /// "" when every iteration ran once and nothing else was touched.
  std::string problem() const {
    auto wrong = [](const char *what, std::int64_t i, int got, int want) {
      return std::string(what) + "[" + std::to_string(i) +
             "] = " + std::to_string(got) + ", expected " +
             std::to_string(want);
    };
    for (int k = 0; k < trips; ++k) {
      for (int j = 0; j < N; ++j) {
        int sum = Bias;
        for (int l = 0; l < N; ++l)
          sum += a[static_cast<std::size_t>(k * N + l)] *
                 b[static_cast<std::size_t>(l * N + j)];
        const int got = c[static_cast<std::size_t>(k * N + j)];
        if (got != sum)
          return wrong("c", k * N + j, got, sum);
      }
      if (x[static_cast<std::size_t>(k)] != 2 * k + 1)
        return wrong("x", k, x[static_cast<std::size_t>(k)], 2 * k + 1);
      const int want[4] = {4 * k, 2 * (4 * k + 1) + 1, 3 * (4 * k + 2),
                           4 * k + 3};
      for (int i = 0; i < 4; ++i)
        if (y[static_cast<std::size_t>(4 * k + i)] != want[i])
          return wrong("y", 4 * k + i, y[static_cast<std::size_t>(4 * k + i)],
                       want[i]);
      const int wantZ[3] = {extra(k), -1, -1};
      for (int i = 0; i < 3; ++i)
        if (z[static_cast<std::size_t>(3 * k + i)] != wantZ[i])
          return wrong("z", 3 * k + i, z[static_cast<std::size_t>(3 * k + i)],
                       wantZ[i]);
    }
    return "";
  }

  std::vector<fpm_arg> args() {
    auto array = [](int kind, int *data, std::size_t length,
                    std::int64_t offset, std::int64_t stride,
                    std::int64_t count) {
      fpm_arg arg{};
      arg.kind = kind;
      arg.data = data;
      arg.size = sizeof(int);
      arg.length = static_cast<std::int64_t>(length);
      arg.offset = offset;
      arg.stride = stride;
      arg.count = count;
      return arg;
    };
    fpm_arg n{};
    n.kind = FPM_ARG_SCALAR;
    n.data = const_cast<int *>(&N);
    n.size = sizeof(int);
    fpm_arg bias = n;
    bias.data = const_cast<int *>(&Bias);
    return {array(FPM_ARG_IN, a.data(), a.size(), 0, N, N),
            array(FPM_ARG_IN, b.data(), b.size(), 0, 0, 0),
            array(FPM_ARG_OUT, c.data(), c.size(), 0, N, N),
            array(FPM_ARG_INOUT, x.data(), x.size(), 0, 1, 1),
            array(FPM_ARG_INOUT, y.data(), y.size(), 1, 4, 2),
            array(FPM_ARG_OUT, z.data(), z.size(), 0, 3, 1),
            array(FPM_ARG_IN, w.data(), w.size(), 2, 5, 2),
            array(FPM_ARG_IN, s.data(), s.size(), 3, 0, 4),
            n,
            bias};
  }

  /// The same description through fpm.hpp.
  fpm::Kernel cxxKernel(fpm::Kernel kernel) {
    return kernel
        .in(a.data(), static_cast<std::int64_t>(a.size()),
            fpm::perIteration(N, N))
        .in(b.data(), static_cast<std::int64_t>(b.size()))
        .out(c.data(), static_cast<std::int64_t>(c.size()),
             fpm::perIteration(N, N))
        .inout(x.data(), trips, fpm::perIteration(1, 1))
        .inout(y.data(), 4 * trips, fpm::perIteration(4, 2, 1))
        .out(z.data(), 3 * trips, fpm::perIteration(3, 1))
        .in(w.data(), 5 * trips, fpm::perIteration(5, 2, 2))
        .in(s.data(), 10, fpm::Section{3, 0, 4})
        .scalar(N)
        .scalar(Bias);
  }

  std::int64_t trips;
  std::vector<int> a, b, c, x, y, z, w, s;
  CpuSide cpu;
};

int runCombo(const std::string &name, const char *schedule, Combo &state,
             std::int64_t grain = 0) {
  const fpm_loop loop = namedLoop(name.c_str(), schedule, grain);
  const std::vector<fpm_arg> args = state.args();
  fpm_kernel kernel{};
  kernel.source = ComboSource;
  kernel.name = "combo";
  kernel.args = args.data();
  kernel.arg_count = static_cast<int>(args.size());
  return fpm_parallel_for_kernel(&loop, state.trips, Combo::body, &state,
                                 &kernel);
}

//===----------------------------------------------------------------------===//
// The fixture: a device or a skip, a clean environment, a private binary
// cache, and a team of two (one CPU thread, one device host thread).
//===----------------------------------------------------------------------===//

class CoexecTest : public testing::Test {
protected:
  void SetUp() override {
    if (!dut::present())
      GTEST_SKIP() << "no " << dut::Title << " device on this machine";
    warmUp();
  }

  /// Builds the kernels once on the device as the tests open it, so that
  /// no test's device starts late because it compiles: a late device
  /// finds its queue stolen and would never reach an injected fault.
  static void warmUp() {
    static bool done = false;
    if (done)
      return;
    done = true;
    Increment increment(64);
    ASSERT_EQ(runIncrement("coexec.warm-up.increment", "gss", increment),
              FPM_OK)
        << fpm_last_error();
    Combo combo(64);
    ASSERT_EQ(runCombo("coexec.warm-up.combo", "gss", combo), FPM_OK)
        << fpm_last_error();
    Increment slow(64);
    const fpm_loop loop = namedLoop("coexec.warm-up.slow", "gss");
    const SlowKernel slowKernel(slow.arg());
    ASSERT_EQ(fpm_parallel_for_kernel(&loop, 64, Increment::body, &slow,
                                      &slowKernel.kernel),
              FPM_OK)
        << fpm_last_error();
  }

  ScopedEnv schedule_{"FPM_SCHEDULE", std::nullopt};
  ScopedEnv devices_{"FPM_DEVICES", dut::defaultDevices()};
  ScopedEnv fault_{"FPM_INJECT_FAULT", std::nullopt};
  ScopedEnv verbose_{"FPM_VERBOSE", std::nullopt};
  ScopedEnv trace_{"FPM_TRACE", std::nullopt};
  ScopedEnv units_{"FPM_OPENCL_CPU_UNITS", std::nullopt};
  ScopedEnv cache_{"FPM_CACHE_DIR", cacheDirectory()};
  // Each test's profiles in a folder of its own, flushed there before the
  // folder goes: nothing reaches the user's store.
  TempDir profiles_;
  ScopedEnv profileDir_{"FPM_PROFILE_DIR", profiles_.path().string()};
  ScopedThreads threads_{2};

  void TearDown() override { fpm::flushProfiles(); }
};

using CoexecDeathTest = CoexecTest;
using CoexecFaultTest = CoexecTest;
using CoexecKernelTest = CoexecTest;

//===----------------------------------------------------------------------===//
// Correctness under every schedule
//===----------------------------------------------------------------------===//

TEST_F(CoexecTest, EveryScheduleRunsEachIterationOnce) {
  // Two calls per loop: the first on guessed speeds, the second on what
  // the first measured (auto then splits statically).
  const std::int64_t trips = 5003;
  Combo state(trips);
  bool bothWorked = false;
  for (const char *schedule : EverySchedule)
    for (int call = 0; call < 2; ++call) {
      SCOPED_TRACE(std::string("schedule \"") + schedule + "\", call " +
                   std::to_string(call));
      state.reset();
      state.cpu.reset(1);
      testing::internal::CaptureStderr();
      const int status =
          runCombo(std::string("coexec.every.") + schedule, schedule, state);
      const std::string err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(status, FPM_OK) << fpm_last_error();
      EXPECT_EQ(state.problem(), "");
      EXPECT_EQ(linesWith(err, {"failed"}), 0) << err;
      const std::int64_t cpu = state.cpu.iterations;
      EXPECT_LE(cpu, trips);
      bothWorked = bothWorked || (cpu > 0 && cpu < trips);
    }
  // In at least one of them the CPU and the device shared the loop.
  EXPECT_TRUE(bothWorked);
}

TEST_F(CoexecTest, GrainThatDoesNotDivideTheTripCount) {
  const std::int64_t trips = 5003; // 714 granules of 7, and 5 more
  Combo state(trips);
  for (const char *schedule : EverySchedule) {
    SCOPED_TRACE(std::string("schedule \"") + schedule + "\"");
    state.reset();
    state.cpu.grain = 7;
    state.cpu.trips = trips;
    ASSERT_EQ(
        runCombo(std::string("coexec.grain.") + schedule, schedule, state, 7),
        FPM_OK)
        << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    // Self-scheduling hands out whole granules (static partitioners may
    // put the remainder anywhere).
    const std::string name = schedule;
    if (name.starts_with("pss") || name.starts_with("css") ||
        name.starts_with("gss") || name.starts_with("fss") ||
        name.starts_with("tss"))
      EXPECT_FALSE(state.cpu.ragged);
  }
}

TEST_F(CoexecTest, OneAndThreeThreads) {
  // One thread: it feeds the device. Three: a device and two CPU threads.
  for (int threads : {1, 3}) {
    ScopedThreads team(threads);
    ASSERT_EQ(fpm_cpu_threads(), threads);
    for (const char *schedule : EverySchedule)
      for (std::int64_t trips : {1, 2, 17, 4099}) {
        SCOPED_TRACE(std::string("schedule \"") + schedule + "\", " +
                     std::to_string(threads) + " threads, " +
                     std::to_string(trips) + " iterations");
        Increment state(trips);
        ASSERT_EQ(runIncrement("coexec.threads" + std::to_string(threads) +
                                   "." + schedule,
                               schedule, state),
                  FPM_OK)
            << fpm_last_error();
        EXPECT_EQ(state.problem(), "");
      }
  }
}

TEST_F(CoexecTest, ZeroIterationsRunNothing) {
  Increment state(0);
  EXPECT_EQ(runIncrement("coexec.zero", "gss", state), FPM_OK);
  EXPECT_EQ(state.cpu.calls, 0);
}

TEST_F(CoexecTest, ScheduleFromTheEnvironment) {
  ScopedEnv env("FPM_SCHEDULE", "tss, 30");
  Increment state(3001);
  ASSERT_EQ(runIncrement("coexec.env-schedule", "not a schedule", state),
            FPM_OK)
      << fpm_last_error();
  EXPECT_EQ(state.problem(), "");
}

TEST_F(CoexecTest, CpuOnlyNeverUsesTheKernel) {
  ScopedEnv env("FPM_DEVICES", "cpu");
  for (const char *schedule : {"gss", "equal", "auto"}) {
    SCOPED_TRACE(schedule);
    Increment state(4000);
    testing::internal::CaptureStderr();
    // A kernel that would not even build: never looked at.
    const int status =
        runIncrement(std::string("coexec.cpu-only.") + schedule, schedule,
                     state, "this is not OpenCL C", "increment");
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_EQ(status, FPM_OK) << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    EXPECT_EQ(state.cpu.iterations, 4000);
    EXPECT_EQ(err, "");
  }
}

TEST_F(CoexecTest, DevicesByIdWithoutTheCpu) {
  // Only the device (by id, and as "gpu"): the CPU body never runs.
  for (const char *devices : {dut::Device, dut::Alone}) {
    SCOPED_TRACE(devices);
    ScopedEnv env("FPM_DEVICES", devices);
    Increment state(4000);
    ASSERT_EQ(runIncrement(std::string("coexec.device-only.") + devices, "gss",
                           state),
              FPM_OK)
        << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    EXPECT_EQ(state.cpu.iterations, 0);
  }
}

TEST_F(CoexecTest, ACallGivesEachArgumentItsBuffersBack) {
  // Two inputs of one size and flags: the pool hands out the most recently
  // released buffer first, so a call that gave them back first to last
  // swapped them in the next call (and a kernel can run faster on one
  // buffer than on another). A call leaves the pool's order as it found it.
  FPM_TEST_OPENCL_ONLY("its buffer pool is OpenCL's");
  // The whole device, whatever the team leaves free: openDevice(0, 0).
  const fpm::opencl::DeviceInfo &info = fpm::opencl::devices().front();
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", std::to_string(info.computeUnits));
  ScopedEnv devices("FPM_DEVICES", "gpu");
  fpm::opencl::Device &device = fpm::opencl::openDevice(0, 0);
  constexpr std::int64_t Count = 4111; // a size no other test uses
  const std::size_t bytes = Count * sizeof(int);
  fpm::opencl::MemRef first = device.acquireBuffer(CL_MEM_READ_ONLY, bytes);
  fpm::opencl::MemRef second = device.acquireBuffer(CL_MEM_READ_ONLY, bytes);
  const cl_mem firstHandle = first.get(), secondHandle = second.get();
  device.releaseBuffer(CL_MEM_READ_ONLY, bytes, std::move(first));
  device.releaseBuffer(CL_MEM_READ_ONLY, bytes, std::move(second));

  std::vector<int> a(Count), b(Count), c(Count, -1);
  for (std::int64_t k = 0; k < Count; ++k) {
    a[static_cast<std::size_t>(k)] = static_cast<int>(3 * k);
    b[static_cast<std::size_t>(k)] = static_cast<int>(k);
  }
  auto array = [](int kind, int *data) {
    fpm_arg arg{};
    arg.kind = kind;
    arg.data = data;
    arg.size = sizeof(int);
    arg.length = Count;
    arg.stride = 1;
    arg.count = 1;
    return arg;
  };
  const fpm_arg args[] = {array(FPM_ARG_IN, a.data()),
                          array(FPM_ARG_IN, b.data()),
                          array(FPM_ARG_OUT, c.data())};
  fpm_kernel kernel{};
  kernel.source = "__kernel void subtract(__global const int *a, "
                  "__global const int *b, __global int *c) {"
                  "  size_t i = get_global_id(0); c[i] = a[i] - b[i]; }";
  kernel.name = "subtract";
  kernel.args = args;
  kernel.arg_count = 3;
  const fpm_loop loop = namedLoop("coexec.buffer-order", "auto", 0);
  auto body = [](std::int64_t, std::int64_t, void *) { return 1; };
  ASSERT_EQ(fpm_parallel_for_kernel(&loop, Count, body, nullptr, &kernel),
            FPM_OK)
      << fpm_last_error();
  for (std::int64_t k = 0; k < Count; ++k)
    ASSERT_EQ(c[static_cast<std::size_t>(k)], 2 * k) << "c[" << k << "]";
  fpm::opencl::MemRef again = device.acquireBuffer(CL_MEM_READ_ONLY, bytes);
  EXPECT_EQ(again.get(), secondHandle);
  fpm::opencl::MemRef then = device.acquireBuffer(CL_MEM_READ_ONLY, bytes);
  EXPECT_EQ(then.get(), firstHandle);
}

TEST_F(CoexecTest, DevicesThatDoNotExistAreNamedOnce) {
  // FPM_DEVICES=opencl1 with no such device ran on the CPU without a word.
  const std::string missing = dut::id(7), title = dut::Title;
  {
    ScopedEnv env("FPM_DEVICES", missing);
    for (int call = 0; call < 2; ++call) {
      Increment state(4000);
      testing::internal::CaptureStderr();
      ASSERT_EQ(runIncrement("coexec.missing-device", "gss", state), FPM_OK)
          << fpm_last_error();
      const std::string err = testing::internal::GetCapturedStderr();
      EXPECT_EQ(state.problem(), "");
      EXPECT_EQ(state.cpu.iterations, 4000);
      if (call == 0) {
        EXPECT_EQ(err.rfind("fpm: FPM_DEVICES \"" + missing +
                                "\": there is no " + title + " device " +
                                missing + " (the " + title + " devices are " +
                                dut::Device + " (",
                            0),
                  0u)
            << err;
        EXPECT_NE(err.find("); the loop runs on the CPU\n"), std::string::npos)
            << err;
        EXPECT_EQ(linesWith(err, {missing}), 1) << err;
      } else {
        EXPECT_EQ(err, ""); // once per process
      }
    }
  }
  // Beside a device that is there, the loop runs on that one.
  const std::string beside = std::string(dut::Device) + "," + dut::id(9);
  ScopedEnv env("FPM_DEVICES", beside);
  Increment state(4000);
  testing::internal::CaptureStderr();
  ASSERT_EQ(runIncrement("coexec.missing-device.beside", "gss", state), FPM_OK)
      << fpm_last_error();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "");
  EXPECT_EQ(state.cpu.iterations, 0);
  EXPECT_EQ(linesWith(err, {"FPM_DEVICES \"" + beside + "\"", dut::id(9),
                            "the loop runs without it"}),
            1)
      << err;
}

TEST_F(CoexecTest, VerboseDescribesTheSplitOnce) {
  ScopedEnv env("FPM_VERBOSE", "1");
  Increment state(4000);
  testing::internal::CaptureStderr();
  ASSERT_EQ(runIncrement("coexec.verbose-loop", "gss", state), FPM_OK)
      << fpm_last_error();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "");
  EXPECT_EQ(linesWith(err, {"coexec.verbose-loop", dut::Device, "cpu"}), 1)
      << err;
  // Once per loop and split, not per call.
  state.reset();
  testing::internal::CaptureStderr();
  ASSERT_EQ(runIncrement("coexec.verbose-loop", "gss", state), FPM_OK);
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "");
  EXPECT_EQ(linesWith(err, {"coexec.verbose-loop"}), 0) << err;
}

/// Runs a loop with `variable` at each good value (results right), then at
/// `bad`: refused before anything runs, the message naming the variable.
void expectVariableChecked(const char *variable,
                           std::initializer_list<const char *> good,
                           const char *bad) {
  for (const char *value : good) {
    SCOPED_TRACE(value);
    ScopedEnv env(variable, value);
    Increment state(3000);
    ASSERT_EQ(runIncrement(std::string("coexec.") + variable + "." + value,
                           "css(3)", state),
              FPM_OK)
        << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
  }
  ScopedEnv env(variable, bad);
  Increment state(3000);
  EXPECT_EQ(
      runIncrement(std::string("coexec.") + variable + ".bad", "gss", state),
      FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find(variable), std::string::npos)
      << fpm_last_error();
  EXPECT_EQ(state.cpu.calls, 0);
}

TEST_F(CoexecTest, PipelineDepthFromTheEnvironment) {
  FPM_TEST_OPENCL_ONLY("OpenCL's variable, read when it opens a device");
  expectVariableChecked("FPM_OPENCL_PIPELINE", {"1", "2", "4"}, "0");
}

TEST_F(CoexecTest, StealFromTheEnvironment) {
  expectVariableChecked("FPM_STEAL", {"0", "1", "off", "YES"}, "abc");
}

TEST_F(CoexecTest, CpuUnitsFromTheEnvironment) {
  FPM_TEST_OPENCL_ONLY("OpenCL's variable, read when it opens a device");
  expectVariableChecked("FPM_OPENCL_CPU_UNITS", {"1"}, "many");
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

TEST_F(CoexecFaultTest, InjectedFaultsLoseAndRepeatNothing) {
  const std::int64_t trips = 4000;
  Increment state(trips);
  // PoCL keeps one chunk in flight by default; a GPU keeps two, and then a
  // fault finds another chunk enqueued behind the failing one.
  for (const char *pipeline : {"1", "2"})
    for (const std::string &fault : Faults) {
      ScopedEnv depth("FPM_OPENCL_PIPELINE", pipeline);
      ScopedEnv env("FPM_INJECT_FAULT", fault);
      for (const char *schedule : EverySchedule) {
        const std::string name = std::string("coexec.fault.") + pipeline + "." +
                                 fault + "." + schedule;
        SCOPED_TRACE(name);
        state.reset();
        state.cpu.reset(1);
        testing::internal::CaptureStderr();
        int status = runIncrement(name, schedule, state);
        std::string err = testing::internal::GetCapturedStderr();
        ASSERT_EQ(status, FPM_OK) << fpm_last_error();
        EXPECT_EQ(state.problem(), "");
        EXPECT_EQ(linesWith(err, {dut::Device, "failed", "injected fault"}), 1)
            << err;
        EXPECT_EQ(linesWith(err, {"failed"}), 1) << err;

        // The loop does not use the device again: the fault would fire
        // again.
        state.reset();
        state.cpu.reset(0);
        testing::internal::CaptureStderr();
        status = runIncrement(name, schedule, state);
        err = testing::internal::GetCapturedStderr();
        ASSERT_EQ(status, FPM_OK) << fpm_last_error();
        EXPECT_EQ(state.problem(), "");
        EXPECT_EQ(linesWith(err, {"failed"}), 0) << err;
        EXPECT_EQ(state.cpu.iterations, trips);
      }
    }
}

TEST_F(CoexecFaultTest, InjectedFaultsWithEverySection) {
  // The same with row, shared, strided, OUT and INOUT sections, and with
  // three threads (two CPU threads beside the device's).
  ScopedThreads team(3);
  const std::int64_t trips = 3001;
  Combo state(trips);
  ScopedEnv depth("FPM_OPENCL_PIPELINE", "2");
  for (const std::string &fault : Faults)
    for (const char *schedule : {"equal", "gss", "fss, 50", "css(3)", "auto"}) {
      ScopedEnv env("FPM_INJECT_FAULT", fault);
      const std::string name =
          std::string("coexec.fault-combo.") + fault + "." + schedule;
      SCOPED_TRACE(name);
      state.reset();
      state.cpu.reset(2); // two CPU threads
      testing::internal::CaptureStderr();
      const int status = runCombo(name, schedule, state);
      const std::string err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(status, FPM_OK) << fpm_last_error();
      EXPECT_EQ(state.problem(), "");
      EXPECT_EQ(linesWith(err, {dut::Device, "failed", "injected fault"}), 1)
          << err;
    }
}

TEST_F(CoexecFaultTest, DeviceOnlyLoopSurvivesItsDevice) {
  // FPM_DEVICES=gpu: no CPU thread takes part, so the failed device's host
  // thread runs what is left on the CPU.
  ScopedEnv devices("FPM_DEVICES", dut::Alone);
  const std::int64_t trips = 4000;
  Increment state(trips);
  for (const std::string &fault : Faults)
    for (const char *schedule : {"gss", "equal", "pss", "tss, 30"}) {
      ScopedEnv env("FPM_INJECT_FAULT", fault);
      const std::string name =
          std::string("coexec.gpu-fault.") + fault + "." + schedule;
      SCOPED_TRACE(name);
      state.reset();
      testing::internal::CaptureStderr();
      int status = runIncrement(name, schedule, state);
      std::string err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(status, FPM_OK) << fpm_last_error();
      EXPECT_EQ(state.problem(), "");
      EXPECT_EQ(linesWith(err, {dut::Device, "failed", "injected fault"}), 1)
          << err;
      EXPECT_GT(state.cpu.iterations, 0);
      if (fault == Faults[0])
        EXPECT_EQ(state.cpu.iterations, trips);
      // Again: no device is left for this loop; it runs on the CPU.
      state.reset();
      testing::internal::CaptureStderr();
      status = runIncrement(name, schedule, state);
      err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(status, FPM_OK) << fpm_last_error();
      EXPECT_EQ(state.problem(), "");
      EXPECT_EQ(linesWith(err, {"failed"}), 0) << err;
      EXPECT_EQ(state.cpu.iterations, trips);
    }
}

TEST_F(CoexecFaultTest, KernelThatDoesNotBuild) {
  FPM_TEST_OPENCL_ONLY("it builds no OpenCL C");
  const char *const broken = R"(
__kernel void increment(__global int *x) {
  x[get_global_id(0)] = ;
}
)";
  for (const char *schedule : {"gss", "equal"}) {
    SCOPED_TRACE(schedule);
    Increment state(4000);
    const std::string name = std::string("coexec.broken.") + schedule;
    testing::internal::CaptureStderr();
    int status = runIncrement(name, schedule, state, broken);
    std::string err = testing::internal::GetCapturedStderr();
    ASSERT_EQ(status, FPM_OK) << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    EXPECT_EQ(state.cpu.iterations, 4000);
    // One failure line (the build log that follows it is PoCL's).
    EXPECT_EQ(linesWith(err, {"opencl0", "failed", "cannot build"}), 1) << err;
    EXPECT_EQ(linesWith(err, {"fpm:", "failed"}), 1) << err;
    EXPECT_NE(err.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << err;
    // Not tried again for this loop.
    state.reset();
    testing::internal::CaptureStderr();
    status = runIncrement(name, schedule, state, broken);
    err = testing::internal::GetCapturedStderr();
    ASSERT_EQ(status, FPM_OK) << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    EXPECT_EQ(err, "");
  }
}

TEST_F(CoexecFaultTest, KernelNameThatDoesNotExist) {
  FPM_TEST_OPENCL_ONLY("it builds no OpenCL C");
  Increment state(4000);
  testing::internal::CaptureStderr();
  const int status = runIncrement("coexec.no-such-kernel", "gss", state,
                                  IncrementSource, "no_such_kernel");
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(status, FPM_OK) << fpm_last_error();
  EXPECT_EQ(state.problem(), "");
  EXPECT_EQ(state.cpu.iterations, 4000);
  EXPECT_EQ(linesWith(err, {"opencl0", "failed", "no_such_kernel"}), 1) << err;
  EXPECT_EQ(linesWith(err, {"failed"}), 1) << err;
}

TEST_F(CoexecFaultTest, BadInjectFaultIsRefused) {
  const std::string device = dut::Device, seventh = dut::id(7);
  for (const std::string &text :
       {device, device + ":x", std::string(":3"), device + ":0:wait",
        seventh + ":1", device + ":1," + seventh + ":2",
        std::string("cpu:1")}) {
    SCOPED_TRACE(text);
    ScopedEnv env("FPM_INJECT_FAULT", text);
    Increment state(100);
    EXPECT_EQ(runIncrement("coexec.bad-fault", "gss", state),
              FPM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fpm_last_error()).find("FPM_INJECT_FAULT"),
              std::string::npos)
        << fpm_last_error();
    EXPECT_EQ(state.cpu.calls, 0);
  }
}

TEST_F(CoexecFaultTest, AFaultForAPeNotInTheRunIsRefusedNamingIt) {
  // opencl7:1 injected nothing, and a fault test passed vacuously.
  const std::string seventh = dut::id(7);
  ScopedEnv env("FPM_INJECT_FAULT", seventh + ":1");
  Increment state(100);
  EXPECT_EQ(runIncrement("coexec.no-such-pe", "gss", state),
            FPM_ERROR_INVALID_ARGUMENT);
  // Every device found is listed, opencl0 (PoCL at least) first.
  const std::string message = fpm_last_error();
  EXPECT_EQ(message.rfind("FPM_INJECT_FAULT \"" + seventh +
                              ":1\": there is no PE '" + seventh +
                              "' to fail in this run (its " + dut::KnownDevices,
                          0),
            0u)
      << message;
  EXPECT_NE(message.find(dut::Device), std::string::npos) << message;
  EXPECT_EQ(state.cpu.calls, 0);
}

//===----------------------------------------------------------------------===//
// Bad kernel descriptions
//===----------------------------------------------------------------------===//

/// Runs the increment loop with `change` applied to its description;
/// expects FPM_ERROR_INVALID_ARGUMENT naming `problem`, and nothing run.
template <class Change>
void expectRefused(const char *what, const char *problem, Change change) {
  SCOPED_TRACE(what);
  const std::int64_t trips = 100;
  Increment state(trips);
  fpm_arg arg = state.arg();
  fpm_kernel kernel{};
  kernel.source = IncrementSource;
  kernel.name = "increment";
  kernel.args = &arg;
  kernel.arg_count = 1;
  change(kernel, arg);
  const std::string name = std::string("coexec.refused.") + what;
  const fpm_loop loop = namedLoop(name.c_str(), "gss");
  const int status =
      fpm_parallel_for_kernel(&loop, trips, Increment::body, &state, &kernel);
  EXPECT_EQ(status, FPM_ERROR_INVALID_ARGUMENT);
  const std::string message = fpm_last_error();
  EXPECT_NE(message.find(problem), std::string::npos) << message;
  EXPECT_EQ(state.cpu.calls, 0);
  for (std::size_t k = 0; k < state.x.size(); ++k)
    ASSERT_EQ(state.x[k], static_cast<int>(k));
}

TEST_F(CoexecKernelTest, BadDescriptionsAreRefused) {
  expectRefused("past-the-end", "past the array",
                [](fpm_kernel &, fpm_arg &arg) { arg.length = 99; });
  expectRefused("offset-past-the-end", "past the array",
                [](fpm_kernel &, fpm_arg &arg) { arg.offset = 1; });
  // Iteration 99's section starts at 99 * 2^57, past INT64_MAX: the
  // message says where, unwrapped.
  expectRefused(
      "far-past-the-end",
      "iteration 99's ends at element 14267403619509731329, past "
      "the array",
      [](fpm_kernel &, fpm_arg &arg) { arg.stride = std::int64_t{1} << 57; });
  expectRefused("written-stride-0", "must move with the iteration",
                [](fpm_kernel &, fpm_arg &arg) {
                  arg.stride = 0;
                  arg.count = 1;
                });
  expectRefused("written-whole-array", "must move with the iteration",
                [](fpm_kernel &, fpm_arg &arg) {
                  arg.stride = 0;
                  arg.count = 0;
                });
  expectRefused("written-overlap", "overlap", [](fpm_kernel &, fpm_arg &arg) {
    arg.kind = FPM_ARG_OUT;
    arg.stride = 1;
    arg.count = 2;
    arg.length = 1000;
  });
  expectRefused("no-name", "no name",
                [](fpm_kernel &kernel, fpm_arg &) { kernel.name = nullptr; });
  expectRefused("empty-name", "no name",
                [](fpm_kernel &kernel, fpm_arg &) { kernel.name = ""; });
  expectRefused("unreadable-file", "/nonexistent/fpm/kernel.cl",
                [](fpm_kernel &kernel, fpm_arg &) {
                  kernel.source = nullptr;
                  kernel.file = "/nonexistent/fpm/kernel.cl";
                });
  expectRefused("no-source", "neither source nor file",
                [](fpm_kernel &kernel, fpm_arg &) { kernel.source = nullptr; });
  expectRefused("negative-offset", ">= 0",
                [](fpm_kernel &, fpm_arg &arg) { arg.offset = -1; });
  // A section may run down the array (a loop running down), but not below
  // its start.
  expectRefused("negative-stride-below-start", "before the array",
                [](fpm_kernel &, fpm_arg &arg) {
                  arg.kind = FPM_ARG_IN;
                  arg.stride = -1;
                });
  expectRefused("no-data", "needs data",
                [](fpm_kernel &, fpm_arg &arg) { arg.data = nullptr; });
  expectRefused("element-size-0", "size is 0",
                [](fpm_kernel &, fpm_arg &arg) { arg.size = 0; });
  expectRefused("unknown-kind", "unknown kind",
                [](fpm_kernel &, fpm_arg &arg) { arg.kind = 9; });
  expectRefused("unknown-language", "language 7 is not one fpm.h defines",
                [](fpm_kernel &kernel, fpm_arg &) { kernel.language = 7; });
  expectRefused("negative-count", "bad argument list",
                [](fpm_kernel &kernel, fpm_arg &) { kernel.arg_count = -1; });
}

TEST_F(CoexecKernelTest, ReadSectionsMayOverlap) {
  // A stencil: iteration k reads in[k .. k+3), writes out[k].
  const char *const source = R"(
__kernel void stencil(__global const int *in, __global int *out) {
  size_t k = get_global_id(0);
  out[k] = in[k] + in[k + 1] + in[k + 2];
}
)";
  const std::int64_t trips = 5000;
  std::vector<int> in(static_cast<std::size_t>(trips + 2));
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<int>(i * i % 1000);
  std::vector<int> out(static_cast<std::size_t>(trips), -1);
  const auto kernel = fpm::Kernel::fromSource(source, "stencil")
                          .in(in.data(), trips + 2, fpm::perIteration(1, 3))
                          .out(out.data(), trips, fpm::perIteration(1, 1));
  fpm_loop loop = namedLoop("coexec.stencil", "fss");
  fpm::parallelFor(loop, trips, kernel,
                   [&](std::int64_t begin, std::int64_t end) {
                     for (std::int64_t k = begin; k < end; ++k) {
                       const auto i = static_cast<std::size_t>(k);
                       out[i] = in[i] + in[i + 1] + in[i + 2];
                     }
                   });
  for (std::size_t k = 0; k < out.size(); ++k)
    ASSERT_EQ(out[k], in[k] + in[k + 1] + in[k + 2]) << "k = " << k;
}

/// A loop that writes scattered elements of one array, `v[p(k)]` with
/// p(k) = 7k mod n (n prime: a permutation), through a write mask
/// (FPM_ARG_MASK): its section is all of v for every iteration. The kernel
/// also writes v[n + k] without marking it, which must never reach the
/// host; `marks` false, it marks nothing at all.
struct Scatter {
  static constexpr std::int64_t N = 4099;
  static constexpr const char *Source = R"(
__kernel void scatter(__global int *v, __global uchar *m, const long n,
                      const int marks, const ulong end) {
  const size_t k = get_global_id(0);
  if (k >= end)
    return;
  const size_t p = (k * 7) % n;
  if (marks) {
    v[p] = v[p] * 2 + (int)k;
    m[p] = 1;
  }
  v[n + k] = -1;
}
)";
  Scatter() : v(2 * N) { reset(); }
  void reset() {
    for (std::size_t e = 0; e < v.size(); ++e)
      v[e] = static_cast<int>(e);
    cpu.reset();
  }
  static std::size_t target(std::int64_t k) {
    return static_cast<std::size_t>(k * 7 % N);
  }
  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Scatter *>(context);
    self.cpu.enter(begin, end);
    for (std::int64_t k = begin; k < end; ++k) {
      int &e = self.v[target(k)];
      e = e * 2 + static_cast<int>(k);
    }
    return 0;
  }
  int run(const std::string &name, const char *schedule, bool marks) {
    const fpm_loop loop = namedLoop(name.c_str(), schedule);
    marksValue = marks ? 1 : 0;
    fpm_arg args[5]{};
    args[0].kind = FPM_ARG_INOUT;
    args[0].data = v.data();
    args[0].size = sizeof(int);
    args[0].length = static_cast<std::int64_t>(v.size());
    args[0].clause = "inout(v[0:2*N])"; // stride and count 0: all of it
    args[1] = fpm_mask_arg(0, sizeof(int));
    args[2] = fpm_scalar_arg(&n, sizeof n);
    args[3] = fpm_scalar_arg(&marksValue, sizeof marksValue);
    args[4] = fpm_end_arg();
    fpm_kernel kernel{};
    kernel.source = Source;
    kernel.name = "scatter";
    kernel.args = args;
    kernel.arg_count = 5;
    return fpm_parallel_for_kernel(&loop, N, body, this, &kernel);
  }

  std::vector<int> v;
  CpuSide cpu;
  const std::int64_t n = N;
  int marksValue = 1;
};

TEST_F(CoexecKernelTest, ScatteredWritesMergeThroughAMask) {
  // Every element written once, by whichever PE ran its iteration; the
  // elements the kernel wrote without marking keep the host's values, with
  // one range in flight or two, on the device alone or beside the CPU.
  Scatter scatter;
  for (const char *devices : {dut::Alone, dut::WithCpu})
    for (const char *pipeline : {"1", "2"})
      for (const char *schedule : {"gss", "equal", "fss, 50"}) {
        const std::string where =
            std::string(devices) + ", pipeline " + pipeline + ", " + schedule;
        SCOPED_TRACE(where);
        const ScopedEnv selection("FPM_DEVICES", devices);
        const ScopedEnv depth("FPM_OPENCL_PIPELINE", pipeline);
        scatter.reset();
        testing::internal::CaptureStderr();
        ASSERT_EQ(scatter.run("coexec.scatter." + where, schedule, true),
                  FPM_OK)
            << fpm_last_error();
        EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
        if (std::string_view(devices) == dut::Alone)
          EXPECT_EQ(scatter.cpu.calls, 0);
        for (std::int64_t k = 0; k < Scatter::N; ++k) {
          const std::size_t p = Scatter::target(k);
          ASSERT_EQ(scatter.v[p], static_cast<int>(p * 2 + k))
              << "iteration " << k << ", element " << p;
          const auto unmarked = static_cast<std::size_t>(Scatter::N + k);
          ASSERT_EQ(scatter.v[unmarked], static_cast<int>(unmarked))
              << "element " << unmarked;
        }
      }
}

TEST_F(CoexecKernelTest, ARangeThatMarksNothingLeavesHostMemoryUntouched) {
  // The kernel writes its buffer but marks nothing: on the device alone,
  // the host's array is what it was; beside the CPU, each element holds
  // the CPU's write where the CPU ran its iteration and its old value
  // elsewhere, never the device's unmarked bytes.
  FPM_TEST_OPENCL_ONLY("the CPU body it runs writes what it does not mark");
  Scatter scatter;
  for (const char *devices : {"gpu", "all"})
    for (const char *pipeline : {"1", "2"}) {
      const std::string where = std::string(devices) + ", pipeline " + pipeline;
      SCOPED_TRACE(where);
      const ScopedEnv selection("FPM_DEVICES", devices);
      const ScopedEnv depth("FPM_OPENCL_PIPELINE", pipeline);
      scatter.reset();
      testing::internal::CaptureStderr();
      ASSERT_EQ(scatter.run("coexec.scatter.nothing." + where, "gss", false),
                FPM_OK)
          << fpm_last_error();
      EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
      for (std::int64_t k = 0; k < Scatter::N; ++k) {
        const std::size_t p = Scatter::target(k);
        const int old = static_cast<int>(p);
        ASSERT_TRUE(scatter.v[p] == old ||
                    scatter.v[p] == static_cast<int>(p * 2 + k))
            << "element " << p << ": " << scatter.v[p];
        const auto unmarked = static_cast<std::size_t>(Scatter::N + k);
        ASSERT_EQ(scatter.v[unmarked], static_cast<int>(unmarked));
      }
      if (std::string(devices) == "gpu") {
        EXPECT_EQ(scatter.cpu.calls, 0);
        for (std::int64_t e = 0; e < Scatter::N; ++e)
          ASSERT_EQ(scatter.v[static_cast<std::size_t>(e)], e);
      }
    }
}

//===----------------------------------------------------------------------===//
// The C++ layer
//===----------------------------------------------------------------------===//

TEST_F(CoexecKernelTest, CxxKernelFromSource) {
  const std::int64_t trips = 6007;
  Combo state(trips);
  const fpm::Kernel kernel =
      state.cxxKernel(fpm::Kernel::fromSource(ComboSource, "combo"));
  for (const char *schedule : {"gss", "equal", "wdah", "css(3)"}) {
    SCOPED_TRACE(schedule);
    state.reset();
    const std::string name = "coexec.cxx." + std::string(schedule);
    const fpm_loop loop = namedLoop(name.c_str(), schedule);
    fpm::parallelFor(loop, trips, kernel,
                     [&](std::int64_t begin, std::int64_t end) {
                       Combo::body(begin, end, &state);
                     });
    EXPECT_EQ(state.problem(), "");
  }
}

TEST_F(CoexecKernelTest, CxxKernelWithAWriteMask) {
  // Kernel::mask(): the mask of the array before it. Iteration k writes
  // v[7k mod n] and marks it; the kernel's unmarked write past n stays on
  // the device.
  const std::int64_t n = 1031;
  std::vector<int> v(static_cast<std::size_t>(2 * n));
  const auto kernel = fpm::Kernel::fromSource(R"(
__kernel void scatter(__global int *v, __global uchar *m, const long n,
                      const ulong end) {
  const size_t k = get_global_id(0);
  if (k >= end)
    return;
  const size_t p = (k * 7) % n;
  v[p] = (int)k;
  m[p] = 1;
  v[n + k] = -1;
}
)",
                                              "scatter")
                          .out(v.data(), 2 * n, fpm::Section{})
                          .mask()
                          .scalar(n)
                          .end();
  for (const char *devices : {dut::Alone, dut::WithCpu}) {
    SCOPED_TRACE(devices);
    const ScopedEnv selection("FPM_DEVICES", devices);
    std::fill(v.begin(), v.end(), -7);
    fpm::parallelFor(
        namedLoop(("coexec.cxx.mask." + std::string(devices)).c_str(), "gss"),
        n, kernel, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t k = begin; k < end; ++k)
            v[static_cast<std::size_t>(k * 7 % n)] = static_cast<int>(k);
        });
    for (std::int64_t k = 0; k < n; ++k) {
      ASSERT_EQ(v[static_cast<std::size_t>(k * 7 % n)], k) << "k = " << k;
      ASSERT_EQ(v[static_cast<std::size_t>(n + k)], -7) << "k = " << k;
    }
  }
  EXPECT_THROW(fpm::Kernel::fromSource("", "k").scalar(1).mask(),
               std::invalid_argument);
}

TEST_F(CoexecKernelTest, CxxKernelFromFile) {
  TempDir directory;
  ASSERT_FALSE(directory.path().empty());
  const std::filesystem::path file = directory.path() / "combo.cl";
  std::ofstream(file) << ComboSource;
  const std::int64_t trips = 3001;
  Combo state(trips);
  const fpm::Kernel kernel = state.cxxKernel(
      fpm::Kernel::fromFile(file.string(), "combo").options("-cl-std=CL1.2"));
  const fpm_loop loop = namedLoop("coexec.cxx-file", "fss");
  testing::internal::CaptureStderr();
  fpm::parallelFor(loop, trips, kernel,
                   [&](std::int64_t begin, std::int64_t end) {
                     Combo::body(begin, end, &state);
                   });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "");
  EXPECT_EQ(err, "");
  // A file that is not there: std::invalid_argument, nothing run.
  state.reset();
  const fpm::Kernel missing = state.cxxKernel(
      fpm::Kernel::fromFile((directory.path() / "nope.cl").string(), "combo"));
  EXPECT_THROW(fpm::parallelFor(loop, trips, missing,
                                [&](std::int64_t begin, std::int64_t end) {
                                  Combo::body(begin, end, &state);
                                }),
               std::invalid_argument);
  EXPECT_EQ(state.cpu.calls, 0);
  // A FIFO in its place, with no writer: refused as the rewriter refuses
  // it, at once (before, the call blocked opening it), nothing run.
  const std::filesystem::path fifo = directory.path() / "fifo.cl";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const fpm::Kernel fromFifo =
      state.cxxKernel(fpm::Kernel::fromFile(fifo.string(), "combo"));
  try {
    fpm::parallelFor(loop, trips, fromFifo,
                     [&](std::int64_t begin, std::int64_t end) {
                       Combo::body(begin, end, &state);
                     });
    ADD_FAILURE() << "a FIFO was read as a kernel file";
  } catch (const std::invalid_argument &error) {
    EXPECT_NE(std::string(error.what()).find("not a regular file (a FIFO)"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(state.cpu.calls, 0);
}

TEST_F(CoexecKernelTest, CxxBadDescriptionThrows) {
  std::vector<int> x(100);
  const auto kernel = fpm::Kernel::fromSource(IncrementSource, "increment")
                          .inout(x.data(), 50, fpm::perIteration(1, 1));
  const fpm_loop loop = namedLoop("coexec.cxx-bad", "gss");
  std::atomic<int> calls{0};
  try {
    fpm::parallelFor(loop, 100, kernel,
                     [&](std::int64_t, std::int64_t) { ++calls; });
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument &error) {
    EXPECT_NE(std::string(error.what()).find("past the array"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(calls, 0);
}

TEST_F(CoexecKernelTest, LocalScratchAndWideElements) {
  // __local scratch per work-group, and 8-byte elements.
  const char *const source = R"(
__kernel void widen(__global long *v, __local int *scratch) {
  if (get_local_id(0) == 0)
    scratch[0] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  size_t k = get_global_id(0);
  v[k] = v[k] * 3 + scratch[0] + 4000000000L;
}
)";
  const std::int64_t trips = 7001;
  std::vector<std::int64_t> v(static_cast<std::size_t>(trips));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<std::int64_t>(k) * 1000000007;
  const auto kernel = fpm::Kernel::fromSource(source, "widen")
                          .inout(v.data(), trips, fpm::perIteration(1, 1))
                          .local(sizeof(int));
  for (const char *schedule : {"gss", "equal"}) {
    SCOPED_TRACE(schedule);
    for (std::size_t k = 0; k < v.size(); ++k)
      v[k] = static_cast<std::int64_t>(k) * 1000000007;
    testing::internal::CaptureStderr();
    const std::string name = "coexec.widen." + std::string(schedule);
    fpm::parallelFor(namedLoop(name.c_str(), schedule), trips, kernel,
                     [&](std::int64_t begin, std::int64_t end) {
                       for (std::int64_t k = begin; k < end; ++k) {
                         auto &value = v[static_cast<std::size_t>(k)];
                         value = value * 3 + 1 + 4000000000;
                       }
                     });
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, "");
    for (std::size_t k = 0; k < v.size(); ++k)
      ASSERT_EQ(v[k],
                static_cast<std::int64_t>(k) * 1000000007 * 3 + 1 + 4000000000)
          << "k = " << k;
  }
}

//===----------------------------------------------------------------------===//
// Arrays of row pointers (fpm_arg::row_length)
//===----------------------------------------------------------------------===//

/// A matrix allocated row by row, as C code does: `rows[i]` points to
/// element 1 of a block of its own with a guard element on either side,
/// which no copy may touch.
struct RowMatrix {
  static constexpr double Guard = -7.5;
  RowMatrix(std::int64_t n, std::int64_t m, double seed) : m(m) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::vector<double> &block =
          blocks.emplace_back(static_cast<std::size_t>(m + 2), Guard);
      for (std::int64_t j = 0; j < m; ++j)
        block[static_cast<std::size_t>(j + 1)] =
            static_cast<double>((i * 31 + j * 7) % 97) + seed;
      rows.push_back(block.data() + 1);
    }
  }
  /// Section `rows[offset + k*stride : count][0:m]`.
  fpm_arg arg(int kind, std::int64_t offset, std::int64_t stride,
              std::int64_t count) {
    fpm_arg a{};
    a.kind = kind;
    a.data = rows.data();
    a.size = sizeof(double);
    a.length = std::ssize(rows);
    a.offset = offset;
    a.stride = stride;
    a.count = count;
    a.row_length = m;
    return a;
  }
  bool guardsIntact() const {
    return std::ranges::all_of(blocks, [](const std::vector<double> &block) {
      return block.front() == Guard && block.back() == Guard;
    });
  }
  std::int64_t m;
  std::vector<std::vector<double>> blocks;
  std::vector<double *> rows;
};

TEST_F(CoexecKernelTest, RowPointersArePackedAndScatteredBack) {
  // Iteration i: y[i] = sum_j a[i][j] * t[0][j] (rows of a in, a table of
  // row pointers shared whole), b[i][j] = 2 b[i][j] + a[i][j] (inout rows),
  // c[i][j] = i - j (out rows, copied in as well for a kernel's safety).
  const char *const source = R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void rows(__global const double *a, __global const double *t,
                   __global double *b, __global double *c,
                   __global double *y, const long m) {
  const long i = get_global_id(0);
  double s = 0;
  for (long j = 0; j < m; ++j) {
    s += a[i * m + j] * t[j];
    b[i * m + j] = 2 * b[i * m + j] + a[i * m + j];
    c[i * m + j] = (double)(i - j);
  }
  y[i] = s;
}
)";
  const std::int64_t n = 1001, m = 37;
  for (const char *devices : {dut::Alone, dut::WithCpu})
    for (const char *pipeline : {"1", "2"})
      for (const char *schedule : {"gss", "equal", "fss, 50"}) {
        SCOPED_TRACE(testing::Message() << devices << ", pipeline " << pipeline
                                        << ", " << schedule);
        const ScopedEnv select("FPM_DEVICES", devices);
        const ScopedEnv depth("FPM_OPENCL_PIPELINE", pipeline);
        RowMatrix a(n, m, 0.25), t(2, m, 0.5), b(n, m, 1), c(n, m, 3);
        std::vector<double> y(static_cast<std::size_t>(n), -1);
        fpm_arg args[6] = {a.arg(FPM_ARG_IN, 0, 1, 1),
                           t.arg(FPM_ARG_IN, 0, 0, 1),
                           b.arg(FPM_ARG_INOUT, 0, 1, 1),
                           c.arg(FPM_ARG_OUT, 0, 1, 1),
                           {},
                           fpm_scalar_arg(&m, sizeof m)};
        args[4].kind = FPM_ARG_OUT;
        args[4].data = y.data();
        args[4].size = sizeof(double);
        args[4].length = n;
        args[4].stride = 1;
        args[4].count = 1;
        fpm_kernel kernel{};
        kernel.source = source;
        kernel.name = "rows";
        kernel.args = args;
        kernel.arg_count = 6;
        struct Context {
          RowMatrix &a, &t, &b, &c;
          std::vector<double> &y;
          std::atomic<std::int64_t> cpu{0};
        } context{a, t, b, c, y};
        auto body = [](std::int64_t begin, std::int64_t end, void *raw) {
          auto &x = *static_cast<Context *>(raw);
          for (std::int64_t i = begin; i < end; ++i) {
            const auto r = static_cast<std::size_t>(i);
            double s = 0;
            for (std::int64_t j = 0; j < x.a.m; ++j) {
              s += x.a.rows[r][j] * x.t.rows[0][j];
              x.b.rows[r][j] = 2 * x.b.rows[r][j] + x.a.rows[r][j];
              x.c.rows[r][j] = static_cast<double>(i - j);
            }
            x.y[r] = s;
          }
          if (!dut::onDevice())
            x.cpu += end - begin;
          return 0;
        };
        const std::string name =
            std::string("coexec.rowptr.") + devices + pipeline + "." + schedule;
        fpm_loop loop = namedLoop(name.c_str(), schedule);
        testing::internal::CaptureStderr();
        ASSERT_EQ(fpm_kernel_fits(&loop, &kernel, n), 1) << fpm_last_error();
        ASSERT_EQ(fpm_parallel_for_kernel(&loop, n, body, &context, &kernel),
                  FPM_OK)
            << fpm_last_error();
        EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
        if (std::string_view(devices) == dut::Alone)
          EXPECT_EQ(context.cpu.load(), 0); // every row went to the device
        const RowMatrix a0(n, m, 0.25), t0(2, m, 0.5), b0(n, m, 1);
        for (std::int64_t i = 0; i < n; ++i) {
          const auto r = static_cast<std::size_t>(i);
          double s = 0;
          for (std::int64_t j = 0; j < m; ++j) {
            s += a0.rows[r][j] * t0.rows[0][j];
            ASSERT_EQ(b.rows[r][j], 2 * b0.rows[r][j] + a0.rows[r][j])
                << "b[" << i << "][" << j << "]";
            ASSERT_EQ(c.rows[r][j], static_cast<double>(i - j))
                << "c[" << i << "][" << j << "]";
            ASSERT_EQ(a.rows[r][j], a0.rows[r][j]);
          }
          ASSERT_EQ(y[r], s) << "y[" << i << "]";
        }
        EXPECT_TRUE(a.guardsIntact() && t.guardsIntact() && b.guardsIntact() &&
                    c.guardsIntact());
      }
}

TEST_F(CoexecKernelTest, ANullRowDropsTheDeviceNotTheLoop) {
  // A row the section names but the program never allocated: the device
  // cannot copy it and drops out with a line on stderr; the CPU runs the
  // iterations, which here never touch the missing row's elements.
  FPM_TEST_OPENCL_ONLY("it copies no rows");
  const char *const source = R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void count(__global double *a, const long m) {
  const long i = get_global_id(0);
  if (i != 70)
    a[i * m] += 1;
}
)";
  const std::int64_t n = 200, m = 3;
  RowMatrix a(n, m, 0);
  a.rows[70] = nullptr;
  fpm_arg args[2] = {a.arg(FPM_ARG_INOUT, 0, 1, 1),
                     fpm_scalar_arg(&m, sizeof m)};
  fpm_kernel kernel{};
  kernel.source = source;
  kernel.name = "count";
  kernel.args = args;
  kernel.arg_count = 2;
  auto body = [](std::int64_t begin, std::int64_t end, void *raw) {
    auto &rows = *static_cast<std::vector<double *> *>(raw);
    for (std::int64_t i = begin; i < end; ++i)
      if (i != 70)
        rows[static_cast<std::size_t>(i)][0] += 1;
    return 0;
  };
  const ScopedEnv select("FPM_DEVICES", "gpu");
  fpm_loop loop = namedLoop("coexec.rowptr.null", "equal");
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for_kernel(&loop, n, body, &a.rows, &kernel), FPM_OK)
      << fpm_last_error();
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("row 70 of an array of row pointers is a null pointer"),
            std::string::npos)
      << said;
  for (std::int64_t i = 0; i < n; ++i)
    if (i != 70)
      ASSERT_EQ(a.blocks[static_cast<std::size_t>(i)][1],
                static_cast<double>((i * 31) % 97) + 1)
          << "row " << i;
}

TEST_F(CoexecKernelTest, AKernelThatTakesTheEndRunsOneLocalSize) {
  // Each work-item of the range stores its work-group's size. A kernel
  // that takes the launch's end (FPM_ARG_END) is launched in whole groups
  // of one size, the last padded past the range's end; one that does not
  // runs the rest past a range's whole groups in groups of one work-item:
  // two sizes, never more, whatever the rests (PoCL compiles a kernel per
  // local size). The CPU stores 1000. Every iteration runs once: a second
  // run stores -1.
  FPM_TEST_OPENCL_ONLY("it has no work-groups");
  const char *const bounded = R"(
__kernel void sizes(__global int *size, const ulong end) {
  const size_t k = get_global_id(0);
  if (k >= end)
    return;
  size[k] = size[k] == 0 ? (int)get_local_size(0) : -1;
}
)";
  const char *const unbounded = R"(
__kernel void sizes(__global int *size) {
  const size_t k = get_global_id(0);
  size[k] = size[k] == 0 ? (int)get_local_size(0) : -1;
}
)";
  for (const bool end : {true, false})
    for (const char *devices : {"gpu", "all"})
      for (const char *schedule : {"auto", "gss", "fss, 50", "equal"})
        for (std::int64_t trips : {1, 63, 65, 1000, 4099}) {
          const std::string where = std::string(end ? "end" : "no end") + ", " +
                                    devices + ", " + schedule + ", " +
                                    std::to_string(trips);
          SCOPED_TRACE(where);
          const ScopedEnv selection("FPM_DEVICES", devices);
          std::vector<int> size(static_cast<std::size_t>(trips), 0);
          fpm::Kernel kernel =
              fpm::Kernel::fromSource(end ? bounded : unbounded, "sizes")
                  .inout(size.data(), trips, fpm::perIteration(1, 1));
          if (end)
            kernel.end();
          testing::internal::CaptureStderr();
          fpm::parallelFor(
              namedLoop(("coexec.sizes." + where).c_str(), schedule), trips,
              kernel, [&](std::int64_t begin, std::int64_t last) {
                for (std::int64_t k = begin; k < last; ++k) {
                  int &s = size[static_cast<std::size_t>(k)];
                  s = s == 0 ? 1000 : -1;
                }
              });
          EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
          for (std::int64_t k = 0; k < trips; ++k) {
            const int s = size[static_cast<std::size_t>(k)];
            ASSERT_TRUE(s == 1000 || s == OpenClGroup || (!end && s == 1))
                << "iteration " << k << ": " << s;
            // A device alone takes the loop whole: whole groups, and the
            // rest at its end.
            if (std::string(devices) == "gpu")
              ASSERT_EQ(s, end || k < trips / OpenClGroup * OpenClGroup
                               ? OpenClGroup
                               : 1)
                  << "iteration " << k;
          }
        }
}

TEST_F(CoexecFaultTest, RealFailuresOnTheDevice) {
  // Failures no injection made: the kernel's arguments do not match its
  // parameters. One argument too few fails the first enqueue (after its
  // uploads); a scalar of the wrong size fails while setting arguments.
  FPM_TEST_OPENCL_ONLY("it has no kernel arguments to get wrong");
  Increment state(4000);
  const fpm_arg inout = state.arg();
  const long wide = SlowSpin;
  fpm_arg scalar{};
  scalar.kind = FPM_ARG_SCALAR;
  scalar.data = const_cast<long *>(&wide);
  scalar.size = sizeof(long);
  const fpm_arg tooWide[2] = {inout, scalar};
  struct Case {
    const char *name;
    const fpm_arg *args;
    int count;
  };
  for (const Case &c :
       {Case{"too-few", &inout, 1}, Case{"too-wide", tooWide, 2}})
    for (const char *schedule : {"gss", "equal", "pss"}) {
      const std::string name =
          std::string("coexec.real-failure.") + c.name + "." + schedule;
      SCOPED_TRACE(name);
      state.reset();
      state.cpu.reset(1);
      const fpm_loop loop = namedLoop(name.c_str(), schedule);
      fpm_kernel kernel{};
      kernel.source = SlowIncrementSource;
      kernel.name = "increment";
      kernel.args = c.args;
      kernel.arg_count = c.count;
      testing::internal::CaptureStderr();
      const int status = fpm_parallel_for_kernel(&loop, 4000, Increment::body,
                                                 &state, &kernel);
      const std::string err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(status, FPM_OK) << fpm_last_error();
      EXPECT_EQ(state.problem(), "");
      EXPECT_EQ(state.cpu.iterations, 4000);
      EXPECT_EQ(linesWith(err, {"opencl0", "failed", "CL_INVALID"}), 1) << err;
      EXPECT_EQ(linesWith(err, {"failed"}), 1) << err;
    }
}

TEST_F(CoexecTest, ConcurrentCallsShareTheDevice) {
  // Two application threads, each with its own team, run loops on the
  // same device at once.
  std::atomic<int> wrong{0};
  auto worker = [&](int id) {
    omp_set_num_threads(2);
    for (const char *schedule : {"gss", "equal", "fss", "css(3)"}) {
      Combo state(2003);
      if (runCombo("coexec.concurrent." + std::to_string(id) + "." + schedule,
                   schedule, state) != FPM_OK ||
          !state.problem().empty())
        ++wrong;
    }
  };
  std::thread first(worker, 0), second(worker, 1);
  first.join();
  second.join();
  EXPECT_EQ(wrong, 0);
}

TEST_F(CoexecTest, CalledFromInsideAParallelRegion) {
  // Inside a region that cannot nest, each call has a team of one: the
  // device's host thread. Two such calls share the device.
  std::atomic<int> wrong{0};
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
  {
    Increment state(3001);
    const std::string name =
        "coexec.nested." + std::to_string(omp_get_thread_num());
    if (runIncrement(name, "gss", state) != FPM_OK || !state.problem().empty())
      ++wrong;
  }
  omp_set_max_active_levels(levels);
  EXPECT_EQ(wrong, 0);
}

//===----------------------------------------------------------------------===//
// Nothing outlives the call
//===----------------------------------------------------------------------===//

/// Runs small loops with a shared (stride 0) input until the device took no
/// chunk in some of them (the CPU threads ran everything first), and after
/// each such call makes the input unreadable and drains the device's
/// upload queue: a transfer from the caller's array still pending then
/// crashes the process. Exits 0 when none was pending, 3 when the case
/// never came up.
[[noreturn]] void drainAfterIdleDeviceCalls() {
  const char *const source = R"(
__kernel void add_shared(__global int *x, __global const int *s) {
  size_t k = get_global_id(0);
  x[k] = x[k] * 2 + s[0];
}
)";
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::int64_t trips = 64;
  int idle = 0;
  for (int attempt = 0; attempt < 300 && idle < 10; ++attempt) {
    void *memory = ::mmap(nullptr, page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
      std::_Exit(4);
    auto *shared = static_cast<int *>(memory);
    for (int i = 0; i < 16; ++i)
      shared[i] = 1;
    std::vector<int> x(static_cast<std::size_t>(trips));
    const auto kernel = fpm::Kernel::fromSource(source, "add_shared")
                            .inout(x.data(), trips, fpm::perIteration(1, 1))
                            .in(shared, 16);
    const std::string name = "coexec.idle-device." + std::to_string(attempt);
    std::int64_t cpu = 0;
    std::mutex mutex;
    fpm::parallelFor(namedLoop(name.c_str(), "equal"), trips, kernel,
                     [&](std::int64_t begin, std::int64_t end) {
                       const std::lock_guard<std::mutex> lock(mutex);
                       cpu += end - begin;
                       for (std::int64_t k = begin; k < end; ++k)
                         x[static_cast<std::size_t>(k)] =
                             x[static_cast<std::size_t>(k)] * 2 + shared[0];
                     });
    if (cpu != trips)
      continue; // the device ran chunks: they waited for the upload
    ++idle;
    // The call has returned: the array is the caller's again.
    ::mprotect(memory, page, PROT_NONE);
    clFinish(fpm::opencl::openDevice(0, 1).uploadQueue());
  }
  std::_Exit(idle > 0 ? 0 : 3);
}

TEST_F(CoexecDeathTest, NoTransferOutlivesTheCall) {
  // A device enqueues the upload of shared sections when it starts; when it
  // then gets no chunk (the CPU threads took all), the upload must still be
  // waited for before the call returns, or it reads the caller's array
  // later (a use after free once the caller frees it).
  FPM_TEST_OPENCL_ONLY("it copies nothing");
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // a fresh process
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  ScopedThreads team(3);
  EXPECT_EXIT(drainAfterIdleDeviceCalls(), testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, style);
}

//===----------------------------------------------------------------------===//
// Stopping
//===----------------------------------------------------------------------===//

TEST_F(CoexecTest, BodyThatStopsTheLoop) {
  // The CPU body asks to stop on its third chunk while the device has
  // chunks in flight: FPM_ERROR_STOPPED, no iteration twice, no hang.
  struct Stopper {
    Increment increment{8000};
    std::atomic<int> calls{0};
    static int body(std::int64_t begin, std::int64_t end, void *context) {
      auto &self = *static_cast<Stopper *>(context);
      Increment::body(begin, end, &self.increment);
      if (dut::onDevice())
        return 0; // as the kernel
      return self.calls.fetch_add(1) == 2 ? 1 : 0;
    }
  };
  int stopped = 0;
  for (const char *schedule : {"pss", "gss", "equal", "css(3)", "fss"}) {
    SCOPED_TRACE(schedule);
    Stopper state;
    const std::string name = "coexec.stop." + std::string(schedule);
    const fpm_loop loop = namedLoop(name.c_str(), schedule);
    const SlowKernel slowKernel(state.increment.arg());
    const int status = fpm_parallel_for_kernel(&loop, 8000, Stopper::body,
                                               &state, &slowKernel.kernel);
    // The body has no third chunk when the device ran all the rest.
    if (state.calls >= 3) {
      ++stopped;
      EXPECT_EQ(status, FPM_ERROR_STOPPED);
      EXPECT_NE(std::string(fpm_last_error()), "");
    } else {
      EXPECT_EQ(status, FPM_OK);
      EXPECT_EQ(state.increment.problem(), "");
    }
    for (std::size_t k = 0; k < state.increment.x.size(); ++k) {
      const int value = state.increment.x[k];
      ASSERT_TRUE(value == static_cast<int>(k) ||
                  value == 2 * static_cast<int>(k) + 1)
          << "x[" << k << "] = " << value;
    }
  }
  EXPECT_GT(stopped, 0);
}

TEST_F(CoexecTest, BodyThatThrows) {
  const std::int64_t trips = 8000;
  int thrown = 0;
  for (const char *schedule : {"pss", "gss", "equal", "tss"}) {
    SCOPED_TRACE(schedule);
    std::vector<int> x(static_cast<std::size_t>(trips));
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<int>(k);
    const auto kernel =
        fpm::Kernel::fromSource(SlowIncrementSource, "increment")
            .inout(x.data(), trips, fpm::perIteration(1, 1))
            .scalar(SlowSpin);
    const std::string name = "coexec.throw." + std::string(schedule);
    const fpm_loop loop = namedLoop(name.c_str(), schedule);
    std::atomic<int> calls{0};
    try {
      fpm::parallelFor(loop, trips, kernel,
                       [&](std::int64_t begin, std::int64_t end) {
                         if (!dut::onDevice() && calls.fetch_add(1) == 0)
                           throw std::runtime_error("body failed at " +
                                                    std::to_string(begin));
                         for (std::int64_t k = begin; k < end; ++k)
                           x[static_cast<std::size_t>(k)] =
                               x[static_cast<std::size_t>(k)] * 2 + 1;
                       });
      // Only when the device ran everything.
      EXPECT_EQ(calls, 0);
    } catch (const std::runtime_error &error) {
      ++thrown;
      EXPECT_GT(calls, 0);
      EXPECT_EQ(std::string(error.what()).rfind("body failed at ", 0), 0u)
          << error.what();
    }
    for (std::size_t k = 0; k < x.size(); ++k)
      ASSERT_TRUE(x[k] == static_cast<int>(k) ||
                  x[k] == 2 * static_cast<int>(k) + 1)
          << "x[" << k << "] = " << x[k];
  }
  EXPECT_GT(thrown, 0);
}

//===----------------------------------------------------------------------===//
// Online profiling and stored profiles
//===----------------------------------------------------------------------===//

/// A profile of constant speed `perSecond` from 64 to 8192 iterations.
fpm::Profile constantProfile(const std::string &loop, const std::string &device,
                             double perSecond) {
  fpm::Profile profile;
  profile.kernel = loop;
  profile.device = device;
  for (std::int64_t size : {64, 1024, 8192})
    profile.points.push_back(
        {size, static_cast<double>(size) / perSecond, {}, {}});
  return profile;
}

TEST_F(CoexecTest, NamedLoopsStoreTheirProfiles) {
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  const std::string name = "coexec.profiled";
  // The device alone first, so that it surely runs several chunks (the
  // CPU body is so cheap that it could take them all), then both (the
  // first chunk of the loop's first call is not recorded: it pays for
  // warm-up).
  for (const char *devices : {dut::Alone, dut::Alone}) {
    ScopedEnv only("FPM_DEVICES", devices);
    Increment state(16384);
    ASSERT_EQ(runIncrement(name, "equal", state), FPM_OK) << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
  }
  // Then both, until the CPU thread got a chunk (a fast device may steal
  // its whole share before the thread starts).
  for (int call = 0; call < 20; ++call) {
    Increment state(16384);
    ASSERT_EQ(runIncrement(name, "equal", state), FPM_OK) << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    if (state.cpu.iterations > 0)
      break;
  }
  fpm::flushProfiles();
  for (const char *device : {"cpu", dut::NarrowedId}) {
    SCOPED_TRACE(device);
    const std::filesystem::path file =
        fpm::profilePath(profiles_.path(), name, device);
    ASSERT_TRUE(std::filesystem::exists(file));
    const fpm::Profile profile = fpm::readProfile(file);
    EXPECT_EQ(profile.kernel, name);
    EXPECT_EQ(profile.device, device);
    ASSERT_FALSE(profile.points.empty());
    for (const fpm::ProfilePoint &point : profile.points)
      EXPECT_EQ(point.size % dut::Alignment, 0)
          << point.size; // bucketed to the granule
  }
  // A flush with nothing new leaves the files as they are.
  const auto before = std::filesystem::last_write_time(
      fpm::profilePath(profiles_.path(), name, "cpu"));
  fpm::flushProfiles();
  EXPECT_EQ(std::filesystem::last_write_time(
                fpm::profilePath(profiles_.path(), name, "cpu")),
            before);
}

TEST_F(CoexecTest, StoredProfilesDriveTheSplit) {
  // One CPU thread at 1000 iterations/s, the device at 3000/s: cpm splits
  // 4096 iterations 3072 / 1024 on its first call, and auto picks the
  // exact optimum (64 granules), before anything was measured here.
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  ScopedEnv verbose("FPM_VERBOSE", "1");
  for (const char *schedule : {"cpm", "auto"}) {
    const std::string name = std::string("coexec.stored.") + schedule;
    fpm::writeProfile(fpm::profilePath(profiles_.path(), name, "cpu"),
                      constantProfile(name, "cpu", 1000));
    fpm::writeProfile(fpm::profilePath(profiles_.path(), name, dut::NarrowedId),
                      constantProfile(name, dut::NarrowedId, 3000));
    Increment state(4096);
    testing::internal::CaptureStderr();
    ASSERT_EQ(runIncrement(name, schedule, state), FPM_OK) << fpm_last_error();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(state.problem(), "");
    EXPECT_EQ(linesWith(err, {name.c_str(), "stored profiles",
                              "split: " + std::string(dut::Device) +
                                  " 3072 cpu 1024"}),
              1)
        << err;
    if (std::string(schedule) == "auto")
      EXPECT_EQ(linesWith(err, {"optimal on stored profiles"}), 1) << err;
  }
}

TEST_F(CoexecTest, CorruptStoredProfileIsReportedAndIgnored) {
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  ScopedEnv verbose("FPM_VERBOSE", "1");
  const std::string name = "coexec.stored-corrupt";
  std::filesystem::create_directories(profiles_.path());
  fpm::writeProfile(fpm::profilePath(profiles_.path(), name, "cpu"),
                    constantProfile(name, "cpu", 1000));
  std::ofstream(fpm::profilePath(profiles_.path(), name, dut::NarrowedId))
      << "{ not json";
  for (int call = 0; call < 2; ++call) {
    Increment state(4096);
    testing::internal::CaptureStderr();
    ASSERT_EQ(runIncrement(name, "auto", state), FPM_OK) << fpm_last_error();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(state.problem(), "");
    // Reported on the first call only; the loop runs model-free.
    EXPECT_EQ(linesWith(err, {dut::NarrowedId, "ignoring it"}),
              call == 0 ? 1 : 0)
        << err;
    if (call == 0)
      EXPECT_EQ(linesWith(err, {"gss: no speeds measured yet"}), 1) << err;
  }
}

TEST_F(CoexecTest, RepeatedLoopTurnsStaticOnPartialFpms) {
  // A loop called again and again: auto's first call runs the weighted
  // guided schedule, which measures every PE, numerical's the split by
  // the speeds it has (none yet: even, as the multidimensional-solvers paper's
  // first iteration); every later call splits by the partial FPMs of what each
  // PE ran, refined at every call. Every call runs every iteration exactly
  // once.
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  ScopedEnv verbose("FPM_VERBOSE", "1");
  for (const char *schedule : {"auto", "numerical"}) {
    SCOPED_TRACE(schedule);
    const std::string name = std::string("coexec.repeated.") + schedule;
    testing::internal::CaptureStderr();
    for (int call = 0; call < 8; ++call) {
      Increment state(1 << 16);
      // The CPU's first chunk waits: the device surely runs some of the
      // first call, and so is measured.
      state.cpu.reset(call == 0 ? 1 : 0);
      const int status = runIncrement(name, schedule, state);
      EXPECT_EQ(status, FPM_OK) << fpm_last_error();
      EXPECT_EQ(state.problem(), "") << "call " << call;
      if (status != FPM_OK)
        break;
    }
    const std::string err = testing::internal::GetCapturedStderr();
    if (std::string(schedule) == "auto")
      EXPECT_EQ(linesWith(err, {name.c_str(), "gss: no speeds measured yet"}),
                1)
          << err;
    // Printed once, when it starts; the split is static.
    EXPECT_EQ(linesWith(err, {name, "numerical on partial FPMs",
                              "split: " + std::string(dut::Device)}),
              1)
        << err;
  }
}

TEST_F(CoexecTest, RepeatedLoopFollowsAPeThatSlowsDown) {
  // Seed 004's re-adaptation, end to end: a repeated auto loop whose CPU
  // body becomes four times slower half way. Stealing is off, so each
  // call runs its split as planned and what the CPU ran is that split.
  ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  ScopedEnv steal("FPM_STEAL", "0");
  struct Slowing {
    std::vector<int> x;
    std::atomic<std::int64_t> cpuIterations{0};
    std::chrono::nanoseconds perIteration{1000};
    static int body(std::int64_t begin, std::int64_t end, void *context) {
      auto &self = *static_cast<Slowing *>(context);
      for (std::int64_t k = begin; k < end; ++k)
        self.x[static_cast<std::size_t>(k)] =
            self.x[static_cast<std::size_t>(k)] * 2 + 1;
      // A device that runs this body keeps the speed the kernel has.
      const auto perIteration =
          dut::onDevice() ? std::chrono::nanoseconds(1000) : self.perIteration;
      const auto until =
          std::chrono::steady_clock::now() + perIteration * (end - begin);
      while (std::chrono::steady_clock::now() < until) {
      }
      if (!dut::onDevice())
        self.cpuIterations += end - begin;
      return 0;
    }
  };
  constexpr std::int64_t Trips = 1 << 14;
  const fpm_loop loop = namedLoop("coexec.repeated.slowing", "auto", 64);
  std::vector<double> cpuOdds; // CPU iterations / device iterations
  for (int call = 0; call < 14; ++call) {
    Slowing state;
    state.x.resize(Trips);
    for (std::int64_t k = 0; k < Trips; ++k)
      state.x[static_cast<std::size_t>(k)] = static_cast<int>(k);
    if (call >= 7)
      state.perIteration = std::chrono::nanoseconds(4000);
    const SlowKernel slowKernel({FPM_ARG_INOUT, state.x.data(), sizeof(int),
                                 Trips, 0, 1, 1, 0, 0, nullptr, 0, 0, 0});
    ASSERT_EQ(fpm_parallel_for_kernel(&loop, Trips, Slowing::body, &state,
                                      &slowKernel.kernel),
              FPM_OK)
        << fpm_last_error();
    for (std::int64_t k = 0; k < Trips; ++k)
      ASSERT_EQ(state.x[static_cast<std::size_t>(k)], 2 * k + 1) << k;
    const auto cpu = static_cast<double>(state.cpuIterations.load());
    cpuOdds.push_back(cpu / std::max(1.0, static_cast<double>(Trips) - cpu));
  }
  // Balanced before (calls 5-7) and after (calls 12-14): the CPU's share
  // of the work falls with its speed. A quarter of the speed is a quarter
  // of the odds (CPU iterations over the device's) when balanced; half is
  // far outside the noise. (On a 2-core machine: 24.6 before, 6 after.)
  auto mean = [&](int first, int last) {
    double sum = 0;
    for (int k = first; k <= last; ++k)
      sum += cpuOdds[static_cast<std::size_t>(k - 1)];
    return sum / (last - first + 1);
  };
  std::string odds;
  for (double o : cpuOdds)
    odds += std::to_string(o) + " ";
  EXPECT_GT(mean(5, 7), 0) << odds;
  EXPECT_LT(mean(12, 14), mean(5, 7) / 2) << odds;
  // Two slow calls confirm the change (calls 8 and 9); call 10 is split
  // anew. By call 11, surely.
  EXPECT_LT(cpuOdds[10], mean(5, 7) / 2) << odds;
}

} // namespace
