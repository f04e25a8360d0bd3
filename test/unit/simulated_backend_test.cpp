//===- unit/simulated_backend_test.cpp - A backend beside PoCL ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The executor's device paths over a backend that is not OpenCL: the
// simulated device (simulated_backend.hpp), registered by one line of
// test/unit/backends.def, beside the CPU team and, where there is one,
// PoCL. It is selected as any device is (FPM_DEVICES, `gpu`), runs its
// share, fails on demand (FPM_INJECT_FAULT) with nothing lost, and in a
// data region reads what PoCL wrote. The co-execution, fault, reduction
// and region suites run on it too (device_under_test.hpp).
//
//===----------------------------------------------------------------------===//

#include "unit/simulated_backend.hpp"

#include "device/backend.hpp"
#include "exec/devices.hpp"
#include "fpm/fpm.h"
#include "fpm/fpm.hpp"
#include "support/loops.hpp"
#include "support/scoped.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <string>
#include <vector>

using fpm::test::namedLoop;
using fpm::test::ScopedEnv;
using fpm::test::TempDir;

namespace {

const char *const IncrementSource = R"(
__kernel void increment(__global int *x) {
  size_t k = get_global_id(0);
  x[k] = x[k] * 2 + 1;
}
)";

/// x[k] = 2 x[k] + 1 from x[k] = k: exactly once is 2k + 1. On the CPU
/// (and so on sim0) an iteration takes a microsecond: the CPU threads would
/// otherwise run a whole call before sim0's thread draws its first range.
struct Increment {
  explicit Increment(std::int64_t trips) : x(static_cast<std::size_t>(trips)) {
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<int>(k);
  }
  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Increment *>(context);
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(end - begin);
    while (std::chrono::steady_clock::now() < until) {
    }
    for (std::int64_t k = begin; k < end; ++k)
      self.x[static_cast<std::size_t>(k)] =
          self.x[static_cast<std::size_t>(k)] * 2 + 1;
    return 0;
  }
  /// "" when every iteration ran exactly once, else the first that did not.
  std::string problem() const {
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k] != 2 * static_cast<int>(k) + 1)
        return "x[" + std::to_string(k) + "] = " + std::to_string(x[k]);
    return "";
  }
  int run(const char *name, const char *schedule) {
    const fpm_loop loop = namedLoop(name, schedule);
    fpm_arg arg{};
    arg.kind = FPM_ARG_INOUT;
    arg.data = x.data();
    arg.size = sizeof(int);
    arg.length = static_cast<std::int64_t>(x.size());
    arg.stride = 1;
    arg.count = 1;
    fpm_kernel kernel{};
    kernel.source = IncrementSource;
    kernel.name = "increment";
    kernel.args = &arg;
    kernel.arg_count = 1;
    return fpm_parallel_for_kernel(&loop, static_cast<std::int64_t>(x.size()),
                                   body, this, &kernel);
  }
  std::vector<int> x;
};

class SimulatedBackendTest : public testing::Test {
protected:
  void SetUp() override {
    // Threads for the CPU team, sim0 and PoCL's host thread.
    omp_set_num_threads(3);
    fpm::test::setSimulatedSlowdown(1);
  }
  void TearDown() override { fpm::test::setSimulatedSlowdown(1); }

  ScopedEnv schedule_{"FPM_SCHEDULE", std::nullopt};
  ScopedEnv devices_{"FPM_DEVICES", std::nullopt};
  ScopedEnv fault_{"FPM_INJECT_FAULT", std::nullopt};
  ScopedEnv verbose_{"FPM_VERBOSE", std::nullopt};
  TempDir cache_;
  ScopedEnv cacheDir_{"FPM_CACHE_DIR", cache_.path().string()};
  TempDir profiles_;
  ScopedEnv profileDir_{"FPM_PROFILE_DIR", profiles_.path().string()};
};

TEST_F(SimulatedBackendTest, ItsDevicesAreSelectedAsAnyDevice) {
  EXPECT_EQ(fpm::backendOfId("sim0"), &fpm::simulatedBackend());
  EXPECT_EQ(fpm::backendOfId("sim01"), nullptr);
  EXPECT_EQ(fpm::backendOfId("opencl0")->prefix(), "opencl");
  const fpm::DeviceSelection gpu = fpm::parseDevices("gpu", "devices");
  EXPECT_TRUE(gpu.selects("sim0"));
  EXPECT_TRUE(gpu.selects("opencl0"));
  const fpm::DeviceSelection one = fpm::parseDevices("cpu, sim0", "devices");
  EXPECT_TRUE(one.selects("sim0"));
  EXPECT_FALSE(one.selects("opencl0"));
  // Its devices follow OpenCL's: the order of backends.def.
  EXPECT_EQ(fpm::allDevices().back().found->id, "sim0");
}

