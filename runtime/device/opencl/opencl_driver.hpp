//===- device/opencl/opencl_driver.hpp - An OpenCL PE -----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The OpenCL driver: one host thread feeding one device (the
// autonomic-framework thesis, 4.1) the ranges its WorkFeed gives it. Per range
// the device gets exactly the sections those iterations touch
// (data/sections.hpp); it keeps up to `pipeline` ranges in flight on the
// device's three in-order queues, so that the next range's upload overlaps this
// one's kernel; shared inputs go over once per call. When anything fails
// (build, enqueue, transfer, wait, or an injected fault), it waits for what it
// had enqueued, keeps the ranges that completed, and hands the rest back
// through the feed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fpm/fpm.h"

#include "device/driver.hpp"
#include "device/faults.hpp"
#include "device/opencl/opencl.hpp"
#include "reduce/reductions.hpp"
#include "residency/residency.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace fpm {

/// Ranges start at multiples of this many iterations (or of the grain, if
/// larger), so that a device runs them as whole work-groups of this size.
/// An implementation left to choose the work-group size picks a divisor
/// of each global size (1 for a prime one), and PoCL compiles the kernel
/// again for every new work-group size: tens of milliseconds each. The
/// rewriter sizes generated kernels' __local arrays by the same constant.
constexpr std::int64_t OpenClWorkGroupSize = FPM_MAX_WORK_GROUP_SIZE;

/// An OpenCL device opened for a loop (opencl_backend.cpp's PeDevice).
struct DevicePe {
  std::size_t ordinal = 0; ///< among every backend's devices: its lanes
  opencl::Device *device = nullptr;
  std::size_t pipeline = 1; ///< ranges it keeps in flight

  /// Its id in the profile store: a CPU device narrowed to k compute
  /// units is another PE than the whole device ("opencl0.1cu").
  std::string profileId() const;
  /// "<device name>, <k> compute units", for people.
  std::string profileName() const;
  /// Iterations that fill it: four work-groups per compute unit on a GPU
  /// (a launch of fewer runs in about the same time); 0 on a CPU device,
  /// whose work-groups run one after another anyway.
  std::int64_t fill() const;

  /// Its lanes in a trace: the kernels, uploads and downloads, and its
  /// host thread running CPU chunks after a failure.
  int kernelLane() const { return 1000 + static_cast<int>(ordinal); }
  int uploadLane() const { return 2000 + static_cast<int>(ordinal); }
  int downloadLane() const { return 3000 + static_cast<int>(ordinal); }
  int rescueLane() const { return 4000 + static_cast<int>(ordinal); }
  /// Names those lanes in the trace.
  void nameTraceLanes() const;
};

/// Ranges a device keeps in flight: `requested` (FPM_OPENCL_PIPELINE) when
/// set, else 2 for a device with memory of its own (the next range's
/// upload overlaps this one's kernel) and 1 for a CPU device, whose copies
/// run on the cores its kernels run on, so that a second range gains
/// nothing and only holds back work that others could take at the end
/// (fpm-bench-coexec's stencil: fss went from 1.13 to 1.00 of the oracle).
std::size_t pipelineDepth(const opencl::DeviceInfo &info,
                          std::optional<long> requested);

/// The bytes every device's driver has copied so far in this process: to
/// the devices (ranges' sections, shared inputs, a data region's stale
/// parts) and back (ranges' writes and masks, what a data region's host
/// asked for). For benchmarks and tests.
struct DeviceTraffic {
  std::uint64_t toDevices = 0;
  std::uint64_t fromDevices = 0;
};
DeviceTraffic deviceTraffic();

/// One device's driver for one loop call.
class OpenClDriver {
public:
  /// `trace` set: every range, upload and download is traced on the
  /// device's lanes, under `trace->loop`. `reductions` receives each
  /// completed range's partial results when the kernel has reduction
  /// arguments (their indices checked against it).
  OpenClDriver(const KernelSpec &kernel, const DevicePe &pe, FaultSeam faults,
               const TraceTarget *trace, ReductionPartials *reductions);

  /// Runs ranges from `feed` until it has none left. Returns false when the
  /// device failed: its unfinished ranges went back through feed.fail(),
  /// and the calling thread is free to run CPU work instead.
  bool run(WorkFeed &feed);

private:
  struct Inflight;
  void enqueue(cl_kernel kernel, std::size_t groupSize,
               const std::vector<opencl::MemRef> &buffers,
               const std::vector<opencl::EventRef> &sharedUploads,
               Inflight &chunk, const Inflight *previous);
  void finish(Inflight &chunk, WorkFeed &feed);
  void recover(std::deque<Inflight> &inflight, WorkFeed &feed,
               const char *what);
  /// In a data region, for an array the device does not keep: the host's
  /// copy of `arg`'s section of `range` is made current before it is
  /// uploaded, and what it writes counts as the host's (the download
  /// brings it).
  void hostAccess(const KernelArg &arg, Range range) const;

  const KernelSpec &kernel_;
  DevicePe pe_;
  opencl::Device &device_;
  FaultSeam faults_;
  const TraceTarget *trace_;
  ReductionPartials *reductions_;
  std::int64_t busyUntil_ = 0; ///< the last completed range's end
  /// Per argument, the resident array whose buffer it uses, or null.
  std::vector<residency::Array *> resident_;
};

} // namespace fpm
