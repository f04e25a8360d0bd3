//===- benchmark_test.cpp - fpm-profile's benchmarks in the program -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FPM_BENCHMARK: the settings, the ladder of sizes, the sections a loop
// writes, and the benchmarks themselves through the C API, on the CPU team
// and on PoCL: the profiles they store, and the program's results, which
// must be exactly those of a run without benchmarks.
//
//===----------------------------------------------------------------------===//

#include "data/sections.hpp"
#include "fpm/fpm.h"
#include "profiling/benchmark.hpp"
#include "store/online_profiles.hpp"
#include "store/profile_store.hpp"
#include "support/environment.hpp"

#include "support/loops.hpp"
#include "support/scoped.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace fpm {
namespace {

using test::namedLoop;
using test::ScopedEnv;
using test::ScopedThreads;
using test::TempDir;
using test::withData;

//===----------------------------------------------------------------------===//
// Settings, sizes, sections.
//===----------------------------------------------------------------------===//

TEST(BenchmarkSettingsTest, ParsesEveryFieldAndDefaults) {
  const BenchmarkSettings defaults = BenchmarkSettings::parse("1");
  EXPECT_EQ(defaults.points, 10);
  EXPECT_DOUBLE_EQ(defaults.error, 0.05);
  EXPECT_FALSE(defaults.fresh);
  const BenchmarkSettings s = BenchmarkSettings::parse(
      "points=4,error=0.01,reps=2:9,time=0.5,budget=30,fresh=1");
  EXPECT_EQ(s.points, 4);
  EXPECT_DOUBLE_EQ(s.error, 0.01);
  EXPECT_EQ(s.minReps, 2);
  EXPECT_EQ(s.maxReps, 9);
  EXPECT_DOUBLE_EQ(s.seconds, 0.5);
  EXPECT_DOUBLE_EQ(s.budget, 30);
  EXPECT_TRUE(s.fresh);
  // format() is what parse() reads back.
  const BenchmarkSettings again = BenchmarkSettings::parse(s.format());
  EXPECT_EQ(again.points, s.points);
  EXPECT_EQ(again.maxReps, s.maxReps);
  EXPECT_DOUBLE_EQ(again.error, s.error);
  EXPECT_EQ(again.fresh, s.fresh);
}

TEST(BenchmarkSettingsTest, RefusesBadFieldsNamingThem) {
  const std::pair<const char *, const char *> bad[] = {
      {"points=0", "points"},  {"points=2.5", "points"}, {"error=0", "error"},
      {"error=1.5", "error"},  {"error=x", "error"},     {"reps=5:2", "reps"},
      {"reps=3", "reps"},      {"time=0", "time"},       {"time=-1", "time"},
      {"budget=-1", "budget"}, {"speed=3", "speed"},     {"points", "points"},
      {"points=3,,", "''"},    {"fresh=2", "fresh"},     {"fresh=", "fresh"}};
  for (const auto &[text, says] : bad) {
    try {
      BenchmarkSettings::parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos)
          << text << ": " << error.what();
    }
  }
}

// Found by test/fuzz/settings_fuzzer.cpp: format() wrote six digits, so
// fpm-profile handed its child FPM_BENCHMARK=error=0.123457 for 0.123456789.
TEST(BenchmarkSettingsTest, FormatReadsBackAsTheSameNumbers) {
  const BenchmarkSettings s = BenchmarkSettings::parse(
      "error=0.123456789,time=1e-7,budget=12345.678901234");
  const BenchmarkSettings again = BenchmarkSettings::parse(s.format());
  EXPECT_EQ(again.error, 0.123456789);
  EXPECT_EQ(again.seconds, 1e-7);
  EXPECT_EQ(again.budget, 12345.678901234);
}

TEST(BenchmarkSettingsTest, EchoesTheStartOfALongBadValue) {
  const std::string value(100000, '7');
  for (const std::string &text :
       {"points=" + value, "error=x" + value, "speed" + value + "=1",
        "reps=" + value, "fresh=" + value, value}) {
    try {
      BenchmarkSettings::parse(text);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument &error) {
      EXPECT_LT(std::string(error.what()).size(), 200u) << error.what();
    }
  }
}

