//===- exec/devices.hpp - Which PEs a loop may use -------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: parseDevices(), which reads the pragma's
// `devices(...)` list, fpm_loop::devices or FPM_DEVICES: `cpu` (the OpenMP
// team), `gpu` (every OpenCL device), `all`, or PE ids (`opencl1`),
// separated by commas or spaces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fpm {

struct DeviceSelection {
  bool cpu = false;
  bool allOpenCl = false;
  /// Ids named one by one ("opencl1"), when not allOpenCl.
  std::vector<std::string> openClIds;
  /// Where it came from, for messages: `FPM_DEVICES "opencl1"`, or empty
  /// for the default.
  std::string source;

  bool wantsOpenCl() const { return allOpenCl || !openClIds.empty(); }
  /// True when OpenCL PE `id` may take part.
  bool selects(std::string_view id) const;
};

/// Parses `text`; empty is "all". Throws std::invalid_argument naming
/// `origin` ("devices", "FPM_DEVICES"), the text and the unknown word.
DeviceSelection parseDevices(std::string_view text, std::string_view origin);

} // namespace fpm
