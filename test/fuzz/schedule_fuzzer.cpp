//===- schedule_fuzzer.cpp - Schedule strings and device lists ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The two strings a user hands every loop, through the pragma or
// FPM_SCHEDULE and FPM_DEVICES, on any bytes: parseLoopSchedule() either
// throws std::invalid_argument or returns a schedule whose canonical
// spelling parses back to itself; parseDevices() either throws
// std::invalid_argument or returns a selection of something. The first
// byte picks the parser.
//
//===----------------------------------------------------------------------===//

#include "fuzz_check.hpp"

#include "exec/devices.hpp"
#include "exec/schedule_string.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace fpm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size == 0)
    return 0;
  const std::string_view text(reinterpret_cast<const char *>(data) + 1,
                              size - 1);
  if (data[0] & 1) {
    DeviceSelection devices;
    try {
      devices = parseDevices(text, "FPM_DEVICES");
    } catch (const std::invalid_argument &) {
      return 0;
    }
    FUZZ_CHECK(devices.cpu || devices.wantsDevices(), "no PE selected");
    return 0;
  }
  LoopSchedule schedule;
  try {
    schedule = parseLoopSchedule(text);
  } catch (const std::invalid_argument &) {
    return 0;
  }
  FUZZ_CHECK(!schedule.text.empty(), "no canonical spelling");
  // "auto" leaves the choice to the planner, with no partitioner yet.
  FUZZ_CHECK(schedule.automatic ||
                 (schedule.kind == LoopSchedule::Kind::Static) ==
                     (schedule.partitioner != nullptr),
             "a static schedule without a partitioner, or the reverse");
  LoopSchedule again;
  try {
    again = parseLoopSchedule(schedule.text);
  } catch (const std::invalid_argument &error) {
    FUZZ_CHECK(false, "the canonical spelling '" + schedule.text +
                          "' does not parse: " + error.what());
  }
  FUZZ_CHECK(again.text == schedule.text,
             "'" + schedule.text + "' reads back as '" + again.text + "'");
  return 0;
}
