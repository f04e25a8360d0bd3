//===- device/opencl/opencl.cpp - OpenCL devices as processing elements ---===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/opencl/opencl.hpp"

#include "device/opencl/opencl_program.hpp"
#include "support/atomic_file.hpp"
#include "support/environment.hpp"
#include "support/hash.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <system_error>

namespace fpm::opencl {

std::string errorName(cl_int code) {
  switch (code) {
#define FPM_CL_ERROR(name)                                                     \
  case name:                                                                   \
    return #name;
    FPM_CL_ERROR(CL_SUCCESS)
    FPM_CL_ERROR(CL_DEVICE_NOT_FOUND)
    FPM_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    FPM_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    FPM_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    FPM_CL_ERROR(CL_OUT_OF_RESOURCES)
    FPM_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    FPM_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    FPM_CL_ERROR(CL_MEM_COPY_OVERLAP)
    FPM_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    FPM_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    FPM_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    FPM_CL_ERROR(CL_MAP_FAILURE)
    FPM_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    FPM_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    FPM_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    FPM_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    FPM_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    FPM_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    FPM_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    FPM_CL_ERROR(CL_INVALID_VALUE)
    FPM_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    FPM_CL_ERROR(CL_INVALID_PLATFORM)
    FPM_CL_ERROR(CL_INVALID_DEVICE)
    FPM_CL_ERROR(CL_INVALID_CONTEXT)
    FPM_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    FPM_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    FPM_CL_ERROR(CL_INVALID_HOST_PTR)
    FPM_CL_ERROR(CL_INVALID_MEM_OBJECT)
    FPM_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    FPM_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    FPM_CL_ERROR(CL_INVALID_SAMPLER)
    FPM_CL_ERROR(CL_INVALID_BINARY)
    FPM_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    FPM_CL_ERROR(CL_INVALID_PROGRAM)
    FPM_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    FPM_CL_ERROR(CL_INVALID_KERNEL_NAME)
    FPM_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    FPM_CL_ERROR(CL_INVALID_KERNEL)
    FPM_CL_ERROR(CL_INVALID_ARG_INDEX)
    FPM_CL_ERROR(CL_INVALID_ARG_VALUE)
    FPM_CL_ERROR(CL_INVALID_ARG_SIZE)
    FPM_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    FPM_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    FPM_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    FPM_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    FPM_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    FPM_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    FPM_CL_ERROR(CL_INVALID_EVENT)
    FPM_CL_ERROR(CL_INVALID_OPERATION)
    FPM_CL_ERROR(CL_INVALID_GL_OBJECT)
    FPM_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    FPM_CL_ERROR(CL_INVALID_MIP_LEVEL)
    FPM_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    FPM_CL_ERROR(CL_INVALID_PROPERTY)
    FPM_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    FPM_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    FPM_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    FPM_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
    FPM_CL_ERROR(CL_INVALID_PIPE_SIZE)
    FPM_CL_ERROR(CL_INVALID_DEVICE_QUEUE)
    FPM_CL_ERROR(CL_INVALID_SPEC_ID)
    FPM_CL_ERROR(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
    // The ICD loader's own: no platform installed at all.
    FPM_CL_ERROR(CL_PLATFORM_NOT_FOUND_KHR)
#undef FPM_CL_ERROR
  }
  return "CL error " + std::to_string(code);
}

void check(cl_int code, std::string_view what) {
  if (code != CL_SUCCESS)
    throw Error(std::string(what) + ": " + errorName(code), code);
}

namespace {

std::string platformString(cl_platform_id platform, cl_platform_info what,
                           const char *name) {
  std::string call = std::string("clGetPlatformInfo(") + name + ")";
  std::size_t size = 0;
  check(clGetPlatformInfo(platform, what, 0, nullptr, &size), call);
  std::string value(size, '\0');
  check(clGetPlatformInfo(platform, what, size, value.data(), nullptr), call);
  return trimmed(std::move(value));
}

std::string deviceString(cl_device_id device, cl_device_info what,
                         const char *name) {
  std::string call = std::string("clGetDeviceInfo(") + name + ")";
  std::size_t size = 0;
  check(clGetDeviceInfo(device, what, 0, nullptr, &size), call);
  std::string value(size, '\0');
  check(clGetDeviceInfo(device, what, size, value.data(), nullptr), call);
  return trimmed(std::move(value));
}

template <class T>
T deviceValue(cl_device_id device, cl_device_info what, const char *name) {
  T value{};
  check(clGetDeviceInfo(device, what, sizeof value, &value, nullptr),
        std::string("clGetDeviceInfo(") + name + ")");
  return value;
}

struct Discovery {
  std::vector<DeviceInfo> devices;
  std::vector<std::string> problems;
};

Discovery discover() {
  Discovery found;
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no vendor is
  // installed: a machine without OpenCL, which is not an error.
  if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && !count))
    return found;
  if (status != CL_SUCCESS) {
    found.problems.push_back("clGetPlatformIDs: " + errorName(status));
    return found;
  }
  std::vector<cl_platform_id> platforms(count);
  status = clGetPlatformIDs(count, platforms.data(), nullptr);
  if (status != CL_SUCCESS) {
    found.problems.push_back("clGetPlatformIDs: " + errorName(status));
    return found;
  }

  for (std::size_t p = 0; p < platforms.size(); ++p) {
    cl_platform_id platform = platforms[p];
    std::string where = "OpenCL platform " + std::to_string(p);
    std::string platformName, platformVersion;
    std::vector<cl_device_id> ids;
    try {
      platformName = platformString(platform, CL_PLATFORM_NAME, "NAME");
      where += " (" + platformName + ")";
      platformVersion =
          platformString(platform, CL_PLATFORM_VERSION, "VERSION");
      cl_uint n = 0;
      status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
      if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && !n))
        continue; // a platform with nothing plugged in
      check(status, "clGetDeviceIDs");
      ids.resize(n);
      check(
          clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr),
          "clGetDeviceIDs");
    } catch (const Error &error) {
      found.problems.push_back(where + " skipped: " + error.what());
      continue;
    }

    for (std::size_t d = 0; d < ids.size(); ++d) {
      DeviceInfo info;
      info.platform = platform;
      info.device = ids[d];
      info.platformName = platformName;
      info.platformVersion = platformVersion;
      try {
        info.name = deviceString(ids[d], CL_DEVICE_NAME, "NAME");
        info.vendor = deviceString(ids[d], CL_DEVICE_VENDOR, "VENDOR");
        info.deviceVersion = deviceString(ids[d], CL_DEVICE_VERSION, "VERSION");
        info.driverVersion =
            deviceString(ids[d], CL_DRIVER_VERSION, "DRIVER_VERSION");
        auto type = deviceValue<cl_device_type>(ids[d], CL_DEVICE_TYPE, "TYPE");
        info.isCpu = (type & CL_DEVICE_TYPE_CPU) != 0;
        info.computeUnits = deviceValue<cl_uint>(
            ids[d], CL_DEVICE_MAX_COMPUTE_UNITS, "MAX_COMPUTE_UNITS");
        info.globalMemory = deviceValue<cl_ulong>(
            ids[d], CL_DEVICE_GLOBAL_MEM_SIZE, "GLOBAL_MEM_SIZE");
      } catch (const Error &error) {
        found.problems.push_back(where + " device " + std::to_string(d) +
                                 " skipped: " + error.what());
        continue;
      }
      // Ids number the devices listed, so that devices()[i].id is
      // "opencl<i>" and an index and an id always agree.
      info.id = "opencl" + std::to_string(found.devices.size());
      found.devices.push_back(std::move(info));
    }
  }
  return found;
}

