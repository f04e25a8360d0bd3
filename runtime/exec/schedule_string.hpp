//===- exec/schedule_string.hpp - Schedule strings -------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: parseLoopSchedule(), which reads a schedule as the
// pragma's `schedule(...)` clause spells it (docs/pragma.md), or as
// FPM_SCHEDULE and fpm_loop::schedule carry it, into the static partitioner
// or self-scheduling scheme the executor runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "partition/partition.hpp"
#include "schedule/schedule.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fpm {

/// What parseLoopSchedule() throws: a schedule string that does not parse.
/// Its own type, so that a caller can say where the string came from
/// (FPM_SCHEDULE) without claiming other errors for it.
struct ScheduleError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// A parsed schedule string.
struct LoopSchedule {
  enum class Kind { Static, Dynamic };
  Kind kind = Kind::Static;
  /// The canonical spelling, for messages: "gss, 80", "css(4)", "auto".
  std::string text;
  /// "auto": the planner chooses (exec/plan.hpp); `partitioner` is null.
  bool automatic = false;

  // Static: the registry's partitioner and WDAH's backtrack budget.
  const Partitioner *partitioner = nullptr;
  int backtrack = 100;

  // Dynamic: the scheme, CSS's chunk k, and the two-stage percentage.
  Scheme scheme = Scheme::Gss;
  std::int64_t chunk = 1;
  std::optional<double> alpha;
};

/// Parses `text`: a name, then optionally one argument as `name(arg)` or
/// `name, arg`, with any whitespace around the parts. Empty (or blank) text
/// is "auto". The names and their arguments are those of
/// fpm/schedules.def, each '-' of a name also written '_' (wdah_heuristic or
/// wdah-heuristic): equal, cpm, geometric, numerical, hpopta, wdah[, B],
/// wdah_heuristic, optimal, pss, css(k), gss[, alpha], fss[, alpha],
/// tss[, alpha], auto; an argument is read by readScheduleArgument()
/// (fpm/schedules.hpp: WDAH's backtrack is 1 .. MaxBacktrack = 100,000).
/// Throws ScheduleError whose what() names the string and the problem.
LoopSchedule parseLoopSchedule(std::string_view text);

} // namespace fpm
