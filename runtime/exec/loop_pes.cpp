//===- exec/loop_pes.cpp - The PEs a loop call runs on --------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/loop_pes.hpp"

#include "exec/loop_state.hpp"
#include "store/online_profiles.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>

namespace fpm {
namespace {

/// The compute units a CPU OpenCL device may use: `requested`
/// (FPM_OPENCL_CPU_UNITS), or the cores the CPU team leaves free (the
/// autonomic-framework thesis, 4.1: it must not take the cores the team runs
/// on), shared among the CPU devices.
unsigned cpuDeviceUnits(int teamThreads, int cpuDevices,
                        std::optional<long> requested) {
  if (requested)
    return static_cast<unsigned>(*requested);
  const int free = std::max(omp_get_num_procs() - teamThreads, 1);
  return static_cast<unsigned>(std::max(free / std::max(cpuDevices, 1), 1));
}

/// Says once per process and id, on stderr, that `call` selects an OpenCL
/// device there is none of, and which there are: the loop would otherwise
/// run without it (on the CPU, when it named no other) without a word.
void warnAboutMissingDevices(const LoopCall &call,
                             const std::vector<opencl::DeviceInfo> &found,
                             bool noneChosen) {
  const DeviceSelection &selection = call.devices;
  // FPM_DEVICES is every loop's; a devices clause is this loop's.
  const std::string source = selection.source.starts_with("FPM_DEVICES")
                                 ? selection.source
                                 : loopLabel(call) + ": " + selection.source;
  static std::mutex mutex;
  static std::set<std::string, std::less<>> warned;
  for (const std::string &id : selection.openClIds) {
    if (std::any_of(
            found.begin(), found.end(),
            [&](const opencl::DeviceInfo &info) { return info.id == id; }))
      continue;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!warned.insert(source + "|" + id).second)
        continue;
    }
    std::string known;
    for (const opencl::DeviceInfo &info : found)
      known += (known.empty() ? "" : ", ") + info.id + " (" + info.name + ")";
    const std::string line =
        "fpm: " + source + ": there is no OpenCL device " + id + " (" +
        (known.empty() ? std::string("no OpenCL device was found")
                       : "the OpenCL devices are " + known) +
        "); " +
        (noneChosen ? "the loop runs on the CPU" : "the loop runs without it") +
        "\n";
    std::fputs(line.c_str(), stderr);
  }
}

} // namespace

/// Prints, once per process, the OpenCL devices found.
void describeDevicesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::ostringstream out;
    const std::vector<opencl::DeviceInfo> &found = opencl::devices();
    if (found.empty())
      out << "fpm: OpenCL: no devices found\n";
    for (const opencl::DeviceInfo &info : found)
      out << "fpm: OpenCL: " << info.id << " = " << info.name << " ("
          << info.platformName << ", " << (info.isCpu ? "CPU" : "GPU/other")
          << ", " << info.computeUnits << " compute units, driver "
          << info.driverVersion << ")\n";
    for (const std::string &problem : opencl::discoveryProblems())
      out << "fpm: OpenCL: " << problem << "\n";
    std::fputs(out.str().c_str(), stderr);
  });
}

/// The devices `call` selects that did not fail for loop `key` before,
/// opened (a CPU device narrowed to the cores the CPU team leaves free),
/// one host thread each taken from the team. `note` says why there are
/// none.
LoopDevices openLoopDevices(const LoopCall &call, const std::string &key,
                            const OpenClEnvironment &environment,
                            std::string &note) {
  const std::vector<opencl::DeviceInfo> &found = opencl::devices();
  std::set<std::string, std::less<>> failedBefore;
  withLoopState(key, [&](LoopState &state) { failedBefore = state.failed; });
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < found.size(); ++i)
    if (call.devices.selects(found[i].id) &&
        !failedBefore.contains(found[i].id))
      chosen.push_back(i);
  warnAboutMissingDevices(call, found, chosen.empty());
  if (chosen.empty()) {
    note = found.empty() ? "no OpenCL device found"
                         : "no OpenCL device selected or usable";
    return {};
  }
  // One host thread per device, taken from the team; the CPU PE keeps the
  // rest, if it takes part.
  const int team = cpuThreads();
  LoopDevices opened;
  opened.team = team;
  if (static_cast<int>(chosen.size()) > team)
    chosen.resize(static_cast<std::size_t>(team));
  const int cpuWorkers = opened.cpuWorkers =
      call.devices.cpu ? team - static_cast<int>(chosen.size()) : 0;
  const int cpuDevices = static_cast<int>(
      std::count_if(chosen.begin(), chosen.end(),
                    [&](std::size_t i) { return found[i].isCpu; }));
  const unsigned units =
      cpuDeviceUnits(cpuWorkers, cpuDevices, environment.cpuDeviceUnits);
  for (std::size_t i : chosen) {
    try {
      opened.devices.push_back(
          {i, &opencl::openDevice(i, found[i].isCpu ? units : 0),
           pipelineDepth(found[i], environment.pipeline)});
    } catch (const std::exception &error) {
      bool first = false;
      withLoopState(key, [&](LoopState &state) {
        first = state.failed.insert(found[i].id).second;
      });
      if (first)
        std::fprintf(stderr,
                     "fpm: %s: %s (%s) cannot be opened: %s; it is not used "
                     "for this loop\n",
                     loopLabel(call).c_str(), found[i].id.c_str(),
                     found[i].name.c_str(), error.what());
    }
  }
  if (opened.devices.empty())
    note = "no OpenCL device could be opened";
  return opened;
}

std::vector<LoopPe> coexecutionPes(const LoopCall &call) {
  std::string note;
  const LoopDevices opened =
      openLoopDevices(call, loopKey(call), readOpenClEnvironment(), note);
  std::vector<LoopPe> pes;
  for (const DevicePe &device : opened.devices)
    pes.push_back({device.profileId(), device.profileName(), 1});
  if (!pes.empty() && opened.cpuWorkers > 0)
    pes.push_back({std::string(CpuProfileId), std::string(CpuProfileName),
                   opened.cpuWorkers});
  return pes;
}

} // namespace fpm
