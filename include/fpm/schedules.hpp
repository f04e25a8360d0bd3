//===- fpm/schedules.hpp - The words of schedules.def, one rule -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What fpm/schedules.def's columns say (the enumerators its lines name), and
// the one rule of a schedule's argument: readScheduleArgument(), which the
// runtime applies to schedule strings (FPM_SCHEDULE, fpm_loop::schedule) and
// the rewriter to the pragma's `schedule(...)` clause at compile time, so
// that a schedule the rewriter accepts is one the runtime runs.
//
// Header-only and dependency-free: the rewriter (lib/) does not link the
// runtime. Not installed: the schedules a user writes are documented in
// fpm.h and docs/pragma.md.
//
//===----------------------------------------------------------------------===//
#ifndef FPM_SCHEDULES_HPP
#define FPM_SCHEDULES_HPP

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace fpm {

/// The largest backtrack budget WDAH takes. Each unit of the budget is one
/// return from the search's recursion, about a microsecond or two (up to
/// 20 us on a loaded machine): 100,000 is at most a few seconds, as the
/// exact solvers' granule cap is, where B = 10^7 ran for minutes.
inline constexpr int MaxBacktrack = 100'000;

/// The Kind column: what a schedule is.
enum class ScheduleKind {
  /// A partitioner of the registry: the PEs' FPMs give one split before the
  /// loop runs (FPM_PARTITIONER lines).
  Static,
  /// Chunks handed out while the loop runs (FPM_SELF_SCHEDULE lines).
  SelfScheduling,
  /// The runtime chooses.
  Auto,
};

/// The Argument column: the one argument a schedule string may give after
/// the name, and its rule (readScheduleArgument()).
enum class ScheduleArgument {
  NoArgument,
  /// `name, B`: WDAH's backtrack budget, an integer in [1, MaxBacktrack];
  /// 100 without it. For partitioners.
  OptionalBacktrack,
  /// `name(k)`: the chunk size, an integer >= 1. For self-scheduling.
  RequiredChunk,
  /// `name, a`: the two-stage schemes' percentage handed out by weight
  /// first (the self-scheduling thesis, 3.2), a number in (0, 100]; the plain
  /// scheme without it. For self-scheduling.
  OptionalAlpha,
};

/// The Shape column of a partitioner: what its Distribution looks like.
enum class PartitionShape {
  /// One contiguous share (one package) per PE.
  OneShare,
  /// Any number of packages per PE.
  Packages,
};

/// The Cost column of a partitioner: how its work grows, and so how many
/// granules N/G it takes (partition/registry.cpp holds the numbers).
enum class PartitionCost {
  /// No limit on N/G.
  Fast,
  /// An exact solver, O(p (N/G)^2): it refuses more than a few ten
  /// thousand granules, and the runtime gives it fewer still.
  Exact,
  /// A search that makes a package of at least one granule per step
  /// (WDAH): it refuses more than about a million granules.
  Search,
};

/// Whether a schedule string must give the argument.
constexpr bool argumentRequired(ScheduleArgument argument) {
  return argument == ScheduleArgument::RequiredChunk;
}

/// How a schedule string writes the argument after the name, for lists of
/// the known schedules: "", "[, B]", "(k)" or "[, alpha]".
constexpr std::string_view argumentSyntax(ScheduleArgument argument) {
  switch (argument) {
  case ScheduleArgument::NoArgument:
    return "";
  case ScheduleArgument::OptionalBacktrack:
    return "[, B]";
  case ScheduleArgument::RequiredChunk:
    return "(k)";
  case ScheduleArgument::OptionalAlpha:
    return "[, alpha]";
  }
  return "";
}

/// A schedule's name as the pragma writes it: the pragma's schedule names
/// are C identifiers, so each '-' of the table's name is a '_'
/// ("wdah-heuristic" is `wdah_heuristic`).
inline std::string pragmaSpelling(std::string_view name) {
  std::string spelling(name);
  for (char &c : spelling)
    if (c == '-')
      c = '_';
  return spelling;
}

/// The table's name for a name as a schedule string writes it, in either
/// spelling: each '_' is a '-' (table names have no '_').
inline std::string tableSpelling(std::string_view name) {
  std::string spelling(name);
  for (char &c : spelling)
    if (c == '_')
      c = '-';
  return spelling;
}

/// What readScheduleArgument() read.
struct ScheduleArgumentValue {
  std::int64_t integer = 0; ///< the backtrack budget or the chunk size
  double number = 0;        ///< the percentage alpha
};

/// Reads `text`, the argument given to the schedule `name` (as written, for
/// messages) whose Argument column is `argument`: the whole text, without
/// the spaces around it. Returns an empty string and sets `value` when it
/// is valid; else the problem, worded for a message that names the
/// schedule ("wdah's backtrack budget must be an integer >= 1, got '0'").
inline std::string readScheduleArgument(std::string_view name,
                                        ScheduleArgument argument,
                                        std::string_view text,
                                        ScheduleArgumentValue &value) {
  const std::string quoted = "'" + std::string(text) + "'";
  // A whole-text integer >= 1, as std::from_chars reads it (decimal).
  auto positive = [&](const std::string &what) -> std::string {
    std::int64_t integer = 0;
    auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), integer);
    if (error == std::errc::result_out_of_range)
      return what + " " + quoted + " is too large";
    if (error != std::errc() || end != text.data() + text.size() || integer < 1)
      return what + " must be an integer >= 1, got " + quoted;
    value.integer = integer;
    return "";
  };
  switch (argument) {
  case ScheduleArgument::NoArgument:
    break;
  case ScheduleArgument::OptionalBacktrack: {
    const std::string what = std::string(name) + "'s backtrack budget";
    if (std::string problem = positive(what); !problem.empty())
      return problem;
    if (value.integer > MaxBacktrack)
      return what + " " + std::to_string(value.integer) +
             " is too large: at most " + std::to_string(MaxBacktrack);
    return "";
  }
  case ScheduleArgument::RequiredChunk:
    return positive(std::string(name) + "'s chunk size k");
  case ScheduleArgument::OptionalAlpha: {
    double number = 0;
    auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size() ||
        !(number > 0.0 && number <= 100.0))
      return "alpha (the percentage handed out by weight first) must be a "
             "number in (0, 100], got " +
             quoted;
    value.number = number;
    return "";
  }
  }
  return "'" + std::string(name) + "' takes no argument";
}

/// The problem with a schedule string that leaves out the argument of
/// `name` (as written) whose Argument column is `argument`, or an empty
/// string when it may.
inline std::string missingArgument(std::string_view name,
                                   ScheduleArgument argument) {
  if (argument == ScheduleArgument::RequiredChunk)
    return std::string(name) + " needs its chunk size: " + std::string(name) +
           "(k)";
  return "";
}

} // namespace fpm

#endif // FPM_SCHEDULES_HPP
