//===- device/faults.cpp - Faults injected into OpenCL PEs ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/faults.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <sstream>

namespace fpm {

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
          (known.empty() ? std::string("no OpenCL device was found")
                         : "its OpenCL devices: " + known) +
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
}

void FaultSeam::at(int chunk, bool atWait) const {
  for (const InjectedFault &fault : faults_)
    if (fault.chunk == chunk && fault.atWait == atWait)
      throw FaultError("injected fault (FPM_INJECT_FAULT=" + pe_ + ":" +
                       std::to_string(chunk) + (atWait ? ":wait" : "") + ")");
}

bool FaultSeam::failsAtWait(int chunk) const {
  return std::any_of(faults_.begin(), faults_.end(),
                     [&](const InjectedFault &fault) {
                       return fault.chunk == chunk && fault.atWait;
                     });
}

} // namespace fpm