TEST(BenchmarkSettingsTest, ComesFromTheEnvironment) {
  {
    ScopedEnv unset("FPM_BENCHMARK", std::nullopt);
    EXPECT_FALSE(benchmarkSettings(fpm::readLoopEnvironment().benchmark));
  }
  {
    ScopedEnv off("FPM_BENCHMARK", "0");
    EXPECT_FALSE(benchmarkSettings(fpm::readLoopEnvironment().benchmark));
  }
  {
    ScopedEnv on("FPM_BENCHMARK", "points=3");
    ASSERT_TRUE(benchmarkSettings(fpm::readLoopEnvironment().benchmark));
    EXPECT_EQ(benchmarkSettings(fpm::readLoopEnvironment().benchmark)->points,
              3);
  }
  {
    ScopedEnv bad("FPM_BENCHMARK", "points=x");
    testing::internal::CaptureStderr();
    EXPECT_FALSE(benchmarkSettings(fpm::readLoopEnvironment().benchmark));
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("FPM_BENCHMARK"), std::string::npos) << said;
  }
}

TEST(BenchmarkSizesTest, AscendingMultiplesOfTheGrainUpToTheTop) {
  for (std::int64_t grain : {1, 3, 64})
    for (std::int64_t top : {1, 7, 100, 4096, 1000003})
      for (int points : {1, 2, 5, 10, 40}) {
        const std::vector<std::int64_t> sizes =
            benchmarkSizes(grain, top, points);
        if (top < grain) {
          EXPECT_TRUE(sizes.empty());
          continue;
        }
        ASSERT_FALSE(sizes.empty());
        EXPECT_LE(static_cast<int>(sizes.size()), points);
        EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
        EXPECT_EQ(std::adjacent_find(sizes.begin(), sizes.end()), sizes.end());
        for (std::int64_t size : sizes) {
          EXPECT_EQ(size % grain, 0);
          EXPECT_GE(size, grain);
          EXPECT_LE(size, top);
        }
        // The largest a PE can get is always measured, and the smallest
        // too when there is room for two points.
        EXPECT_EQ(sizes.back(), top / grain * grain);
        if (points > 1 && top / grain > 1)
          EXPECT_EQ(sizes.front(), grain);
      }
  // Geometric: as many points below the middle granule as above.
  const std::vector<std::int64_t> sizes = benchmarkSizes(1, 1 << 20, 11);
  EXPECT_EQ(sizes[5], 1 << 10);
}

fpm_arg section(int kind, void *data, std::int64_t length, std::int64_t offset,
                std::int64_t stride, std::int64_t count) {
  return {kind, data, sizeof(int), length, offset, stride, count,
          0,    0,    nullptr,     0,      0,      0};
}

/// `arg` with elements of `size` bytes.
fpm_arg withSize(fpm_arg arg, std::size_t size) {
  arg.size = size;
  return arg;
}

using Extent = std::pair<std::int64_t, std::int64_t>;

TEST(LoopDataTest, ExtentsForEveryStrideSign) {
  int a[100];
  EXPECT_EQ(sectionExtent(section(FPM_ARG_OUT, a, 100, 3, 4, 2), 0, 5),
            Extent(3, 21));
  EXPECT_EQ(sectionExtent(section(FPM_ARG_OUT, a, 100, 90, -10, 5), 2, 4),
            Extent(60, 75));
  EXPECT_EQ(sectionExtent(section(FPM_ARG_IN, a, 100, 0, 0, 0), 0, 9),
            Extent(0, 100));
}

