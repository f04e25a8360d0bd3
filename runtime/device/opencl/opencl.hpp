//===- device/opencl/opencl.hpp - OpenCL devices as PEs ---------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: the OpenCL devices of every platform the ICD
// loader finds, each a processing element with a stable id (opencl0,
// opencl1, ...), opened once per process with a context and three in-order
// queues (upload, compute, download: a chunk's upload overlaps the previous
// chunk's kernel), and programs built once per device and process, their
// binaries cached on disk keyed by source, options, device and driver so
// that a second run starts fast. Everything that fails throws
// opencl::Error, whose what() names the call, the device and the error.
//
//===----------------------------------------------------------------------===//
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fpm::opencl {

/// "CL_OUT_OF_RESOURCES" for -5; "CL error -9999" for a code it does not
/// know.
std::string errorName(cl_int code);

/// A failed OpenCL call.
class Error : public std::runtime_error {
public:
  Error(std::string message, cl_int code)
      : std::runtime_error(std::move(message)), code_(code) {}
  cl_int code() const { return code_; }

private:
  cl_int code_;
};

/// Throws Error("<what>: <errorName(code)>") when code != CL_SUCCESS.
void check(cl_int code, std::string_view what);

/// An owned OpenCL object: released on destruction, retained on copy.
template <class Handle, cl_int (*Retain)(Handle), cl_int (*Release)(Handle)>
class Ref {
public:
  Ref() = default;
  /// Takes ownership of `handle` (one reference), which may be null.
  explicit Ref(Handle handle) : handle_(handle) {}
  Ref(const Ref &other) : handle_(other.handle_) {
    if (handle_)
      Retain(handle_);
  }
  Ref(Ref &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Ref &operator=(Ref other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Ref() {
    if (handle_)
      Release(handle_);
  }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

private:
  Handle handle_ = nullptr;
};

using DeviceRef = Ref<cl_device_id, clRetainDevice, clReleaseDevice>;
using ContextRef = Ref<cl_context, clRetainContext, clReleaseContext>;
using QueueRef =
    Ref<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using ProgramRef = Ref<cl_program, clRetainProgram, clReleaseProgram>;
using KernelRef = Ref<cl_kernel, clRetainKernel, clReleaseKernel>;
using MemRef = Ref<cl_mem, clRetainMemObject, clReleaseMemObject>;
using EventRef = Ref<cl_event, clRetainEvent, clReleaseEvent>;

/// One OpenCL device as found, before it is opened.
struct DeviceInfo {
  std::string id; ///< "opencl0", ...: the order of platforms, then devices
  std::string name;
  std::string vendor;
  std::string platformName;
  std::string platformVersion;
  std::string deviceVersion;
  std::string driverVersion;
  bool isCpu = false; ///< CL_DEVICE_TYPE_CPU: it shares the host's cores
  unsigned computeUnits = 0;
  std::uint64_t globalMemory = 0; ///< bytes
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

/// Every device of every platform, found on the first call (thread-safe)
/// and the same for the life of the process. No ICD, or no platform, is an
/// empty list, not an error.
const std::vector<DeviceInfo> &devices();
/// Why platforms or devices were skipped while finding them, one line each
/// (for FPM_VERBOSE); empty when nothing went wrong.
const std::vector<std::string> &discoveryProblems();

/// Where compiled program binaries are kept: $FPM_CACHE_DIR, else
/// $XDG_CACHE_HOME/fpm, else $HOME/.cache/fpm, each with "/opencl"
/// appended; empty when none is set (no disk cache).
std::filesystem::path binaryCacheDirectory();

/// How a program was obtained, for tests and FPM_VERBOSE.
struct BuildCounts {
  int fromSource = 0; ///< clBuildProgram on source
  int fromDisk = 0;   ///< a cached binary loaded and built
  int fromMemory = 0; ///< already built in this process
};

/// A device opened for use: its context and queues (profiling enabled, so
/// events carry device timestamps), and the programs built on it. For a
/// CPU device asked for fewer compute units than it has, the context holds
/// a sub-device of that many units (clCreateSubDevices, by counts), so
/// that it leaves the rest of the cores to the OpenMP team. Thread-safe.
class Device {
public:
  /// Opens `info` with at most `computeUnits` compute units (0: all; only
  /// a CPU device is narrowed). Throws Error.
  Device(const DeviceInfo &info, unsigned computeUnits);
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  ~Device();

  const DeviceInfo &info() const { return info_; }
  /// The compute units it actually uses.
  unsigned computeUnits() const { return computeUnits_; }
  cl_device_id device() const;
  cl_context context() const { return context_.get(); }
  cl_command_queue uploadQueue() const { return upload_.get(); }
  cl_command_queue computeQueue() const { return compute_.get(); }
  cl_command_queue downloadQueue() const { return download_.get(); }

  /// A kernel object for `kernelName` in `source` built with `options`:
  /// the program comes from this process's memory, else from the disk
  /// cache, else it is built from source (and then its binary is written
  /// to the cache, atomically; a cache that cannot be written is not an
  /// error). Each call returns a cl_kernel no one else holds (a kernel's
  /// arguments are per object, so each host thread needs its own): one
  /// given back by recycle(), or a new one. Throws Error with the
  /// build log when the program does not build, or the kernel is missing.
  KernelRef kernel(std::string_view source, std::string_view options,
                   std::string_view kernelName);
  /// Gives a kernel from kernel() back for the next call to reuse (its
  /// arguments are then stale: the next user sets them all).
  void recycle(std::string_view source, std::string_view options,
               std::string_view kernelName, KernelRef kernel);

  BuildCounts buildCounts() const;

  /// A buffer of `bytes` with `flags`: an idle one of that size and flags
  /// from an earlier call, or a new one. Creating (and, on a CPU device,
  /// first touching) a large buffer on every call of a loop costs more
  /// than its kernels. Throws Error.
  MemRef acquireBuffer(cl_mem_flags flags, std::size_t bytes);
  /// Gives `buffer` back once no command uses it any more. Idle buffers
  /// beyond a quarter of the device's memory are released, oldest first.
  void releaseBuffer(cl_mem_flags flags, std::size_t bytes, MemRef buffer);

  /// Host steady_clock time, in nanoseconds since its epoch, of a device
  /// timestamp (CL_PROFILING_COMMAND_*), from an offset measured when the
  /// device was opened.
  std::int64_t hostNanoseconds(cl_ulong deviceNanoseconds) const;

private:
  struct Program;
  Program *findProgram(std::string_view source, std::string_view options,
                       std::uint64_t hash);
  DeviceInfo info_;
  unsigned computeUnits_ = 0;
  DeviceRef subDevice_; ///< null unless narrowed to a sub-device
  ContextRef context_;
  QueueRef upload_, compute_, download_;
  std::int64_t clockOffset_ = 0; ///< host ns - device ns
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Program>> programs_;
  BuildCounts counts_;
  struct IdleBuffer {
    cl_mem_flags flags;
    std::size_t bytes;
    MemRef buffer;
  };
  std::vector<IdleBuffer> idleBuffers_; // oldest first
  std::size_t idleBytes_ = 0;
};

/// The process's opened Device for devices()[index] with `computeUnits`
/// (as Device's constructor), opened on first use and kept until exit.
/// Throws Error when it cannot be opened (and again on every call).
Device &openDevice(std::size_t index, unsigned computeUnits);

/// The start and end of a completed command, in the host's steady_clock
/// nanoseconds; {0, 0} when the event has no profiling information.
std::pair<std::int64_t, std::int64_t> commandTimes(const Device &device,
                                                   cl_event event);

} // namespace fpm::opencl
