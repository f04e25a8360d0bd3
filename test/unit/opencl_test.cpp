//===- opencl_test.cpp - OpenCL devices, programs and the binary cache ----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// On whatever OpenCL devices the machine has (PoCL's CPU device in CI):
// discovery, sub-devices, kernels that really run, the three ways a program
// is obtained (source, disk, memory), a damaged cache repaired, build
// errors that carry the log, device timestamps on the host's clock, and a
// clean exit after a device was used.
//
//===----------------------------------------------------------------------===//

#include "device/opencl/opencl.hpp"
#include "device/opencl/opencl_program.hpp"
#include "device/opencl/staging.hpp"

#include <gtest/gtest.h>

#include "support/scoped.hpp"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using fpm::test::ScopedEnv;
using fpm::test::TempDir;

using namespace fpm::opencl;

const char *const VectorAdd = R"(
__kernel void add(__global const int *a, __global const int *b,
                  __global int *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }
)";

/// The first device, or null (and the test is skipped) when there is none.
const DeviceInfo *firstDevice() {
  return devices().empty() ? nullptr : &devices().front();
}

#define REQUIRE_DEVICE(info)                                                   \
  const DeviceInfo *info = firstDevice();                                      \
  if (!info)                                                                   \
  GTEST_SKIP() << "no OpenCL device on this machine"

std::vector<std::filesystem::path> filesIn(const std::filesystem::path &dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(dir, error))
    files.push_back(entry.path());
  return files;
}

std::string contents(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs `add` on c[offset, offset + count) of 64-element buffers (a[i] = i,
/// b[i] = 1000 * i, c[i] = -1 before), moving data through all three
/// queues; returns c and the kernel's event.
std::vector<int> runVectorAdd(Device &device, const KernelRef &kernel,
                              std::size_t offset, std::size_t count,
                              EventRef *kernelEvent = nullptr) {
  constexpr std::size_t N = 64;
  std::vector<int> a(N), b(N), c(N, -1);
  for (std::size_t i = 0; i < N; ++i) {
    a[i] = static_cast<int>(i);
    b[i] = static_cast<int>(1000 * i);
  }
  cl_int status = CL_SUCCESS;
  auto buffer = [&](std::vector<int> &host) {
    MemRef mem(clCreateBuffer(device.context(),
                              CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              N * sizeof(int), host.data(), &status));
    check(status, "clCreateBuffer");
    return mem;
  };
  MemRef da = buffer(a), db = buffer(b), dc = buffer(c);

  // The upload queue writes a again; the kernel waits for it on another
  // queue, and the download waits for the kernel: the cross-queue
  // ordering the executor relies on.
  // (An output event must not alias an entry of the wait list: PoCL
  // asserts on it.)
  cl_event raw = nullptr;
  check(clEnqueueWriteBuffer(device.uploadQueue(), da.get(), CL_FALSE, 0,
                             N * sizeof(int), a.data(), 0, nullptr, &raw),
        "clEnqueueWriteBuffer");
  EventRef uploaded(raw);
  cl_kernel k = kernel.get();
  cl_mem args[] = {da.get(), db.get(), dc.get()};
  for (cl_uint i = 0; i < 3; ++i)
    check(clSetKernelArg(k, i, sizeof(cl_mem), &args[i]), "clSetKernelArg");
  std::size_t globalOffset = offset, globalSize = count;
  cl_event waitFor[] = {uploaded.get()};
  check(clEnqueueNDRangeKernel(device.computeQueue(), k, 1, &globalOffset,
                               &globalSize, nullptr, 1, waitFor, &raw),
        "clEnqueueNDRangeKernel");
  EventRef ran(raw);
  waitFor[0] = ran.get();
  check(clEnqueueReadBuffer(device.downloadQueue(), dc.get(), CL_TRUE, 0,
                            N * sizeof(int), c.data(), 1, waitFor, nullptr),
        "clEnqueueReadBuffer");
  if (kernelEvent)
    *kernelEvent = ran;
  return c;
}

/// The kernel `add` of VectorAdd, subtracting instead: a binary that loads
/// and runs, with another answer.
std::string vectorSubtract() {
  std::string source = VectorAdd;
  source.replace(source.find("a[i] + b[i]"), 11, "a[i] - b[i]");
  return source;
}

void expectVectorAdd(const std::vector<int> &c, std::size_t offset,
                     std::size_t count) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    int expected = i >= offset && i < offset + count ? int(1001 * i) : -1;
    EXPECT_EQ(c[i], expected) << "at " << i;
  }
}

} // namespace

