//===- exec/schedule_string.cpp - The pragma's schedule as a string -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Names are matched exactly (lower case), as the rewriter checks them at
// compile time with the same list; only whitespace is forgiven, since
// FPM_SCHEDULE is typed by hand.
//
//===----------------------------------------------------------------------===//

#include "exec/schedule_string.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace fpm {
namespace {

constexpr std::string_view KnownNames =
    "auto, equal, cpm, geometric, numerical, hpopta, optimal, wdah[, B], "
    "wdah_heuristic, pss, css(k), gss[, alpha], fss[, alpha], tss[, alpha]";

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
  throw std::invalid_argument("invalid schedule \"" + std::string(text) +
                              "\": " + problem);
}

/// A whole-string integer >= 1.
std::int64_t positiveInteger(std::string_view whole, std::string_view arg,
                             std::string_view what) {
  std::int64_t value = 0;
  auto [end, error] =
      std::from_chars(arg.data(), arg.data() + arg.size(), value);
  if (error == std::errc::result_out_of_range)
    fail(whole, std::string(what) + " '" + std::string(arg) + "' is too large");
  if (error != std::errc() || end != arg.data() + arg.size() || value < 1)
    fail(whole, std::string(what) + " must be an integer >= 1, got '" +
                    std::string(arg) + "'");
  return value;
}

double percentage(std::string_view whole, std::string_view arg) {
  double value = 0;
  auto [end, error] =
      std::from_chars(arg.data(), arg.data() + arg.size(), value);
  if (error != std::errc() || end != arg.data() + arg.size() ||
      !(value > 0.0 && value <= 100.0))
    fail(whole, "alpha (the percentage handed out by weight first) must be "
                "a number in (0, 100], got '" +
                    std::string(arg) + "'");
  return value;
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
    fail(whole, "expected a schedule name, one of " + std::string(KnownNames));
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

  LoopSchedule schedule;
  auto noArgument = [&] {
    if (arg)
      fail(whole, "'" + std::string(name) + "' takes no argument");
  };

  if (std::optional<Scheme> scheme = parseScheme(name)) {
    schedule.kind = LoopSchedule::Kind::Dynamic;
    schedule.scheme = *scheme;
    schedule.text = std::string(name);
    if (*scheme == Scheme::Pss) {
      noArgument();
    } else if (*scheme == Scheme::Css) {
      if (!arg)
        fail(whole, "css needs its chunk size: css(k)");
      schedule.chunk = positiveInteger(whole, *arg, "css's chunk size k");
      schedule.text = "css(" + std::to_string(schedule.chunk) + ")";
    } else if (arg) {
      schedule.alpha = percentage(whole, *arg);
      schedule.text += ", " + std::string(*arg);
    }
    return schedule;
  }

  schedule.kind = LoopSchedule::Kind::Static;
  if (name == "auto") {
    noArgument();
    // No stored profiles yet (a later issue): equal is what the spec allows.
    schedule.automatic = true;
    schedule.partitioner = findPartitioner("equal");
    schedule.text = "auto";
    return schedule;
  }
  // The pragma spells it wdah_heuristic; the registry, wdah-heuristic.
  std::string registryName(name);
  std::replace(registryName.begin(), registryName.end(), '_', '-');
  schedule.partitioner = findPartitioner(registryName);
  if (!schedule.partitioner)
    fail(whole, "unknown schedule '" + std::string(name) +
                    "'; expected one of " + std::string(KnownNames));
  schedule.text = registryName;
  if (registryName == "wdah") {
    if (arg) {
      const std::int64_t budget =
          positiveInteger(whole, *arg, "wdah's backtrack budget");
      if (budget > MaxBacktrack)
        fail(whole, "wdah's backtrack budget " + std::to_string(budget) +
                        " is too large: at most " +
                        std::to_string(MaxBacktrack));
      schedule.backtrack = static_cast<int>(budget);
      schedule.text += ", " + std::to_string(budget);
    }
  } else {
    noArgument();
  }
  return schedule;
}

} // namespace fpm
