//===- plan_test.cpp - The planner, and loops run on a part ---------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// makePlan() is the one place a split is decided: its `auto` rule, that
// every plan covers the iterations exactly once, and the granule caps.
// runLoop() runs any part [begin, end) of a loop's iterations, on the CPU
// team and with OpenCL devices.
//
//===----------------------------------------------------------------------===//

#include "balance/balance.hpp"
#include "data/sections.hpp"
#include "device/opencl/opencl.hpp"
#include "exec/exec.hpp"
#include "exec/plan.hpp"
#include "exec/schedule_string.hpp"
#include "partition/partition.hpp"
#include "support/scoped.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

namespace fpm {
namespace {

using test::ScopedEnv;
using test::ScopedThreads;

std::vector<PlanPe> pes(std::vector<double> speeds, bool guessed = false) {
  std::vector<PlanPe> result;
  for (std::size_t p = 0; p < speeds.size(); ++p)
    result.push_back({"pe" + std::to_string(p), 1, speeds[p], guessed});
  return result;
}

/// A stored FPM of constant `speed`.
Profile model(const std::string &pe, double speed) {
  Profile profile;
  profile.kernel = "loop";
  profile.device = pe;
  profile.points = {{1, 1.0 / speed, {}, {}},
                    {1 << 20, double(1 << 20) / speed, {}, {}}};
  return profile;
}

/// Every iteration of [0, trips) is in exactly one package or the dynamic
/// tail.
void expectCovers(const Plan &plan, std::int64_t trips) {
  std::vector<int> times(static_cast<std::size_t>(trips), 0);
  for (const std::vector<Range> &packages : plan.packages)
    for (const Range &range : packages) {
      ASSERT_LE(0, range.begin);
      ASSERT_LE(range.end, trips);
      for (std::int64_t k = range.begin; k < range.end; ++k)
        ++times[static_cast<std::size_t>(k)];
    }
  const std::int64_t tail =
      plan.kind == Plan::Kind::Dynamic ? plan.dynamicBegin : trips;
  for (std::int64_t k = 0; k < trips; ++k)
    ASSERT_EQ(times[static_cast<std::size_t>(k)], k < tail ? 1 : 0) << k;
}

Plan planFor(const char *schedule, std::vector<PlanPe> planned,
             std::int64_t trips, std::span<const Profile> models = {},
             bool alike = false, std::int64_t alignment = 1) {
  const LoopSchedule parsed = parseLoopSchedule(schedule);
  PlanRequest request;
  request.schedule = &parsed;
  request.pes = planned;
  request.tripCount = trips;
  request.models = models;
  request.alike = alike;
  request.alignment = alignment;
  Plan plan = makePlan(request);
  expectCovers(plan, trips);
  return plan;
}

TEST(PlanTest, AutoFollowsWhatIsKnownOfThePes) {
  // Threads of one CPU: equal shares.
  Plan plan = planFor("auto", pes({1, 1, 1}), 300, {}, true);
  EXPECT_EQ(plan.partitioner->name, std::string("equal"));
  EXPECT_EQ(plan.planned(0), 100);
  EXPECT_EQ(plan.reason, "equal: the CPU threads are alike");

  // Nothing measured: guided self-scheduling, which measures as it goes.
  plan = planFor("auto", pes({1, 1}, true), 1000);
  EXPECT_EQ(plan.kind, Plan::Kind::Dynamic);
  EXPECT_EQ(plan.dynamic.scheme, Scheme::Gss);

  // Speeds measured: split by them.
  plan = planFor("auto", pes({3, 1}), 4000);
  EXPECT_EQ(plan.partitioner->name, std::string("cpm"));
  EXPECT_EQ(plan.planned(0), 3000);

  // Stored FPMs of every PE: the exact optimum while it is cheap...
  const std::vector<Profile> models{model("pe0", 3), model("pe1", 1)};
  plan = planFor("auto", pes({3, 1}), ExactSolverUnits, models);
  EXPECT_EQ(plan.partitioner->name, std::string("optimal"));
  EXPECT_TRUE(plan.modelled);
  // ... and on coarser granules past the exact solvers' cap, for a few PEs
  // (each keeps many granules: within a granule of its optimal share).
  plan = planFor("auto", pes({3, 1}), 100 * ExactSolverUnits, models);
  EXPECT_EQ(plan.partitioner->name, std::string("optimal"));
  EXPECT_EQ(plan.granule, 100);
  EXPECT_NEAR(static_cast<double>(plan.planned(0)), 75 * ExactSolverUnits, 100);
  // Many PEs (a cluster's ranks) on a long loop: WDAH on fine granules,
  // where the coarse ones would leave some PEs a few granules each.
  std::vector<Profile> many;
  for (int p = 0; p < 17; ++p)
    many.push_back(model("pe" + std::to_string(p), 1));
  plan = planFor("auto", pes(std::vector<double>(17, 1.0)),
                 ExactSolverUnits + 1, many);
  EXPECT_EQ(plan.partitioner->name, std::string("wdah"));
}

TEST(PlanTest, PartialModelsSplitWithNumerical) {
  LoadBalancer balancer(2);
  balancer.seed(0, model("pe0", 1).points);
  balancer.seed(1, model("pe1", 1).points);
  ASSERT_TRUE(balancer.ready());
  const LoopSchedule parsed = parseLoopSchedule("auto");
  const std::vector<PlanPe> planned = pes({1, 1});
  PlanRequest request;
  request.schedule = &parsed;
  request.pes = planned;
  request.tripCount = 1000;
  request.partial = &balancer;
  const Plan plan = makePlan(request);
  EXPECT_TRUE(plan.onPartialModels);
  EXPECT_EQ(plan.partitioner->name, std::string("numerical"));
  expectCovers(plan, 1000);
}

TEST(PlanTest, EverySchedulePlansEveryIterationOnce) {
  for (const char *schedule :
       {"equal", "cpm", "geometric", "numerical", "hpopta", "optimal", "wdah",
        "wdah_heuristic", "pss", "css(7)", "gss", "fss", "tss", "gss, 50",
        "fss, 80", "tss, 100"})
    // The last: coarser static granules (exact solvers), still aligned.
    for (std::int64_t trips :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{63}, std::int64_t{64},
          std::int64_t{1000}, std::int64_t{4097}, 100 * ExactSolverUnits + 1}) {
      SCOPED_TRACE(std::string(schedule) + ", " + std::to_string(trips));
      planFor(schedule, pes({2, 1, 1}), trips);
      // A device's alignment, and a PE without workers.
      std::vector<PlanPe> withIdle = pes({4, 1, 1});
      withIdle[1].workers = 0;
      const Plan plan = planFor(schedule, withIdle, trips, {}, false, 64);
      EXPECT_EQ(plan.planned(1), 0);
      EXPECT_EQ(plan.granule % 64, 0);
    }
}

TEST(PlanTest, StaticPartitionersSeeBoundedGranules) {
  const Partitioner &wdah = *findPartitioner("wdah");
  const Partitioner &optimal = *findPartitioner("optimal");
  const std::int64_t huge = std::int64_t{1} << 40;
  EXPECT_LE(huge / staticGranule(wdah, huge, 1), StaticUnits);
  EXPECT_LE(huge / staticGranule(optimal, huge, 1), ExactSolverUnits);
  EXPECT_EQ(staticGranule(wdah, 1000, 7), 7);
}

TEST(PlanTest, NoPeTakingPartIsAnError) {
  std::vector<PlanPe> none = pes({1});
  none[0].workers = 0;
  const LoopSchedule parsed = parseLoopSchedule("equal");
  PlanRequest request;
  request.schedule = &parsed;
  request.pes = none;
  request.tripCount = 10;
  EXPECT_THROW(makePlan(request), std::invalid_argument);
}

/// Counts how often each iteration ran.
struct Counted {
  std::vector<std::atomic<int>> runs;
  explicit Counted(std::int64_t trips)
      : runs(static_cast<std::size_t>(trips)) {}
  static int body(std::int64_t begin, std::int64_t end, void *context) {
    auto &self = *static_cast<Counted *>(context);
    for (std::int64_t k = begin; k < end; ++k)
      ++self.runs[static_cast<std::size_t>(k)];
    return 0;
  }
};

TEST(LoopPartTest, RunsExactlyItsPartOnTheCpu) {
  const ScopedThreads threads(3);
  constexpr std::int64_t Trips = 1000;
  for (const char *schedule : {"auto", "equal", "wdah", "gss", "fss, 50"})
    for (const Range part : {Range{0, Trips}, Range{250, 730}, Range{999, 1000},
                             Range{400, 400}}) {
      SCOPED_TRACE(std::string(schedule) + " [" + std::to_string(part.begin) +
                   ", " + std::to_string(part.end) + ")");
      Counted counted(Trips);
      LoopCall call;
      call.schedule = schedule;
      call.tripCount = Trips;
      call.part = part;
      call.body = Counted::body;
      call.context = &counted;
      ASSERT_EQ(runLoop(call), LoopStatus::Completed);
      for (std::int64_t k = 0; k < Trips; ++k)
        ASSERT_EQ(counted.runs[static_cast<std::size_t>(k)].load(),
                  k >= part.begin && k < part.end ? 1 : 0)
            << k;
    }
}

TEST(LoopPartTest, APartOutsideTheLoopIsRefused) {
  Counted counted(10);
  LoopCall call;
  call.tripCount = 10;
  call.body = Counted::body;
  call.context = &counted;
  for (const Range part : {Range{-1, 5}, Range{5, 11}, Range{6, 5}}) {
    call.part = part;
    EXPECT_THROW(runLoop(call), std::invalid_argument);
  }
}

constexpr const char *IncrementSource = R"(
__kernel void increment(__global int *x, __global int *pe) {
  const size_t k = get_global_id(0);
  x[k] = x[k] * 2 + 1;
  pe[k] = 1;
}
)";

