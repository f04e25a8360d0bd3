//===- exec/plan.hpp - Who runs which iterations ---------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The planner: the one place that decides how a loop's iterations are split
// over its PEs. From the schedule, the PEs (with their stored FPMs, partial
// FPMs or measured speeds) and the trip count, it makes a Plan: static
// packages per PE, or a self-scheduling scheme with its stage-1 shares. It
// owns the `auto` rule and the partitioners' granule caps. The CPU-only
// executor (exec.cpp) and co-execution (coexec.cpp) both run its plans;
// neither splits anything itself.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "exec/schedule_string.hpp"
#include "model/profile.hpp"
#include "schedule/schedule.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fpm {

class LoadBalancer;
struct Partitioner;

/// The exact solvers grow as O(p (N/G)^2): the planner gives them at most
/// this many granules, which they solve in milliseconds; `auto` picks the
/// exact optimum on stored FPMs only up to it.
inline constexpr std::int64_t ExactSolverUnits = 1024;
/// The other partitioners get at most this many: finer splits gain nothing,
/// and WDAH's search slows down past ~1e7 granules.
inline constexpr std::int64_t StaticUnits = std::int64_t{1} << 20;

/// A PE as the planner sees it.
struct PlanPe {
  std::string id;  ///< its profile id: "cpu", "opencl0", "opencl0.1cu"
  int workers = 1; ///< threads that run its work; 0: it takes no part
  /// Iterations per second of the whole PE, and whether that is a guess
  /// (nothing measured yet).
  double speed = 1;
  bool guessed = true;
};

/// What to plan.
struct PlanRequest {
  const LoopSchedule *schedule = nullptr;
  std::span<const PlanPe> pes;
  std::int64_t tripCount = 0; ///< iterations [0, tripCount)
  std::int64_t grain = 0;     ///< the least package; 0: 1
  /// Packages and chunks start at multiples of this (a device's
  /// work-group size), or of the grain when larger; 1 on the CPU alone.
  std::int64_t alignment = 1;
  /// The PEs are threads of one CPU, alike: `auto` splits equally.
  bool alike = false;
  /// Each PE runs its iterations as one range, in the time its FPM gives
  /// for their sum: a cluster's node, whose FPM is already its own
  /// planner's split of any share (cluster/node_model.hpp). Packages timed
  /// one after another are then a model of something such a PE never does:
  /// `auto` gives each one share, by geometric bisection of the FPMs.
  bool wholeShares = false;
  /// The stored FPMs of every PE taking part, in `pes` order (the CPU's
  /// scaled to its team); empty when some PE has none.
  std::span<const Profile> models;
  /// Partial FPMs refined over earlier calls (balance/), when ready.
  const LoadBalancer *partial = nullptr;
  /// Loop name for the profiles of a split by speeds (messages only).
  std::string_view loop = "loop";
};

struct Plan {
  enum class Kind { Static, Dynamic };
  Kind kind = Kind::Static;
  /// The partitioner of a static plan.
  const Partitioner *partitioner = nullptr;
  /// Iterations per granule: packages and chunks are whole granules but
  /// the last, which ends at the trip count.
  std::int64_t granule = 1;
  /// Per PE of the request, in order: its static packages, or its stage-1
  /// share (one range at most).
  std::vector<std::vector<Range>> packages;
  /// Dynamic: the scheme over the granules, for all the PEs' workers (the
  /// CPU team draws from a ChunkGenerator of it); co-execution queues the
  /// stage-1 shares above and hands out [dynamicBegin, tripCount) by it.
  ScheduleSpec dynamic;
  std::int64_t dynamicBegin = 0;
  /// Why, for FPM_VERBOSE: "cpm on measured speeds", "equal: the CPU
  /// threads are alike"; empty when the schedule was taken as written.
  std::string reason;
  /// Split with stored FPMs or partial FPMs rather than speeds.
  bool modelled = false;
  bool onPartialModels = false;

  /// The iterations planned for PE `pe` (its packages or stage-1 share).
  std::int64_t planned(std::size_t pe) const;
};

/// Plans `request`. Throws std::invalid_argument for a request the
/// schedule cannot serve, std::logic_error when a partitioner loses or
/// repeats iterations.
Plan makePlan(const PlanRequest &request);

/// Inside a data region an iteration that changes PEs (or ranks) moves
/// what it wrote: a split that repeats should move as few as it must.
/// Returns the split `previous` (one range per PE, in PE order, tiling
/// [0, T)) with each cut moved only as far as needed for every PE's time,
/// `time(pe, iterations)` (rising with the iterations), to stay within
/// `tolerance` (a fraction) of `planned`'s makespan; cuts at multiples of
/// `granule`. Nothing when the two splits are of different iterations or
/// PEs, or no such split exists.
inline constexpr double KeptSplitTolerance = 0.03;
std::optional<std::vector<Range>>
keepCuts(std::span<const Range> planned, std::span<const Range> previous,
         const std::function<double(std::size_t, std::int64_t)> &time,
         std::int64_t granule = 1, double tolerance = KeptSplitTolerance);

/// Whether split `planned` (a range per PE, as `last`) finishes sooner
/// than split `last`, by `time(pe, iterations)`, once each PE has got the
/// data of the rows it gains (`moveCost(pe, range)`, seconds). Inside a
/// data region the kept split moves only then: the first call that moves
/// rows pays for it, and a gain smaller than the move, or the swing of a
/// model that one call's noise moves, is not worth the bytes.
bool movesPay(std::span<const Range> planned, std::span<const Range> last,
              const std::function<double(std::size_t, std::int64_t)> &time,
              const std::function<double(std::size_t, Range)> &moveCost);

/// The granule a static partitioner works in for `tripCount` iterations:
/// the grain, or coarser so that it sees at most StaticUnits granules
/// (ExactSolverUnits for the exact solvers), which it splits in
/// milliseconds.
std::int64_t staticGranule(const Partitioner &partitioner,
                           std::int64_t tripCount, std::int64_t grain);

} // namespace fpm
