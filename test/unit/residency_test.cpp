//===- residency_test.cpp - Data regions and their coherence --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ByteSet; the coherence of a resident array's copies, with a device copy
// that is memory of the test's own (what moves where, and when); and data
// regions on the device under test (device_under_test.hpp: PoCL, or sim0,
// which works in the host's memory) through the C API: a time loop of two
// stencils gives the serial answer on every PE selection, under faults,
// and moves less. Also CopyCost, the line through the copies that prices a
// move, and readSeconds(). A little over 600 lines, as it tests the one
// folder residency/, from its byte sets up to regions through the API.
//
//===----------------------------------------------------------------------===//

#include "residency/residency.hpp"

#include "fpm/fpm.h"
#include "fpm/fpm.hpp"
#include "unit/device_under_test.hpp"

#include <gtest/gtest.h>

#include "support/scoped.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace {

namespace dut = fpm::test::dut;
using fpm::residency::Bytes;
using fpm::residency::ByteSet;
using fpm::test::ScopedEnv;
using fpm::test::ScopedThreads;
using fpm::test::TempDir;

std::vector<Bytes> all(const ByteSet &set) {
  return {set.ranges().begin(), set.ranges().end()};
}

TEST(ByteSetTest, AddMergesWhatTouches) {
  ByteSet set;
  set.add({10, 20});
  set.add({30, 40});
  EXPECT_EQ(all(set), (std::vector<Bytes>{{10, 20}, {30, 40}}));
  set.add({20, 30}); // touches both
  EXPECT_EQ(all(set), (std::vector<Bytes>{{10, 40}}));
  set.add({0, 5});
  set.add({35, 50});
  set.add({7, 7}); // empty: nothing
  EXPECT_EQ(all(set), (std::vector<Bytes>{{0, 5}, {10, 50}}));
}

TEST(ByteSetTest, RemoveCutsAndSplits) {
  ByteSet set;
  set.add({0, 100});
  set.remove({40, 60});
  EXPECT_EQ(all(set), (std::vector<Bytes>{{0, 40}, {60, 100}}));
  set.remove({30, 70});
  EXPECT_EQ(all(set), (std::vector<Bytes>{{0, 30}, {70, 100}}));
  set.remove({0, 100});
  EXPECT_TRUE(all(set).empty());
}

