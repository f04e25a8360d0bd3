//===- device/faults.hpp - Faults injected into device PEs -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The seam the fault tests use (FPM_INJECT_FAULT=pe:k[:wait][,pe:k...]): a
// device PE fails at its program build (k = 0), when it enqueues its k-th
// chunk, or while it waits for it. A driver asks FaultSeam::at() at each
// of those points, which throws FaultError, and handles it as a failure of
// its device (OpenCL's as an OpenCL error).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

struct InjectedFault {
  std::string pe;
  int chunk = 0;       ///< 0: the program build; k: the k-th chunk
  bool atWait = false; ///< fail when waiting for chunk k, not enqueuing it
};

/// Thrown for an injected fault.
class FaultError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads FPM_INJECT_FAULT's `text` (empty: none). Throws
/// std::invalid_argument naming the variable for a malformed list, or one
/// naming a PE that is not among `knownPes` (the devices every backend
/// found, named by the backends' titles): a fault test would otherwise
/// pass without injecting anything.
std::vector<InjectedFault>
parseInjectedFaults(std::string_view text,
                    std::span<const std::string> knownPes);

/// The faults injected into one PE.
class FaultSeam {
public:
  FaultSeam() = default;
  FaultSeam(std::span<const InjectedFault> faults, std::string_view pe);

  /// Throws FaultError when chunk `chunk` (0: the build) is to fail here.
  void at(int chunk, bool atWait) const;
  /// True when `chunk` fails while it is waited for: it never counts as
  /// done, even if it ran.
  bool failsAtWait(int chunk) const;
  /// The first chunk (from 1) set to fail; chunks from there on never
  /// count as done.
  int firstFailing() const { return first_; }

private:
  std::string pe_;
  std::vector<InjectedFault> faults_;
  int first_ = 1 << 30;
};

} // namespace fpm
