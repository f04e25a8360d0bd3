//===- exec_test.cpp - The executor, the C API and the C++ layer ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every schedule runs every iteration exactly once whatever the team size
// and trip count; a body can stop the loop, an exception reaches the caller
// once; bad schedules are refused before anything runs; the environment
// overrides the loop; fpm_trip_count agrees with a brute-force loop; a named
// CPU-only loop's runs go into its `cpu` profile (online profiling), at the
// speed of one thread.
//
//===----------------------------------------------------------------------===//

#include "device/faults.hpp"
#include "exec/exec.hpp"
#include "exec/plan.hpp"
#include "exec/schedule_string.hpp"
#include "fpm/fpm.h"
#include "fpm/fpm.hpp"
#include "model/profile.hpp"
#include "partition/partition.hpp"
#include "store/online_profiles.hpp"
#include "store/profile_store.hpp"
#include "support/environment.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include "support/loops.hpp"
#include "support/scoped.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using fpm::test::ScopedEnv;
using fpm::test::ScopedThreads;

const char *const AllSchedules[] = {"",
                                    "auto",
                                    "equal",
                                    "cpm",
                                    "geometric",
                                    "numerical",
                                    "hpopta",
                                    "optimal",
                                    "wdah",
                                    "wdah, 100",
                                    "wdah_heuristic",
                                    "wdah-heuristic",
                                    "pss",
                                    "css(4)",
                                    "css, 4",
                                    " css ( 4 ) ",
                                    "gss",
                                    "gss, 80",
                                    "fss",
                                    "fss, 50",
                                    "tss",
                                    "tss,30",
                                    "\tgss ,80 "};

const int ThreadCounts[] = {1, 2, 3, 8};
const std::int64_t TripCounts[] = {0, 1, 2, 7, 97, 1000, 100003};

/// Counts, per logical iteration, how often a body ran it.
struct Coverage {
  explicit Coverage(std::int64_t trips)
      : counts(static_cast<std::size_t>(trips)) {}
  std::vector<std::atomic<int>> counts;
  std::atomic<std::int64_t> calls{0};
  std::atomic<bool> badRange{false};

  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Coverage *>(context);
    self.calls.fetch_add(1, std::memory_order_relaxed);
    if (begin < 0 || end <= begin ||
        end > static_cast<std::int64_t>(self.counts.size())) {
      self.badRange = true;
      return 0;
    }
    for (std::int64_t i = begin; i < end; ++i)
      self.counts[static_cast<std::size_t>(i)].fetch_add(
          1, std::memory_order_relaxed);
    return 0;
  }

  /// The first iteration not run exactly once, or -1.
  std::int64_t firstWrong() const {
    for (std::size_t i = 0; i < counts.size(); ++i)
      if (counts[i].load() != 1)
        return static_cast<std::int64_t>(i);
    return -1;
  }
};

fpm_loop makeLoop(const char *schedule, std::int64_t grain = 0) {
  fpm_loop loop{};
  loop.name = "test";
  loop.schedule = schedule;
  loop.grain = grain;
  return loop;
}

TEST(ExecTest, EveryScheduleRunsEachIterationOnce) {
  for (int threads : ThreadCounts) {
    ScopedThreads team(threads);
    ASSERT_EQ(fpm_cpu_threads(), threads);
    for (const char *schedule : AllSchedules)
      for (std::int64_t trips : TripCounts) {
        SCOPED_TRACE("schedule \"" + std::string(schedule) + "\", " +
                     std::to_string(threads) + " threads, " +
                     std::to_string(trips) + " iterations");
        Coverage coverage(trips);
        const fpm_loop loop = makeLoop(schedule);
        ASSERT_EQ(fpm_parallel_for(&loop, trips, Coverage::body, &coverage),
                  FPM_OK)
            << fpm_last_error();
        EXPECT_FALSE(coverage.badRange);
        EXPECT_EQ(coverage.firstWrong(), -1);
        if (trips == 0)
          EXPECT_EQ(coverage.calls.load(), 0);
      }
  }
}

TEST(ExecTest, GrainKeepsEveryIterationOnceAndChunksWhole) {
  ScopedThreads team(3);
  for (const char *schedule :
       {"equal", "wdah", "optimal", "pss", "css(2)", "gss", "fss, 50", "tss"})
    for (std::int64_t grain : {1, 3, 10, 5000})
      for (std::int64_t trips : {1, 29, 1000, 100003}) {
        SCOPED_TRACE(std::string(schedule) + " grain " + std::to_string(grain) +
                     " trips " + std::to_string(trips));
        struct Chunks {
          Coverage coverage;
          std::int64_t grain;
          std::atomic<bool> ragged{false};
        } state{Coverage(trips), grain};
        const fpm_loop loop = makeLoop(schedule, grain);
        auto body = [](std::int64_t begin, std::int64_t end, void *context) {
          auto &self = *static_cast<Chunks *>(context);
          // Whole granules, but for the one that ends the loop.
          if (begin % self.grain != 0 ||
              (end % self.grain != 0 &&
               end != static_cast<std::int64_t>(self.coverage.counts.size())))
            self.ragged = true;
          return Coverage::body(begin, end, &self.coverage);
        };
        ASSERT_EQ(fpm_parallel_for(&loop, trips, body, &state), FPM_OK)
            << fpm_last_error();
        EXPECT_EQ(state.coverage.firstWrong(), -1);
        // Static partitioners put the remainder N mod G in a package of its
        // own, anywhere; self-scheduling keeps chunks on granule bounds.
        if (std::string(schedule) != "equal" &&
            std::string(schedule) != "wdah" &&
            std::string(schedule) != "optimal")
          EXPECT_FALSE(state.ragged);
      }
}