TEST(StagingAreaTest, ReleasedAreasAreHandedOutAgain) {
  // A released area serves the next request it holds (no new pages to
  // fault in); one larger than the pool keeps is freed instead.
  std::byte *first = nullptr;
  {
    const fpm::StagingArea area(1 << 20);
    first = area.get();
    first[(1 << 20) - 1] = std::byte{7};
  }
  {
    const fpm::StagingArea smaller((1 << 20) - 4096);
    EXPECT_EQ(smaller.get(), first);
    const fpm::StagingArea another(1 << 20);
    EXPECT_NE(another.get(), first);
  }
  const fpm::StagingArea huge(fpm::StagingArea::RetainedBytes + 1);
  EXPECT_NE(huge.get(), nullptr);
  // A pool full of small areas makes room for a large one, which serves
  // the next large request (pages not touched: nothing is faulted in).
  {
    std::vector<fpm::StagingArea> small;
    for (std::size_t b = 0; b <= fpm::StagingArea::RetainedBytes >> 20; ++b)
      small.emplace_back(1 << 20);
  }
  std::byte *large = nullptr;
  {
    const fpm::StagingArea area(std::size_t{64} << 20);
    large = area.get();
  }
  const fpm::StagingArea again(std::size_t{64} << 20);
  EXPECT_EQ(again.get(), large);
}

