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
#include <stdexcept>

namespace fpm {
namespace {

/// The cores each device that shares the host's may use: those the CPU
/// team leaves free (the autonomic-framework thesis, 4.1: it must not take
/// the cores the team runs on), shared among such devices.
unsigned freeCoresEach(int teamThreads, int sharingDevices) {
  const int free = std::max(omp_get_num_procs() - teamThreads, 1);
  return static_cast<unsigned>(std::max(free / std::max(sharingDevices, 1), 1));
}

/// Says once per process and id, on stderr, that `call` selects a device
/// there is none of, and which devices of its backend there are: the loop
/// would otherwise run without it (on the CPU, when it named no other)
/// without a word.
void warnAboutMissingDevices(const LoopCall &call, bool noneChosen) {
  const DeviceSelection &selection = call.devices;
  // FPM_DEVICES is every loop's; a devices clause is this loop's.
  const std::string source = selection.source.starts_with("FPM_DEVICES")
                                 ? selection.source
                                 : loopLabel(call) + ": " + selection.source;
  static std::mutex mutex;
  static std::set<std::string, std::less<>> warned;
  for (const std::string &id : selection.ids) {
    Backend *backend = backendOfId(id);
    if (!backend)
      continue; // parseDevices() takes no other id
    const std::span<const FoundDevice> found = backend->devices();
    if (std::ranges::any_of(
            found, [&](const FoundDevice &device) { return device.id == id; }))
      continue;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!warned.insert(source + "|" + id).second)
        continue;
    }
    const std::string title(backend->title());
    std::string known;
    for (const FoundDevice &device : found)
      known +=
          (known.empty() ? "" : ", ") + device.id + " (" + device.name + ")";
    const std::string line =
        "fpm: " + source + ": there is no " + title + " device " + id + " (" +
        (known.empty() ? "no " + title + " device was found"
                       : "the " + title + " devices are " + known) +
        "); " +
        (noneChosen ? "the loop runs on the CPU" : "the loop runs without it") +
        "\n";
    std::fputs(line.c_str(), stderr);
  }
}

} // namespace

/// Prints, once per process, the devices every backend found.
void describeDevicesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::ostringstream out;
    for (Backend *backend : backends()) {
      const std::span<const FoundDevice> found = backend->devices();
      if (found.empty())
        out << "fpm: " << backend->title() << ": no devices found\n";
      for (const FoundDevice &device : found)
        out << "fpm: " << backend->title() << ": " << device.id << " = "
            << device.details << "\n";
      for (const std::string &problem : backend->discoveryProblems())
        out << "fpm: " << backend->title() << ": " << problem << "\n";
    }
    std::fputs(out.str().c_str(), stderr);
  });
}

/// The devices `call` selects that run its kernel and did not fail for loop
/// `key` before, opened (a device that shares the host's cores narrowed to
/// those the CPU team leaves free), one host thread each taken from the
/// team. `note` says why there are none.
LoopDevices openLoopDevices(const LoopCall &call, const std::string &key,
                            std::string &note) {
  const std::span<const AnyDevice> found = allDevices();
  std::set<std::string, std::less<>> failedBefore;
  withLoopState(key, [&](LoopState &state) { failedBefore = state.failed; });
  std::vector<std::size_t> chosen; // ordinals
  for (std::size_t i = 0; i < found.size(); ++i)
    if (call.devices.selects(found[i].found->id) &&
        !failedBefore.contains(found[i].found->id) &&
        (!call.kernel || found[i].backend->runs(call.kernel->language)))
      chosen.push_back(i);
  warnAboutMissingDevices(call, chosen.empty());
  if (chosen.empty()) {
    note = "no " + backendTitles() +
           (found.empty() ? " device found" : " device selected or usable");
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
  const int sharing = static_cast<int>(
      std::count_if(chosen.begin(), chosen.end(), [&](std::size_t i) {
        return found[i].found->sharesHostCores;
      }));
  const unsigned freeCores = freeCoresEach(cpuWorkers, sharing);
  for (std::size_t i : chosen) {
    const AnyDevice &device = found[i];
    try {
      opened.devices.push_back(
          device.backend->open({device.index, i, freeCores}));
    } catch (const std::invalid_argument &) {
      throw; // a malformed variable: the call's error, not the device's
    } catch (const std::exception &error) {
      bool first = false;
      withLoopState(key, [&](LoopState &state) {
        first = state.failed.insert(device.found->id).second;
      });
      if (first)
        std::fprintf(stderr,
                     "fpm: %s: %s (%s) cannot be opened: %s; it is not used "
                     "for this loop\n",
                     loopLabel(call).c_str(), device.found->id.c_str(),
                     device.found->name.c_str(), error.what());
    }
  }
  if (opened.devices.empty())
    note = "no " + backendTitles() + " device could be opened";
  return opened;
}

std::vector<LoopPe> coexecutionPes(const LoopCall &call) {
  std::string note;
  const LoopDevices opened = openLoopDevices(call, loopKey(call), note);
  std::vector<LoopPe> pes;
  for (const std::unique_ptr<PeDevice> &device : opened.devices)
    pes.push_back(
        {device->profileId(), device->profileName(), 1, device->alignment()});
  if (!pes.empty() && opened.cpuWorkers > 0)
    pes.push_back({std::string(CpuProfileId), std::string(CpuProfileName),
                   opened.cpuWorkers});
  return pes;
}

} // namespace fpm