TEST(ExecTest, HugeTripCountUnderBoundedChunkCounts) {
  // 1e12 iterations, a body that only sums its chunk: GSS, FSS and TSS have
  // O(P log I) chunks, CSS with a large k few enough; static partitioners
  // get coarse granules rather than searching for minutes.
  ScopedThreads team(3);
  const std::int64_t trips = 1'000'000'000'000;
  for (const char *schedule :
       {"gss", "fss", "tss", "gss, 80", "css(1000000000)", "equal", "cpm",
        "geometric", "numerical", "hpopta", "optimal", "wdah",
        "wdah_heuristic"}) {
    SCOPED_TRACE(schedule);
    std::atomic<std::int64_t> total{0};
    const fpm_loop loop = makeLoop(schedule);
    auto body = [](std::int64_t begin, std::int64_t end, void *context) {
      static_cast<std::atomic<std::int64_t> *>(context)->fetch_add(end - begin);
      return 0;
    };
    ASSERT_EQ(fpm_parallel_for(&loop, trips, body, &total), FPM_OK)
        << fpm_last_error();
    EXPECT_EQ(total.load(), trips);
  }
}

TEST(ExecTest, TeamSmallerThanPlannedStillCoversEverything) {
  // Inside a parallel region the runtime gets a team of one: it must plan
  // for it, and nested calls from every thread must each cover their loop.
  ScopedThreads team(2);
  std::atomic<int> wrong{0};
#pragma omp parallel num_threads(2)
  {
    Coverage coverage(1000);
    const fpm_loop loop = makeLoop("gss, 80");
    if (fpm_parallel_for(&loop, 1000, Coverage::body, &coverage) != FPM_OK ||
        coverage.firstWrong() != -1)
      ++wrong;
  }
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ExecTest, NestedCallOnTheSameThreadGetsItsOwnPlan) {
  ScopedThreads team(2);
  std::atomic<int> wrong{0};
  fpm::parallelFor(0, 8,
                   [&](int) {
                     Coverage inner(97);
                     const fpm_loop loop = makeLoop("gss");
                     if (fpm_parallel_for(&loop, 97, Coverage::body, &inner) !=
                             FPM_OK ||
                         inner.firstWrong() != -1)
                       ++wrong;
                   },
                   {"outer", "gss"});
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ExecTest, BodyReturningNonZeroStopsTheLoop) {
  for (int threads : {1, 2, 3}) {
    ScopedThreads team(threads);
    for (const char *schedule : {"pss", "css(3)", "equal", "wdah", "gss"}) {
      SCOPED_TRACE(std::string(schedule) + " on " + std::to_string(threads));
      struct Stopper {
        std::atomic<std::int64_t> calls{0};
      } state;
      const fpm_loop loop = makeLoop(schedule, 1);
      auto body = [](std::int64_t, std::int64_t, void *context) {
        static_cast<Stopper *>(context)->calls.fetch_add(1);
        return 1;
      };
      EXPECT_EQ(fpm_parallel_for(&loop, 100003, body, &state),
                FPM_ERROR_STOPPED);
      EXPECT_NE(std::string(fpm_last_error()), "");
      // Each thread stops after its first chunk.
      EXPECT_LE(state.calls.load(), threads);
    }
  }
}

TEST(ExecTest, PssStopsEarlyWhenOneIterationFails) {
  ScopedThreads team(2);
  std::atomic<std::int64_t> ran{0};
  const fpm_loop loop = makeLoop("pss");
  auto body = [](std::int64_t begin, std::int64_t, void *context) {
    static_cast<std::atomic<std::int64_t> *>(context)->fetch_add(1);
    return begin == 10 ? 1 : 0;
  };
  EXPECT_EQ(fpm_parallel_for(&loop, 100003, body, &ran), FPM_ERROR_STOPPED);
  EXPECT_LT(ran.load(), 100003);
}

