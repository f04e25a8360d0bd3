//===- exec/devices.cpp - Which PEs a loop may use ------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/devices.hpp"

#include <algorithm>
#include <stdexcept>

namespace fpm {
namespace {

/// "opencl" followed by a decimal number without leading zeros.
bool isOpenClId(std::string_view word) {
  constexpr std::string_view prefix = "opencl";
  if (!word.starts_with(prefix) || word.size() == prefix.size())
    return false;
  const std::string_view number = word.substr(prefix.size());
  if (number.size() > 1 && number.front() == '0')
    return false;
  return std::all_of(number.begin(), number.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

bool DeviceSelection::selects(std::string_view id) const {
  return allOpenCl ||
         std::find(openClIds.begin(), openClIds.end(), id) != openClIds.end();
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
      devices.allOpenCl = true;
    } else if (word == "all") {
      devices.cpu = devices.allOpenCl = true;
    } else if (isOpenClId(word)) {
      if (!devices.selects(word))
        devices.openClIds.emplace_back(word);
    } else {
      throw std::invalid_argument(
          std::string(origin) + " \"" + std::string(text) +
          "\": unknown device '" + std::string(word) +
          "'; expected cpu, gpu, all or an OpenCL PE id such as opencl0");
    }
  }
  if (!any)
    devices.cpu = devices.allOpenCl = true;
  return devices;
}

} // namespace fpm
