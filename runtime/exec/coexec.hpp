//===- exec/coexec.hpp - One loop over CPU threads and devices -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the OpenCL side of a loop (KernelSpec, from the C
// API's fpm_kernel), and runCoexecution(), which runs one loop call split
// across the CPU team and OpenCL devices at once:
//  - each device is fed by one host thread taken from the OpenMP team
//    (seed 004, 4.1); a CPU device gets a sub-device of the cores the team
//    leaves free;
//  - per chunk a device gets exactly the sections its iterations touch,
//    uploads overlap the previous chunk's kernel, and shared data goes to
//    each device once per call;
//  - static partitioners split by the PEs' speeds, self-scheduling schemes
//    scale each chunk by the asking PE's speed, and idle PEs steal the tail
//    of others' queues (work_pool.hpp);
//  - a device that fails is dropped for the loop, and its unfinished
//    iterations run elsewhere, each exactly once.
// Speeds come from the stored FPMs of a named loop (store/), else from what
// the loop measured in earlier calls of this process; every chunk's size
// and time on its PE goes back into the store (online profiling).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/exec.hpp"

#include "fpm/fpm.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fpm {

/// One kernel argument (fpm_arg), checked.
struct KernelArg {
  enum class Kind { Scalar, In, Out, InOut, Local };
  Kind kind = Kind::Scalar;
  void *data = nullptr;
  std::size_t size = 0; ///< scalar or local bytes; bytes per array element
  std::int64_t length = 0;
  std::int64_t offset = 0, stride = 0, count = 0;

  bool isArray() const {
    return kind == Kind::In || kind == Kind::Out || kind == Kind::InOut;
  }
  bool reads() const { return kind == Kind::In || kind == Kind::InOut; }
  bool writes() const { return kind == Kind::Out || kind == Kind::InOut; }
  /// The same section for every iteration: copied once per device and call.
  bool shared() const { return stride == 0; }
  /// Neighbouring iterations' sections touch or overlap: a chunk's is one
  /// run of elements. Otherwise it is copied as a rectangle, `count`
  /// elements every |stride|.
  bool contiguous() const { return std::abs(stride) <= count; }
  /// Elements [first, last) the iterations [begin, end) touch, for a
  /// contiguous section (a negative stride runs down the array).
  std::pair<std::int64_t, std::int64_t> span(std::int64_t begin,
                                             std::int64_t end) const;
  /// The lowest row of iterations [begin, end), for a rectangle.
  std::int64_t firstRow(std::int64_t begin, std::int64_t end) const {
    return offset + (stride >= 0 ? begin : end - 1) * stride;
  }
};

/// The OpenCL side of a loop (fpm_kernel), checked.
struct KernelSpec {
  std::string source;
  std::string name;
  std::string options;
  std::vector<KernelArg> args;
};

/// Checks `kernel` for a loop of `tripCount` iterations and reads its
/// source file. Throws std::invalid_argument naming the argument and the
/// problem: a section outside its array, a written section that does not
/// move with the iteration or overlaps the next one's, an unreadable file.
KernelSpec makeKernelSpec(const fpm_kernel &kernel, std::int64_t tripCount);

/// A PE a loop call runs on, as the profile store names it.
struct LoopPe {
  std::string id;   ///< "cpu" (one OpenMP thread), "opencl0", "opencl0.1cu"
  std::string name; ///< for people
  int threads = 1;  ///< the CPU team's threads, for "cpu"
};

/// The PEs `call` (whose kernel and devices are set) would run on now: the
/// OpenCL devices it selects that can be opened, then the CPU team when it
/// takes part. Empty when no device can be used (the loop then runs on the
/// CPU alone).
std::vector<LoopPe> coexecutionPes(const LoopCall &call);

/// Runs `call` (whose kernel and devices are set) over the CPU team and the
/// OpenCL devices it selects. Returns nothing when no selected device can
/// be used (the caller then runs the loop on the CPU alone, with `note`
/// saying why); otherwise as runLoop().
std::optional<LoopStatus> runCoexecution(const LoopCall &call,
                                         std::string &note);

} // namespace fpm