struct BodyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TEST(ApiCxxTest, ExceptionReachesTheCallerOnceAndStopsTheLoop) {
  for (int threads : {1, 2, 8}) {
    ScopedThreads team(threads);
    for (const char *schedule : {"pss", "equal", "gss"}) {
      SCOPED_TRACE(std::string(schedule) + " on " + std::to_string(threads));
      std::atomic<std::int64_t> ran{0};
      int caught = 0;
      try {
        // Every iteration throws: the caller still sees one exception.
        fpm::parallelFor(std::int64_t{0}, std::int64_t{100003},
                         [&](std::int64_t i) {
                           ran.fetch_add(1);
                           throw BodyError("iteration " + std::to_string(i));
                         },
                         {"throws", schedule});
      } catch (const BodyError &error) {
        ++caught;
        EXPECT_EQ(std::string(error.what()).rfind("iteration ", 0), 0u);
      }
      EXPECT_EQ(caught, 1);
      EXPECT_LE(ran.load(), threads);
    }
  }
  // The loop's cached plan is free again afterwards.
  std::atomic<int> sum{0};
  fpm::parallelFor(0, 100, [&](int i) { sum += i; }, {"throws", "gss"});
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ApiCxxTest, ConvenienceOverloadCoversAnyIndexType) {
  ScopedThreads team(3);
  std::vector<std::atomic<int>> seen(300);
  fpm::parallelFor(-100, 200, [&](int i) { ++seen[i + 100]; });
  for (auto &count : seen)
    EXPECT_EQ(count.load(), 1);

  std::atomic<int> sum{0};
  fpm::parallelFor(std::int8_t{-128}, std::int8_t{127},
                   [&](std::int8_t i) { sum += i; }, {nullptr, "css(5)"});
  EXPECT_EQ(sum.load(), -255); // -128 + ... + 126

  std::atomic<std::uint64_t> top{0};
  fpm::parallelFor(UINT64_MAX - 10, UINT64_MAX,
                   [&](std::uint64_t i) { top += UINT64_MAX - i; });
  EXPECT_EQ(top.load(), 55u);

  std::vector<int> v(10);
  fpm::parallelFor(0, v.size(), [&](std::size_t i) { v[i] = 1; });
  for (int x : v)
    EXPECT_EQ(x, 1);

  int calls = 0;
  fpm::parallelFor(5, 5, [&](int) { ++calls; });
  fpm::parallelFor(5, 2, [&](int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ApiCxxTest, ChunkOverloadAndBadScheduleThrows) {
  fpm_loop loop{};
  loop.schedule = "css(10)";
  std::atomic<std::int64_t> total{0};
  fpm::parallelFor(loop, 1000, [&](std::int64_t begin, std::int64_t end) {
    EXPECT_LE(end - begin, 10);
    total += end - begin;
  });
  EXPECT_EQ(total.load(), 1000);

  loop.schedule = "gss, 200";
  try {
    fpm::parallelFor(loop, 10, [](std::int64_t, std::int64_t) {
      ADD_FAILURE() << "ran with a bad schedule";
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument &error) {
    EXPECT_NE(std::string(error.what()).find("gss, 200"), std::string::npos)
        << error.what();
  }
}

TEST(ApiTest, StaticGranulesKeepEveryPartitionerWithinItsCap) {
  // The exact solvers get 1024 granules, the others 2^20, WDAH's cap.
  constexpr std::int64_t Trips = std::int64_t{1} << 30;
  for (const fpm::Partitioner &partitioner : fpm::partitioners()) {
    const std::int64_t granule = fpm::staticGranule(partitioner, Trips, 1);
    EXPECT_EQ(granule, partitioner.exact ? Trips / 1024 : Trips >> 20)
        << partitioner.name;
    if (partitioner.maxUnits > 0)
      EXPECT_LE(Trips / granule, partitioner.maxUnits) << partitioner.name;
  }
}

TEST(ApiTest, BadScheduleStringsAreRefusedBeforeAnythingRuns) {
  const char *const bad[] = {"gss,",
                             "css",
                             "css(0)",
                             "css(x)",
                             "css()",
                             "gss, 0",
                             "gss, 101",
                             "gss, -5",
                             "gss, abc",
                             "foo",
                             "GSS",
                             "wdah, -1",
                             "wdah, 0",
                             "wdah, 100001",
                             "wdah, 1000000000",
                             "equal, 3",
                             "gss(80",
                             "gss 80",
                             "(gss)",
                             "pss, 5",
                             "css(4) x",
                             "gss, 80, 2",
                             ",",
                             "auto(1)",
                             "wdah_heuristic, 3",
                             "css(99999999999999999999)"};
  for (const char *schedule : bad) {
    SCOPED_TRACE(schedule);
    Coverage coverage(10);
    const fpm_loop loop = makeLoop(schedule);
    EXPECT_EQ(fpm_parallel_for(&loop, 10, Coverage::body, &coverage),
              FPM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(coverage.calls.load(), 0);
    const std::string message = fpm_last_error();
    EXPECT_NE(message.find("\"" + std::string(schedule) + "\""),
              std::string::npos)
        << message;
    // Also when nothing would run.
    EXPECT_EQ(fpm_parallel_for(&loop, 0, Coverage::body, &coverage),
              FPM_ERROR_INVALID_ARGUMENT);
  }
}

TEST(ApiTest, ScheduleStringsParseToWhatTheySay) {
  EXPECT_EQ(fpm::parseLoopSchedule(" gss , 80 ").alpha, 80.0);
  EXPECT_EQ(fpm::parseLoopSchedule("css, 4").chunk, 4);
  EXPECT_EQ(fpm::parseLoopSchedule("css(4)").text, "css(4)");
  EXPECT_EQ(fpm::parseLoopSchedule("wdah, 7").backtrack, 7);
  EXPECT_EQ(fpm::parseLoopSchedule("wdah, 100000").backtrack, 100000);
  EXPECT_EQ(fpm::parseLoopSchedule("wdah_heuristic").partitioner->name,
            "wdah-heuristic");
  EXPECT_TRUE(fpm::parseLoopSchedule("").automatic);
  // auto leaves the choice to the planner (PlanTest.AutoFollows...).
  EXPECT_TRUE(fpm::parseLoopSchedule("auto").automatic);
  EXPECT_EQ(fpm::parseLoopSchedule("auto").partitioner, nullptr);
  EXPECT_EQ(fpm::parseLoopSchedule("fss(50.5)").alpha, 50.5);
  EXPECT_EQ(fpm::parseLoopSchedule("tss").kind,
            fpm::LoopSchedule::Kind::Dynamic);
}

TEST(ApiTest, BadArgumentsAreRefused) {
  Coverage coverage(10);
  EXPECT_EQ(fpm_parallel_for(nullptr, -1, Coverage::body, &coverage),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("-1"), std::string::npos);
  EXPECT_EQ(fpm_parallel_for(nullptr, 10, nullptr, nullptr),
            FPM_ERROR_INVALID_ARGUMENT);
  fpm_loop loop = makeLoop("gss", -3);
  EXPECT_EQ(fpm_parallel_for(&loop, 10, Coverage::body, &coverage),
            FPM_ERROR_INVALID_ARGUMENT);
  loop = makeLoop("gss");
  loop.devices = "fpga";
  EXPECT_EQ(fpm_parallel_for(&loop, 10, Coverage::body, &coverage),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("fpga"), std::string::npos);
  EXPECT_EQ(coverage.calls.load(), 0);
  // A NULL loop is the defaults.
  EXPECT_EQ(fpm_parallel_for(nullptr, 10, Coverage::body, &coverage), FPM_OK);
  EXPECT_EQ(coverage.firstWrong(), -1);
}

TEST(ApiTest, FpmScheduleOverridesTheLoop) {
  ScopedThreads team(2);
  struct Sizes {
    std::mutex mutex;
    std::vector<std::int64_t> sizes;
  } state;
  auto body = [](std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Sizes *>(context);
    std::lock_guard<std::mutex> lock(self.mutex);
    self.sizes.push_back(end - begin);
    return 0;
  };
  const fpm_loop loop = makeLoop("equal");
  {
    ScopedEnv env("FPM_SCHEDULE", "css(7)");
    ASSERT_EQ(fpm_parallel_for(&loop, 100, body, &state), FPM_OK);
  }
  EXPECT_EQ(state.sizes.size(), 15u); // ceil(100 / 7)
  for (std::int64_t size : state.sizes)
    EXPECT_LE(size, 7);

  state.sizes.clear();
  ASSERT_EQ(fpm_parallel_for(&loop, 100, body, &state), FPM_OK);
  EXPECT_EQ(state.sizes.size(), 2u); // equal again: one package per thread

  {
    ScopedEnv env("FPM_SCHEDULE", "bogus");
    EXPECT_EQ(fpm_parallel_for(&loop, 100, body, &state),
              FPM_ERROR_INVALID_ARGUMENT);
    const std::string message = fpm_last_error();
    EXPECT_NE(message.find("FPM_SCHEDULE"), std::string::npos) << message;
    EXPECT_NE(message.find("bogus"), std::string::npos) << message;
  }
  {
    // A valid FPM_SCHEDULE is not blamed for another argument's error.
    ScopedEnv env("FPM_SCHEDULE", "gss");
    EXPECT_EQ(fpm_parallel_for(&loop, -1, body, &state),
              FPM_ERROR_INVALID_ARGUMENT);
    const std::string message = fpm_last_error();
    EXPECT_EQ(message.find("FPM_SCHEDULE"), std::string::npos) << message;
    EXPECT_NE(message.find("trip count"), std::string::npos) << message;
  }
}

TEST(ApiTest, FpmDevicesGpuRunsOnTheCpuWithANote) {
  ScopedThreads team(2);
  ScopedEnv devices("FPM_DEVICES", "gpu");
  ScopedEnv verbose("FPM_VERBOSE", "1");
  fpm_loop loop = makeLoop("gss");
  loop.name = "gpu-only";
  Coverage coverage(1000);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_parallel_for(&loop, 1000, Coverage::body, &coverage), FPM_OK);
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(coverage.firstWrong(), -1);
  EXPECT_NE(printed.find("no OpenCL kernel"), std::string::npos) << printed;
  {
    ScopedEnv bad("FPM_DEVICES", "tpu");
    EXPECT_EQ(fpm_parallel_for(&loop, 10, Coverage::body, &coverage),
              FPM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fpm_last_error()).find("FPM_DEVICES"),
              std::string::npos);
  }
}

TEST(ApiTest, VerboseSaysHowEachLoopWasSplitOnce) {
  ScopedThreads team(2);
  ScopedEnv verbose("FPM_VERBOSE", "1");
  fpm_loop loop = makeLoop("gss");
  loop.name = "mm";
  loop.file = "file.c";
  loop.line = 12;
  Coverage coverage(1000);
  testing::internal::CaptureStderr();
  for (int call = 0; call < 3; ++call)
    ASSERT_EQ(fpm_parallel_for(&loop, 1000, Coverage::body, &coverage), FPM_OK);
  loop.schedule = "wdah";
  ASSERT_EQ(fpm_parallel_for(&loop, 1000, Coverage::body, &coverage), FPM_OK);
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("fpm: loop 'mm' (file.c:12): 1000 iterations, "
                         "schedule gss on 2 CPU threads: chunks 500, 250, 125"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("schedule wdah on 2 CPU threads: iterations per "
                         "thread 500, 500"),
            std::string::npos)
      << printed;
  // One line per split, not per call.
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 2) << printed;
}

//===- fpm_trip_count -----------------------------------------------------===//

/// The trip count by running the loop as C does with a variable of type V
/// compared in type C; -1 past `cap`.
template <typename V, typename C>
std::int64_t bruteForce(std::int64_t lower, std::int64_t upper,
                        std::int64_t step, int compare, std::int64_t cap) {
  const auto bound = static_cast<C>(upper);
  auto holds = [&](V v) {
    const auto tested = static_cast<C>(v);
    switch (compare) {
    case FPM_LT:
      return tested < bound;
    case FPM_LE:
      return tested <= bound;
    case FPM_GT:
      return tested > bound;
    case FPM_GE:
      return tested >= bound;
    default:
      return tested != bound;
    }
  };
  std::int64_t count = 0;
  // The sum in 64 bits converted back: the wrap C gives unsigned and narrow
  // types.
  for (auto v = static_cast<V>(lower); holds(v);
       v = static_cast<V>(static_cast<std::uint64_t>(v) +
                          static_cast<std::uint64_t>(step)))
    if (++count > cap)
      return -1;
  return count;
}

/// Every lower in `lowers`, bound in `uppers` and step in `steps`, each
/// comparison: fpm_trip_count_typed against the brute-force loop.
template <typename V, typename C>
void expectBruteForce(const std::vector<std::int64_t> &lowers,
                      const std::vector<std::int64_t> &uppers,
                      const std::vector<std::int64_t> &steps) {
  // Finite counts here are under Cap, but for loops that wrap the type
  // many times, which the brute force cannot tell from endless ones.
  constexpr std::int64_t Cap = 3000;
  int mismatches = 0;
  for (int compare = FPM_LT; compare <= FPM_NE; ++compare)
    for (std::int64_t step : steps)
      for (std::int64_t lower : lowers)
        for (std::int64_t upper : uppers) {
          const std::int64_t expected =
              bruteForce<V, C>(lower, upper, step, compare, Cap);
          const std::int64_t got = fpm_trip_count_typed(
              static_cast<std::int64_t>(static_cast<V>(lower)),
              static_cast<std::int64_t>(static_cast<C>(upper)), step, compare,
              FPM_INT_TYPE(V), FPM_INT_TYPE(C));
          const bool pastCap = expected == -1 && got > Cap;
          if (got != expected && !pastCap && ++mismatches <= 5)
            ADD_FAILURE() << "for (v = " << lower << "; v cmp" << compare << " "
                          << upper << "; v += " << step << ") var type "
                          << FPM_INT_TYPE(V) << ", compared as "
                          << FPM_INT_TYPE(C) << ": got " << got << ", expected "
                          << expected;
        }
  EXPECT_EQ(mismatches, 0);
}

std::vector<std::int64_t> range(std::int64_t from, std::int64_t to,
                                std::int64_t by = 1) {
  std::vector<std::int64_t> values;
  for (std::int64_t v = from; v <= to; v += by)
    values.push_back(v);
  return values;
}

TEST(TripCountTest, MatchesABruteForceLoopOnSmallRanges) {
  const std::vector<std::int64_t> steps = {-128, -7, -3, -2, -1, 0,
                                           1,    2,  3,  5,  127};
  // 64-bit variables, as fpm_trip_count takes them (no wrap within reach
  // but an unsigned one going below 0).
  for (int isUnsigned : {0, 1}) {
    int mismatches = 0;
    for (int compare = FPM_LT; compare <= FPM_NE; ++compare)
      for (std::int64_t step : steps)
        for (std::int64_t lower = -128; lower <= 255; ++lower)
          for (std::int64_t upper = -128; upper <= 255; upper += 3) {
            const std::int64_t expected =
                isUnsigned ? bruteForce<std::uint64_t, std::uint64_t>(
                                 lower, upper, step, compare, 300)
                           : bruteForce<std::int64_t, std::int64_t>(
                                 lower, upper, step, compare, 300);
            const std::int64_t got =
                fpm_trip_count(lower, upper, step, compare, isUnsigned);
            // Around 2^64 and back: past the brute force's reach.
            const bool pastCap = expected == -1 && got > 300;
            if (got != expected && !pastCap && ++mismatches <= 5)
              ADD_FAILURE()
                  << "for (v = " << lower << "; v cmp" << compare << " "
                  << upper << "; v += " << step << ") unsigned=" << isUnsigned
                  << ": got " << got << ", expected " << expected;
          }
    EXPECT_EQ(mismatches, 0);
  }
}

// Narrow variables wrap; bounds are compared in the promoted type, so a
// bound outside the variable's range is not cut down to it.
TEST(TripCountTest, NarrowVariablesWrapAsCDoes) {
  const std::vector<std::int64_t> steps = {-128, -7, -3, -2, -1, 0,
                                           1,    2,  3,  5,  127};
  const std::vector<std::int64_t> bytes = range(-128, 255, 3);
  const std::vector<std::int64_t> bounds = range(-300, 300, 7);
  expectBruteForce<unsigned char, int>(bytes, bounds, steps);
  expectBruteForce<signed char, int>(bytes, bounds, steps);
  // `signed char c; c < 10u`: a negative c is compared as a huge unsigned.
  expectBruteForce<signed char, unsigned>(bytes, bounds, steps);
}

TEST(TripCountTest, WideVariablesComparedWider) {
  const std::vector<std::int64_t> steps = {-5, -1, 0, 1, 3, 1000};
  const std::vector<std::int64_t> near = range(-20, 20);
  // `unsigned i < n` with a long n, and near the unsigned's ends.
  std::vector<std::int64_t> lowers = range(-10, 10);
  for (std::int64_t v : range(0, 10))
    lowers.push_back(std::int64_t{UINT32_MAX} - v);
  expectBruteForce<unsigned, long>(lowers, near, steps);
  expectBruteForce<unsigned short, int>(range(65500, 65535), near, steps);
  // `int i < u` with an unsigned u: i below 0 reads as a huge unsigned.
  expectBruteForce<int, unsigned>(near, near, steps);
}

TEST(TripCountTest, TheIssuesExamples) {
  // for (unsigned char c = 250; c != 4; ++c): 250 .. 255, 0 .. 3.
  EXPECT_EQ(fpm_trip_count_typed(250, 4, 1, FPM_NE, FPM_INT_TYPE(unsigned char),
                                 FPM_INT_TYPE(int)),
            10);
  // for (unsigned i = 0; i < n; ++i) with long n = -1: compared as long.
  EXPECT_EQ(fpm_trip_count_typed(0, -1, 1, FPM_LT, FPM_INT_TYPE(unsigned),
                                 FPM_INT_TYPE(long)),
            0);
  // for (unsigned char c = 0; c <= 255; ++c) never ends.
  EXPECT_EQ(fpm_trip_count_typed(0, 255, 1, FPM_LE, FPM_INT_TYPE(unsigned char),
                                 FPM_INT_TYPE(int)),
            -1);
  // A type fpm does not know.
  EXPECT_EQ(fpm_trip_count_typed(0, 10, 1, FPM_LT, 16, 16), -1);
}

TEST(TripCountTest, Extremes) {
  constexpr std::int64_t Min = INT64_MIN;
  constexpr std::int64_t Max = INT64_MAX;
  const auto U = [](std::uint64_t value) {
    return static_cast<std::int64_t>(value);
  };
  // Signed.
  EXPECT_EQ(fpm_trip_count(0, Max, 1, FPM_LT, 0), Max);
  EXPECT_EQ(fpm_trip_count(0, Max, 1, FPM_LE, 0), -1); // 2^63
  EXPECT_EQ(fpm_trip_count(1, Max, 1, FPM_LE, 0), Max);
  EXPECT_EQ(fpm_trip_count(Min, Max, 1, FPM_LT, 0), -1);
  EXPECT_EQ(fpm_trip_count(Min, Max, Max, FPM_LE, 0), 3);
  EXPECT_EQ(fpm_trip_count(Min, Max, Max, FPM_LT, 0), 3);
  EXPECT_EQ(fpm_trip_count(Max, Min, Min, FPM_GE, 0), 2);
  EXPECT_EQ(fpm_trip_count(Max, Min, Min, FPM_GT, 0), 2);
  EXPECT_EQ(fpm_trip_count(Max, Min, -1, FPM_GT, 0), -1);
  EXPECT_EQ(fpm_trip_count(Max, 0, -1, FPM_GT, 0), Max);
  EXPECT_EQ(fpm_trip_count(Max, 0, -1, FPM_GE, 0), -1);
  EXPECT_EQ(fpm_trip_count(Min, Max, 2, FPM_NE, 0), -1); // odd distance
  EXPECT_EQ(fpm_trip_count(Min, Max - 1, 2, FPM_NE, 0), Max);
  EXPECT_EQ(fpm_trip_count(Max, Min, Min, FPM_NE, 0), -1); // 2^64 - 1
  EXPECT_EQ(fpm_trip_count(0, Min, Min, FPM_NE, 0), 1);
  EXPECT_EQ(fpm_trip_count(Min, 0, Min, FPM_NE, 0), -1); // walks away
  EXPECT_EQ(fpm_trip_count(Max, Max, 0, FPM_LT, 0), 0);  // fails at once
  EXPECT_EQ(fpm_trip_count(0, 1, 0, FPM_LT, 0), -1);     // never ends
  EXPECT_EQ(fpm_trip_count(0, 10, 1, 99, 0), -1);        // not a comparison
  // Unsigned: the bounds are uint64_t bit patterns.
  EXPECT_EQ(fpm_trip_count(0, U(UINT64_MAX), 1, FPM_LT, 1), -1);
  EXPECT_EQ(fpm_trip_count(0, U(UINT64_MAX), 2, FPM_LT, 1), -1); // 2^63
  // 2^64 - 4 steps on to 0, still below the bound: C's loop never ends.
  EXPECT_EQ(fpm_trip_count(0, U(UINT64_MAX), 4, FPM_LT, 1), -1);
  EXPECT_EQ(fpm_trip_count(0, U(UINT64_MAX - 3), 4, FPM_LT, 1),
            (std::int64_t{1} << 62) - 1);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX), 0, -1, FPM_GT, 1), -1);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX), 0, Min, FPM_GE, 1), -1); // v >= 0
  EXPECT_EQ(
      fpm_trip_count(U(UINT64_MAX), U(std::uint64_t{1} << 63), Min, FPM_GE, 1),
      1);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX), U(UINT64_MAX - 10), -1, FPM_GT, 1),
            10);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX - 10), U(UINT64_MAX), 1, FPM_LE, 1),
            -1); // v <= UINT64_MAX holds for every v
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX - 10), U(UINT64_MAX - 1), 1, FPM_LE, 1),
            10);
  // Around 2^64: from 2^64 - 2 to 2, as `!=` and as `<` after the wrap.
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX - 1), 2, 1, FPM_NE, 1), 4);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX - 10), U(UINT64_MAX), 5, FPM_NE, 1), 2);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX), 1, Min, FPM_NE, 1), -1);
  // As signed, the same bits are -1 and 0: the test fails at once.
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX), 0, 1, FPM_LT, 0), 1);
  EXPECT_EQ(fpm_trip_count(U(UINT64_MAX), 0, 1, FPM_LT, 1), 0);
}

} // namespace