const Discovery &discovery() {
  // A function-local static: initialized once, thread-safely, on first use.
  static const Discovery found = discover();
  return found;
}

std::string describe(const DeviceInfo &info) {
  return info.id + " (" + info.name + ")";
}

/// The "X.Y" of "OpenCL X.Y ..." as X * 10 + Y; 0 when it does not parse.
int openClVersion(const std::string &version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2)
    return 0;
  return major * 10 + minor;
}

std::int64_t steadyNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

QueueRef makeQueue(cl_context context, cl_device_id device, bool openCl20,
                   const std::string &who) {
  cl_int status = CL_SUCCESS;
  cl_command_queue queue = nullptr;
  if (openCl20) {
    const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES,
                                              CL_QUEUE_PROFILING_ENABLE, 0};
    queue = clCreateCommandQueueWithProperties(context, device, properties,
                                               &status);
  } else {
    // An OpenCL 1.x platform has no clCreateCommandQueueWithProperties (the
    // ICD loader would find no entry for it); the old call is the only one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE,
                                 &status);
#pragma GCC diagnostic pop
  }
  QueueRef ref(queue);
  check(status, "clCreateCommandQueue on " + who);
  return ref;
}

} // namespace

const std::vector<DeviceInfo> &devices() { return discovery().devices; }

