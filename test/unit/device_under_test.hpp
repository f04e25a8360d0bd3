//===- unit/device_under_test.hpp - The device a suite runs on --*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the one device that the co-execution, fault,
// reduction and region suites (coexec_test.cpp, reduction_test.cpp,
// residency_test.cpp) run on, as they name it, select it, and tell its work
// from the CPU team's. fpm-unittests runs them on PoCL's opencl0;
// fpm-unittests-simulated compiles them again with
// FPM_TEST_SIMULATED_DEVICE and runs them on sim0 (simulated_backend.hpp),
// which runs the loop's CPU body where opencl0 runs the kernel. The suites
// select the device alone or beside the CPU team, never "gpu" or "all"
// themselves: in fpm-unittests-simulated those would add PoCL. A test of
// OpenCL itself (its kernel language, buffers, work-groups, copies) skips
// on sim0 (FPM_TEST_OPENCL_ONLY).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "device/backend.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#ifdef FPM_TEST_SIMULATED_DEVICE
#include "unit/simulated_backend.hpp"
#endif

namespace fpm::test::dut {

#ifdef FPM_TEST_SIMULATED_DEVICE
inline constexpr bool IsOpenCl = false;
/// Its backend's title and id prefix (device/backend.hpp).
inline constexpr const char *Title = "simulated";
inline constexpr const char *Prefix = "sim";
/// Its id, and its profile id when FPM_OPENCL_CPU_UNITS=1 (which narrows
/// an OpenCL CPU device, and nothing else).
inline constexpr const char *Device = "sim0";
inline constexpr const char *NarrowedId = "sim0";
/// FPM_DEVICES: it alone, and it beside the CPU team.
inline constexpr const char *Alone = "sim0";
inline constexpr const char *WithCpu = "cpu,sim0";
/// FPM_DEVICES when a test says nothing: unset selects every device, and
/// here PoCL's too.
inline std::optional<std::string> defaultDevices() { return WithCpu; }
/// FPM_DEVICES of every selection a suite goes through: the CPU alone, the
/// device alone and beside the CPU, and all of them with PoCL's devices.
inline constexpr const char *EverySelection[] = {"cpu", Alone, WithCpu, "all"};
/// Where its ranges start (PeDevice::alignment()), and so the granule of
/// what a named loop stores.
inline constexpr std::int64_t Alignment = 16;
/// The start of the list of devices FPM_INJECT_FAULT's message gives (the
/// OpenCL ones, when found, come first).
inline constexpr const char *KnownDevices = "OpenCL or simulated devices: ";
/// True while the device runs a body (never for a kernel's device).
inline bool onDevice() { return onSimulatedDevice(); }
#else
inline constexpr bool IsOpenCl = true;
inline constexpr const char *Title = "OpenCL";
inline constexpr const char *Prefix = "opencl";
inline constexpr const char *Device = "opencl0";
inline constexpr const char *NarrowedId = "opencl0.1cu";
inline constexpr const char *Alone = "gpu";
inline constexpr const char *WithCpu = "all";
inline std::optional<std::string> defaultDevices() { return std::nullopt; }
inline constexpr const char *EverySelection[] = {"cpu", Alone, WithCpu};
/// OpenClWorkGroupSize.
inline constexpr std::int64_t Alignment = 64;
inline constexpr const char *KnownDevices = "OpenCL devices: opencl0";
inline bool onDevice() { return false; }
#endif

/// Device `n` of its backend: "opencl7".
inline std::string id(int n) { return Prefix + std::to_string(n); }

/// Whether the device is there (PoCL may not be).
inline bool present() {
  return std::ranges::any_of(allDevices(), [](const AnyDevice &device) {
    return device.found->id == Device;
  });
}

} // namespace fpm::test::dut

/// Skips the rest of a test of OpenCL itself, saying `why` it does not
/// apply to the device under test.
#define FPM_TEST_OPENCL_ONLY(why)                                              \
  do {                                                                         \
    if (!::fpm::test::dut::IsOpenCl)                                           \
      GTEST_SKIP() << ::fpm::test::dut::Device << ": " << (why);               \
  } while (false)