//===- Online profiling on the CPU-only path ------------------------------===//

namespace {

using fpm::test::namedLoop;
using fpm::test::TempDir;

/// Every named loop of these tests records online profiles (the ones above
/// too): they go to a scratch folder, never to the user's store.
class ScratchProfileStore : public testing::Environment {
public:
  void SetUp() override {
    directory_.emplace();
    variable_.emplace("FPM_PROFILE_DIR", directory_->path().string());
  }
  void TearDown() override {
    fpm::flushProfiles(); // nothing left for the flush at exit
    variable_.reset();
    directory_.reset();
  }

private:
  std::optional<TempDir> directory_;
  std::optional<ScopedEnv> variable_;
};

[[maybe_unused]] testing::Environment *const scratchProfileStore =
    testing::AddGlobalTestEnvironment(new ScratchProfileStore);

/// Flushes what earlier tests recorded before a test's folder is set, so
/// that only its own loops reach it.
struct FlushedBefore {
  FlushedBefore() { fpm::flushProfiles(); }
};

class OnlineProfileTest : public testing::Test {
protected:
  void TearDown() override { fpm::flushProfiles(); }

  /// The stored `cpu` profile of `loop` in this test's folder, if any.
  std::optional<fpm::Profile> stored(const std::string &loop) const {
    const std::filesystem::path file =
        fpm::profilePath(profiles_.path(), loop, "cpu");
    if (!std::filesystem::exists(file))
      return std::nullopt;
    return fpm::readProfile(file);
  }