const std::vector<std::string> &discoveryProblems() {
  return discovery().problems;
}

std::filesystem::path binaryCacheDirectory() {
  // An empty variable counts as unset, as the XDG specification asks.
  auto variable = [](const char *name) -> std::filesystem::path {
    const char *value = textFromEnvironment(name);
    return value ? value : "";
  };
  if (auto folder = variable("FPM_CACHE_DIR"); !folder.empty())
    return folder / "opencl";
  if (auto folder = variable("XDG_CACHE_HOME"); !folder.empty())
    return folder / "fpm" / "opencl";
  if (auto folder = variable("HOME"); !folder.empty())
    return folder / ".cache" / "fpm" / "opencl";
  return {};
}

struct Device::Program {
  std::uint64_t hash = 0; ///< of source and options, to compare fast
  std::string source;
  std::string options;
  ProgramRef program;
  /// Kernels given back by recycle(), by name, for the next caller.
  std::map<std::string, std::vector<KernelRef>, std::less<>> idle;
};

Device::Program *Device::findProgram(std::string_view source,
                                     std::string_view options,
                                     std::uint64_t hash) {
  for (const auto &program : programs_)
    if (program->hash == hash && program->source == source &&
        program->options == options)
      return program.get();
  return nullptr;
}

Device::Device(const DeviceInfo &info, unsigned computeUnits)
    : info_(info), computeUnits_(info.computeUnits) {
  std::string who = describe(info_);
  if (info_.isCpu && computeUnits > 0 && computeUnits < info_.computeUnits) {
    const cl_device_partition_property properties[] = {
        CL_DEVICE_PARTITION_BY_COUNTS,
        static_cast<cl_device_partition_property>(computeUnits),
        CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id sub = nullptr;
    cl_uint made = 0;
    // A device that cannot be partitioned is used whole: computeUnits()
    // then says so, and the caller can size its OpenMP team accordingly.
    if (clCreateSubDevices(info_.device, properties, 1, &sub, &made) ==
            CL_SUCCESS &&
        made == 1 && sub) {
      subDevice_ = DeviceRef(sub);
      cl_uint units = 0;
      computeUnits_ =
          clGetDeviceInfo(sub, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units,
                          &units, nullptr) == CL_SUCCESS &&
                  units > 0
              ? units
              : computeUnits;
    }
  }

  cl_device_id id = device();
  const cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM,
      reinterpret_cast<cl_context_properties>(info_.platform), 0};
  cl_int status = CL_SUCCESS;
  context_ = ContextRef(
      clCreateContext(properties, 1, &id, nullptr, nullptr, &status));
  check(status, "clCreateContext on " + who);
  bool openCl20 = openClVersion(info_.platformVersion) >= 20;
  upload_ = makeQueue(context_.get(), id, openCl20, who);
  compute_ = makeQueue(context_.get(), id, openCl20, who);
  download_ = makeQueue(context_.get(), id, openCl20, who);

  // The offset from device to host time: a marker's end, read right after
  // clFinish returns, against steady_clock read at that moment. The host
  // reading comes a little late (the wake-up from clFinish), so each
  // sample overestimates; the smallest of a few is the best. Not
  // clGetDeviceAndHostTimer: its host timer is implementation-defined and
  // need not be steady_clock. Drift over a run is not corrected.
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (int sample = 0; sample < 5; ++sample) {
    cl_event raw = nullptr;
    check(clEnqueueMarkerWithWaitList(compute_.get(), 0, nullptr, &raw),
          "clEnqueueMarkerWithWaitList on " + who);
    EventRef marker(raw);
    check(clFinish(compute_.get()), "clFinish on " + who);
    std::int64_t host = steadyNanoseconds();
    cl_ulong end = 0;
    if (clGetEventProfilingInfo(raw, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                nullptr) != CL_SUCCESS)
      break;
    best = std::min(best, host - static_cast<std::int64_t>(end));
  }
  // A device with no timestamps on markers: its events have none either
  // (commandTimes answers {0, 0}), so the offset is never used.
  clockOffset_ = best == std::numeric_limits<std::int64_t>::max() ? 0 : best;
}