TEST(LoopDataTest, ChecksEverySectionOfTheLoop) {
  int a[100];
  const fpm_arg good[] = {section(FPM_ARG_IN, a, 100, 0, 0, 0),
                          section(FPM_ARG_OUT, a, 100, 99, -1, 1),
                          section(FPM_ARG_INOUT, a, 100, 0, 10, 10)};
  EXPECT_NO_THROW(checkLoopData(good, 10));
  struct Case {
    fpm_arg arg;
    const char *says;
  };
  const Case bad[] = {
      {section(FPM_ARG_SCALAR, a, 100, 0, 1, 1), "kind 0"},
      {section(FPM_ARG_LOCAL, a, 100, 0, 1, 1), "kind 4"},
      {section(FPM_ARG_IN, nullptr, 100, 0, 1, 1), "needs data"},
      {section(FPM_ARG_IN, a, 0, 0, 1, 1), "needs data"},
      {section(FPM_ARG_IN, a, 100, 0, 1, 0), "section of 0"},
      {section(FPM_ARG_OUT, a, 100, 0, 10, 11), "outside its 100"},
      {section(FPM_ARG_OUT, a, 100, 5, -1, 1), "outside its 100"},
      {section(FPM_ARG_OUT, a, 100, -1, 1, 1), "outside its 100"},
      {section(FPM_ARG_OUT, a, 100, 0, INT64_MAX / 4, 1), "outside"},
      // Its bytes past 2^63: accepted here once, and the saved sections
      // of fpm-profile's benchmark then copied a wrapped byte count.
      {withSize(section(FPM_ARG_OUT, a, 100, 0, 1, 1), std::size_t{1} << 60),
       "too large"},
  };
  for (const Case &c : bad) {
    const fpm_arg list[] = {good[0], c.arg};
    try {
      checkLoopData(list, 10);
      ADD_FAILURE() << c.says << ": accepted";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find("data 1"), std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find(c.says), std::string::npos)
          << error.what();
    }
  }
}

TEST(LoopDataTest, TheCApiRefusesABadListBeforeAnythingRuns) {
  std::atomic<int> calls{0};
  auto body = [](std::int64_t, std::int64_t, void *context) {
    ++*static_cast<std::atomic<int> *>(context);
    return 0;
  };
  int a[10];
  const fpm_arg outside = section(FPM_ARG_OUT, a, 10, 0, 1, 2);
  fpm_loop loop{};
  loop.data = &outside;
  loop.data_count = 1;
  EXPECT_EQ(fpm_parallel_for(&loop, 10, body, &calls),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("outside"), std::string::npos);
  loop.data = nullptr;
  EXPECT_EQ(fpm_parallel_for(&loop, 10, body, &calls),
            FPM_ERROR_INVALID_ARGUMENT);
  loop.data_count = -1;
  EXPECT_EQ(fpm_parallel_for(&loop, 10, body, &calls),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(calls.load(), 0);
  // Nothing to check with no iterations.
  loop.data = &outside;
  loop.data_count = 1;
  EXPECT_EQ(fpm_parallel_for(&loop, 0, body, &calls), FPM_OK);
}

//===----------------------------------------------------------------------===//
// Benchmarks through the C API.
//===----------------------------------------------------------------------===//

/// x[k] = 2 x[k] + 1, with a y[k] = k written beside it: an iteration run
/// twice, or not at all, shows in x; iterations counted.
struct Doubling {
  explicit Doubling(std::int64_t n)
      : x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n), -1) {
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<long>(k);
  }

  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Doubling *>(context);
    for (std::int64_t k = begin; k < end; ++k) {
      const auto i = static_cast<std::size_t>(k);
      self.x[i] = 2 * self.x[i] + 1;
      self.y[i] = static_cast<long>(k);
    }
    self.iterations += end - begin;
    return self.stopAfter >= 0 && self.iterations > self.stopAfter;
  }

  /// "" when every iteration ran exactly `times` times.
  std::string problem(int times = 1) const {
    for (std::size_t k = 0; k < x.size(); ++k) {
      long want = static_cast<long>(k);
      for (int t = 0; t < times; ++t)
        want = 2 * want + 1;
      if (x[k] != want || y[k] != static_cast<long>(k))
        return "x[" + std::to_string(k) + "] = " + std::to_string(x[k]) +
               ", expected " + std::to_string(want);
    }
    return "";
  }

  std::vector<fpm_arg> data() {
    return {
        {FPM_ARG_INOUT, x.data(), sizeof(long),
         static_cast<std::int64_t>(x.size()), 0, 1, 1, 0, 0, nullptr, 0, 0, 0},
        {FPM_ARG_OUT, y.data(), sizeof(long),
         static_cast<std::int64_t>(y.size()), 0, 1, 1, 0, 0, nullptr, 0, 0, 0}};
  }

  std::vector<long> x, y;
  std::atomic<std::int64_t> iterations{0};
  std::int64_t stopAfter = -1;
};