  bool folderIsEmpty() const {
    return !std::filesystem::exists(profiles_.path()) ||
           std::filesystem::is_empty(profiles_.path());
  }

  FlushedBefore flushed_;
  TempDir profiles_;
  ScopedEnv profileDir_{"FPM_PROFILE_DIR", profiles_.path().string()};
  ScopedEnv schedule_{"FPM_SCHEDULE", std::nullopt};
  ScopedEnv verbose_{"FPM_VERBOSE", std::nullopt};
  ScopedEnv trace_{"FPM_TRACE", std::nullopt};
  ScopedEnv benchmark_{"FPM_BENCHMARK", std::nullopt};
  ScopedThreads threads_{2};
};

/// A body whose speed is known: every iteration spins for `nanoseconds`
/// of wall time (preemption cannot make it faster, only slower).
struct Spin {
  std::int64_t nanoseconds = 0;
  std::atomic<std::int64_t> iterations{0};

  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Spin *>(context);
    using Clock = std::chrono::steady_clock;
    for (std::int64_t i = begin; i < end; ++i) {
      const Clock::time_point until =
          Clock::now() + std::chrono::nanoseconds(self.nanoseconds);
      while (Clock::now() < until) {
      }
    }
    self.iterations.fetch_add(end - begin, std::memory_order_relaxed);
    return 0;
  }
};