TEST(LoopPartTest, RunsExactlyItsPartWithOpenClDevices) {
  // PoCL's CPU device beside the CPU team: the part's sections, and no
  // other, go to the device and back.
  if (opencl::devices().empty())
    GTEST_SKIP() << "no OpenCL device";
  const ScopedThreads threads(2);
  const ScopedEnv units("FPM_OPENCL_CPU_UNITS", "1");
  constexpr std::int64_t Trips = 5000;
  for (const char *devices : {"gpu", "all"})
    for (const char *schedule : {"equal", "gss"})
      for (const Range part : {Range{1000, 4321}, Range{0, 64}}) {
        SCOPED_TRACE(std::string(devices) + ", " + schedule);
        std::vector<int> x(Trips);
        for (std::int64_t k = 0; k < Trips; ++k)
          x[static_cast<std::size_t>(k)] = static_cast<int>(k);
        std::vector<int> pe(Trips, 0); // 1: a device ran it, 2: the CPU
        fpm_arg args[] = {{FPM_ARG_INOUT, x.data(), sizeof(int), Trips, 0, 1, 1,
                           0, 0, nullptr, 0, 0, 0},
                          {FPM_ARG_OUT, pe.data(), sizeof(int), Trips, 0, 1, 1,
                           0, 0, nullptr, 0, 0, 0}};
        fpm_kernel kernel{};
        kernel.source = IncrementSource;
        kernel.name = "increment";
        kernel.args = args;
        kernel.arg_count = 2;
        const KernelSpec spec = makeKernelSpec(kernel, Trips);
        struct Host {
          int *x, *pe;
          static int body(std::int64_t begin, std::int64_t end, void *context) {
            auto &self = *static_cast<Host *>(context);
            for (std::int64_t k = begin; k < end; ++k) {
              self.x[k] = self.x[k] * 2 + 1;
              self.pe[k] = 2;
            }
            return 0;
          }
        } host{x.data(), pe.data()};
        LoopCall call;
        call.schedule = schedule;
        call.tripCount = Trips;
        call.part = part;
        call.body = Host::body;
        call.context = &host;
        call.kernel = &spec;
        call.devices = parseDevices(devices, "devices");
        ASSERT_EQ(runLoop(call), LoopStatus::Completed);
        int onDevice = 0, onCpu = 0;
        for (std::int64_t k = 0; k < Trips; ++k) {
          const bool in = k >= part.begin && k < part.end;
          const auto at = static_cast<std::size_t>(k);
          ASSERT_EQ(x[at], in ? 2 * k + 1 : k) << k;
          ASSERT_EQ(pe[at] != 0, in) << k;
          onDevice += pe[at] == 1;
          onCpu += pe[at] == 2;
        }
        // Without the CPU team, the device runs all of the part.
        if (std::string(devices) == "gpu") {
          EXPECT_EQ(onDevice, part.size());
          EXPECT_EQ(onCpu, 0);
        }
      }
}

} // namespace
} // namespace fpm

