//===- exec/devices.hpp - Which PEs a loop may use -------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: parseDevices(), which reads the pragma's
// `devices(...)` list, fpm_loop::devices or FPM_DEVICES: `cpu` (the OpenMP
// team), `gpu` (every device of every backend, device/backends.def), `all`,
// or PE ids (`opencl1`: a backend's prefix and a number), separated by
// commas or spaces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fpm {

struct DeviceSelection {
  bool cpu = false;
  bool allDevices = false;
  /// Ids named one by one ("opencl1"), when not allDevices.
  std::vector<std::string> ids;
  /// Where it came from, for messages: `FPM_DEVICES "opencl1"`, or empty
  /// for the default.
  std::string source;

  bool wantsDevices() const { return allDevices || !ids.empty(); }
  /// True when device `id` may take part.
  bool selects(std::string_view id) const;
};

/// Parses `text`; empty is "all". Throws std::invalid_argument naming
/// `origin` ("devices", "FPM_DEVICES"), the text and the unknown word.
DeviceSelection parseDevices(std::string_view text, std::string_view origin);

} // namespace fpm
