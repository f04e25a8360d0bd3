//===- device/faults.cpp - Faults injected into device PEs ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/faults.hpp"

#include "device/backend.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

namespace fpm {
namespace {

/// "opencl0:3" or "opencl0:3:wait", as FPM_INJECT_FAULT says it.
std::string faultText(const InjectedFault &fault) {
  return fault.pe + ":" + std::to_string(fault.chunk) +
         (fault.atWait ? ":wait" : "");
}

/// Every fault injected in this process: whether it fired, and the most
/// chunks its PE enqueued in one call. A fault that never fires is said at
/// exit, or a test that relies on it would pass for the wrong reason.
struct Injected {
  struct Fault {
    std::string pe;
    bool fired = false;
    int mostChunks = 0;
  };
  std::mutex mutex;
  std::map<std::string, Fault> byText;
  bool reportAtExit = false;
};

Injected &injected() {
  // Never destroyed: read at exit, after the static destructors may have
  // run.
  static Injected &all = *new Injected;
  return all;
}

void reportUnfired() {
  Injected &all = injected();
  const std::lock_guard lock(all.mutex);
  for (const auto &[text, fault] : all.byText)
    if (!fault.fired)
      std::fprintf(stderr,
                   "fpm: FPM_INJECT_FAULT=%s never fired: %s ran %d chunk%s "
                   "in its largest loop call\n",
                   text.c_str(), fault.pe.c_str(), fault.mostChunks,
                   fault.mostChunks == 1 ? "" : "s");
}

} // namespace

std::vector<InjectedFault>
parseInjectedFaults(std::string_view text,
                    std::span<const std::string> knownPes) {
  std::vector<InjectedFault> faults;
  const std::string whole(text);
  std::stringstream list(whole);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item.empty())
      continue;
    const std::size_t colon = item.find(':');
    InjectedFault fault;
    bool good = colon != std::string::npos && colon > 0;
    if (good) {
      fault.pe = item.substr(0, colon);
      std::string rest = item.substr(colon + 1);
      if (rest.ends_with(":wait")) {
        fault.atWait = true;
        rest.resize(rest.size() - 5);
      }
      good = !rest.empty() && rest.size() < 9 &&
             std::all_of(
                 rest.begin(), rest.end(),
                 [](char c) { return c >= '0' && c <= '9'; });
      if (good)
        fault.chunk = std::stoi(rest);
      good = good && !(fault.atWait && fault.chunk == 0);
    }
    if (!good)
      throw std::invalid_argument(
          "FPM_INJECT_FAULT \"" + excerpt(whole) + "\": expected pe:k or " +
          "pe:k:wait (k >= 0; 0 is the program build), such as opencl0:3");
    faults.push_back(std::move(fault));
  }
  for (const InjectedFault &fault : faults)
    if (std::find(knownPes.begin(), knownPes.end(), fault.pe) ==
        knownPes.end()) {
      std::string known;
      for (const std::string &id : knownPes)
        known += (known.empty() ? "" : ", ") + id;
      throw std::invalid_argument(
          "FPM_INJECT_FAULT \"" + excerpt(whole) + "\": there is no PE '" +
          excerpt(fault.pe) + "' to fail in this run (" +
          (known.empty() ? "no " + backendTitles() + " device was found"
                         : "its " + backendTitles() + " devices: " + known) +
          ")");
    }
  return faults;
}

FaultSeam::FaultSeam(std::span<const InjectedFault> faults, std::string_view pe)
    : pe_(pe) {
  for (const InjectedFault &fault : faults)
    if (fault.pe == pe) {
      faults_.push_back(fault);
      if (fault.chunk > 0)
        first_ = std::min(first_, fault.chunk);
    }
  if (faults_.empty())
    return;
  Injected &all = injected();
  const std::lock_guard lock(all.mutex);
  for (const InjectedFault &fault : faults_)
    all.byText.try_emplace(faultText(fault), Injected::Fault{fault.pe});
  if (!all.reportAtExit) {
    all.reportAtExit = true;
    std::atexit(reportUnfired);
  }
}

void FaultSeam::at(int chunk, bool atWait) const {
  if (faults_.empty())
    return;
  Injected &all = injected();
  const std::lock_guard lock(all.mutex);
  for (const InjectedFault &fault : faults_) {
    Injected::Fault &record = all.byText[faultText(fault)];
    if (!atWait)
      record.mostChunks = std::max(record.mostChunks, chunk);
    if (fault.chunk == chunk && fault.atWait == atWait) {
      record.fired = true;
      throw FaultError("injected fault (FPM_INJECT_FAULT=" + faultText(fault) +
                       ")");
    }
  }
}

bool FaultSeam::failsAtWait(int chunk) const {
  return std::any_of(faults_.begin(), faults_.end(),
                     [&](const InjectedFault &fault) {
                       return fault.chunk == chunk && fault.atWait;
                     });
}

} // namespace fpm