class BenchmarkTest : public testing::Test {
protected:
  TempDir store;
  ScopedEnv dir{"FPM_PROFILE_DIR", store.path().string()};
  ScopedEnv schedule{"FPM_SCHEDULE", std::nullopt};
  ScopedEnv devices{"FPM_DEVICES", std::nullopt};
  ScopedEnv benchmark{"FPM_BENCHMARK", "points=5,error=0.5,reps=2:4,time=0.2"};

  // What the loops recorded online goes to this test's folder too.
  void TearDown() override { flushProfiles(); }

  /// A name no other test of this process used: a loop is benchmarked once
  /// per process.
  static std::string uniqueName(const char *stem) {
    static int counter = 0;
    return std::string("benchmark.") + stem + "." + std::to_string(++counter);
  }

  std::optional<Profile> stored(const std::string &loop,
                                const std::string &pe) {
    testing::internal::CaptureStderr();
    ProfileStore files(store.path());
    std::optional<Profile> profile = files.load(loop, pe);
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(said, "");
    return profile;
  }
};

TEST_F(BenchmarkTest, CpuLoopIsBenchmarkedOnceAndResultsAreUnchanged) {
  const ScopedThreads threads(2);
  const std::string name = uniqueName("cpu");
  constexpr std::int64_t N = 4096;
  Doubling state(N);
  std::vector<fpm_arg> data = state.data();
  const fpm_loop loop = withData(namedLoop(name.c_str(), nullptr, 16), data);

  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for(&loop, N, Doubling::body, &state), FPM_OK)
      << fpm_last_error();
  const std::string said = testing::internal::GetCapturedStderr();
  // The benchmark ran iterations many times over; the results are those of
  // one run.
  EXPECT_EQ(state.problem(), "");
  EXPECT_GT(state.iterations.load(), 3 * N);
  EXPECT_NE(said.find("loop '" + name + "' on cpu: 5 sizes"), std::string::npos)
      << said;

  // One thread's profile: sizes up to T / threads, multiples of the grain,
  // with reps and a confidence interval.
  const std::optional<Profile> profile = stored(name, "cpu");
  ASSERT_TRUE(profile);
  ASSERT_EQ(profile->points.size(), 5u);
  EXPECT_EQ(profile->points.front().size, 16);
  EXPECT_EQ(profile->points.back().size, N / 2);
  for (const ProfilePoint &point : profile->points) {
    EXPECT_EQ(point.size % 16, 0);
    EXPECT_GT(point.time, 0);
    ASSERT_TRUE(point.reps);
    EXPECT_GE(*point.reps, 1);
    EXPECT_LE(*point.reps, 4);
  }

  // The second call runs the loop only.
  const std::int64_t before = state.iterations.load();
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for(&loop, N, Doubling::body, &state), FPM_OK);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(state.iterations.load() - before, N);
  EXPECT_EQ(state.problem(2), "");
}

TEST_F(BenchmarkTest, StridedAndDownwardSectionsAreRestored) {
  const ScopedThreads threads(2);
  const std::string name = uniqueName("strided");
  // Iteration k writes m[(n-1-k) * 3 + 1]: a downward section with gaps,
  // whose neighbours must never be touched.
  constexpr std::int64_t N = 1000;
  std::vector<int> m(3 * N);
  for (std::size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<int>(i);
  const fpm_arg written{
      FPM_ARG_INOUT, m.data(), sizeof(int), 3 * N, 3 * (N - 1) + 1, -3, 1, 0, 0,
      nullptr,       0,        0,           0};
  const fpm_loop loop =
      withData(namedLoop(name.c_str(), nullptr), {&written, 1});
  auto body = [](std::int64_t begin, std::int64_t end, void *context) {
    auto &array = *static_cast<std::vector<int> *>(context);
    for (std::int64_t k = begin; k < end; ++k)
      array[static_cast<std::size_t>((N - 1 - k) * 3 + 1)] += 1000000;
    return 0;
  };
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for(&loop, N, body, &m), FPM_OK) << fpm_last_error();
  testing::internal::GetCapturedStderr();
  for (std::size_t i = 0; i < m.size(); ++i)
    ASSERT_EQ(m[i], static_cast<int>(i) + (i % 3 == 1 ? 1000000 : 0)) << i;
  EXPECT_TRUE(stored(name, "cpu"));
}