TEST(OpenCl, ErrorNames) {
  EXPECT_EQ(errorName(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_EQ(errorName(-5), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(errorName(-11), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(errorName(-46), "CL_INVALID_KERNEL_NAME");
  EXPECT_EQ(errorName(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  EXPECT_EQ(errorName(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(errorName(-9999), "CL error -9999");
  EXPECT_EQ(errorName(-25), "CL error -25"); // a gap in the numbering

  EXPECT_NO_THROW(check(CL_SUCCESS, "clFoo"));
  try {
    check(CL_OUT_OF_RESOURCES, "clFoo on opencl0");
    ADD_FAILURE() << "check did not throw";
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(), "clFoo on opencl0: CL_OUT_OF_RESOURCES");
    EXPECT_EQ(error.code(), CL_OUT_OF_RESOURCES);
  }
}

TEST(OpenCl, FindsDevicesWithStableIds) {
  for (const std::string &problem : discoveryProblems())
    std::cout << "discovery problem: " << problem << "\n";
  REQUIRE_DEVICE(info);
  EXPECT_EQ(info->id, "opencl0");
  for (std::size_t i = 0; i < devices().size(); ++i) {
    const DeviceInfo &device = devices()[i];
    EXPECT_EQ(device.id, "opencl" + std::to_string(i));
    EXPECT_FALSE(device.name.empty());
    EXPECT_FALSE(device.platformName.empty());
    EXPECT_EQ(device.deviceVersion.rfind("OpenCL ", 0), 0u)
        << device.deviceVersion;
    EXPECT_GT(device.computeUnits, 0u);
    EXPECT_GT(device.globalMemory, 0u);
    EXPECT_NE(device.platform, nullptr);
    EXPECT_NE(device.device, nullptr);
  }
  // The same list, the same objects, every time.
  EXPECT_EQ(&devices(), &devices());
}

TEST(OpenCl, BinaryCacheDirectoryFollowsTheEnvironment) {
  ScopedEnv fpm("FPM_CACHE_DIR", "/a/fpm");
  ScopedEnv xdg("XDG_CACHE_HOME", "/b/xdg");
  ScopedEnv home("HOME", "/c/home");
  EXPECT_EQ(binaryCacheDirectory(), "/a/fpm/opencl");
  {
    ScopedEnv none("FPM_CACHE_DIR", std::nullopt);
    EXPECT_EQ(binaryCacheDirectory(), "/b/xdg/fpm/opencl");
    {
      ScopedEnv empty("XDG_CACHE_HOME", ""); // empty is unset
      EXPECT_EQ(binaryCacheDirectory(), "/c/home/.cache/fpm/opencl");
      ScopedEnv noHome("HOME", std::nullopt);
      EXPECT_EQ(binaryCacheDirectory(), "");
    }
  }
  EXPECT_EQ(binaryCacheDirectory(), "/a/fpm/opencl");
}

TEST(OpenClDevice, NarrowsACpuDeviceToASubDevice) {
  const DeviceInfo *cpu = nullptr;
  for (const DeviceInfo &info : devices())
    if (info.isCpu && info.computeUnits >= 2)
      cpu = &info;
  if (!cpu)
    GTEST_SKIP() << "no OpenCL CPU device with two compute units";

  Device narrow(*cpu, 1);
  EXPECT_EQ(narrow.computeUnits(), 1u);
  EXPECT_NE(narrow.device(), cpu->device);
  cl_uint units = 0;
  check(clGetDeviceInfo(narrow.device(), CL_DEVICE_MAX_COMPUTE_UNITS,
                        sizeof units, &units, nullptr),
        "clGetDeviceInfo");
  EXPECT_EQ(units, 1u);
  cl_device_id parent = nullptr;
  check(clGetDeviceInfo(narrow.device(), CL_DEVICE_PARENT_DEVICE, sizeof parent,
                        &parent, nullptr),
        "clGetDeviceInfo");
  EXPECT_EQ(parent, cpu->device);
  // The sub-device really runs kernels.
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  expectVectorAdd(
      runVectorAdd(narrow, narrow.kernel(VectorAdd, "", "add"), 3, 50), 3, 50);

  Device whole(*cpu, 0);
  EXPECT_EQ(whole.computeUnits(), cpu->computeUnits);
  EXPECT_EQ(whole.device(), cpu->device);
  Device asked(*cpu, cpu->computeUnits + 5);
  EXPECT_EQ(asked.computeUnits(), cpu->computeUnits);
}

TEST(OpenClDevice, OpenDeviceKeepsOneDevicePerRequest) {
  REQUIRE_DEVICE(info);
  Device &first = openDevice(0, 0);
  EXPECT_EQ(&first, &openDevice(0, 0));
  // Asking for all compute units, or more, is the whole device.
  EXPECT_EQ(&first, &openDevice(0, info->computeUnits));
  EXPECT_EQ(&first.info(), &first.info());
  EXPECT_EQ(first.info().id, "opencl0");
  EXPECT_NE(first.context(), nullptr);
  EXPECT_NE(first.uploadQueue(), first.computeQueue());
  EXPECT_NE(first.computeQueue(), first.downloadQueue());
  if (info->isCpu && info->computeUnits >= 2) {
    Device &narrow = openDevice(0, 1);
    EXPECT_NE(&narrow, &first);
    EXPECT_EQ(&narrow, &openDevice(0, 1));
  }
  try {
    openDevice(devices().size(), 0);
    ADD_FAILURE() << "opened a device that does not exist";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("opencl" + std::to_string(devices().size())),
              std::string::npos)
        << error.what();
  }
}

TEST(OpenClDevice, RunsAKernelWithAGlobalOffset) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device device(*info, 0);
  KernelRef kernel = device.kernel(VectorAdd, "", "add");
  ASSERT_TRUE(kernel);
  expectVectorAdd(runVectorAdd(device, kernel, 16, 32), 16, 32);
  // The same kernel object again, other arguments' range.
  expectVectorAdd(runVectorAdd(device, kernel, 0, 64), 0, 64);
}

TEST(OpenClDevice, SecondBuildComesFromMemory) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device device(*info, 0);
  KernelRef first = device.kernel(VectorAdd, "", "add");
  EXPECT_EQ(device.buildCounts().fromSource, 1);
  EXPECT_EQ(device.buildCounts().fromMemory, 0);
  KernelRef second = device.kernel(VectorAdd, "", "add");
  KernelRef other = device.kernel(VectorAdd, "", "twice");
  BuildCounts counts = device.buildCounts();
  EXPECT_EQ(counts.fromSource, 1);
  EXPECT_EQ(counts.fromDisk, 0);
  EXPECT_EQ(counts.fromMemory, 2);
  // A new kernel object each time, from one program.
  EXPECT_NE(first.get(), second.get());
  cl_program p1 = nullptr, p2 = nullptr;
  clGetKernelInfo(first.get(), CL_KERNEL_PROGRAM, sizeof p1, &p1, nullptr);
  clGetKernelInfo(second.get(), CL_KERNEL_PROGRAM, sizeof p2, &p2, nullptr);
  EXPECT_EQ(p1, p2);
  // Other options are another program.
  device.kernel(VectorAdd, "-DUNUSED=1", "add");
  EXPECT_EQ(device.buildCounts().fromSource, 2);
}

TEST(OpenClDevice, RecycledKernelsAreReused) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device device(*info, 0);
  KernelRef first = device.kernel(VectorAdd, "", "add");
  KernelRef held = device.kernel(VectorAdd, "", "add");
  const cl_kernel handle = first.get();
  device.recycle(VectorAdd, "", "add", std::move(first));
  // Another name, or other options, do not get it.
  EXPECT_NE(device.kernel(VectorAdd, "", "twice").get(), handle);
  EXPECT_NE(device.kernel(VectorAdd, "-DUNUSED=1", "add").get(), handle);
  // The next caller of the same kernel does, once.
  KernelRef again = device.kernel(VectorAdd, "", "add");
  EXPECT_EQ(again.get(), handle);
  EXPECT_NE(device.kernel(VectorAdd, "", "add").get(), handle);
  EXPECT_NE(held.get(), handle);
}

TEST(OpenClDevice, BuffersAreReusedBySizeAndFlags) {
  REQUIRE_DEVICE(info);
  Device device(*info, 0);
  MemRef first = device.acquireBuffer(CL_MEM_READ_ONLY, 4096);
  ASSERT_TRUE(first);
  const cl_mem handle = first.get();
  device.releaseBuffer(CL_MEM_READ_ONLY, 4096, std::move(first));
  // Other flags or another size get a buffer of their own.
  EXPECT_NE(device.acquireBuffer(CL_MEM_READ_WRITE, 4096).get(), handle);
  MemRef larger = device.acquireBuffer(CL_MEM_READ_ONLY, 8192);
  EXPECT_NE(larger.get(), handle);
  std::size_t size = 0;
  clGetMemObjectInfo(larger.get(), CL_MEM_SIZE, sizeof size, &size, nullptr);
  EXPECT_EQ(size, 8192u);
  // The same request reuses it, once.
  MemRef again = device.acquireBuffer(CL_MEM_READ_ONLY, 4096);
  EXPECT_EQ(again.get(), handle);
  EXPECT_NE(device.acquireBuffer(CL_MEM_READ_ONLY, 4096).get(), handle);
}

TEST(OpenClDevice, ConcurrentRequestsBuildOnce) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device device(*info, 0);
  constexpr int Threads = 6;
  std::vector<KernelRef> kernels(Threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < Threads; ++t)
    threads.emplace_back(
        [&, t] { kernels[t] = device.kernel(VectorAdd, "", "add"); });
  for (std::thread &thread : threads)
    thread.join();
  for (const KernelRef &kernel : kernels)
    EXPECT_TRUE(kernel);
  EXPECT_EQ(device.buildCounts().fromSource, 1);
  EXPECT_EQ(device.buildCounts().fromMemory, Threads - 1);
}

TEST(OpenClDevice, BuildErrorCarriesTheLogAndTheDevice) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device device(*info, 0);
  const char *broken = "__kernel void broken(__global int *x) {\n"
                       "  x[0] = fpm_undeclared_identifier;\n"
                       "}\n";
  try {
    device.kernel(broken, "", "broken");
    ADD_FAILURE() << "a broken program built";
  } catch (const Error &error) {
    std::string what = error.what();
    EXPECT_EQ(error.code(), CL_BUILD_PROGRAM_FAILURE);
    EXPECT_NE(what.find("cannot build OpenCL program for opencl0 (" +
                        info->name + ")"),
              std::string::npos)
        << what;
    // The compiler's own words, naming what is wrong.
    EXPECT_NE(what.find("fpm_undeclared_identifier"), std::string::npos)
        << what;
  }
  EXPECT_EQ(device.buildCounts().fromSource, 0);
  // Nothing was cached for it.
  EXPECT_TRUE(filesIn(cache.path() / "opencl").empty());
}

TEST(OpenClDevice, MissingKernelIsNamed) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device device(*info, 0);
  try {
    device.kernel(VectorAdd, "", "no_such_kernel");
    ADD_FAILURE() << "made a kernel that does not exist";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("'no_such_kernel'"),
              std::string::npos)
        << error.what();
    EXPECT_EQ(error.code(), CL_INVALID_KERNEL_NAME);
  }
  // The program itself built and stays usable.
  EXPECT_TRUE(device.kernel(VectorAdd, "", "add"));
  EXPECT_EQ(device.buildCounts().fromSource, 1);
}

