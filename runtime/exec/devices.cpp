//===- exec/devices.cpp - Which PEs a loop may use ------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/devices.hpp"

#include "device/backend.hpp"

#include <algorithm>
#include <stdexcept>

namespace fpm {

bool DeviceSelection::selects(std::string_view id) const {
  return allDevices || std::find(ids.begin(), ids.end(), id) != ids.end();
}

DeviceSelection parseDevices(std::string_view text, std::string_view origin) {
  DeviceSelection devices;
  devices.source = std::string(origin) + " \"" + std::string(text) + "\"";
  bool any = false;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find_first_of(", \t", at);
    const std::string_view word =
        text.substr(at, end == std::string_view::npos ? end : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    if (word.empty())
      continue;
    any = true;
    if (word == "cpu") {
      devices.cpu = true;
    } else if (word == "gpu") {
      devices.allDevices = true;
    } else if (word == "all") {
      devices.cpu = devices.allDevices = true;
    } else if (backendOfId(word)) {
      if (!devices.selects(word))
        devices.ids.emplace_back(word);
    } else {
      throw std::invalid_argument(
          std::string(origin) + " \"" + std::string(text) +
          "\": unknown device '" + std::string(word) +
          "'; expected cpu, gpu, all or an " + backendTitles() +
          " PE id such as " + std::string(backends().front()->prefix()) + "0");
    }
  }
  if (!any)
    devices.cpu = devices.allDevices = true;
  return devices;
}

} // namespace fpm
