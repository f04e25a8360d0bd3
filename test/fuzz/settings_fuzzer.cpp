//===- settings_fuzzer.cpp - FPM_BENCHMARK and the FPM_* readers ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The settings a user writes in the environment, on any bytes (up to the
// first NUL, as an environment variable can hold): FPM_INJECT_FAULT's list
// (parseInjectedFaults()) throws std::invalid_argument of bounded length or
// names only known PEs;
// BenchmarkSettings::parse() throws std::invalid_argument or returns
// settings within their documented ranges whose format() parses back to
// the same settings; integerFromEnvironment() and flagFromEnvironment()
// throw std::invalid_argument naming the variable, with a message of
// bounded length, or return a value in range. The first byte picks the
// reader and the bounds of the integer.
//
//===----------------------------------------------------------------------===//

#include "fuzz_check.hpp"

#include "device/faults.hpp"
#include "profiling/benchmark.hpp"
#include "support/environment.hpp"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace fpm;

namespace {

void checkBenchmark(const std::string &text) {
  BenchmarkSettings settings;
  try {
    settings = BenchmarkSettings::parse(text);
  } catch (const std::invalid_argument &error) {
    FUZZ_CHECK(std::strlen(error.what()) <= fuzz::MaxMessageBytes,
               "a message of " + std::to_string(std::strlen(error.what())) +
                   " bytes");
    return;
  }
  FUZZ_CHECK(settings.points >= 1 && settings.minReps >= 1 &&
                 settings.minReps <= settings.maxReps && settings.error > 0 &&
                 settings.error < 1 && settings.seconds > 0 &&
                 settings.budget >= 0,
             "settings out of range: " + settings.format());
  const std::string written = settings.format();
  BenchmarkSettings again;
  try {
    again = BenchmarkSettings::parse(written);
  } catch (const std::invalid_argument &error) {
    FUZZ_CHECK(false, "format() wrote '" + written +
                          "', which parse() refuses: " + error.what());
  }
  FUZZ_CHECK(
      again.points == settings.points && again.minReps == settings.minReps &&
          again.maxReps == settings.maxReps && again.error == settings.error &&
          again.seconds == settings.seconds &&
          again.budget == settings.budget && again.fresh == settings.fresh,
      "'" + text + "' was written as '" + written + "', which reads back as '" +
          again.format() + "'");
}

void checkFaults(const std::string &text) {
  static const std::string Known[] = {"opencl0", "opencl1"};
  std::vector<InjectedFault> faults;
  try {
    faults = parseInjectedFaults(text, Known);
  } catch (const std::invalid_argument &error) {
    const std::string message = error.what();
    FUZZ_CHECK(message.starts_with("FPM_INJECT_FAULT"), message);
    FUZZ_CHECK(message.size() <= fuzz::MaxMessageBytes,
               "a message of " + std::to_string(message.size()) + " bytes");
    return;
  }
  for (const InjectedFault &fault : faults)
    FUZZ_CHECK((fault.pe == Known[0] || fault.pe == Known[1]) &&
                   fault.chunk >= 0 && !(fault.atWait && fault.chunk == 0),
               "a fault no PE can take: " + fault.pe + ":" +
                   std::to_string(fault.chunk));
}

void checkEnvironment(unsigned selector, const std::string &text) {
  static const char *const Name = "FPM_FUZZ_SETTING";
  if (::setenv(Name, text.c_str(), 1) != 0)
    std::abort();
  auto checkMessage = [&](const std::invalid_argument &error) {
    const std::string message = error.what();
    FUZZ_CHECK(message.starts_with(Name), message);
    FUZZ_CHECK(message.size() <= fuzz::MaxMessageBytes,
               "a message of " + std::to_string(message.size()) + " bytes");
  };
  if (selector & 2) {
    try {
      std::optional<bool> flag = flagFromEnvironment(Name);
      FUZZ_CHECK(flag.has_value() == !text.empty(), "set but not read");
    } catch (const std::invalid_argument &error) {
      checkMessage(error);
    }
    return;
  }
  static const long Bounds[][2] = {
      {0, 1}, {1, 4}, {1, 1 << 20}, {-5, 5}, {LONG_MIN, LONG_MAX}};
  const auto &bounds = Bounds[(selector >> 2) % 5];
  try {
    std::optional<long> value =
        integerFromEnvironment(Name, bounds[0], bounds[1]);
    FUZZ_CHECK(value.has_value() == !text.empty(), "set but not read");
    if (value)
      FUZZ_CHECK(*value >= bounds[0] && *value <= bounds[1],
                 "out of range: " + std::to_string(*value));
  } catch (const std::invalid_argument &error) {
    checkMessage(error);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size == 0)
    return 0;
  // An environment variable ends at its first NUL.
  const char *begin = reinterpret_cast<const char *>(data) + 1;
  const std::string text(begin, strnlen(begin, size - 1));
  if ((data[0] & 3) == 3)
    checkFaults(text);
  else if (data[0] & 1)
    checkBenchmark(text);
  else
    checkEnvironment(data[0], text);
  return 0;
}