Device::~Device() {
  // Whatever is still queued may use buffers the caller is about to free.
  for (const QueueRef *queue : {&upload_, &compute_, &download_})
    if (*queue)
      clFinish(queue->get());
}

cl_device_id Device::device() const {
  return subDevice_ ? subDevice_.get() : info_.device;
}

KernelRef Device::kernel(std::string_view source, std::string_view options,
                         std::string_view kernelName) {
  std::string who = describe(info_);
  std::lock_guard lock(mutex_);

  KeyHash memoryKey;
  memoryKey.add(source);
  memoryKey.add(options);
  std::uint64_t hash = memoryKey.word();
  Program *found = findProgram(source, options, hash);

  if (found) {
    ++counts_.fromMemory;
  } else {
    auto program = std::make_unique<Program>();
    program->hash = hash;
    program->source = source;
    program->options = options;
    cl_device_id id = device();

    // Everything that changes the binary: the program, and the device and
    // driver that compiled it (a sub-device is compiled for its size).
    std::filesystem::path file;
    std::string fileKey;
    if (std::filesystem::path folder = binaryCacheDirectory();
        !folder.empty()) {
      KeyHash key;
      for (std::string_view part :
           {std::string_view("fpm-opencl-binary/1"), source, options,
            std::string_view(info_.name), std::string_view(info_.vendor),
            std::string_view(info_.deviceVersion),
            std::string_view(info_.driverVersion),
            std::string_view(info_.platformName),
            std::string_view(info_.platformVersion)})
        key.add(part);
      key.add(std::to_string(computeUnits_));
      fileKey = key.hex();
      file = folder / (fileKey + ".bin");
    }

    if (!file.empty()) {
      std::error_code error;
      if (std::filesystem::is_regular_file(file, error)) {
        try {
          std::string bytes = readRegularFile(file, MaxCacheFileBytes);
          if (std::string_view binary = decodeCacheFile(fileKey, bytes);
              !binary.empty())
            program->program =
                buildFromBinary(context_.get(), id, binary, program->options);
        } catch (const std::runtime_error &error) {
          // Unreadable or too large: build from source and replace it
          // below.
          std::fprintf(stderr,
                       "fpm: %s; building the OpenCL program for %s from "
                       "source and replacing the cached binary\n",
                       error.what(), who.c_str());
        }
      }
    }

    if (program->program) {
      ++counts_.fromDisk;
    } else {
      program->program = buildFromSource(context_.get(), id, program->source,
                                         program->options, who);
      ++counts_.fromSource;
      if (!file.empty()) {
        // Only a cache: a folder that cannot be written costs a rebuild
        // next time, nothing more. The write is atomic, so a concurrent
        // process or a crash never leaves half a binary for the next run.
        std::string binary = programBinary(program->program.get());
        std::error_code error;
        std::filesystem::create_directories(file.parent_path(), error);
        if (!binary.empty() && !error) {
          try {
            writeFileAtomically(file, encodeCacheFile(fileKey, binary));
          } catch (const std::runtime_error &) {
          }
        }
      }
    }
    programs_.push_back(std::move(program));
    found = programs_.back().get();
  }

  if (auto idle = found->idle.find(kernelName);
      idle != found->idle.end() && !idle->second.empty()) {
    KernelRef kernel = std::move(idle->second.back());
    idle->second.pop_back();
    return kernel;
  }
  std::string name(kernelName);
  cl_int status = CL_SUCCESS;
  KernelRef kernel(clCreateKernel(found->program.get(), name.c_str(), &status));
  if (status != CL_SUCCESS)
    throw Error("cannot create OpenCL kernel '" + name + "' on " + who + ": " +
                    errorName(status),
                status);
  return kernel;
}

