//===- exec/schedule_string.cpp - The pragma's schedule as a string -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The names and their arguments are fpm/schedules.def's, and an argument is
// read by readScheduleArgument() (fpm/schedules.hpp): the rewriter checks the
// pragma's schedule at compile time with the same table and the same rule.
// Names are matched exactly (lower case, '_' or '-'); only whitespace is
// forgiven, since FPM_SCHEDULE is typed by hand.
//
//===----------------------------------------------------------------------===//

#include "exec/schedule_string.hpp"

#include "fpm/schedules.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace fpm {
namespace {

/// One line of fpm/schedules.def.
struct Entry {
  std::string_view name;
  ScheduleKind kind;
  ScheduleArgument argument;
};

constexpr Entry Schedules[] = {
#define FPM_SCHEDULE(Name, Kind, Argument, Summary)                            \
  Entry{Name, ScheduleKind::Kind, ScheduleArgument::Argument},
#include "fpm/schedules.def"
};

/// Whether an argument of this kind means anything to a schedule of that
/// kind: LoopSchedule has a backtrack budget for partitioners, a chunk size
/// and an alpha for self-scheduling.
constexpr bool fits(const Entry &entry) {
  switch (entry.argument) {
  case ScheduleArgument::NoArgument:
    return true;
  case ScheduleArgument::OptionalBacktrack:
    return entry.kind == ScheduleKind::Static;
  case ScheduleArgument::RequiredChunk:
  case ScheduleArgument::OptionalAlpha:
    return entry.kind == ScheduleKind::SelfScheduling;
  }
  return false;
}

constexpr bool everyArgumentFits() {
  for (const Entry &entry : Schedules)
    if (!fits(entry))
      return false;
  return true;
}
static_assert(everyArgumentFits(),
              "fpm/schedules.def: a partitioner may take OptionalBacktrack, "
              "a self-scheduling scheme RequiredChunk or OptionalAlpha");

/// The schedules for messages, as the pragma writes them: "equal, ...,
/// wdah[, B], wdah_heuristic, ..., css(k), gss[, alpha], ..., auto".
std::string knownNames() {
  std::string out;
  for (const Entry &entry : Schedules)
    out += (out.empty() ? "" : ", ") + pragmaSpelling(entry.name) +
           std::string(argumentSyntax(entry.argument));
  return out;
}

const Entry *findSchedule(std::string_view name) {
  const std::string spelling = tableSpelling(name);
  for (const Entry &entry : Schedules)
    if (entry.name == spelling)
      return &entry;
  return nullptr;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back()))
    text.remove_suffix(1);
  return text;
}

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

[[noreturn]] void fail(std::string_view text, const std::string &problem) {
  throw ScheduleError("invalid schedule \"" + std::string(text) +
                      "\": " + problem);
}

} // namespace

LoopSchedule parseLoopSchedule(std::string_view whole) {
  std::string_view text = trim(whole);
  if (text.empty())
    text = "auto";

  // The name, then nothing, "(arg)" or ", arg".
  const auto nameEnd = static_cast<std::size_t>(
      std::find_if_not(text.begin(), text.end(), isNameChar) - text.begin());
  const std::string_view name = text.substr(0, nameEnd);
  std::string_view rest = trim(text.substr(nameEnd));
  std::optional<std::string_view> arg;
  if (name.empty())
    fail(whole, "expected a schedule name, one of " + knownNames());
  if (!rest.empty()) {
    if (rest.front() == '(') {
      const std::size_t close = rest.find(')');
      if (close == std::string_view::npos)
        fail(whole, "missing ')'");
      if (!trim(rest.substr(close + 1)).empty())
        fail(whole, "unexpected '" + std::string(trim(rest.substr(close + 1))) +
                        "' after ')'");
      arg = trim(rest.substr(1, close - 1));
    } else if (rest.front() == ',') {
      arg = trim(rest.substr(1));
    } else {
      fail(whole, "unexpected '" + std::string(rest) + "' after '" +
                      std::string(name) + "'");
    }
    if (arg->empty())
      fail(whole, "missing argument after '" + std::string(name) + "'");
    if (arg->find_first_of(",()") != std::string_view::npos)
      fail(whole, "'" + std::string(name) + "' takes at most one argument");
  }

  const Entry *entry = findSchedule(name);
  if (!entry)
    fail(whole, "unknown schedule '" + std::string(name) +
                    "'; expected one of " + knownNames());
  ScheduleArgumentValue value;
  if (arg) {
    if (std::string problem =
            readScheduleArgument(name, entry->argument, *arg, value);
        !problem.empty())
      fail(whole, problem);
  } else if (std::string problem = missingArgument(name, entry->argument);
             !problem.empty()) {
    fail(whole, problem);
  }

  LoopSchedule schedule;
  switch (entry->kind) {
  case ScheduleKind::SelfScheduling: {
    schedule.kind = LoopSchedule::Kind::Dynamic;
    const std::optional<Scheme> scheme = parseScheme(entry->name);
    if (!scheme) // schedule.cpp reads the same table.
      throw std::logic_error("no self-scheduling scheme '" +
                             std::string(entry->name) + "'");
    schedule.scheme = *scheme;
    schedule.text = std::string(entry->name);
    if (entry->argument == ScheduleArgument::RequiredChunk) {
      schedule.chunk = value.integer;
      schedule.text += "(" + std::to_string(schedule.chunk) + ")";
    } else if (arg) {
      schedule.alpha = value.number;
      schedule.text += ", " + std::string(*arg);
    }
    return schedule;
  }
  case ScheduleKind::Auto:
    // The planner chooses, by what is known of the PEs (exec/plan.hpp).
    schedule.automatic = true;
    schedule.text = std::string(entry->name);
    return schedule;
  case ScheduleKind::Static:
    break;
  }
  schedule.kind = LoopSchedule::Kind::Static;
  schedule.partitioner = findPartitioner(entry->name);
  if (!schedule.partitioner) // registry.cpp reads the same table.
    throw std::logic_error("no partitioner '" + std::string(entry->name) +
                           "' in the registry");
  schedule.text = std::string(entry->name);
  if (arg) { // OptionalBacktrack
    schedule.backtrack = static_cast<int>(value.integer);
    schedule.text += ", " + std::to_string(value.integer);
  }
  return schedule;
}

} // namespace fpm