namespace {

/// Time of `iterations` on PEs of the given speeds (iterations per second).
std::function<double(std::size_t, std::int64_t)>
bySpeed(std::vector<double> speeds) {
  return [speeds = std::move(speeds)](std::size_t pe, std::int64_t iterations) {
    return static_cast<double>(iterations) / speeds[pe];
  };
}

} // namespace

TEST(KeepCutsTest, CutsStayWhereEveryPeStillFinishesInTime) {
  // Three PEs at 100, 200, 100 per second: the plan 250, 500, 250; last
  // call's split 240, 510, 250 is within 3% of it and stays whole.
  const std::vector<fpm::Range> planned{{0, 250}, {250, 750}, {750, 1000}};
  const std::vector<fpm::Range> last{{0, 240}, {240, 750}, {750, 1000}};
  EXPECT_EQ(fpm::keepCuts(planned, last, bySpeed({100, 200, 100})), last);
}

TEST(KeepCutsTest, ACutMovesOnlyAsFarAsItMust) {
  // PE 0 became twice as slow. The plan's makespan is 2 s (PE 0's 100 at
  // 50/s), so each PE may take 2.06 s: PE 0 up to 103 iterations, PE 1 up
  // to 412, PE 2 up to 515. The first cut moves from 400 to 103, the second
  // from 600 only to 515 (103 + 412), and PE 2 takes the rest.
  const std::vector<fpm::Range> planned{{0, 100}, {100, 500}, {500, 1000}};
  const std::vector<fpm::Range> last{{0, 400}, {400, 600}, {600, 1000}};
  EXPECT_EQ(fpm::keepCuts(planned, last, bySpeed({50, 200, 250})),
            (std::vector<fpm::Range>{{0, 103}, {103, 515}, {515, 1000}}));
}

