//===- store_fuzzer.cpp - The profile store on any names and timings ------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What a program's run hands the store, from any bytes: a loop name, a PE
// id and description, timings recorded into Samples (any size, any
// seconds) and summarised into points, merged twice into a store in a
// folder of its own. A merge either throws ProfileError or
// std::invalid_argument, or writes a file that load() reads back as that
// loop's profile on that PE, with the points mergeProfiles() made: what
// the store writes, its reader accepts.
//
//===----------------------------------------------------------------------===//

#include "fuzz_check.hpp"

#include "model/profile.hpp"
#include "store/profile_store.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

using namespace fpm;
namespace fs = std::filesystem;

namespace {

/// A folder of this process's own, made once.
const fs::path &folder() {
  static const fs::path dir = [] {
    std::string name = (fs::temp_directory_path() / "fpm-store-fuzz-XXXXXX");
    if (!::mkdtemp(name.data()))
      std::abort();
    return fs::path(name);
  }();
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  FuzzedDataProvider input(data, size);
  const std::string loop = input.ConsumeRandomLengthString(64);
  const std::string device = input.ConsumeRandomLengthString(16);
  const std::string description = input.ConsumeRandomLengthString(16);
  Samples samples(input.ConsumeIntegral<std::int64_t>(),
                  input.ConsumeIntegralInRange<std::size_t>(0, 8));
  const int count = input.ConsumeIntegralInRange(0, 16);
  for (int i = 0; i < count; ++i)
    samples.add(input.ConsumeIntegral<std::int64_t>(),
                input.ConsumeFloatingPoint<double>());
  std::vector<ProfilePoint> points = samples.summarize();
  // And points as a buggy or hostile caller could make them.
  const int raw = input.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < raw; ++i) {
    ProfilePoint point;
    point.size = input.ConsumeIntegral<std::int64_t>();
    point.time = input.ConsumeFloatingPoint<double>();
    if (input.ConsumeBool())
      point.reps = input.ConsumeIntegral<std::int64_t>();
    if (input.ConsumeBool())
      point.ci = input.ConsumeFloatingPoint<double>();
    points.push_back(point);
  }

  ProfileStore store(folder());
  const fs::path file = profilePath(folder(), loop, device);
  FUZZ_CHECK(file.parent_path() == folder(),
             "the file of a loop is outside the store: " + file.string());
  std::optional<Profile> expected;
  // No points: merge() writes nothing.
  for (int round = 0; round < 2 && !points.empty(); ++round) {
    try {
      store.merge(loop, device, description, points);
    } catch (const ProfileError &error) {
      const std::string message = error.what();
      FUZZ_CHECK(message.size() <= fuzz::MaxMessageBytes + file.string().size(),
                 message);
      break;
    } catch (const std::invalid_argument &) {
      break;
    }
    if (!expected) {
      expected.emplace();
      expected->kernel = loop;
      expected->device = device;
    }
    expected = mergeProfiles(*expected, points);
    std::optional<Profile> loaded = store.load(loop, device);
    FUZZ_CHECK(loaded.has_value(), "what merge wrote, load refused");
    FUZZ_CHECK(loaded->kernel == storedText(loop) &&
                   loaded->device == storedText(device),
               "the names changed on the way back");
    FUZZ_CHECK(loaded->points.size() == expected->points.size(),
               "the points changed on the way back");
  }
  std::error_code ignored;
  fs::remove(file, ignored);
  fs::remove(fs::path(file) += ".lock", ignored);
  fs::remove(fs::path(file) += ".corrupt", ignored);
  return 0;
}