TEST_F(BenchmarkTest, RowsOfRowPointersAreRestoredThroughThePointers) {
  const ScopedThreads threads(2);
  const std::string name = uniqueName("rowptr");
  // inout(rows[k:1][0:3]), each row a block of its own (in reverse address
  // order), with a guard element past it that must never be touched.
  constexpr std::int64_t N = 600;
  std::vector<std::vector<int>> blocks(N, std::vector<int>(4));
  std::vector<int *> rows(N);
  for (std::int64_t k = 0; k < N; ++k) {
    auto &block = blocks[static_cast<std::size_t>(N - 1 - k)];
    for (int j = 0; j < 4; ++j)
      block[static_cast<std::size_t>(j)] = static_cast<int>(k * 10 + j);
    rows[static_cast<std::size_t>(k)] = block.data();
  }
  const std::vector<int *> pointers = rows;
  fpm_arg written{};
  written.kind = FPM_ARG_INOUT;
  written.data = rows.data();
  written.size = sizeof(int);
  written.length = N;
  written.stride = 1;
  written.count = 1;
  written.row_length = 3;
  const fpm_loop loop =
      withData(namedLoop(name.c_str(), nullptr), {&written, 1});
  auto body = [](std::int64_t begin, std::int64_t end, void *context) {
    auto &at = *static_cast<std::vector<int *> *>(context);
    for (std::int64_t k = begin; k < end; ++k)
      for (int j = 0; j < 3; ++j)
        at[static_cast<std::size_t>(k)][j] += 1000000;
    return 0;
  };
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for(&loop, N, body, &rows), FPM_OK)
      << fpm_last_error();
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(rows, pointers);
  for (std::int64_t k = 0; k < N; ++k)
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(rows[static_cast<std::size_t>(k)][j],
                static_cast<int>(k * 10 + j) + (j < 3 ? 1000000 : 0))
          << "row " << k << ", element " << j;
  EXPECT_TRUE(stored(name, "cpu"));
}

TEST_F(BenchmarkTest, LoopWithoutWrittenSectionsIsRefused) {
  const ScopedThreads threads(2);
  const std::string name = uniqueName("refused");
  constexpr std::int64_t N = 512;
  Doubling state(N);
  // Only what it reads: fpm-profile cannot know what to put back.
  std::vector<fpm_arg> data = state.data();
  data[0].kind = FPM_ARG_IN;
  data.resize(1);
  fpm_loop loop = withData(namedLoop(name.c_str(), nullptr), data);
  loop.file = "solver.c";
  loop.line = 42;
  for (int call = 0; call < 2; ++call) {
    testing::internal::CaptureStderr();
    ASSERT_EQ(fpm_parallel_for(&loop, N, Doubling::body, &state), FPM_OK);
    const std::string said = testing::internal::GetCapturedStderr();
    if (call == 0) {
      EXPECT_NE(said.find("fpm-profile: loop '" + name +
                          "' (solver.c:42) does not say what it writes"),
                std::string::npos)
          << said;
      EXPECT_NE(said.find("profiled online instead"), std::string::npos);
    } else {
      EXPECT_EQ(said, "") << "refused once per process";
    }
  }
  // It ran normally, twice, and nothing was benchmarked.
  EXPECT_EQ(state.iterations.load(), 2 * N);
  EXPECT_EQ(state.problem(2), "");
  EXPECT_FALSE(stored(name, "cpu"));

  // No data at all: the same.
  const std::string bare = uniqueName("bare");
  loop.name = bare.c_str();
  loop.data = nullptr;
  loop.data_count = 0;
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for(&loop, N, Doubling::body, &state), FPM_OK);
  EXPECT_NE(testing::internal::GetCapturedStderr().find(
                "does not say what it writes"),
            std::string::npos);
  EXPECT_EQ(state.problem(3), "");
}

