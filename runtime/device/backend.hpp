//===- device/backend.hpp - Kinds of device, one interface ------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: everything the executor (exec/), the planner and
// the API know of devices. A Backend is a kind of device (OpenCL today): it
// finds its devices once per process, each with an id of its prefix and a
// number ("opencl0"), and opens one for a loop call as a PeDevice, which
// says what the planner needs of it (its profile id, the iterations that
// fill it, the alignment its ranges start at, the ranges it keeps in
// flight) and runs the ranges its host thread draws from a WorkFeed. The
// shape is that of LLVM's offload plugins (a plugin per kind of device,
// each deriving its device type from one generic device); backends
// register as StarPU's drivers do, each one line of backends.def.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "device/driver.hpp"
#include "fpm/fpm.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace fpm {

struct KernelSpec;
class FaultSeam;
class ReductionPartials;

/// One device a backend found, before it is opened.
struct FoundDevice {
  std::string id;   ///< the backend's prefix and a number: "opencl0"
  std::string name; ///< for people: "NVIDIA H200"
  /// What FPM_VERBOSE says of it after its id: its name, platform, kind,
  /// compute units and driver.
  std::string details;
  /// It runs on the host's cores (a CPU OpenCL device): it may take only
  /// the cores the CPU team leaves free.
  bool sharesHostCores = false;
};

/// How to open one device for a loop call.
struct OpenRequest {
  std::size_t index = 0;   ///< in its backend's devices()
  std::size_t ordinal = 0; ///< among every backend's devices (allDevices())
  /// For a device that shares the host's cores: its share of the cores the
  /// CPU team leaves free (at least 1).
  unsigned freeCores = 1;
};

/// What a device runs for one loop call.
struct DeviceRun {
  const KernelSpec &kernel;
  const FaultSeam &faults; ///< those injected into this device
  /// Set: every range is traced under `trace->loop` on the device's lanes.
  const TraceTarget *trace = nullptr;
  /// Receives each completed range's partial results, for a kernel with
  /// reduction arguments.
  ReductionPartials *reductions = nullptr;
  /// The loop's compiled CPU body and its context, for a device that runs
  /// host code (test/unit/'s simulated one): a loop with reductions gives
  /// one that adds each range's partials to `reductions` itself.
  fpm_body_fn body = nullptr;
  void *context = nullptr;
};

/// A device opened for one loop call, driven by one host thread.
class PeDevice {
public:
  virtual ~PeDevice() = default;

  virtual const FoundDevice &found() const = 0;
  /// Its id in the profile store: a device narrowed to fewer compute
  /// units is another PE than the whole ("opencl0.1cu").
  virtual std::string profileId() const = 0;
  /// "<name>, <k> compute units", for people.
  virtual std::string profileName() const = 0;
  /// The compute units it uses.
  virtual unsigned computeUnits() const = 0;
  /// Its ranges start at multiples of this (but at the loop's end and
  /// where they meet a CPU thread's): OpenCL's work-group size.
  virtual std::int64_t alignment() const = 0;
  /// Iterations that fill it (a smaller range takes about as long); 0
  /// when any range keeps it busy.
  virtual std::int64_t fill() const = 0;
  /// Ranges it keeps in flight.
  virtual std::size_t pipelineDepth() const = 0;
  /// It works in the host's memory (it runs DeviceRun::body): in a data
  /// region its ranges take the host's copies, as a CPU thread's do,
  /// rather than copies of its own (residency/).
  virtual bool usesHostMemory() const { return false; }
  /// Who holds its copies of a data region's arrays (residency::Holder):
  /// what a range costs to move to it is asked by this (exec/). The host
  /// (null) for a device that works in the host's memory.
  virtual const void *holder() const { return nullptr; }

  /// Its ranges' trace lane, and its host thread's when that runs CPU
  /// chunks after a failure; nameTraceLanes() names them and any others
  /// it traces on.
  virtual int lane() const = 0;
  virtual int rescueLane() const = 0;
  virtual void nameTraceLanes() const = 0;

  /// Runs ranges from `feed` until it has none left. Returns false when the
  /// device failed: its unfinished ranges went back through feed.fail(),
  /// and the calling thread is free to run CPU work instead. Allocates
  /// nothing per range that the executor would not.
  virtual bool run(WorkFeed &feed, const DeviceRun &run) = 0;
};

/// A kind of device.
class Backend {
public:
  virtual ~Backend() = default;

  /// Its devices' id prefix: "opencl".
  virtual std::string_view prefix() const = 0;
  /// Its name for people: "OpenCL".
  virtual std::string_view title() const = 0;
  /// Whether its devices run kernels written in `language`: a call uses
  /// only the devices that run its kernel.
  virtual bool runs(fpm_kernel_language language) const = 0;
  /// Its devices, found on the first call (thread-safe) and the same for
  /// the life of the process; none is an empty list, not an error.
  virtual std::span<const FoundDevice> devices() = 0;
  /// Why devices were skipped while finding them, one line each (for
  /// FPM_VERBOSE).
  virtual std::span<const std::string> discoveryProblems() = 0;
  /// Opens devices()[request.index] for one loop call, reading the
  /// variables that tune it. Throws std::invalid_argument naming a
  /// malformed variable, and another std::exception when the device cannot
  /// be opened.
  virtual std::unique_ptr<PeDevice> open(const OpenRequest &request) = 0;
};

/// Every backend of backends.def, in its order.
std::span<Backend *const> backends();

/// A device of any backend, as found.
struct AnyDevice {
  Backend *backend = nullptr;
  std::size_t index = 0; ///< in backend->devices()
  const FoundDevice *found = nullptr;
};

/// Every backend's devices, backend after backend, found on the first call
/// (thread-safe); a device's ordinal is its position here.
std::span<const AnyDevice> allDevices();

/// The backend whose devices' ids `id` would be one of: its prefix and a
/// decimal number without leading zeros ("opencl1"); null when none.
Backend *backendOfId(std::string_view id);

/// The backends' titles for people: "OpenCL", or "OpenCL or CUDA".
std::string backendTitles();

} // namespace fpm