TEST(OpenClDiskCache, WritesLoadsAndRepairsBinaries) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  std::filesystem::path folder = cache.path() / "opencl";

  {
    Device device(*info, 0);
    device.kernel(VectorAdd, "", "add");
    EXPECT_EQ(device.buildCounts().fromSource, 1);
  }
  std::vector<std::filesystem::path> files = filesIn(folder);
  ASSERT_EQ(files.size(), 1u); // no temporary left beside it
  std::filesystem::path file = files.front();
  EXPECT_EQ(file.extension(), ".bin");
  EXPECT_EQ(file.stem().string().size(), 32u); // 128 bits in hex
  std::string written = contents(file);

  {
    // A fresh process, as far as the cache can tell.
    Device device(*info, 0);
    KernelRef kernel = device.kernel(VectorAdd, "", "add");
    EXPECT_EQ(device.buildCounts().fromDisk, 1);
    EXPECT_EQ(device.buildCounts().fromSource, 0);
    expectVectorAdd(runVectorAdd(device, kernel, 5, 20), 5, 20);
  }

  // Garbage, a truncated binary (PoCL 3.1 crashes on one unless the cache
  // catches it first), and a whole, well-framed file whose binary the
  // driver refuses: each is rebuilt from source and replaced.
  for (std::string damage :
       {std::string(1000, 'x'), written.substr(0, written.size() / 2),
        encodeCacheFile(file.stem().string(), std::string(1000, 'x'))}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damage;
    Device device(*info, 0);
    KernelRef kernel = device.kernel(VectorAdd, "", "add");
    EXPECT_EQ(device.buildCounts().fromSource, 1);
    EXPECT_EQ(device.buildCounts().fromDisk, 0);
    expectVectorAdd(runVectorAdd(device, kernel, 0, 64), 0, 64);
    EXPECT_NE(contents(file), damage);
    EXPECT_EQ(filesIn(folder).size(), 1u);
    Device again(*info, 0);
    again.kernel(VectorAdd, "", "add");
    EXPECT_EQ(again.buildCounts().fromDisk, 1);
  }

  // Other options, another binary.
  Device device(*info, 0);
  device.kernel(VectorAdd, "-DUNUSED=1", "add");
  EXPECT_EQ(device.buildCounts().fromSource, 1);
  EXPECT_EQ(filesIn(folder).size(), 2u);
}