void Device::recycle(std::string_view source, std::string_view options,
                     std::string_view kernelName, KernelRef kernel) {
  if (!kernel)
    return;
  KeyHash memoryKey;
  memoryKey.add(source);
  memoryKey.add(options);
  std::lock_guard lock(mutex_);
  if (Program *program = findProgram(source, options, memoryKey.word())) {
    auto idle = program->idle.find(kernelName);
    if (idle == program->idle.end())
      idle = program->idle
                 .emplace(std::string(kernelName), std::vector<KernelRef>())
                 .first;
    idle->second.push_back(std::move(kernel));
  }
}

MemRef Device::acquireBuffer(cl_mem_flags flags, std::size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    // The most recently used first: likelier still resident.
    for (auto idle = idleBuffers_.rbegin(); idle != idleBuffers_.rend(); ++idle)
      if (idle->flags == flags && idle->bytes == bytes) {
        MemRef buffer = std::move(idle->buffer);
        idleBytes_ -= bytes;
        idleBuffers_.erase(std::next(idle).base());
        return buffer;
      }
  }
  cl_int status = CL_SUCCESS;
  MemRef buffer(clCreateBuffer(context_.get(), flags, bytes, nullptr, &status));
  check(status, "clCreateBuffer of " + std::to_string(bytes) + " bytes on " +
                    describe(info_));
  return buffer;
}

void Device::releaseBuffer(cl_mem_flags flags, std::size_t bytes,
                           MemRef buffer) {
  if (!buffer)
    return;
  std::vector<MemRef> released; // outside the lock
  std::lock_guard lock(mutex_);
  idleBuffers_.push_back({flags, bytes, std::move(buffer)});
  idleBytes_ += bytes;
  const std::uint64_t limit = info_.globalMemory / 4;
  while (idleBytes_ > limit && !idleBuffers_.empty()) {
    idleBytes_ -= idleBuffers_.front().bytes;
    released.push_back(std::move(idleBuffers_.front().buffer));
    idleBuffers_.erase(idleBuffers_.begin());
  }
}

BuildCounts Device::buildCounts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::int64_t Device::hostNanoseconds(cl_ulong deviceNanoseconds) const {
  return static_cast<std::int64_t>(deviceNanoseconds) + clockOffset_;
}

Device &openDevice(std::size_t index, unsigned computeUnits) {
  const std::vector<DeviceInfo> &all = devices();
  if (index >= all.size())
    throw Error("no OpenCL device opencl" + std::to_string(index) + " (" +
                    std::to_string(all.size()) + " found)",
                CL_DEVICE_NOT_FOUND);
  const DeviceInfo &info = all[index];
  // Every request that means the whole device shares one Device.
  if (!info.isCpu || computeUnits >= info.computeUnits)
    computeUnits = 0;

  struct Registry {
    std::mutex mutex;
    std::map<std::pair<std::size_t, unsigned>, std::unique_ptr<Device>> opened;
  };
  // Deliberately never destroyed. A static's destructor runs before the
  // exit handlers registered before it but after those registered later,
  // and drivers register theirs when they are first used (some while a
  // context is created, that is after this static): releasing a context
  // into a driver that has already shut down can crash at exit, and a
  // thread still using a queue at exit would race with its release. The
  // system reclaims everything at exit; the pointer keeps the Devices
  // reachable, so leak checkers do not report them. (PoCL 3.1 survives
  // either way; this is for the drivers that do not.)
  static Registry *const registry = new Registry;

  std::lock_guard lock(registry->mutex);
  auto &slot = registry->opened[{index, computeUnits}];
  if (!slot) {
    try {
      slot = std::make_unique<Device>(info, computeUnits);
    } catch (...) {
      registry->opened.erase({index, computeUnits});
      throw;
    }
  }
  return *slot;
}

std::pair<std::int64_t, std::int64_t> commandTimes(const Device &device,
                                                   cl_event event) {
  cl_ulong start = 0, end = 0;
  if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start,
                              &start, nullptr) != CL_SUCCESS ||
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end,
                              nullptr) != CL_SUCCESS)
    return {0, 0};
  return {device.hostNanoseconds(start), device.hostNanoseconds(end)};
}

} // namespace fpm::opencl
