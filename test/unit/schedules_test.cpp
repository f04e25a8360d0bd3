//===- schedules_test.cpp - The table of schedules and its readers --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// include/fpm/schedules.def is the one table of schedule names: every line
// is what the runtime's readers make of it (the registry, parseScheme(),
// schedule strings in both spellings, with and without the argument), and
// readScheduleArgument(), the rule the pragma shares, draws its lines where
// the spec does. pragma_parser_test.cpp checks the pragma against the same
// table; lit's extension/added-partitioner.test adds a line.
//
//===----------------------------------------------------------------------===//

#include "exec/schedule_string.hpp"
#include "fpm/schedules.hpp"
#include "partition/partition.hpp"
#include "schedule/schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {
namespace {

struct Line {
  std::string_view name;
  ScheduleKind kind;
  ScheduleArgument argument;
  std::string_view summary;
};

constexpr Line Table[] = {
#define FPM_SCHEDULE(Name, Kind, Argument, Summary)                            \
  Line{Name, ScheduleKind::Kind, ScheduleArgument::Argument, Summary},
#include "fpm/schedules.def"
};

std::vector<Line> linesOf(ScheduleKind kind) {
  std::vector<Line> lines;
  for (const Line &line : Table)
    if (line.kind == kind)
      lines.push_back(line);
  return lines;
}

TEST(ScheduleTable, NamesAreLowerCaseWordsJoinedByHyphens) {
  std::set<std::string> names;
  for (const Line &line : Table) {
    SCOPED_TRACE(line.name);
    ASSERT_FALSE(line.name.empty());
    EXPECT_NE(line.name.front(), '-');
    EXPECT_NE(line.name.back(), '-');
    for (char c : line.name)
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')
          << "'" << c << "'";
    // Unique in either spelling.
    EXPECT_TRUE(names.insert(pragmaSpelling(line.name)).second);
    // One line of --help.
    EXPECT_FALSE(line.summary.empty());
    EXPECT_LE(line.summary.size(), 60u);
  }
  EXPECT_EQ(linesOf(ScheduleKind::Auto).size(), 1u);
}

TEST(ScheduleTable, TheRegistryIsThePartitionerLines) {
  const std::vector<Line> lines = linesOf(ScheduleKind::Static);
  ASSERT_EQ(partitioners().size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(partitioners()[i].name, lines[i].name);
    EXPECT_EQ(partitioners()[i].summary, lines[i].summary);
    EXPECT_EQ(findPartitioner(lines[i].name), &partitioners()[i]);
  }
}

TEST(ScheduleTable, TheSchemesAreTheSelfSchedulingLines) {
  const std::vector<Line> lines = linesOf(ScheduleKind::SelfScheduling);
  std::set<Scheme> schemes;
  for (const Line &line : lines) {
    SCOPED_TRACE(line.name);
    const std::optional<Scheme> scheme = parseScheme(line.name);
    ASSERT_TRUE(scheme);
    EXPECT_EQ(schemeName(*scheme), line.name);
    schemes.insert(*scheme);
  }
  EXPECT_EQ(schemes.size(), lines.size());
  for (Scheme scheme :
       {Scheme::Pss, Scheme::Css, Scheme::Gss, Scheme::Fss, Scheme::Tss})
    EXPECT_TRUE(schemes.count(scheme)) << schemeName(scheme);
}

TEST(ScheduleTable, EveryScheduleStringOfTheTableParses) {
  for (const Line &line : Table) {
    for (const std::string &name :
         {std::string(line.name), pragmaSpelling(line.name)}) {
      SCOPED_TRACE(name);
      const bool required = argumentRequired(line.argument);
      const std::string text = name + (required ? "(4)" : "");
      if (required)
        EXPECT_THROW(parseLoopSchedule(name), std::invalid_argument);
      const LoopSchedule schedule = parseLoopSchedule(text);
      switch (line.kind) {
      case ScheduleKind::Static:
        EXPECT_EQ(schedule.kind, LoopSchedule::Kind::Static);
        EXPECT_FALSE(schedule.automatic);
        EXPECT_EQ(schedule.partitioner, findPartitioner(line.name));
        EXPECT_EQ(schedule.text, line.name);
        break;
      case ScheduleKind::SelfScheduling:
        EXPECT_EQ(schedule.kind, LoopSchedule::Kind::Dynamic);
        EXPECT_EQ(schedule.scheme, parseScheme(line.name));
        EXPECT_EQ(schedule.text,
                  std::string(line.name) + (required ? "(4)" : ""));
        break;
      case ScheduleKind::Auto:
        EXPECT_TRUE(schedule.automatic);
        EXPECT_EQ(schedule.partitioner, nullptr); // the planner chooses
        break;
      }
      // The argument, where it takes one, in both forms.
      for (const std::string &form : {name + ", 3", name + "(3)"}) {
        SCOPED_TRACE(form);
        if (line.argument == ScheduleArgument::NoArgument) {
          EXPECT_THROW(parseLoopSchedule(form), std::invalid_argument);
          continue;
        }
        const LoopSchedule with = parseLoopSchedule(form);
        if (line.argument == ScheduleArgument::OptionalBacktrack)
          EXPECT_EQ(with.backtrack, 3);
        else if (line.argument == ScheduleArgument::RequiredChunk)
          EXPECT_EQ(with.chunk, 3);
        else
          EXPECT_EQ(with.alpha, 3.0);
      }
    }
  }
}

TEST(ScheduleTable, UnknownNamesAreRefusedWithTheTableInTheMessage) {
  for (const char *text : {"fast", "GSS", "wdah--heuristic", "first-only"}) {
    SCOPED_TRACE(text);
    try {
      parseLoopSchedule(text);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument &error) {
      const std::string message = error.what();
      for (const Line &line : Table)
        EXPECT_NE(message.find(pragmaSpelling(line.name) +
                               std::string(argumentSyntax(line.argument))),
                  std::string::npos)
            << message;
    }
  }
}

/// readScheduleArgument()'s verdict: "" or the problem.
std::string read(ScheduleArgument argument, std::string_view text) {
  ScheduleArgumentValue value;
  return readScheduleArgument("s", argument, text, value);
}

TEST(ScheduleArgumentRule, DrawsTheLinesTheSpecDraws) {
  using enum ScheduleArgument;
  for (const char *good : {"1", "100", "100000"})
    EXPECT_EQ(read(OptionalBacktrack, good), "") << good;
  for (const char *bad : {"0", "-1", "100001", "2.5", "0x10", "1e3", "", "b"})
    EXPECT_NE(read(OptionalBacktrack, bad), "") << bad;
  EXPECT_EQ(read(OptionalBacktrack, "100001"),
            "s's backtrack budget 100001 is too large: at most 100000");

  for (const char *good : {"1", "4", "9223372036854775807"})
    EXPECT_EQ(read(RequiredChunk, good), "") << good;
  for (const char *bad : {"0", "-4", "4.0", "0x10", "4u", ""})
    EXPECT_EQ(read(RequiredChunk, bad),
              "s's chunk size k must be an integer >= 1, got '" +
                  std::string(bad) + "'")
        << bad;
  EXPECT_EQ(read(RequiredChunk, "99999999999999999999"),
            "s's chunk size k '99999999999999999999' is too large");

  for (const char *good : {"100", "0.5", "80", "1e2", "50.5"})
    EXPECT_EQ(read(OptionalAlpha, good), "") << good;
  for (const char *bad : {"0", "-5", "100.5", "101", "nan", "inf", "", "a"})
    EXPECT_NE(read(OptionalAlpha, bad), "") << bad;

  EXPECT_EQ(read(NoArgument, "3"), "'s' takes no argument");

  ScheduleArgumentValue value;
  EXPECT_EQ(readScheduleArgument("gss", OptionalAlpha, "12.5", value), "");
  EXPECT_EQ(value.number, 12.5);
  EXPECT_EQ(readScheduleArgument("css", RequiredChunk, "7", value), "");
  EXPECT_EQ(value.integer, 7);
}

TEST(ScheduleArgumentRule, OnlyTheChunkIsRequired) {
  using enum ScheduleArgument;
  EXPECT_EQ(missingArgument("css", RequiredChunk),
            "css needs its chunk size: css(k)");
  for (ScheduleArgument argument :
       {NoArgument, OptionalBacktrack, OptionalAlpha}) {
    EXPECT_FALSE(argumentRequired(argument));
    EXPECT_EQ(missingArgument("x", argument), "");
  }
  EXPECT_TRUE(argumentRequired(RequiredChunk));
}

} // namespace
} // namespace fpm
