//===- device/backend.cpp - The backends of backends.def ------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/backend.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace fpm {

#define FPM_BACKEND(Prefix, Function) Backend &Function();
#include "device/backends.def"

std::span<Backend *const> backends() {
  static const std::array registry = {
#define FPM_BACKEND(Prefix, Function) &Function(),
#include "device/backends.def"
  };
  return registry;
}

std::span<const AnyDevice> allDevices() {
  static const std::vector<AnyDevice> all = [] {
    std::vector<AnyDevice> devices;
    for (Backend *backend : backends()) {
      const std::span<const FoundDevice> found = backend->devices();
      for (std::size_t i = 0; i < found.size(); ++i)
        devices.push_back({backend, i, &found[i]});
    }
    return devices;
  }();
  return all;
}

Backend *backendOfId(std::string_view id) {
  for (Backend *backend : backends()) {
    const std::string_view prefix = backend->prefix();
    if (!id.starts_with(prefix) || id.size() == prefix.size())
      continue;
    const std::string_view number = id.substr(prefix.size());
    if (number.size() > 1 && number.front() == '0')
      continue;
    if (std::ranges::all_of(number,
                            [](char c) { return c >= '0' && c <= '9'; }))
      return backend;
  }
  return nullptr;
}

std::string backendTitles() {
  std::string titles;
  for (Backend *backend : backends())
    titles += (titles.empty() ? "" : " or ") + std::string(backend->title());
  return titles;
}

} // namespace fpm