TEST(KeepCutsTest, CutsFallOnGranules) {
  const std::vector<fpm::Range> planned{{0, 128}, {128, 1000}};
  const std::vector<fpm::Range> last{{0, 640}, {640, 1000}};
  const std::optional<std::vector<fpm::Range>> kept =
      fpm::keepCuts(planned, last, bySpeed({128, 872}), 64);
  ASSERT_TRUE(kept);
  EXPECT_EQ((*kept)[0].end % 64, 0);
  EXPECT_LE((*kept)[0].end, 131); // 1.03 * 1 s * 128/s
}

TEST(KeepCutsTest, OtherIterationsOrPesAreNotKept) {
  const std::vector<fpm::Range> planned{{0, 500}, {500, 1000}};
  const auto time = bySpeed({100, 100});
  EXPECT_FALSE(fpm::keepCuts(
      planned, std::vector<fpm::Range>{{0, 500}, {500, 900}}, time));
  EXPECT_FALSE(
      fpm::keepCuts(planned, std::vector<fpm::Range>{{0, 1000}}, time));
  EXPECT_FALSE(fpm::keepCuts(planned, std::vector<fpm::Range>{}, time));
}

TEST(MovesPayTest, ASplitMovesWhenItsGainOutweighsItsMoves) {
  // Two PEs at 100 and 300 per second. Last call ran 400 | 600: 4 s and
  // 2 s. The plan 250 | 750 takes 2.5 s on each.
  const std::vector<fpm::Range> last{{0, 400}, {400, 1000}};
  const std::vector<fpm::Range> planned{{0, 250}, {250, 1000}};
  const auto time = bySpeed({100, 300});
  std::vector<std::pair<std::size_t, fpm::Range>> asked;
  auto costing = [&](double seconds) {
    return [&asked, seconds](std::size_t pe, fpm::Range range) {
      asked.emplace_back(pe, range);
      return seconds;
    };
  };
  // Free moves: the plan's 2.5 s beats the kept 4 s.
  EXPECT_TRUE(fpm::movesPay(planned, last, time, costing(0)));
  // Only PE 1 gains rows, [250, 400): it asked for those alone.
  EXPECT_EQ(asked,
            (std::vector<std::pair<std::size_t, fpm::Range>>{{1, {250, 400}}}));
  // A move of 1 s still pays (3.5 s < 4 s); one of 1.5 s no longer does.
  EXPECT_TRUE(fpm::movesPay(planned, last, time, costing(1.0)));
  EXPECT_FALSE(fpm::movesPay(planned, last, time, costing(1.5)));
  // A plan no better than the kept split never pays.
  EXPECT_FALSE(fpm::movesPay(last, last, time, costing(0)));
}

TEST(MovesPayTest, RowsGainedOnBothSidesAreCostedApart) {
  // The middle PE of three gains rows at both ends.
  const std::vector<fpm::Range> last{{0, 300}, {300, 600}, {600, 900}};
  const std::vector<fpm::Range> planned{{0, 200}, {200, 700}, {700, 900}};
  std::vector<fpm::Range> costed;
  fpm::movesPay(planned, last, bySpeed({100, 100, 100}),
                [&](std::size_t pe, fpm::Range range) {
                  EXPECT_EQ(pe, 1u);
                  costed.push_back(range);
                  return 0.0;
                });
  EXPECT_EQ(costed, (std::vector<fpm::Range>{{200, 300}, {600, 700}}));
}