TEST_F(BenchmarkTest, UnnamedLoopIsNotBenchmarked) {
  const ScopedThreads threads(2);
  Doubling state(256);
  std::vector<fpm_arg> data = state.data();
  fpm_loop loop = withData(namedLoop(nullptr, nullptr), data);
  loop.file = "anonymous.c";
  loop.line = 7;
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for(&loop, 256, Doubling::body, &state), FPM_OK);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("anonymous.c:7 has no name"), std::string::npos) << said;
  EXPECT_EQ(state.iterations.load(), 256);
  EXPECT_EQ(state.problem(), "");
}

TEST_F(BenchmarkTest, BodyThatStopsEndsTheBenchmarkWithDataRestored) {
  const ScopedThreads threads(1);
  const std::string name = uniqueName("stops");
  constexpr std::int64_t N = 1024;
  Doubling state(N);
  state.stopAfter = 100; // within the benchmark's first runs
  std::vector<fpm_arg> data = state.data();
  const fpm_loop loop = withData(namedLoop(name.c_str(), nullptr), data);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_parallel_for(&loop, N, Doubling::body, &state),
            FPM_ERROR_STOPPED);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("a body stopped the loop"), std::string::npos) << said;
  // What the benchmark ran was put back; the loop itself then stopped in
  // its first chunk: whatever ran, ran once.
  for (std::size_t k = 0; k < state.x.size(); ++k)
    ASSERT_TRUE(state.x[k] == static_cast<long>(k) ||
                state.x[k] == 2 * static_cast<long>(k) + 1)
        << k << ": " << state.x[k];
}

//===----------------------------------------------------------------------===//
// On PoCL: every PE of a loop with a kernel.
//===----------------------------------------------------------------------===//

const char *const DoublingSource = R"(
__kernel void doubling(__global long *x, __global long *y) {
  const long k = get_global_id(0);
  x[k] = 2 * x[k] + 1;
  y[k] = k;
}
)";

TEST_F(BenchmarkTest, KernelLoopIsBenchmarkedOnEveryPe) {
  const ScopedThreads threads(2);
  const std::string name = uniqueName("kernel");
  constexpr std::int64_t N = 8192;
  Doubling state(N);
  std::vector<fpm_arg> args = state.data();
  fpm_kernel kernel{};
  kernel.source = DoublingSource;
  kernel.name = "doubling";
  kernel.args = args.data();
  kernel.arg_count = 2;
  const fpm_loop loop = namedLoop(name.c_str(), nullptr, 64);
  testing::internal::CaptureStderr();
  ASSERT_EQ(fpm_parallel_for_kernel(&loop, N, Doubling::body, &state, &kernel),
            FPM_OK)
      << fpm_last_error();
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.problem(), "") << said;

  // The kernel's written arguments were saved and restored; every PE of
  // the co-execution has a profile: the CPU OpenCL device narrowed to the
  // core the team leaves free, and one CPU thread, up to T and T / 1.
  ProfileStore files(store.path());
  std::vector<std::string> ids;
  for (const auto &entry : std::filesystem::directory_iterator(store.path()))
    if (entry.path().extension() == ".json")
      ids.push_back(entry.path().filename().string());
  ASSERT_EQ(ids.size(), 2u) << said;
  const std::optional<Profile> cpu = stored(name, "cpu");
  ASSERT_TRUE(cpu) << said;
  EXPECT_EQ(cpu->points.back().size, N);
  std::string device;
  for (const std::string &file : ids)
    if (file.find("opencl") != std::string::npos)
      device =
          file.substr(file.find('@') + 1, file.size() - file.find('@') - 1 - 5);
  ASSERT_FALSE(device.empty()) << said;
  const std::optional<Profile> opencl = stored(name, device);
  ASSERT_TRUE(opencl) << device;
  EXPECT_EQ(opencl->points.back().size, N);
  EXPECT_EQ(opencl->points.front().size, 64);
  EXPECT_NE(said.find("on " + device + ": 5 sizes"), std::string::npos) << said;
}

} // namespace
} // namespace fpm
