//===- device/opencl/opencl_backend.cpp - OpenCL as a Backend -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// OpenCL behind device/backend.hpp: its devices are opencl::devices(), one
// opened for a loop call is the process's opencl::Device (a CPU device
// narrowed to the cores the CPU team leaves free, or to
// FPM_OPENCL_CPU_UNITS), and it runs ranges through an OpenClDriver. The
// variables that tune it (FPM_OPENCL_PIPELINE, FPM_OPENCL_CPU_UNITS) are
// read each time a device is opened for a call, so that a program may
// change them between loops.
//
//===----------------------------------------------------------------------===//

#include "device/backend.hpp"
#include "device/opencl/opencl_driver.hpp"
#include "support/environment.hpp"

#include <mutex>

namespace fpm {
namespace {

/// An OpenCL device opened for a loop call.
class OpenClPe final : public PeDevice {
public:
  OpenClPe(const FoundDevice &found, DevicePe pe) : found_(found), pe_(pe) {}

  const FoundDevice &found() const override { return found_; }
  std::string profileId() const override { return pe_.profileId(); }
  std::string profileName() const override { return pe_.profileName(); }
  unsigned computeUnits() const override { return pe_.device->computeUnits(); }
  std::int64_t alignment() const override { return OpenClWorkGroupSize; }
  std::int64_t fill() const override { return pe_.fill(); }
  std::size_t pipelineDepth() const override { return pe_.pipeline; }
  int lane() const override { return pe_.kernelLane(); }
  int rescueLane() const override { return pe_.rescueLane(); }
  void nameTraceLanes() const override { pe_.nameTraceLanes(); }
  const void *holder() const override { return pe_.device; }

  bool run(WorkFeed &feed, const DeviceRun &run) override {
    OpenClDriver driver(run.kernel, pe_, run.faults, run.trace, run.reductions);
    return driver.run(feed);
  }

private:
  const FoundDevice &found_;
  DevicePe pe_;
};

class OpenClBackend final : public Backend {
public:
  std::string_view prefix() const override { return "opencl"; }
  std::string_view title() const override { return "OpenCL"; }
  bool runs(fpm_kernel_language language) const override {
    return language == FPM_KERNEL_OPENCL_C;
  }

  std::span<const FoundDevice> devices() override {
    std::call_once(found_, [this] {
      for (const opencl::DeviceInfo &info : opencl::devices())
        devices_.push_back({info.id, info.name,
                            info.name + " (" + info.platformName + ", " +
                                (info.isCpu ? "CPU" : "GPU/other") + ", " +
                                std::to_string(info.computeUnits) +
                                " compute units, driver " + info.driverVersion +
                                ")",
                            info.isCpu});
    });
    return devices_;
  }

  std::span<const std::string> discoveryProblems() override {
    return opencl::discoveryProblems();
  }

  std::unique_ptr<PeDevice> open(const OpenRequest &request) override {
    const std::optional<long> pipeline =
        integerFromEnvironment("FPM_OPENCL_PIPELINE", 1, 4);
    const std::optional<long> cpuUnits =
        integerFromEnvironment("FPM_OPENCL_CPU_UNITS", 1, 1 << 20);
    const opencl::DeviceInfo &info = opencl::devices().at(request.index);
    const unsigned units = !info.isCpu ? 0
                           : cpuUnits  ? static_cast<unsigned>(*cpuUnits)
                                       : request.freeCores;
    DevicePe pe{request.ordinal, &opencl::openDevice(request.index, units),
                pipelineDepth(info, pipeline)};
    return std::make_unique<OpenClPe>(devices()[request.index], pe);
  }

private:
  std::once_flag found_;
  std::vector<FoundDevice> devices_;
};

} // namespace

Backend &openClBackend() {
  static OpenClBackend backend;
  return backend;
}

} // namespace fpm