TEST_F(OnlineProfileTest, NamedLoopStoresOneThreadsProfile) {
  // 2 us per iteration, 2000 iterations on 2 threads: ~2 ms a call, longer
  // than the gap between timed calls, so every call but the first counts.
  constexpr std::int64_t Trips = 2000;
  constexpr std::int64_t Grain = 8;
  constexpr int Calls = 12;
  for (const char *schedule : {"equal", "gss"}) {
    SCOPED_TRACE(schedule);
    const std::string name = std::string("exec.online.") + schedule;
    const fpm_loop loop = namedLoop(name.c_str(), schedule, Grain);
    Spin spin;
    spin.nanoseconds = 2000;
    for (int call = 0; call < Calls; ++call)
      ASSERT_EQ(fpm_parallel_for(&loop, Trips, Spin::body, &spin), FPM_OK)
          << fpm_last_error();
    EXPECT_EQ(spin.iterations.load(), Calls * Trips);
    fpm::flushProfiles();

    const std::optional<fpm::Profile> profile = stored(name);
    ASSERT_TRUE(profile);
    EXPECT_EQ(profile->kernel, name);
    EXPECT_EQ(profile->device, "cpu");
    EXPECT_EQ(profile->deviceName, "1 OpenMP thread");
    ASSERT_FALSE(profile->points.empty());
    std::int64_t reps = 0;
    for (const fpm::ProfilePoint &point : profile->points) {
      SCOPED_TRACE(point.size);
      // One thread's share of a call, bucketed to the grain.
      EXPECT_EQ(point.size % Grain, 0);
      EXPECT_GE(point.size, Grain);
      EXPECT_LE(point.size, Trips);
      if (std::string(schedule) == "equal") // 1000 a thread, within 3.2%
        EXPECT_NEAR(static_cast<double>(point.size), 1000.0, 32.0);
      // At least the spin's time (less the bucket's rounding), in seconds:
      // a busy machine can stretch a lone sample of a bucket many times
      // (the next test checks the speed itself).
      const double spun = static_cast<double>(point.size) * 2e-6;
      EXPECT_GE(point.time, 0.95 * spun);
      EXPECT_LE(point.time, 50 * spun);
      reps += point.reps.value_or(1);
    }
    // Two threads' samples of each call but the first, less outliers.
    EXPECT_LE(reps, 2 * (Calls - 1));
    EXPECT_GE(reps, Calls - 1);
  }
}