TEST(ByteSetTest, MissingAndWithin) {
  ByteSet set;
  set.add({10, 20});
  set.add({30, 40});
  EXPECT_EQ(set.missing({0, 50}),
            (std::vector<Bytes>{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(set.missing({12, 18}), std::vector<Bytes>{});
  EXPECT_EQ(set.missing({15, 35}), (std::vector<Bytes>{{20, 30}}));
  EXPECT_EQ(set.within({15, 35}), (std::vector<Bytes>{{15, 20}, {30, 35}}));
  EXPECT_EQ(set.within({20, 30}), std::vector<Bytes>{});
}

TEST(CopyCostTest, NothingKnownCostsNothing) {
  const fpm::residency::CopyCost cost;
  EXPECT_FALSE(cost.known());
  EXPECT_EQ(cost.seconds(1 << 20), 0.0);
}

TEST(CopyCostTest, CopiesOfManySizesGiveLatencyAndRate) {
  fpm::residency::CopyCost cost;
  for (std::size_t bytes = 4096; bytes <= (std::size_t{1} << 22); bytes *= 2)
    cost.add(bytes, 20e-6 + static_cast<double>(bytes) / 5e9);
  EXPECT_NEAR(cost.latency(), 20e-6, 1e-9);
  EXPECT_NEAR(cost.secondsPerByte(), 1 / 5e9, 1e-15);
  EXPECT_NEAR(cost.seconds(1 << 20), 20e-6 + (1 << 20) / 5e9, 1e-9);
}

TEST(CopyCostTest, CopiesOfOneSizeGiveTheirMean) {
  fpm::residency::CopyCost cost;
  cost.add(4096, 1e-5);
  cost.add(4096, 3e-5);
  EXPECT_DOUBLE_EQ(cost.secondsPerByte(), 0.0);
  // The older copy weighs Decay.
  constexpr double Decay = fpm::residency::CopyCost::Decay;
  EXPECT_NEAR(cost.seconds(4096), (Decay * 1e-5 + 3e-5) / (Decay + 1), 1e-15);
}

TEST(CopyCostTest, ANegativeLatencyGivesALineThroughTheOrigin) {
  fpm::residency::CopyCost cost;
  cost.add(1000, 1.0);
  cost.add(2000, 3.0); // 2 ms a byte less 1 s: below 0 at 0 bytes
  EXPECT_EQ(cost.latency(), 0.0);
  constexpr double Decay = fpm::residency::CopyCost::Decay;
  EXPECT_NEAR(cost.seconds(3000),
              3000 * (Decay * 1 + 3) / (Decay * 1000 + 2000), 1e-12);
}

TEST(CopyCostTest, RecentCopiesWeighMore) {
  fpm::residency::CopyCost cost;
  for (int i = 0; i < 100; ++i)
    cost.add(4096, 1e-5);
  for (int i = 0; i < 100; ++i)
    cost.add(4096, 1e-4); // the link got slower
  EXPECT_NEAR(cost.seconds(4096), 1e-4, 1e-5);
}

//===----------------------------------------------------------------------===//
// Coherence, with device copies in the test's memory
//===----------------------------------------------------------------------===//

/// A device's copy as plain memory: the test writes into it what a kernel
/// would, and counts what the host gets back.
struct MemoryCopy final : fpm::residency::DeviceCopy {
  explicit MemoryCopy(std::size_t bytes) : memory(bytes) {}
  void download(Bytes range, std::byte *host) override {
    std::memcpy(host + range.first, memory.data() + range.first, range.size());
    downloaded += range.size();
  }
  std::vector<std::byte> memory;
  std::size_t downloaded = 0;
};

/// An array of 100 bytes in a region, and two devices' copies of it.
class CoherenceTest : public testing::Test {
protected:
  void SetUp() override {
    for (int i = 0; i < 100; ++i)
      host[i] = std::byte(i);
    fpm::residency::begin(mapping);
    array = fpm::residency::find(host, sizeof host);
    ASSERT_NE(array, nullptr);
    a = &copyOf(&deviceA);
    b = &copyOf(&deviceB);
  }
  void TearDown() override {
    if (fpm::residency::find(host, sizeof host))
      fpm::residency::end(mapping);
  }

  MemoryCopy &copyOf(const void *holder) {
    return static_cast<MemoryCopy &>(
        fpm::residency::deviceCopy(*array, holder, [](std::size_t bytes) {
          return std::make_unique<MemoryCopy>(bytes);
        }));
  }
  /// What a device's upload does with prepareRead's answer.
  std::vector<Bytes> read(const void *holder, MemoryCopy &copy,
                          std::vector<Bytes> ranges) {
    std::vector<Bytes> stale =
        fpm::residency::prepareRead(*array, holder, ranges);
    for (const Bytes &part : stale)
      std::memcpy(copy.memory.data() + part.first, host + part.first,
                  part.size());
    return stale;
  }
  /// A kernel of `holder` writes `value` over `range`.
  void write(const void *holder, MemoryCopy &copy, Bytes range, int value) {
    std::memset(copy.memory.data() + range.first, value, range.size());
    fpm::residency::wrote(*array, holder, std::vector<Bytes>{range});
  }

  std::byte host[100];
  std::vector<fpm::residency::Mapping> mapping{
      {host, sizeof host, fpm::residency::Map::InOut, {}}};
  fpm::residency::Array *array = nullptr;
  const int deviceA = 0, deviceB = 0; // their addresses are the holders
  MemoryCopy *a = nullptr, *b = nullptr;
};

TEST_F(CoherenceTest, ADeviceUploadsOnlyWhatItLacks) {
  EXPECT_EQ(read(&deviceA, *a, {{0, 50}}), (std::vector<Bytes>{{0, 50}}));
  EXPECT_EQ(read(&deviceA, *a, {{0, 50}}), std::vector<Bytes>{});
  EXPECT_EQ(read(&deviceA, *a, {{40, 60}}), (std::vector<Bytes>{{50, 60}}));
}

TEST_F(CoherenceTest, WritesStayOnTheDeviceUntilTheHostNeedsThem) {
  read(&deviceA, *a, {{0, 100}});
  write(&deviceA, *a, {10, 20}, 0xAA);
  EXPECT_EQ(host[15], std::byte(15)); // not yet back
  EXPECT_EQ(a->downloaded, 0u);
  // The host needs [0, 15): it gets bytes 10..15 from A, no more.
  fpm::residency::acquireHost(host, host + 15);
  EXPECT_EQ(host[12], std::byte(0xAA));
  EXPECT_EQ(host[15], std::byte(15));
  EXPECT_EQ(a->downloaded, 5u);
  // Asked again: nothing moves.
  fpm::residency::acquireHost(host, host + 15);
  EXPECT_EQ(a->downloaded, 5u);
}

TEST_F(CoherenceTest, AnotherDeviceGetsAWriteThroughTheHost) {
  read(&deviceA, *a, {{0, 100}});
  write(&deviceA, *a, {60, 70}, 0x11);
  // B reads [50, 80): the host gets [60, 70) from A first, then B uploads
  // all of it (it held nothing).
  EXPECT_EQ(read(&deviceB, *b, {{50, 80}}), (std::vector<Bytes>{{50, 80}}));
  EXPECT_EQ(b->memory[65], std::byte(0x11));
  EXPECT_EQ(a->downloaded, 10u);
  // A still holds its write; B's copy is current too: A reads nothing.
  EXPECT_EQ(read(&deviceA, *a, {{50, 80}}), std::vector<Bytes>{});
  // B writes over part of it: A's copy there is stale.
  write(&deviceB, *b, {62, 64}, 0x22);
  EXPECT_EQ(read(&deviceA, *a, {{50, 80}}), (std::vector<Bytes>{{62, 64}}));
  EXPECT_EQ(a->memory[63], std::byte(0x22));
}

TEST_F(CoherenceTest, HostWritesMakeDeviceCopiesStale) {
  read(&deviceA, *a, {{0, 100}});
  host[30] = std::byte(0x77);
  fpm::residency::updateDevices(host + 30, 1);
  EXPECT_EQ(read(&deviceA, *a, {{0, 100}}), (std::vector<Bytes>{{30, 31}}));
  EXPECT_EQ(a->memory[30], std::byte(0x77));
}

TEST_F(CoherenceTest, AFailedDeviceGivesBackWhatOnlyItHeld) {
  read(&deviceA, *a, {{0, 100}});
  write(&deviceA, *a, {0, 10}, 0x33);
  read(&deviceB, *b, {{0, 5}}); // B now holds [0, 5) too
  a->downloaded = 0;
  fpm::residency::forget(&deviceA);
  EXPECT_EQ(a->downloaded, 5u); // [5, 10): only A had it
  EXPECT_EQ(host[7], std::byte(0x33));
  // A holds nothing now: it reads everything again.
  EXPECT_EQ(read(&deviceA, *a, {{0, 100}}), (std::vector<Bytes>{{0, 100}}));
}

TEST_F(CoherenceTest, TheEndBringsAnInOutArrayBack) {
  read(&deviceA, *a, {{0, 100}});
  write(&deviceA, *a, {90, 100}, 0x44);
  fpm::residency::end(mapping);
  EXPECT_EQ(host[95], std::byte(0x44));
  EXPECT_FALSE(fpm::residency::find(host, sizeof host));
  EXPECT_FALSE(fpm::residency::active());
}

TEST_F(CoherenceTest, NestedRegionsCountAnArrayAndInArraysStayOut) {
  std::byte in[16] = {};
  const std::vector<fpm::residency::Mapping> inner{
      {host, sizeof host, fpm::residency::Map::InOut, {}},
      {in, sizeof in, fpm::residency::Map::In, {}}};
  fpm::residency::begin(inner);
  fpm::residency::Array *inArray = fpm::residency::find(in, sizeof in);
  ASSERT_NE(inArray, nullptr);
  auto &copy = static_cast<MemoryCopy &>(
      fpm::residency::deviceCopy(*inArray, &deviceA, [](std::size_t bytes) {
        return std::make_unique<MemoryCopy>(bytes);
      }));
  fpm::residency::prepareRead(*inArray, &deviceA, std::vector<Bytes>{{0, 16}});
  std::memset(copy.memory.data(), 0x55, 16);
  fpm::residency::wrote(*inArray, &deviceA, std::vector<Bytes>{{0, 16}});
  fpm::residency::end(inner);
  EXPECT_EQ(in[3], std::byte(0)); // an `in` array is not copied back
  EXPECT_FALSE(fpm::residency::find(in, sizeof in));
  EXPECT_TRUE(fpm::residency::find(host, sizeof host)); // still mapped once
}

/// Records what a region asks of the layer above it (libfpmrt-mpi's).
struct RecordingRankLayer final : fpm::residency::RankLayer {
  void gather(std::byte *first, std::byte *last) override {
    gathered.push_back({first, last});
    // What another rank wrote arrives on the host, as MPI would leave it.
    std::memset(first, 0x66, 4);
    fpm::residency::hostWrote(first, first + 4);
  }
  void wroteEverywhere(const std::byte *first, const std::byte *last) override {
    everywhere.push_back({first, last});
  }
  void released(const std::byte *base) override { gone.push_back(base); }
  std::vector<std::pair<const std::byte *, const std::byte *>> gathered,
      everywhere;
  std::vector<const std::byte *> gone;
};

TEST_F(CoherenceTest, RegionEndsAndUpdatesAskTheRankLayerFirst) {
  RecordingRankLayer layer;
  fpm::residency::setRankLayer(&layer);
  read(&deviceA, *a, {{0, 100}});
  write(&deviceA, *a, {0, 100}, 0x44);
  fpm::residency::updateHost(host + 10, 20);
  EXPECT_EQ(layer.gathered.size(), 1u);
  fpm::residency::updateDevices(host + 10, 20);
  EXPECT_EQ(layer.everywhere.size(), 1u);
  // The end gathers the whole array before the devices' bytes come back:
  // what the layer brought stays, and the device's own writes come back.
  layer.gathered.clear();
  fpm::residency::end(mapping);
  fpm::residency::setRankLayer(nullptr);
  ASSERT_EQ(layer.gathered.size(), 1u);
  EXPECT_EQ(layer.gathered.front().first, host);
  EXPECT_EQ(layer.gathered.front().second, host + sizeof host);
  EXPECT_EQ(host[0], std::byte(0x66));
  EXPECT_EQ(host[50], std::byte(0x44));
  EXPECT_EQ(layer.gone, (std::vector<const std::byte *>{host}));
}

TEST_F(CoherenceTest, ReadSecondsCostsWhatTheReaderLacks) {
  using fpm::residency::Direction;
  // Holders of their own: copy costs are the process's, by holder.
  static const int slow = 0, other = 0;
  MemoryCopy &copy = copyOf(&slow);
  read(&slow, copy, {{0, 100}});
  write(&slow, copy, {10, 20}, 0xAA); // only `slow` holds [10, 20)
  const std::vector<fpm::SectionRect> first30{{0, 30, 1, 0}};
  auto seconds = [&](const void *reader) {
    return fpm::residency::readSeconds(host, 1, first30, reader);
  };
  // No copy has taught a cost yet: moves look free.
  EXPECT_EQ(seconds(nullptr), 0.0);
  // Downloads from `slow`: 0.5 s, and 5 ms a byte.
  fpm::residency::copied(&slow, Direction::ToHost, 100, 1.0);
  fpm::residency::copied(&slow, Direction::ToHost, 200, 1.5);
  // The host lacks [10, 20): one download of 10 bytes.
  EXPECT_NEAR(seconds(nullptr), 0.55, 1e-9);
  // `slow` holds all of it: nothing to move.
  EXPECT_EQ(seconds(&slow), 0.0);
  // `other` holds nothing: the host gets [10, 20) first, then `other`
  // uploads 30 bytes, free until an upload has taught their cost.
  EXPECT_NEAR(seconds(&other), 0.55, 1e-9);
  fpm::residency::copied(&other, Direction::ToDevice, 100, 2.0);
  fpm::residency::copied(&other, Direction::ToDevice, 100, 2.0);
  EXPECT_NEAR(seconds(&other), 2.55, 1e-9);
  // Outside the resident array: nothing.
  char elsewhere[30];
  EXPECT_EQ(fpm::residency::readSeconds(elsewhere, 1, first30, nullptr), 0.0);
}

TEST_F(CoherenceTest, AnArrayThatOverlapsAnotherIsRefused) {
  const std::vector<fpm::residency::Mapping> part{
      {host + 10, 20, fpm::residency::Map::In, {}}};
  EXPECT_THROW(fpm::residency::begin(part), std::invalid_argument);
  EXPECT_THROW(fpm::residency::end(part), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// Regions on the device under test through the C API
//===----------------------------------------------------------------------===//

/// A time loop of two three-point stencils, x -> y -> x, on integers (exact
/// on every PE): y[i+1] = (x[i] + 2 x[i+1] + x[i+2]) % 1000003.
struct Stencil {
  static constexpr int N = 20000;
  std::vector<long long> x = std::vector<long long>(N),
                         y = std::vector<long long>(N);

  Stencil() {
    for (int i = 0; i < N; ++i)
      x[i] = y[i] = (i * 7919LL) % 1000;
  }

  struct Step {
    const long long *from;
    long long *to;
  };
  static int body(std::int64_t begin, std::int64_t end, void *context) {
    const Step &s = *static_cast<const Step *>(context);
    for (std::int64_t i = begin; i < end; ++i)
      s.to[i + 1] = (s.from[i] + 2 * s.from[i + 1] + s.from[i + 2]) % 1000003;
    return 0;
  }
  static constexpr const char *Source = R"(
__kernel void stencil(__global const long *from, __global long *to,
                   const ulong end) {
  size_t i = get_global_id(0);
  if (i >= end) return;
  to[i + 1] = (from[i] + 2 * from[i + 1] + from[i + 2]) % 1000003;
})";

  /// One sweep from `from` to `to` over the first `count` iterations (all
  /// N - 2 by default); FPM_OK or the error.
  static int sweep(const char *name, std::vector<long long> &from,
                   std::vector<long long> &to, std::int64_t count = N - 2) {
    Step step{from.data(), to.data()};
    fpm_arg args[3] = {};
    args[0].kind = FPM_ARG_IN;
    args[0].data = from.data();
    args[0].size = sizeof(long long);
    args[0].length = N;
    args[0].stride = 1;
    args[0].count = 3;
    args[1].kind = FPM_ARG_OUT;
    args[1].data = to.data();
    args[1].size = sizeof(long long);
    args[1].length = N;
    args[1].offset = 1;
    args[1].stride = 1;
    args[1].count = 1;
    args[2] = fpm_end_arg();
    fpm_kernel kernel{};
    kernel.source = Source;
    kernel.name = "stencil";
    kernel.args = args;
    kernel.arg_count = 3;
    fpm_loop loop{};
    loop.name = name;
    return fpm_parallel_for_kernel(&loop, count, body, &step, &kernel);
  }

  /// `steps` steps; with `region`, inside one.
  int run(int steps, bool region) {
    fpm_data arrays[2] = {
        {FPM_DATA_INOUT, x.data(), N * sizeof(long long), nullptr},
        {FPM_DATA_INOUT, y.data(), N * sizeof(long long), nullptr}};
    if (region && fpm_data_begin(arrays, 2) != FPM_OK)
      return FPM_ERROR_INVALID_ARGUMENT;
    for (int t = 0; t < steps; ++t) {
      if (int status = sweep("region.xy", x, y); status != FPM_OK)
        return status;
      if (int status = sweep("region.yx", y, x); status != FPM_OK)
        return status;
    }
    return region ? fpm_data_end(arrays, 2) : FPM_OK;
  }
};

class RegionTest : public testing::Test {
protected:
  void SetUp() override {
    if (!dut::present())
      GTEST_SKIP() << "no " << dut::Title << " device on this machine";
  }
  TempDir cacheDir_;
  ScopedEnv cache_{"FPM_CACHE_DIR", cacheDir_.path().string()};
  TempDir profiles_;
  ScopedEnv profileDir_{"FPM_PROFILE_DIR", profiles_.path().string()};
  ScopedEnv schedule_{"FPM_SCHEDULE", std::nullopt};
  ScopedEnv devices_{"FPM_DEVICES", dut::defaultDevices()};
  ScopedEnv fault_{"FPM_INJECT_FAULT", std::nullopt};
  ScopedEnv check_{"FPM_CHECK_DATA", std::nullopt};
  ScopedThreads threads_{2};
};

TEST_F(RegionTest, ATimeLoopGivesTheSerialAnswerOnEveryPeSelection) {
  Stencil serial;
  {
    ScopedEnv cpu("FPM_DEVICES", "cpu");
    ASSERT_EQ(serial.run(12, false), FPM_OK) << fpm_last_error();
  }
  for (const char *devices : dut::EverySelection)
    for (const char *schedule : {"auto", "equal", "gss", "fss, 50"}) {
      ScopedEnv d("FPM_DEVICES", devices);
      ScopedEnv s("FPM_SCHEDULE", schedule);
      Stencil inRegion;
      testing::internal::CaptureStderr();
      ASSERT_EQ(inRegion.run(12, true), FPM_OK) << fpm_last_error();
      const std::string errors = testing::internal::GetCapturedStderr();
      EXPECT_EQ(errors, "") << devices << ", " << schedule; // no device failed
      EXPECT_EQ(inRegion.x, serial.x) << devices << ", " << schedule;
      EXPECT_EQ(inRegion.y, serial.y) << devices << ", " << schedule;
    }
  EXPECT_FALSE(fpm::residency::active());
}

TEST_F(RegionTest, ARegionMovesLessThanItsLoopsAlone) {
  // On the devices alone, every array stays there: each step uploads
  // nothing once the first has, and only the end brings the arrays back.
  FPM_TEST_OPENCL_ONLY("it works in the host's memory: nothing moves");
  ScopedEnv gpu("FPM_DEVICES", "gpu");
  ScopedEnv equal("FPM_SCHEDULE", "equal");
  Stencil stencil;
  const fpm::residency::Traffic before = fpm::residency::traffic();
  testing::internal::CaptureStderr();
  ASSERT_EQ(stencil.run(10, true), FPM_OK) << fpm_last_error();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  const fpm::residency::Traffic after = fpm::residency::traffic();
  const std::uint64_t array = Stencil::N * sizeof(long long);
  // Both arrays up once (x whole; y's two ends, which no sweep writes),
  // and back once at the end.
  EXPECT_LE(after.toDevices - before.toDevices, 2 * array);
  EXPECT_LE(after.toHost - before.toHost, 2 * array);
  EXPECT_GT(after.toHost - before.toHost, 0u);
}

TEST_F(RegionTest, AFailedDeviceInsideARegionLosesNothing) {
  Stencil serial;
  {
    ScopedEnv cpu("FPM_DEVICES", "cpu");
    ASSERT_EQ(serial.run(6, false), FPM_OK) << fpm_last_error();
  }
  const std::string device = dut::Device;
  for (const std::string &fault :
       {device + ":0", device + ":2", device + ":2:wait"}) {
    ScopedEnv f("FPM_INJECT_FAULT", fault);
    ScopedEnv s("FPM_SCHEDULE", "gss");
    Stencil inRegion;
    testing::internal::CaptureStderr();
    const int status = inRegion.run(6, true);
    testing::internal::GetCapturedStderr();
    ASSERT_EQ(status, FPM_OK) << fpm_last_error();
    EXPECT_EQ(inRegion.x, serial.x) << fault;
    EXPECT_EQ(inRegion.y, serial.y) << fault;
  }
}

TEST_F(RegionTest, UpdatesMoveWhatTheProgramReadsAndWrites) {
  ScopedEnv gpu("FPM_DEVICES", dut::Alone);
  Stencil stencil;
  testing::internal::CaptureStderr();
  fpm::DataRegion region{
      fpm::mapped(FPM_DATA_INOUT, stencil.x.data(), Stencil::N),
      fpm::mapped(FPM_DATA_INOUT, stencil.y.data(), Stencil::N)};
  ASSERT_EQ(Stencil::sweep("region.update", stencil.x, stencil.y), FPM_OK);
  // The sweep's writes are on the device until the host asks for them.
  const long long expected =
      (stencil.x[0] + 2 * stencil.x[1] + stencil.x[2]) % 1000003;
  fpm::DataRegion::updateHost(stencil.y.data(), Stencil::N);
  EXPECT_EQ(stencil.y[1], expected);
  // The program writes x on the host and says so: the next sweep reads it.
  for (long long &v : stencil.x)
    v = 1;
  fpm::DataRegion::updateDevice(stencil.x.data(), Stencil::N);
  ASSERT_EQ(Stencil::sweep("region.update", stencil.x, stencil.y), FPM_OK);
  region.end();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(stencil.y[1], 4);
  EXPECT_EQ(stencil.y[Stencil::N / 2], 4);
}

TEST_F(RegionTest, ALoopWhoseSizeChangesInsideARegion) {
  // Sweeps over the whole array, then its first half, then a third: each
  // device holds other parts of the arrays at every call.
  const std::int64_t counts[] = {Stencil::N - 2, Stencil::N / 2, Stencil::N / 3,
                                 Stencil::N - 2};
  Stencil serial;
  {
    ScopedEnv cpu("FPM_DEVICES", "cpu");
    for (std::int64_t count : counts) {
      ASSERT_EQ(Stencil::sweep("region.sizes", serial.x, serial.y, count),
                FPM_OK);
      ASSERT_EQ(Stencil::sweep("region.sizes", serial.y, serial.x, count),
                FPM_OK);
    }
  }
  for (const char *devices : {dut::Alone, dut::WithCpu}) {
    ScopedEnv d("FPM_DEVICES", devices);
    Stencil inRegion;
    fpm::DataRegion region{
        fpm::mapped(FPM_DATA_INOUT, inRegion.x.data(), Stencil::N),
        fpm::mapped(FPM_DATA_INOUT, inRegion.y.data(), Stencil::N)};
    for (std::int64_t count : counts) {
      ASSERT_EQ(Stencil::sweep("region.sizes", inRegion.x, inRegion.y, count),
                FPM_OK);
      ASSERT_EQ(Stencil::sweep("region.sizes", inRegion.y, inRegion.x, count),
                FPM_OK);
    }
    region.end();
    EXPECT_EQ(inRegion.x, serial.x) << devices;
    EXPECT_EQ(inRegion.y, serial.y) << devices;
  }
}

TEST_F(RegionTest, CheckDataNamesAnArrayTheHostChangedBehindTheDevices) {
  FPM_TEST_OPENCL_ONLY("it holds no copy the host could change behind it");
  ScopedEnv gpu("FPM_DEVICES", "gpu");
  ScopedEnv check("FPM_CHECK_DATA", "1");
  Stencil stencil;
  fpm::DataRegion region{
      fpm::mapped(FPM_DATA_INOUT, stencil.x.data(), Stencil::N, "x"),
      fpm::mapped(FPM_DATA_INOUT, stencil.y.data(), Stencil::N, "y")};
  ASSERT_EQ(Stencil::sweep("region.check", stencil.x, stencil.y), FPM_OK)
      << fpm_last_error();
  // Said: the next loop runs.
  stencil.x[7] += 1;
  fpm::DataRegion::updateDevice(stencil.x.data(), Stencil::N);
  ASSERT_EQ(Stencil::sweep("region.check", stencil.x, stencil.y), FPM_OK)
      << fpm_last_error();
  // Not said: x is on the device too, and the host changed it.
  stencil.x[9] += 1;
  EXPECT_EQ(Stencil::sweep("region.check", stencil.x, stencil.y),
            FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("changed 'x' on the host"),
            std::string::npos)
      << fpm_last_error();
  fpm::DataRegion::updateDevice(stencil.x.data(), Stencil::N);
  EXPECT_EQ(Stencil::sweep("region.check", stencil.x, stencil.y), FPM_OK)
      << fpm_last_error();
}

TEST_F(RegionTest, BadRegionsAreRefused) {
  long long a[8] = {};
  fpm_data whole{FPM_DATA_IN, a, sizeof a, nullptr},
      part{FPM_DATA_IN, a + 2, 16, nullptr}, bad{7, a, sizeof a, {}},
      none{FPM_DATA_IN, nullptr, 8, nullptr};
  EXPECT_EQ(fpm_data_begin(&bad, 1), FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("map 7"), std::string::npos);
  EXPECT_EQ(fpm_data_begin(&none, 1), FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fpm_data_end(&whole, 1), FPM_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(fpm_data_begin(&whole, 1), FPM_OK);
  EXPECT_EQ(fpm_data_begin(&part, 1), FPM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fpm_last_error()).find("overlap"), std::string::npos);
  EXPECT_EQ(fpm_data_end(&whole, 1), FPM_OK);
  EXPECT_FALSE(fpm::residency::active());
}

} // namespace