TEST(OpenClDiskCache, AnEntryUnderAnotherKeysNameIsRebuilt) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  const std::filesystem::path folder = cache.path() / "opencl";
  {
    Device device(*info, 0);
    device.kernel(VectorAdd, "", "add");
  }
  const std::filesystem::path addFile = filesIn(folder).front();
  {
    Device device(*info, 0);
    device.kernel(vectorSubtract(), "", "add");
  }
  ASSERT_EQ(filesIn(folder).size(), 2u);
  // The subtracting program's entry, copied onto the adding one's name.
  for (const std::filesystem::path &file : filesIn(folder))
    if (file != addFile)
      std::filesystem::copy_file(
          file, addFile, std::filesystem::copy_options::overwrite_existing);

  Device device(*info, 0);
  KernelRef kernel = device.kernel(VectorAdd, "", "add");
  EXPECT_EQ(device.buildCounts().fromDisk, 0);
  EXPECT_EQ(device.buildCounts().fromSource, 1);
  expectVectorAdd(runVectorAdd(device, kernel, 0, 64), 0, 64);
}

TEST(OpenClDiskCache, AnEntryTooLargeIsAMissWithAMessage) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  const std::filesystem::path folder = cache.path() / "opencl";
  {
    Device device(*info, 0);
    device.kernel(VectorAdd, "", "add");
  }
  const std::filesystem::path file = filesIn(folder).front();
  // 3 GiB, sparse: reading it whole once took 23 s and then lost the
  // device.
  std::filesystem::resize_file(file, std::uintmax_t{3} << 30);

  testing::internal::CaptureStderr();
  Device device(*info, 0);
  KernelRef kernel = device.kernel(VectorAdd, "", "add");
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(device.buildCounts().fromDisk, 0);
  EXPECT_EQ(device.buildCounts().fromSource, 1);
  expectVectorAdd(runVectorAdd(device, kernel, 0, 64), 0, 64);
  // One line, naming the file and the device.
  EXPECT_TRUE(said.starts_with("fpm: " + file.string() + ": larger than " +
                               std::to_string(MaxCacheFileBytes) +
                               " bytes; building the OpenCL program for " +
                               info->id + " (" + info->name + ")"))
      << said;
  EXPECT_TRUE(said.ends_with(" from source and replacing the cached binary\n"))
      << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  // Replaced by a whole entry.
  EXPECT_LT(std::filesystem::file_size(file), MaxCacheFileBytes);
  Device again(*info, 0);
  again.kernel(VectorAdd, "", "add");
  EXPECT_EQ(again.buildCounts().fromDisk, 1);
}