TEST_F(OnlineProfileTest, StoredSpeedIsOneThreadsSpeed) {
  // Per thread 1000 iterations of 3 us: 3 ms. A profile of the team (two
  // threads) would say 1.5 us an iteration.
  constexpr double Seconds = 3e-6;
  // Slower than the spin only by the loop's overhead, and by preemption
  // that the robust mean did not drop: on a busy machine, the best of a
  // few tries.
  double best = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::string name = "exec.online.speed." + std::to_string(attempt);
    const fpm_loop loop = namedLoop(name.c_str(), "equal");
    Spin spin;
    spin.nanoseconds = 3000;
    for (int call = 0; call < 10; ++call)
      ASSERT_EQ(fpm_parallel_for(&loop, 2000, Spin::body, &spin), FPM_OK)
          << fpm_last_error();
    fpm::flushProfiles();
    const std::optional<fpm::Profile> profile = stored(name);
    ASSERT_TRUE(profile);
    ASSERT_EQ(profile->points.size(), 1u);
    const fpm::ProfilePoint &point = profile->points.front();
    EXPECT_NEAR(static_cast<double>(point.size), 1000.0, 32.0);
    const double perIteration = point.time / static_cast<double>(point.size);
    EXPECT_GE(perIteration, 0.97 * Seconds); // never faster than the spin
    best = attempt == 0 ? perIteration : std::min(best, perIteration);
    if (best <= 1.2 * Seconds)
      break;
  }
  EXPECT_LE(best, 1.2 * Seconds);
}

TEST_F(OnlineProfileTest, UnnamedLoopsStoreNothing) {
  const fpm_loop loop = namedLoop(nullptr, "gss");
  Spin spin;
  spin.nanoseconds = 2000;
  for (int call = 0; call < 5; ++call)
    ASSERT_EQ(fpm_parallel_for(&loop, 2000, Spin::body, &spin), FPM_OK)
        << fpm_last_error();
  fpm::flushProfiles();
  EXPECT_TRUE(folderIsEmpty());
}

TEST_F(OnlineProfileTest, FirstCallAndStoppedCallsAreLeftOut) {
  Spin spin;
  spin.nanoseconds = 2000;
  // Its first call pays for cold caches: the only call stores nothing.
  const fpm_loop once = namedLoop("exec.online.once", "equal");
  ASSERT_EQ(fpm_parallel_for(&once, 2000, Spin::body, &spin), FPM_OK);
  // A stopped call's shares were cut short.
  const fpm_loop stops = namedLoop("exec.online.stops", "equal");
  auto fails = [](std::int64_t, std::int64_t, void *) { return 1; };
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(fpm_parallel_for(&stops, 2000, fails, nullptr),
              FPM_ERROR_STOPPED);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  fpm::flushProfiles();
  EXPECT_TRUE(folderIsEmpty());
}

TEST_F(OnlineProfileTest, ShortCallsAreSampledAtABoundedRate) {
  // Calls of a few microseconds: about one per millisecond is timed.
  const fpm_loop loop = namedLoop("exec.online.short", "equal");
  Coverage coverage(64);
  const auto start = std::chrono::steady_clock::now();
  int calls = 0;
  while (std::chrono::steady_clock::now() - start <
         std::chrono::milliseconds(50)) {
    ASSERT_EQ(fpm_parallel_for(&loop, 64, Coverage::body, &coverage), FPM_OK);
    ++calls;
  }
  const double elapsedMs = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  fpm::flushProfiles();
  const std::optional<fpm::Profile> profile = stored("exec.online.short");
  ASSERT_TRUE(profile);
  std::int64_t reps = 0;
  for (const fpm::ProfilePoint &point : profile->points) {
    EXPECT_EQ(point.size, 32); // each thread's half
    reps += point.reps.value_or(1);
  }
  // Two samples per timed call, some dropped as outliers.
  EXPECT_GE(reps, 1);
  EXPECT_LE(reps, 2 * (static_cast<std::int64_t>(elapsedMs) + 1));
  EXPECT_LT(reps, 2 * calls) << calls << " calls";
}

} // namespace

