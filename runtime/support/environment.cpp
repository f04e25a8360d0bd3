//===- support/environment.cpp - FPM_* variables, read one way ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "support/environment.hpp"
#include "support/text.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fpm {

const char *textFromEnvironment(const char *name) {
  const char *text = std::getenv(name);
  return text && *text ? text : nullptr;
}

std::optional<long> integerFromEnvironment(const char *name, long low,
                                           long high) {
  const char *text = textFromEnvironment(name);
  if (!text)
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || errno != 0 || value < low || value > high)
    throw std::invalid_argument(std::string(name) + " \"" + excerpt(text) +
                                "\": expected an integer from " +
                                std::to_string(low) + " to " +
                                std::to_string(high));
  return value;
}

std::optional<bool> flagFromEnvironment(const char *name) {
  const char *text = textFromEnvironment(name);
  if (!text)
    return std::nullopt;
  std::string lower(text);
  for (char &c : lower)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  for (std::string_view on : {"1", "yes", "true", "on"})
    if (lower == on)
      return true;
  for (std::string_view off : {"0", "no", "false", "off"})
    if (lower == off)
      return false;
  throw std::invalid_argument(std::string(name) + " \"" + excerpt(text) +
                              "\": expected 1, yes, true or on, or 0, no, "
                              "false or off");
}

LoopEnvironment readLoopEnvironment() {
  auto text = [](const char *name) {
    const char *value = textFromEnvironment(name);
    return value ? std::string_view(value) : std::string_view();
  };
  LoopEnvironment environment;
  environment.schedule = text("FPM_SCHEDULE");
  environment.devices = text("FPM_DEVICES");
  environment.verbose = flagFromEnvironment("FPM_VERBOSE").value_or(false);
  environment.steal = flagFromEnvironment("FPM_STEAL");
  environment.benchmark = text("FPM_BENCHMARK");
  environment.checkData = flagFromEnvironment("FPM_CHECK_DATA").value_or(false);
  return environment;
}

DeviceEnvironment readDeviceEnvironment() {
  DeviceEnvironment environment;
  if (const char *faults = textFromEnvironment("FPM_INJECT_FAULT"))
    environment.injectFault = faults;
  return environment;
}

MpiEnvironment readMpiEnvironment() {
  MpiEnvironment environment;
  environment.allStdout =
      flagFromEnvironment("FPM_MPI_ALL_STDOUT").value_or(false);
  if (const char *slow = textFromEnvironment("FPM_TEST_SLOW_RANK")) {
    const std::string text(slow);
    const std::size_t colon = text.find(':');
    char *end = nullptr;
    errno = 0;
    MpiEnvironment::SlowRank rank;
    bool good = colon != std::string::npos && colon > 0;
    if (good) {
      rank.rank = std::strtol(text.c_str(), &end, 10);
      good = errno == 0 && end == text.c_str() + colon && rank.rank >= 0;
    }
    if (good) {
      const char *factor = text.c_str() + colon + 1;
      rank.factor = std::strtod(factor, &end);
      good = errno == 0 && end != factor && *end == '\0' && rank.factor >= 1 &&
             rank.factor <= 1000;
    }
    if (!good)
      throw std::invalid_argument(
          "FPM_TEST_SLOW_RANK: expected RANK:FACTOR with a rank >= 0 and a "
          "factor in [1, 1000], got '" +
          text + "'");
    environment.slowRank = rank;
  }
  // Up to a week: a job whose ranks reach a loop further apart than that
  // is waiting on something else.
  if (const std::optional<long> seconds =
          integerFromEnvironment("FPM_MPI_TIMEOUT", 1, 7 * 24 * 3600))
    environment.timeoutSeconds = *seconds;
  return environment;
}

} // namespace fpm