TEST(OpenClDiskCache, UnwritableCacheIsNotAnError) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  // A file where the folder should be: nothing can be cached under it.
  std::ofstream(cache.path() / "blocked") << "not a folder";
  ScopedEnv env("FPM_CACHE_DIR", (cache.path() / "blocked").string());
  Device device(*info, 0);
  KernelRef kernel = device.kernel(VectorAdd, "", "add");
  EXPECT_EQ(device.buildCounts().fromSource, 1);
  expectVectorAdd(runVectorAdd(device, kernel, 1, 2), 1, 2);
}

TEST(OpenClDevice, CommandTimesAreOnTheHostClock) {
  REQUIRE_DEVICE(info);
  TempDir cache;
  ScopedEnv env("FPM_CACHE_DIR", cache.path().string());
  Device &device = openDevice(0, 0);
  KernelRef kernel = device.kernel(VectorAdd, "", "add");
  auto now = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  std::int64_t before = now();
  EventRef event;
  runVectorAdd(device, kernel, 0, 64, &event);
  std::int64_t after = now();
  auto [start, end] = commandTimes(device, event.get());
  EXPECT_LE(start, end);
  // The calibration can only overestimate the offset (by the wake-up from
  // clFinish), and the call brackets the kernel, so the mapped times fall
  // inside [before, after] but for small errors. 50 ms absorbs a busy
  // machine and still catches a clock that is not steady_clock (PoCL's is
  // about 0.2 s away from it).
  constexpr std::int64_t Slack = 50'000'000;
  EXPECT_GE(start, before - Slack);
  EXPECT_LE(end, after + Slack);
  std::cout << "kernel ran " << (start - before) / 1000 << " us after the "
            << "call began, " << (after - end) / 1000
            << " us before it returned\n";

  // A user event never ran on the device: no times.
  cl_int status = CL_SUCCESS;
  EventRef user(clCreateUserEvent(device.context(), &status));
  check(status, "clCreateUserEvent");
  clSetUserEventStatus(user.get(), CL_COMPLETE);
  EXPECT_EQ(commandTimes(device, user.get()),
            (std::pair<std::int64_t, std::int64_t>(0, 0)));
}

TEST(OpenClDeathTest, ExitsCleanlyAfterUsingADevice) {
  REQUIRE_DEVICE(info);
  // A fresh process (threadsafe style re-executes the binary) that opens a
  // device, runs a kernel and returns from main through exit(): static
  // destructors and the driver's exit handlers must not crash.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // No disk cache: the child could not remove a temporary folder of its own.
  ScopedEnv env("FPM_CACHE_DIR", "/dev/null/no-cache");
  EXPECT_EXIT(
      {
        Device &device = openDevice(0, 0);
        KernelRef kernel = device.kernel(VectorAdd, "", "add");
        std::vector<int> c = runVectorAdd(device, kernel, 0, 64);
        std::exit(c[63] == 63 * 1001 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