TEST(ApiTest, VerboseIsAFlagReadOneWay) {
  // FPM_VERBOSE=no turned verbose on: anything but "0" did.
  const fpm_loop loop = makeLoop("equal");
  for (const char *off : {"0", "no", "NO", "false", "False", "off", "OFF"}) {
    SCOPED_TRACE(off);
    ScopedEnv env("FPM_VERBOSE", off);
    Coverage coverage(100);
    testing::internal::CaptureStderr();
    EXPECT_EQ(fpm_parallel_for(&loop, 100, Coverage::body, &coverage), FPM_OK);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  }
  for (const char *on : {"1", "yes", "Yes", "true", "TRUE", "on", "On"}) {
    SCOPED_TRACE(on);
    ScopedEnv env("FPM_VERBOSE", on);
    // A loop of its own, so that its split is described again (a loop
    // describes its first few splits only).
    fpm_loop named = loop;
    named.name = on;
    Coverage coverage(100);
    testing::internal::CaptureStderr();
    EXPECT_EQ(fpm_parallel_for(&named, 100, Coverage::body, &coverage), FPM_OK);
    EXPECT_NE(testing::internal::GetCapturedStderr(), "");
  }
  for (const char *bad : {"2", "maybe", "y", "enabled", "-1"}) {
    SCOPED_TRACE(bad);
    ScopedEnv env("FPM_VERBOSE", bad);
    Coverage coverage(100);
    EXPECT_EQ(fpm_parallel_for(&loop, 100, Coverage::body, &coverage),
              FPM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(coverage.calls.load(), 0);
    EXPECT_EQ(std::string(fpm_last_error()),
              "FPM_VERBOSE \"" + std::string(bad) +
                  "\": expected 1, yes, true or on, or 0, no, false or off");
  }
}

TEST(ApiTest, StealIsReadOnTheCpuPathToo) {
  // FPM_STEAL=abc was an error with OpenCL devices and ignored here.
  const fpm_loop loop = makeLoop("gss");
  for (const char *good : {"0", "1", "no", "On"}) {
    SCOPED_TRACE(good);
    ScopedEnv env("FPM_STEAL", good);
    Coverage coverage(100);
    EXPECT_EQ(fpm_parallel_for(&loop, 100, Coverage::body, &coverage), FPM_OK);
  }
  ScopedEnv env("FPM_STEAL", "abc");
  Coverage coverage(100);
  EXPECT_EQ(fpm_parallel_for(&loop, 100, Coverage::body, &coverage),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(coverage.calls.load(), 0);
  EXPECT_EQ(std::string(fpm_last_error()),
            "FPM_STEAL \"abc\": expected 1, yes, true or on, or 0, no, false "
            "or off");
}

TEST(Environment, EveryReaderTakesEmptyForUnset) {
  ScopedEnv empty("FPM_TEST_VARIABLE", "");
  EXPECT_EQ(fpm::textFromEnvironment("FPM_TEST_VARIABLE"), nullptr);
  EXPECT_EQ(fpm::integerFromEnvironment("FPM_TEST_VARIABLE", 0, 9),
            std::nullopt);
  EXPECT_EQ(fpm::flagFromEnvironment("FPM_TEST_VARIABLE"), std::nullopt);
  {
    ScopedEnv unset("FPM_TEST_VARIABLE", std::nullopt);
    EXPECT_EQ(fpm::textFromEnvironment("FPM_TEST_VARIABLE"), nullptr);
  }
  ScopedEnv set("FPM_TEST_VARIABLE", "7");
  EXPECT_STREQ(fpm::textFromEnvironment("FPM_TEST_VARIABLE"), "7");
  EXPECT_EQ(fpm::integerFromEnvironment("FPM_TEST_VARIABLE", 0, 9), 7);
  EXPECT_THROW(fpm::integerFromEnvironment("FPM_TEST_VARIABLE", 0, 5),
               std::invalid_argument);
  EXPECT_THROW(fpm::flagFromEnvironment("FPM_TEST_VARIABLE"),
               std::invalid_argument);
}

TEST(Environment, InjectFaultEchoesTheStartOfALongList) {
  const std::string known[] = {"opencl0"};
  for (const std::string &text :
       {std::string(100000, 'x'), "opencl0:1," + std::string(100000, 'x'),
        std::string(100000, 'p') + ":1"}) {
    try {
      fpm::parseInjectedFaults(text, known);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument &error) {
      EXPECT_LT(std::string(error.what()).size(), 400u) << error.what();
    }
  }
}

TEST(Environment, AnErrorEchoesTheStartOfALongValue) {
  ScopedEnv set("FPM_TEST_VARIABLE", std::string(100000, '9'));
  for (int reader = 0; reader < 2; ++reader) {
    try {
      if (reader == 0)
        fpm::integerFromEnvironment("FPM_TEST_VARIABLE", 0, 9);
      else
        fpm::flagFromEnvironment("FPM_TEST_VARIABLE");
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument &error) {
      const std::string message = error.what();
      EXPECT_TRUE(message.starts_with("FPM_TEST_VARIABLE \"9999")) << message;
      EXPECT_LT(message.size(), 200u) << message;
    }
  }
}

/// Iterations of 2 us, 8 times longer on thread 0 while `slowZero` is set:
/// a core another program keeps busy.
struct Neighbour {
  std::atomic<bool> slowZero{true};
  std::atomic<std::int64_t> onZero{0};
  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Neighbour *>(context);
    const bool zero = omp_get_thread_num() == 0;
    const auto perIteration =
        std::chrono::nanoseconds(zero && self.slowZero.load() ? 16000 : 2000);
    const auto until =
        std::chrono::steady_clock::now() + perIteration * (end - begin);
    while (std::chrono::steady_clock::now() < until) {
    }
    if (zero)
      self.onZero += end - begin;
    return 0;
  }
};

TEST(ApiTest, AutoOnTheCpuFollowsASlowThread) {
  const ScopedThreads threads(2);
  ScopedEnv verbose("FPM_VERBOSE", "1");
  constexpr std::int64_t Trips = 1000;
  Neighbour neighbour;
  fpm_loop loop{};
  loop.schedule = "auto";
  auto call = [&] {
    neighbour.onZero = 0;
    EXPECT_EQ(fpm_parallel_for(&loop, Trips, Neighbour::body, &neighbour),
              FPM_OK)
        << fpm_last_error();
    return static_cast<double>(neighbour.onZero.load()) / Trips;
  };
  testing::internal::CaptureStderr();
  // Equal shares first: thread 0 runs half.
  EXPECT_EQ(call(), 0.5);
  // Then, once it has measured the slow thread, factoring's chunks: thread
  // 0 runs far less than half (one of its first chunks, a quarter).
  double least = 0.5;
  for (int c = 0; c < 30; ++c)
    least = std::min(least, call());
  EXPECT_LT(least, 0.3);
  // The neighbour leaves: equal shares again (a loaded machine may send it
  // back to chunks: other programs are neighbours too).
  neighbour.slowZero = false;
  for (int c = 0; c < 160; ++c)
    call();
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("chunks (fss) from now on"), std::string::npos) << said;
  EXPECT_NE(said.find("equal shares from now on"), std::string::npos) << said;
}