TEST_F(SimulatedBackendTest, BesidePoclEveryIterationRunsOnce) {
  // Without stealing a static split's share is its PE's alone: PoCL, whose
  // kernel does not wait a microsecond an iteration, would otherwise take
  // sim0's share before sim0's thread starts.
  ScopedEnv devices("FPM_DEVICES", "all");
  ScopedEnv steal("FPM_STEAL", "0");
  for (const char *schedule : {"equal", "gss", "css(64)", "auto"}) {
    SCOPED_TRACE(schedule);
    Increment state(20000);
    const std::int64_t before = fpm::test::simulatedIterations();
    ASSERT_EQ(
        state.run((std::string("sim.beside.") + schedule).c_str(), schedule),
        FPM_OK)
        << fpm_last_error();
    EXPECT_EQ(state.problem(), "");
    if (std::string(schedule) == "equal")
      EXPECT_GT(fpm::test::simulatedIterations(), before);
  }
}

TEST_F(SimulatedBackendTest, AFailedDeviceLosesNothingAndIsNotUsedAgain) {
  // sim0's first range fails: a static split without stealing gives it one.
  ScopedEnv devices("FPM_DEVICES", "cpu,sim0");
  ScopedEnv steal("FPM_STEAL", "0");
  ScopedEnv fault("FPM_INJECT_FAULT", "sim0:1");
  fpm::test::setSimulatedSlowdown(4);
  Increment state(20000);
  testing::internal::CaptureStderr();
  ASSERT_EQ(state.run("sim.fault", "equal"), FPM_OK) << fpm_last_error();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "");
  EXPECT_NE(err.find("sim0 (simulated device) failed: injected fault "
                     "(FPM_INJECT_FAULT=sim0:1)"),
            std::string::npos)
      << err;
  // The next call of the loop runs on the CPU team alone.
  Increment again(20000);
  const std::int64_t before = fpm::test::simulatedIterations();
  ASSERT_EQ(again.run("sim.fault", "equal"), FPM_OK) << fpm_last_error();
  EXPECT_EQ(again.problem(), "");
  EXPECT_EQ(fpm::test::simulatedIterations(), before);
}

TEST_F(SimulatedBackendTest, AMissingDeviceIsNamedWithItsBackend) {
  ScopedEnv devices("FPM_DEVICES", "cpu,sim3");
  Increment state(1000);
  testing::internal::CaptureStderr();
  ASSERT_EQ(state.run("sim.missing", "gss"), FPM_OK) << fpm_last_error();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "");
  EXPECT_NE(err.find("there is no simulated device sim3 (the simulated "
                     "devices are sim0 (simulated device)); the loop runs "
                     "on the CPU"),
            std::string::npos)
      << err;
}

TEST_F(SimulatedBackendTest, InADataRegionItReadsWhatPoclWrote) {
  // PoCL alone writes x, which the region keeps on it; then sim0 alone
  // reads x. sim0 works in the host's memory: the host's copy of x must
  // come back to it first, as it would for a CPU thread.
  if (fpm::backendOfId("opencl0")->devices().empty())
    GTEST_SKIP() << "no OpenCL device on this machine";
  constexpr std::int64_t N = 4096;
  std::vector<int> x(N, 0), y(N, -1);
  fpm::DataRegion region{fpm::mapped(FPM_DATA_INOUT, x.data(), N),
                         fpm::mapped(FPM_DATA_INOUT, y.data(), N)};
  {
    ScopedEnv devices("FPM_DEVICES", "opencl0");
    const auto fill = fpm::Kernel::fromSource(R"(
__kernel void fill(__global int *x) {
  const int k = (int)get_global_id(0);
  x[k] = 2 * k + 1;
})",
                                              "fill")
                          .out(x.data(), N, fpm::perIteration(1, 1));
    fpm::parallelFor(namedLoop("sim.region.fill", "equal"), N, fill,
                     [&](std::int64_t begin, std::int64_t end) {
                       for (std::int64_t k = begin; k < end; ++k)
                         x[static_cast<std::size_t>(k)] =
                             static_cast<int>(2 * k + 1);
                     });
  }
  const std::int64_t before = fpm::test::simulatedIterations();
  {
    ScopedEnv devices("FPM_DEVICES", "sim0");
    const auto copy = fpm::Kernel::fromSource(R"(
__kernel void copy(__global const int *x, __global int *y) {
  const size_t k = get_global_id(0);
  y[k] = x[k];
})",
                                              "copy")
                          .in(x.data(), N, fpm::perIteration(1, 1))
                          .out(y.data(), N, fpm::perIteration(1, 1));
    fpm::parallelFor(namedLoop("sim.region.copy", "equal"), N, copy,
                     [&](std::int64_t begin, std::int64_t end) {
                       for (std::int64_t k = begin; k < end; ++k)
                         y[static_cast<std::size_t>(k)] =
                             x[static_cast<std::size_t>(k)];
                     });
  }
  EXPECT_EQ(fpm::test::simulatedIterations() - before, N);
  region.end();
  for (std::int64_t k = 0; k < N; ++k)
    ASSERT_EQ(y[static_cast<std::size_t>(k)], 2 * k + 1) << "y[" << k << "]";
}

} // namespace
