//===- api/part.hpp - A loop call's part, and routing calls ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the narrow entry points through which a layer above
// libfpmrt (libfpmrt-mpi, runtime/mpi/) spreads one loop over several
// processes without scheduling anything inside a process itself:
//  - runLoopPart(): the C API's call, for a sub-range of the iterations
//    (LoopCall::part) on this process's PEs, planned there as today; the
//    reductions' partial results come back by range instead of being
//    applied, so that the caller folds every process's in range order;
//  - nodePes(): the stored FPMs of the PEs such a call runs on, from
//    which a node-level FPM is derived (cluster/node_model.hpp);
//  - setLoopRouter(): a function that every top-level fpm_parallel_* call of
//    the process goes to instead (a pragma program under mpirun).
// Not installed: libfpmrt-mpi is built with libfpmrt, from this tree.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "fpm/fpm.h"
#include "model/profile.hpp"
#include "reduce/reductions.hpp"

#include <span>
#include <vector>

namespace fpm {

/// The C arguments of one loop call, as fpm_parallel_for_kernel (reduceBody
/// null) and fpm_parallel_reduce (body null) take them.
struct LoopArguments {
  const fpm_loop *loop = nullptr;
  std::int64_t tripCount = 0;
  fpm_body_fn body = nullptr;
  fpm_reduce_body_fn reduceBody = nullptr;
  void *context = nullptr;
  std::span<const fpm_reduction> reductions;
  const fpm_kernel *kernel = nullptr;
};

/// The partial results of one range of a reduction loop, one per reduction.
struct RangePartials {
  Range range;
  std::vector<ScalarValue> values;
};

/// What runLoopPart() ran.
struct PartOutcome {
  /// With reductions: every range's partial results, in range order;
  /// folded into the variables by nobody yet.
  std::vector<RangePartials> partials;
  /// Wall seconds of the part on this process.
  double seconds = 0;
};

/// Runs iterations `part` of the loop as fpm_parallel_for_kernel or
/// fpm_parallel_reduce would run the whole (the same checks, environment,
/// planning and PEs), leaving reduction variables untouched. Returns an FPM
/// status; fpm_last_error() says what went wrong.
int runLoopPart(const LoopArguments &arguments, Range part,
                PartOutcome &outcome);

/// Runs the whole loop here, as fpm_parallel_for_kernel or
/// fpm_parallel_reduce does without a router.
int runLoopHere(const LoopArguments &arguments);

/// This process's PEs for a loop, as a layer above sees them.
struct NodePes {
  /// The stored FPMs of every PE the loop would run on now (the CPU's
  /// scaled to its team), in no particular order; empty when the loop is
  /// unnamed or some PE has none.
  std::vector<Profile> models;
  /// Workers: the CPU team's threads, and one per device; a guess
  /// at the node's speed relative to others before any is measured.
  int workers = 1;
  /// Where the packages of a split over `models` start: the work-group
  /// size when the loop co-executes (exec/coexec.cpp plans so), else 1.
  std::int64_t alignment = 1;
};
NodePes nodePes(const LoopArguments &arguments);

/// Receives every top-level fpm_parallel_for, _kernel and _reduce call of
/// the process and returns its status. A call made while a routed call runs
/// (a loop nested in a body) runs locally as usual.
using LoopRouter = int (*)(const LoopArguments &arguments);
/// Sets the router (null: none, the default).
void setLoopRouter(LoopRouter router);

/// Sets fpm_last_error() for the calling thread and returns `status`.
int setLastError(int status, std::string message);

/// Checks the reduction list and the body of a reduce call: FPM_OK, or
/// FPM_ERROR_INVALID_ARGUMENT with fpm_last_error() set; a bad list's
/// message names `caller` (fpm_parallel_reduce, fpm_mpi_parallel_reduce).
int checkReduceArguments(const char *caller, fpm_reduce_body_fn body,
                         const fpm_reduction *reductions, int count);

} // namespace fpm
