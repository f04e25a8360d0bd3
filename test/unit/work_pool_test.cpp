//===- work_pool_test.cpp - Weighted chunks and the heterogeneous pool ----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// WeightedChunker: equal shares give exactly chunkSequence()'s chunks,
// unequal ones scale them, every chunk tiles the range. WorkPool: static
// queues, dynamic chunks and both together hand every iteration out exactly
// once to many threads; tail stealing (in a data region, weighed against
// what moving the rows costs), recovery after a failure, stop(), probes
// and speeds follow the documented rules. No OpenCL here. Over 1200 lines:
// a test per rule of the pool, and the threaded ones share the helpers
// that check each iteration is handed out once (Ledger, DrawStats).
//
//===----------------------------------------------------------------------===//

#include "exec/work_pool.hpp"
#include "schedule/schedule.hpp"

#include <gtest/gtest.h>

#include "support/schedules.hpp"
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace fpm;

namespace {

using fpm::test::makeSpec;

std::string describe(Scheme scheme, std::int64_t iterations, int workers,
                     std::int64_t chunk = 1, std::int64_t begin = 0) {
  return std::string(schemeName(scheme)) + " I=" + std::to_string(iterations) +
         " P=" + std::to_string(workers) + " k=" + std::to_string(chunk) +
         " begin=" + std::to_string(begin);
}

/// Every chunk a WeightedChunker hands out when each request has `share`,
/// checking that they are contiguous from `begin`.
std::vector<std::int64_t> drawAll(WeightedChunker &chunker, double share,
                                  std::int64_t begin) {
  std::vector<std::int64_t> sizes;
  std::int64_t at = begin;
  while (std::optional<Chunk> chunk = chunker.next(share)) {
    EXPECT_EQ(chunk->begin, at);
    EXPECT_GE(chunk->size, 1);
    at += chunk->size;
    sizes.push_back(chunk->size);
  }
  EXPECT_EQ(chunker.remaining(), 0);
  return sizes;
}

struct SchemeCase {
  Scheme scheme;
  std::int64_t chunk;
};

const SchemeCase AllSchemes[] = {
    {Scheme::Pss, 1}, {Scheme::Css, 1}, {Scheme::Css, 3}, {Scheme::Css, 125},
    {Scheme::Gss, 1}, {Scheme::Fss, 1}, {Scheme::Tss, 1}};

//===----------------------------------------------------------------------===//
// WeightedChunker
//===----------------------------------------------------------------------===//

TEST(WeightedChunkerTest, EqualSharesReproduceChunkSequence) {
  const std::int64_t sizes[] = {0, 1, 2, 7, 97, 1000, 2048, 10007, 65536};
  const int workerCounts[] = {1, 2, 3, 4, 5, 8, 13};
  for (const SchemeCase &c : AllSchemes)
    for (std::int64_t iterations : sizes)
      for (int workers : workerCounts) {
        SCOPED_TRACE(describe(c.scheme, iterations, workers, c.chunk));
        const ScheduleSpec spec =
            makeSpec(c.scheme, iterations, workers, c.chunk);
        WeightedChunker chunker(spec, 0);
        EXPECT_EQ(chunker.remaining(), iterations);
        EXPECT_EQ(drawAll(chunker, 1.0 / workers, 0),
                  chunkSequence(spec).chunks);
      }
}

TEST(WeightedChunkerTest, EqualSharesReproduceTable22) {
  // Seed 001, Table 2.2: I = 1000, P = 4.
  const std::vector<std::int64_t> gss = {250, 188, 141, 106, 79, 59, 45, 33,
                                         25,  19,  14,  11,  8,  6,  4,  3,
                                         3,   2,   1,   1,   1,  1};
  const std::vector<std::int64_t> tss = {125, 117, 109, 101, 93, 85, 77,
                                         69,  61,  53,  45,  37, 28};
  std::vector<std::int64_t> fss;
  for (std::int64_t size : {125, 63, 31, 16, 8, 4, 2, 1})
    fss.insert(fss.end(), 4, size);
  auto draw = [](Scheme scheme, std::int64_t chunk = 1) {
    WeightedChunker chunker(makeSpec(scheme, 1000, 4, chunk), 0);
    return drawAll(chunker, 0.25, 0);
  };
  EXPECT_EQ(draw(Scheme::Gss), gss);
  EXPECT_EQ(draw(Scheme::Fss), fss);
  EXPECT_EQ(draw(Scheme::Tss), tss);
  EXPECT_EQ(draw(Scheme::Css, 125), std::vector<std::int64_t>(8, 125));
  EXPECT_EQ(draw(Scheme::Pss), std::vector<std::int64_t>(1000, 1));
  for (Scheme scheme : {Scheme::Gss, Scheme::Fss, Scheme::Tss, Scheme::Pss})
    EXPECT_EQ(draw(scheme), chunkSequence(makeSpec(scheme, 1000, 4)).chunks);
}

TEST(WeightedChunkerTest, LaterBeginIsTheSequenceOfWhatRemains) {
  // The dynamic stage after a stage 1: chunkSequence() of a two-stage spec
  // computes its chunks over the iterations stage 1 left.
  for (const SchemeCase &c : AllSchemes)
    for (double alpha : {10.0, 50.0, 80.0, 100.0})
      for (int workers : {2, 3, 5}) {
        ScheduleSpec spec = makeSpec(c.scheme, 2048, workers, c.chunk);
        spec.alpha = alpha;
        for (int w = 0; w < workers; ++w)
          spec.weights.push_back(1.0 + w);
        const ChunkSequence sequence = chunkSequence(spec);
        const std::int64_t begin = std::accumulate(
            sequence.stage1.begin(), sequence.stage1.end(), std::int64_t{0});
        SCOPED_TRACE(describe(c.scheme, 2048, workers, c.chunk, begin) +
                     " alpha=" + std::to_string(alpha));
        WeightedChunker chunker(spec, begin);
        EXPECT_EQ(chunker.remaining(), 2048 - begin);
        EXPECT_EQ(drawAll(chunker, 1.0 / workers, begin), sequence.chunks);
      }
}

TEST(WeightedChunkerTest, EqualSharesExactForHugeCounts) {
  // "With every share 1/P the chunks are exactly chunkSequence()'s" holds
  // for any count, not only small ones: GSS's first chunk of I = 4e9 + 1
  // over 4 workers is ceil(I / 4) = 1e9 + 1.
  struct Case {
    Scheme scheme;
    std::int64_t iterations;
    int workers;
  };
  for (const Case &c : {Case{Scheme::Gss, 4'000'000'001, 4},
                        Case{Scheme::Gss, 1'000'000'000'003, 3},
                        Case{Scheme::Fss, 30'000'000'001, 3}}) {
    SCOPED_TRACE(describe(c.scheme, c.iterations, c.workers));
    const ScheduleSpec spec = makeSpec(c.scheme, c.iterations, c.workers);
    WeightedChunker chunker(spec, 0);
    const std::vector<std::int64_t> got = drawAll(chunker, 1.0 / c.workers, 0);
    const std::vector<std::int64_t> want = chunkSequence(spec).chunks;
    std::size_t first = 0;
    while (first < got.size() && first < want.size() &&
           got[first] == want[first])
      ++first;
    EXPECT_TRUE(first == got.size() && first == want.size())
        << "chunk " << first << ": "
        << (first < got.size() ? std::to_string(got[first]) : "none")
        << ", chunkSequence() has "
        << (first < want.size() ? std::to_string(want[first]) : "none");
  }
}

TEST(WeightedChunkerTest, GssChunkIsCeilOfRemainingTimesShare) {
  // Shares that are exact in binary, so ceil(R * s) is unambiguous.
  const double shares[] = {0.125, 0.5, 0.0625, 0.25, 0.375, 1.0, 0.03125};
  for (std::int64_t iterations : {1, 97, 1000, 65536, 1000003}) {
    SCOPED_TRACE(iterations);
    WeightedChunker chunker(makeSpec(Scheme::Gss, iterations, 4), 0);
    std::int64_t at = 0;
    for (std::size_t i = 0; chunker.remaining() > 0; ++i) {
      const double share = shares[i % std::size(shares)];
      const std::int64_t left = iterations - at;
      const auto expected =
          std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(
                                       static_cast<double>(left) * share)),
                                   1, left);
      const std::optional<Chunk> chunk = chunker.next(share);
      ASSERT_TRUE(chunk);
      EXPECT_EQ(chunk->begin, at);
      EXPECT_EQ(chunk->size, expected) << "R=" << left << " s=" << share;
      at += chunk->size;
    }
    EXPECT_EQ(at, iterations);
    EXPECT_FALSE(chunker.next(0.5));
  }
}

TEST(WeightedChunkerTest, UnequalShareScalesTheEqualChunk) {
  // The first chunk for a worker of share s is about s * P times the first
  // equal-share one (the same state: a fresh chunker).
  const int workers = 4;
  for (const SchemeCase &c : AllSchemes)
    for (double share : {0.0625, 0.125, 0.375, 0.5, 0.75}) {
      SCOPED_TRACE(describe(c.scheme, 100000, workers, c.chunk) +
                   " share=" + std::to_string(share));
      const ScheduleSpec spec = makeSpec(c.scheme, 100000, workers, c.chunk);
      WeightedChunker equal(spec, 0);
      WeightedChunker weighted(spec, 0);
      const std::int64_t base = equal.next(1.0 / workers)->size;
      const std::int64_t scaled = weighted.next(share)->size;
      const double expected =
          std::max(1.0, static_cast<double>(base) * share * workers);
      EXPECT_NEAR(static_cast<double>(scaled), expected, 1.0);
    }
  // A worker twice as fast as the mean gets twice the CSS chunk, one at a
  // quarter of it a quarter (rounded), never less than one.
  WeightedChunker css(makeSpec(Scheme::Css, 1000, 4, 40), 0);
  EXPECT_EQ(css.next(0.5)->size, 80);
  EXPECT_EQ(css.next(0.0625)->size, 10);
  EXPECT_EQ(css.next(0.001)->size, 1);
  EXPECT_EQ(css.next(0.25)->size, 40);
}

TEST(WeightedChunkerTest, RandomSharesTileTheRange) {
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> shareOf(0.001, 1.0);
  for (const SchemeCase &c : AllSchemes)
    for (std::int64_t iterations : {1, 13, 1000, 20011})
      for (int workers : {1, 2, 7})
        for (std::int64_t begin :
             {std::int64_t{0}, iterations / 3, iterations - 1, iterations}) {
          SCOPED_TRACE(describe(c.scheme, iterations, workers, c.chunk, begin));
          WeightedChunker chunker(
              makeSpec(c.scheme, iterations, workers, c.chunk), begin);
          std::int64_t at = begin;
          while (std::optional<Chunk> chunk = chunker.next(shareOf(random))) {
            ASSERT_EQ(chunk->begin, at);
            ASSERT_GE(chunk->size, 1);
            ASSERT_LE(chunk->begin + chunk->size, iterations);
            at += chunk->size;
            ASSERT_EQ(chunker.remaining(), iterations - at);
          }
          EXPECT_EQ(at, iterations);
        }
}

TEST(WeightedChunkerTest, OutOfRangeSharesAreClamped) {
  WeightedChunker chunker(makeSpec(Scheme::Gss, 100, 2), 0);
  EXPECT_EQ(chunker.next(7.0)->size, 100); // more than all: all
  WeightedChunker tiny(makeSpec(Scheme::Gss, 100, 2), 0);
  EXPECT_EQ(tiny.next(0.0)->size, 1); // nothing: still progress
  EXPECT_EQ(tiny.next(-3.0)->size, 1);
}

TEST(WeightedChunkerTest, BadSpecsThrow) {
  EXPECT_THROW(WeightedChunker(makeSpec(Scheme::Gss, -1, 2), 0),
               std::invalid_argument);
  EXPECT_THROW(WeightedChunker(makeSpec(Scheme::Gss, 100, 0), 0),
               std::invalid_argument);
  EXPECT_THROW(WeightedChunker(makeSpec(Scheme::Css, 100, 2, 0), 0),
               std::invalid_argument);
  EXPECT_THROW(WeightedChunker(makeSpec(Scheme::Gss, 100, 2), -1),
               std::invalid_argument);
  EXPECT_THROW(WeightedChunker(makeSpec(Scheme::Tss, 100, 2), 101),
               std::invalid_argument);
  // alpha and weights are not its business: ignored, even when bad.
  ScheduleSpec twoStage = makeSpec(Scheme::Gss, 100, 2);
  twoStage.alpha = 250;
  EXPECT_NO_THROW(WeightedChunker(twoStage, 0));
  EXPECT_NO_THROW(WeightedChunker(makeSpec(Scheme::Gss, 100, 2), 100));
}

//===----------------------------------------------------------------------===//
// stage1Shares
//===----------------------------------------------------------------------===//

TEST(WeightedChunkerTest, Stage1SharesMatchChunkSequence) {
  const std::vector<std::vector<double>> weightSets = {
      {1}, {1, 1}, {200, 200, 233, 533, 1500}, {1, 8, 1}, {3.5, 0.25, 2, 2}};
  for (const SchemeCase &c : AllSchemes)
    for (const std::vector<double> &weights : weightSets)
      for (std::int64_t iterations : {0, 3, 1000, 2048, 99991})
        for (double alpha : {0.5, 37.5, 80.0, 100.0}) {
          ScheduleSpec spec = makeSpec(
              c.scheme, iterations, static_cast<int>(weights.size()), c.chunk);
          spec.alpha = alpha;
          spec.weights = weights;
          SCOPED_TRACE(describe(c.scheme, iterations, spec.workers, c.chunk) +
                       " alpha=" + std::to_string(alpha));
          EXPECT_EQ(stage1Shares(spec), chunkSequence(spec).stage1);
        }
  // Seed 001, Table 3.2: stage 1 of Example 3.1 at alpha = 80.
  ScheduleSpec example = makeSpec(Scheme::Gss, 2048, 5);
  example.alpha = 80;
  example.weights = {200, 200, 233, 533, 1500};
  EXPECT_EQ(stage1Shares(example),
            (std::vector<std::int64_t>{123, 121, 144, 328, 923}));
  EXPECT_TRUE(stage1Shares(makeSpec(Scheme::Gss, 100, 3)).empty());
  ScheduleSpec bad = makeSpec(Scheme::Gss, 100, 2);
  bad.alpha = 50;
  bad.weights = {1};
  EXPECT_THROW(stage1Shares(bad), std::invalid_argument);
  bad.weights = {1, 0};
  EXPECT_THROW(stage1Shares(bad), std::invalid_argument);
  bad.weights = {1, 1};
  bad.alpha = 0;
  EXPECT_THROW(stage1Shares(bad), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// WorkPool: helpers
//===----------------------------------------------------------------------===//

PoolPe makePe(double speed, int workers, bool guessed = false,
              bool cpu = false) {
  PoolPe pe;
  pe.speed = speed;
  pe.workers = workers;
  pe.guessed = guessed;
  pe.cpu = cpu;
  return pe;
}

/// How often each iteration was handed out (and run), and what went wrong.
class Ledger {
public:
  Ledger(std::int64_t tripCount, std::int64_t granule)
      : tripCount_(tripCount), granule_(granule),
        counts_(static_cast<std::size_t>(tripCount)) {}

  /// Checks a grant's shape; returns false (and records it) when bad.
  bool check(const Range &range) {
    const bool inside =
        range.begin >= 0 && range.end > range.begin && range.end <= tripCount_;
    const bool aligned = range.begin % granule_ == 0 &&
                         (range.end % granule_ == 0 || range.end == tripCount_);
    if (!inside)
      badRange_ = true;
    if (!aligned)
      unaligned_ = true;
    return inside;
  }
  void run(const Range &range) {
    if (!check(range))
      return;
    for (std::int64_t k = range.begin; k < range.end; ++k)
      counts_[static_cast<std::size_t>(k)].fetch_add(1,
                                                     std::memory_order_relaxed);
  }
  /// The first iteration not run exactly once, or -1.
  std::int64_t firstWrong() const {
    for (std::size_t k = 0; k < counts_.size(); ++k)
      if (counts_[k].load() != 1)
        return static_cast<std::int64_t>(k);
    return -1;
  }
  int countOf(std::int64_t k) const {
    return counts_[static_cast<std::size_t>(k)].load();
  }
  bool badRange() const { return badRange_; }
  bool unaligned() const { return unaligned_; }

private:
  std::int64_t tripCount_;
  std::int64_t granule_;
  std::vector<std::atomic<int>> counts_;
  std::atomic<bool> badRange_{false};
  std::atomic<bool> unaligned_{false};
};

/// Runs `pes[p].workers` threads per PE, each drawing from the pool until
/// it is told nothing is left, and reporting each range done at the PE's
/// speed. Returns the grants per source.
struct DrawStats {
  std::atomic<std::int64_t> bySource[4] = {};
  std::atomic<std::int64_t> grants{0};
};

void drawConcurrently(WorkPool &pool, const std::vector<PoolPe> &pes,
                      Ledger &ledger, DrawStats &stats) {
  std::vector<std::thread> threads;
  for (std::size_t pe = 0; pe < pes.size(); ++pe)
    for (int w = 0; w < pes[pe].workers; ++w)
      threads.emplace_back([&, pe] {
        while (std::optional<Grant> grant = pool.next(pe)) {
          ledger.run(grant->range);
          stats.grants.fetch_add(1);
          stats.bySource[static_cast<int>(grant->source)].fetch_add(
              grant->range.size());
          pool.done(pe, grant->range,
                    static_cast<double>(grant->range.size()) / pes[pe].speed);
          std::this_thread::yield();
        }
      });
  for (std::thread &thread : threads)
    thread.join();
}

/// PE layouts: 1 to 8 threads over 3 or 4 PEs with different workers (a PE
/// with no worker only loses its queue to thieves).
const std::vector<std::vector<int>> WorkerLayouts = {
    {1, 0, 0},    {1, 1, 0}, {1, 1, 1},    {1, 2, 1},
    {2, 1, 1, 0}, {1, 3, 2}, {1, 1, 4, 1}, {4, 1, 2, 1}};

std::vector<PoolPe> layoutPes(const std::vector<int> &workers, bool guessed) {
  std::vector<PoolPe> pes;
  for (std::size_t p = 0; p < workers.size(); ++p)
    pes.push_back(
        makePe(100.0 * static_cast<double>(p + 1) * std::max(workers[p], 1),
               workers[p], guessed, p + 1 == workers.size()));
  return pes;
}

std::string layoutName(const std::vector<int> &workers) {
  std::string name = "workers";
  for (int w : workers)
    name += " " + std::to_string(w);
  return name;
}

//===----------------------------------------------------------------------===//
// WorkPool: exactly once, many threads
//===----------------------------------------------------------------------===//

TEST(WorkPoolTest, StaticQueuesOnlyHandEachIterationOutOnce) {
  for (const std::vector<int> &workers : WorkerLayouts)
    for (std::int64_t granule : {1, 3, 64})
      for (std::int64_t trips : {1, 97, 10007}) {
        SCOPED_TRACE(layoutName(workers) + " granule " +
                     std::to_string(granule) + " trips " +
                     std::to_string(trips));
        const std::vector<PoolPe> pes = layoutPes(workers, granule == 3);
        WorkPool pool(trips, granule, pes);
        // Unequal aligned parts, the last to T; PE p gets two ranges.
        const auto units = (trips + granule - 1) / granule;
        std::vector<std::int64_t> cuts = {0};
        const std::size_t parts = 2 * pes.size();
        for (std::size_t i = 1; i < parts; ++i)
          cuts.push_back(std::min(
              trips, static_cast<std::int64_t>(i * i) * units /
                         static_cast<std::int64_t>(parts * parts) * granule));
        cuts.push_back(trips);
        for (std::size_t i = 0; i < parts; ++i)
          pool.queue(i % pes.size(), {cuts[i], cuts[i + 1]});
        EXPECT_EQ(pool.undistributed(), trips);
        Ledger ledger(trips, granule);
        DrawStats stats;
        drawConcurrently(pool, pes, ledger, stats);
        EXPECT_EQ(ledger.firstWrong(), -1);
        EXPECT_FALSE(ledger.badRange());
        EXPECT_FALSE(ledger.unaligned());
        EXPECT_EQ(pool.undistributed(), 0);
        EXPECT_EQ(stats.bySource[static_cast<int>(RangeSource::Dynamic)], 0);
        EXPECT_EQ(stats.bySource[static_cast<int>(RangeSource::Recovered)], 0);
      }
}

TEST(WorkPoolTest, DynamicOnlyHandsEachIterationOutOnce) {
  for (const std::vector<int> &workers : WorkerLayouts)
    for (const SchemeCase &c : AllSchemes)
      for (std::int64_t granule : {1, 7})
        for (std::int64_t trips : {1, 500, 10007}) {
          SCOPED_TRACE(layoutName(workers) + " " +
                       describe(c.scheme, trips, 0, c.chunk) + " granule " +
                       std::to_string(granule));
          const std::vector<PoolPe> pes = layoutPes(workers, granule == 1);
          WorkPool pool(trips, granule, pes);
          pool.dynamic(c.scheme, c.chunk, 0);
          EXPECT_EQ(pool.undistributed(), trips);
          Ledger ledger(trips, granule);
          DrawStats stats;
          drawConcurrently(pool, pes, ledger, stats);
          EXPECT_EQ(ledger.firstWrong(), -1);
          EXPECT_FALSE(ledger.badRange());
          EXPECT_FALSE(ledger.unaligned());
          EXPECT_EQ(pool.undistributed(), 0);
          EXPECT_EQ(stats.bySource[static_cast<int>(RangeSource::Recovered)],
                    0);
        }
}

TEST(WorkPoolTest, Stage1QueuesAndDynamicHandEachIterationOutOnce) {
  for (const std::vector<int> &workers : WorkerLayouts)
    for (const SchemeCase &c : AllSchemes)
      for (double alpha : {30.0, 80.0, 100.0})
        for (std::int64_t granule : {1, 5}) {
          const std::int64_t trips = 9973;
          SCOPED_TRACE(layoutName(workers) + " " +
                       describe(c.scheme, trips, 0, c.chunk) + " alpha " +
                       std::to_string(alpha) + " granule " +
                       std::to_string(granule));
          const std::vector<PoolPe> pes = layoutPes(workers, alpha == 80.0);
          WorkPool pool(trips, granule, pes);
          // As the executor does: stage 1 by speed, in granules.
          ScheduleSpec spec =
              makeSpec(c.scheme, (trips + granule - 1) / granule,
                       static_cast<int>(pes.size()), c.chunk);
          spec.alpha = alpha;
          for (const PoolPe &pe : pes)
            spec.weights.push_back(pe.speed);
          const std::vector<std::int64_t> shares = stage1Shares(spec);
          ASSERT_EQ(shares.size(), pes.size());
          std::int64_t begin = 0;
          for (std::size_t p = 0; p < shares.size(); ++p) {
            const std::int64_t end =
                std::min(trips, begin + shares[p] * granule);
            pool.queue(p, {begin, end});
            begin = end;
          }
          pool.dynamic(c.scheme, c.chunk, begin);
          Ledger ledger(trips, granule);
          DrawStats stats;
          drawConcurrently(pool, pes, ledger, stats);
          EXPECT_EQ(ledger.firstWrong(), -1);
          EXPECT_FALSE(ledger.badRange());
          EXPECT_FALSE(ledger.unaligned());
          EXPECT_EQ(pool.undistributed(), 0);
        }
}

//===----------------------------------------------------------------------===//
// WorkPool: the rules, one grant at a time
//===----------------------------------------------------------------------===//

TEST(WorkPoolTest, OwnQueueFirstThenDynamicThenSteal) {
  // Measured speeds, no probes: PE 0 (300/s) and PE 1 (100/s).
  WorkPool pool(1000, 1, {makePe(300, 1), makePe(100, 1)});
  pool.queue(1, {0, 100});
  pool.dynamic(Scheme::Gss, 1, 100);
  // PE 0 has no queue: the weighted GSS chunk, ceil(900 * 3/4) = 675.
  std::optional<Grant> grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Dynamic);
  EXPECT_EQ(grant->range, (Range{100, 775}));
  // PE 1 takes its own queue first: half of it, at least an eighth.
  grant = pool.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Own);
  EXPECT_EQ(grant->range, (Range{0, 50}));
  grant = pool.next(1);
  EXPECT_EQ(grant->source, RangeSource::Own);
  EXPECT_EQ(grant->range, (Range{50, 75}));
  // Then ceil(225 * 3/4) = 169 of the 225 left.
  grant = pool.next(0);
  EXPECT_EQ(grant->source, RangeSource::Dynamic);
  EXPECT_EQ(grant->range, (Range{775, 944}));
  grant = pool.next(1);
  EXPECT_EQ(grant->source, RangeSource::Own);
  EXPECT_EQ(grant->range, (Range{75, 88})); // max(ceil(25/2), ceil(100/8))
  grant = pool.next(1);
  EXPECT_EQ(grant->source, RangeSource::Own);
  EXPECT_EQ(grant->range, (Range{88, 100}));
  grant = pool.next(1);
  EXPECT_EQ(grant->source, RangeSource::Dynamic);
  EXPECT_EQ(grant->range, (Range{944, 958})); // ceil(56 / 4)
}

TEST(WorkPoolTest, LoneDeviceWithOneRangeInFlightTakesItsQueueWhole) {
  // A device alone in the pool that runs one range at a time: nobody can
  // steal a tail and nothing overlaps, so the queue goes in one range
  // (on PoCL, the one that starts at offset 0).
  auto device = [](std::size_t pipeline, bool guessed = false) {
    PoolPe pe = makePe(100, 1, guessed);
    pe.pipeline = pipeline;
    return pe;
  };
  WorkPool alone(1024, 64, {device(1), makePe(50, 0, false, true)});
  alone.queue(0, {0, 1024});
  std::optional<Grant> grant = alone.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Own);
  EXPECT_EQ(grant->range, (Range{0, 1024}));
  EXPECT_FALSE(alone.next(0));
  // Still probed first while its speed is a guess: ceil(1024 / 8) = 128.
  WorkPool probing(1024, 64, {device(1, true)});
  probing.queue(0, {0, 1024});
  EXPECT_EQ(probing.next(0)->range, (Range{0, 128}));
  probing.done(0, {0, 128}, 0.01);
  EXPECT_EQ(probing.next(0)->range, (Range{128, 1024}));
  // A pipelined device halves, so that an upload overlaps a kernel.
  WorkPool pipelined(1024, 64, {device(2)});
  pipelined.queue(0, {0, 1024});
  EXPECT_EQ(pipelined.next(0)->range, (Range{0, 512}));
  // Another worker in the pool could steal the tail: halves.
  WorkPool shared(1024, 64, {device(1), makePe(50, 1, false, true)});
  shared.queue(0, {0, 1024});
  EXPECT_EQ(shared.next(0)->range, (Range{0, 512}));
}

TEST(WorkPoolTest, NoRangeOfItsOwnIsCutBelowWhatFillsAGpu) {
  // A GPU that 800 iterations fill, pipelined and probed: its probe and
  // its halves are 800 at least, and the tail past that is one range.
  PoolPe gpu = makePe(100, 1, /*guessed=*/true);
  gpu.pipeline = 2;
  gpu.fill = 800;
  WorkPool pool(2048, 64, {gpu, makePe(50, 1, false, true)});
  pool.queue(0, {0, 2048});
  EXPECT_EQ(pool.next(0)->range, (Range{0, 832})); // 800, in granules
  pool.done(0, {0, 832}, 0.01);
  EXPECT_EQ(pool.next(0)->range, (Range{832, 1664}));
  EXPECT_EQ(pool.next(0)->range, (Range{1664, 2048}));
}

TEST(WorkPoolTest, TailStealingTakesFromTheLastToFinish) {
  // PE 0 (100/s) has nothing; PE 1 has 600 at 300/s (2 s left), the CPU
  // team PE 2 400 at 100/s (4 s left): PE 0 steals from PE 2 what it
  // finishes when PE 2 finishes the rest, 400 * 100 / (100 + 100) = 200,
  // from the front (a device takes the CPU team's front).
  WorkPool pool(1000, 1,
                {makePe(100, 1), makePe(300, 1), makePe(100, 1, false, true)});
  pool.queue(1, {0, 600});
  pool.queue(2, {600, 1000});
  std::optional<Grant> grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Stolen);
  EXPECT_EQ(grant->from, 2u);
  EXPECT_EQ(grant->range, (Range{600, 800}));
  // Now both have 2 s left: the first of them, PE 1, loses
  // ceil(600 * 100 / 400) = 150.
  grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Stolen);
  EXPECT_EQ(grant->from, 1u);
  EXPECT_EQ(grant->range, (Range{450, 600}));
  EXPECT_EQ(pool.undistributed(), 650);
}

TEST(WorkPoolTest, CpuThreadsCutFinerThanDevicesStart) {
  // Granules of 64 where a device may start a range, single iterations
  // where only a CPU thread will. PE 0 a device, PE 1 the CPU team, alike.
  WorkPool pool(128, 64, {makePe(100, 1), makePe(100, 1, false, true)}, 1);
  pool.queue(0, {0, 64});
  pool.queue(1, {64, 128});
  // The CPU halves its share (a device would take its one granule whole).
  std::optional<Grant> grant = pool.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{64, 96}));
  grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{0, 64}));
  grant = pool.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{96, 112}));
  // The device, idle, takes the front half of what the CPU has left.
  grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Stolen);
  EXPECT_EQ(grant->range, (Range{112, 120}));
  grant = pool.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{120, 128}));
  EXPECT_EQ(pool.undistributed(), 0);

  // A CPU thread steals the back half of a device's last granule; what
  // the device keeps still starts on a granule.
  WorkPool tail(128, 64, {makePe(100, 1), makePe(100, 1, false, true)}, 1);
  tail.queue(0, {0, 128});
  grant = tail.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{0, 64}));
  grant = tail.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Stolen);
  EXPECT_EQ(grant->range, (Range{96, 128}));
  grant = tail.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{64, 96}));

  // Without a finer grain the old rule holds: whole granules.
  WorkPool coarse(128, 64, {makePe(100, 1), makePe(100, 1, false, true)});
  coarse.queue(0, {0, 128});
  ASSERT_TRUE(coarse.next(0));
  grant = coarse.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{64, 128}));
}

TEST(WorkPoolTest, InARegionTheCpuRunsItsQueueFromTheEnd) {
  // A device planned no rows, and the CPU team all 128 (one thread): the
  // CPU takes its chunks from the end, so that whenever the device comes
  // to steal, it gets the start, next to its own rows (none here): the
  // same rows at every call, which then stay on it.
  PoolPe cpu = makePe(100, 1, false, true);
  cpu.ownFromBack = true;
  for (int late : {0, 1, 2}) {
    SCOPED_TRACE(late);
    WorkPool pool(128, 64, {makePe(100, 1), cpu}, 1);
    pool.queue(1, {0, 128});
    std::int64_t cpuFirst = 128;
    for (int chunk = 0; chunk < late; ++chunk) {
      const std::optional<Grant> grant = pool.next(1);
      ASSERT_TRUE(grant);
      EXPECT_EQ(grant->range.end, cpuFirst); // from the end
      cpuFirst = grant->range.begin;
    }
    const std::optional<Grant> stolen = pool.next(0);
    ASSERT_TRUE(stolen);
    EXPECT_EQ(stolen->source, RangeSource::Stolen);
    EXPECT_EQ(stolen->range.begin, 0);
  }
}

TEST(WorkPoolTest, TheSplitACallEndedWithIncludesItsSteals) {
  // A device planned [0, 64), the CPU [64, 128), run from the end: the
  // device, done first, steals the CPU's start, next to its own rows, so
  // the call ends split at another cut, which ranInOrder() gives.
  PoolPe cpu = makePe(100, 1, false, true);
  cpu.ownFromBack = true;
  WorkPool pool(128, 8, {makePe(100, 1), cpu}, 1);
  pool.queue(0, {0, 64});
  pool.queue(1, {64, 128});
  auto run = [&](std::size_t pe) {
    const std::optional<Grant> grant = pool.next(pe);
    EXPECT_TRUE(grant);
    if (grant)
      pool.done(pe, grant->range, 0.01);
    return grant ? grant->range : Range{};
  };
  std::int64_t deviceAt = 0;
  while (deviceAt < 64) { // its own queue, from the start
    const Range own = run(0);
    ASSERT_EQ(own.begin, deviceAt);
    deviceAt = own.end;
  }
  EXPECT_FALSE(pool.ranInOrder()); // [64, 128) not run yet
  EXPECT_EQ(run(1).end, 128);
  const Range stolen = run(0);
  EXPECT_EQ(stolen.begin, 64);
  while (std::optional<Grant> grant = pool.next(1))
    pool.done(1, grant->range, 0.01);
  const std::optional<std::vector<Range>> split = pool.ranInOrder();
  ASSERT_TRUE(split);
  EXPECT_EQ(*split, (std::vector<Range>{{0, stolen.end}, {stolen.end, 128}}));

  // A PE that ran two pieces with another's between them: no split.
  WorkPool broken(30, 10, {makePe(100, 1), makePe(100, 1)});
  broken.done(0, {0, 10}, 0.01);
  broken.done(1, {10, 20}, 0.01);
  broken.done(0, {20, 30}, 0.01);
  EXPECT_FALSE(broken.ranInOrder());
}

TEST(WorkPoolTest, StealFollowsThiefOverThiefPlusVictim) {
  // Per-worker thief speed, whole-PE victim speed, on granule bounds.
  for (double thief : {50.0, 100.0, 400.0})
    for (double victim : {25.0, 100.0, 1000.0})
      for (int thiefWorkers : {1, 4}) {
        SCOPED_TRACE("thief " + std::to_string(thief) + " x" +
                     std::to_string(thiefWorkers) + " victim " +
                     std::to_string(victim));
        const std::int64_t granule = 4;
        const std::int64_t trips = 4001; // the last granule is ragged
        WorkPool pool(trips, granule,
                      {makePe(thief, thiefWorkers), makePe(victim, 1)});
        pool.queue(1, {0, trips});
        const double perWorker = thief / thiefWorkers;
        const auto wanted = std::max<std::int64_t>(
            granule, static_cast<std::int64_t>(
                         std::ceil(trips * perWorker / (perWorker + victim))));
        std::optional<Grant> grant = pool.next(0);
        ASSERT_TRUE(grant);
        EXPECT_EQ(grant->source, RangeSource::Stolen);
        EXPECT_EQ(grant->from, 1u);
        EXPECT_EQ(grant->range.end, trips);
        EXPECT_EQ(grant->range.begin % granule, 0);
        // The cut is rounded down to a granule bound: at most a granule
        // more than the rule says, never less.
        EXPECT_GE(grant->range.size(), wanted);
        EXPECT_LT(grant->range.size(), wanted + granule);
        // The victim keeps the front.
        grant = pool.next(1);
        ASSERT_TRUE(grant);
        EXPECT_EQ(grant->source, RangeSource::Own);
        EXPECT_EQ(grant->range.begin, 0);
      }
}

TEST(WorkPoolTest, AStealWeighsWhatMovingItsDataCosts) {
  // Two PEs of 100 iterations a second; PE 1 has asked and holds 200
  // queued iterations (2 s of its time). Moving a range to PE 0 costs
  // `fixed` seconds plus 1 ms an iteration.
  for (const double fixed : {0.0, 0.5, 1.5, 2.5}) {
    SCOPED_TRACE("move " + std::to_string(fixed) + " s");
    WorkPool pool(1000, 1, {makePe(100.0, 1), makePe(100.0, 1)});
    std::vector<Range> asked;
    pool.setMoveCost([&](std::size_t pe, Range range) {
      EXPECT_EQ(pe, 0u);
      asked.push_back(range);
      return fixed + 1e-3 * static_cast<double>(range.size());
    });
    pool.queue(1, {0, 1000});
    std::optional<Grant> own = pool.next(1); // half its queue: [0, 500)
    ASSERT_TRUE(own);
    pool.done(1, own->range, 5.0);
    own = pool.next(1); // [500, 750)
    ASSERT_TRUE(own);
    pool.done(1, own->range, 2.5);
    // 250 left to PE 1: without a cost PE 0 takes 125. The move makes it
    // finish later, so it takes what it finishes by then, and nothing
    // once the move costs more than the victim's queue takes to run.
    const std::optional<Grant> stolen = pool.next(0);
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked.front(), (Range{875, 1000}));
    // s / 100 + move = (250 - s) / 100, move = fixed + 125 ms.
    const double fits = (2.5 - fixed - 0.125) / (2.0 / 100);
    if (fits < 1) {
      EXPECT_FALSE(stolen);
      continue;
    }
    ASSERT_TRUE(stolen);
    EXPECT_EQ(stolen->source, RangeSource::Stolen);
    EXPECT_EQ(stolen->range.end, 1000);
    EXPECT_EQ(stolen->range.size(),
              std::min<std::int64_t>(125, static_cast<std::int64_t>(fits)));
  }
}

TEST(WorkPoolTest, AVictimThatNeverAskedIsStolenFromWhateverTheMoveCosts) {
  // A team smaller than planned: PE 1's worker never asks, so its queue
  // runs only if PE 0 steals it, however costly the move.
  WorkPool pool(100, 1, {makePe(100.0, 1), makePe(100.0, 1)});
  pool.setMoveCost([](std::size_t, Range) { return 1e9; });
  pool.queue(1, {0, 100});
  std::int64_t ran = 0;
  while (std::optional<Grant> grant = pool.next(0))
    ran += grant->range.size();
  EXPECT_EQ(ran, 100);
}

TEST(WorkPoolTest, WithoutStealingAPlannedSplitRunsAsPlanned) {
  const std::int64_t trips = 1000;
  WorkPool pool(trips, 10, {makePe(100.0, 1), makePe(100.0, 1)});
  pool.setStealing(false);
  pool.queue(0, {0, 300});
  pool.queue(1, {300, trips});
  // PE 1 has asked: it keeps its queue however long it is, and PE 0 runs
  // exactly its own 300.
  std::optional<Grant> grant = pool.next(1);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Own);
  std::int64_t ranByOne = grant->range.size();
  std::int64_t ranByZero = 0;
  while ((grant = pool.next(0))) {
    EXPECT_EQ(grant->source, RangeSource::Own);
    ranByZero += grant->range.size();
  }
  EXPECT_EQ(ranByZero, 300);
  while ((grant = pool.next(1))) {
    EXPECT_EQ(grant->source, RangeSource::Own);
    ranByOne += grant->range.size();
  }
  EXPECT_EQ(ranByOne, trips - 300);
}

TEST(WorkPoolTest, WithoutStealingAPeWithoutAWorkerIsStillEmptied) {
  // A team smaller than planned: PE 1's worker never asks.
  const std::int64_t trips = 1000;
  WorkPool pool(trips, 10, {makePe(100.0, 1), makePe(100.0, 1)});
  pool.setStealing(false);
  pool.queue(0, {0, 300});
  pool.queue(1, {300, trips});
  std::vector<bool> ran(trips, false);
  while (std::optional<Grant> grant = pool.next(0))
    for (std::int64_t k = grant->range.begin; k < grant->range.end; ++k) {
      ASSERT_FALSE(ran[static_cast<std::size_t>(k)]);
      ran[static_cast<std::size_t>(k)] = true;
    }
  EXPECT_EQ(std::count(ran.begin(), ran.end(), true), trips);
}

TEST(WorkPoolTest, NothingToStealIsNothing) {
  WorkPool pool(100, 1, {makePe(1, 1), makePe(1, 1)});
  pool.queue(0, {0, 100});
  std::int64_t at = 0;
  while (std::optional<Grant> grant = pool.next(0)) {
    EXPECT_EQ(grant->source, RangeSource::Own);
    EXPECT_EQ(grant->range.begin, at);
    at = grant->range.end;
  }
  EXPECT_EQ(at, 100);
  EXPECT_FALSE(pool.next(1)); // a PE never steals from itself, nor from none
  EXPECT_EQ(pool.undistributed(), 0);
}

TEST(WorkPoolTest, FailedPeWorkIsRecoveredFirstAndOnce) {
  const std::int64_t trips = 3000;
  const std::int64_t granule = 10;
  WorkPool pool(
      trips, granule,
      {makePe(1000, 1), makePe(1000, 1), makePe(500, 2, false, true)});
  pool.queue(0, {0, 1000});
  pool.queue(1, {1000, 2000});
  pool.queue(2, {2000, 3000});
  Ledger ledger(trips, granule);
  // PE 0 takes two chunks (a device's pipeline), finishes the first, and
  // fails with the second in flight.
  const std::optional<Grant> first = pool.next(0);
  const std::optional<Grant> second = pool.next(0);
  ASSERT_TRUE(first && second);
  ledger.run(first->range);
  pool.done(0, first->range, 0.1);
  const Range inFlight = second->range;
  const std::int64_t moved = pool.fail(0, std::span(&inFlight, 1));
  EXPECT_EQ(moved, 1000 - first->range.size());
  EXPECT_EQ(pool.undistributed(), trips - first->range.size() -
                                      second->range.size() + inFlight.size());

  // Whoever asks next gets recovered work, before its own queue, until
  // none is left.
  std::int64_t recovered = 0;
  std::optional<Grant> grant;
  while ((grant = pool.next(1)) && grant->source == RangeSource::Recovered) {
    ledger.run(grant->range);
    recovered += grant->range.size();
  }
  EXPECT_EQ(recovered, moved);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Own);
  EXPECT_EQ(grant->range.begin, 1000);
  ledger.run(grant->range);
  // The failed PE's worker may go on asking, and gets work as a CPU
  // thread; nobody steals from it, it steals from others.
  while (std::optional<Grant> more = pool.next(0)) {
    EXPECT_NE(more->source, RangeSource::Recovered);
    EXPECT_NE(more->source, RangeSource::Own);
    if (more->source == RangeSource::Stolen)
      EXPECT_NE(more->from, 0u);
    ledger.run(more->range);
  }
  // Its host thread took everything: the rest are empty-handed.
  EXPECT_FALSE(pool.next(1));
  EXPECT_FALSE(pool.next(2));
  EXPECT_EQ(ledger.firstWrong(), -1);
  EXPECT_FALSE(ledger.unaligned());
}

TEST(WorkPoolTest, FailWithEmptyQueueMovesOnlyTheUnfinished) {
  WorkPool pool(100, 1, {makePe(10, 1), makePe(10, 1, false, true)});
  pool.queue(1, {0, 100});
  const std::optional<Grant> stolen = pool.next(0);
  ASSERT_TRUE(stolen);
  EXPECT_EQ(stolen->source, RangeSource::Stolen);
  const Range unfinished[] = {stolen->range, {}};
  EXPECT_EQ(pool.fail(0, unfinished), stolen->range.size());
  const std::optional<Grant> again = pool.next(1);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->source, RangeSource::Recovered);
  EXPECT_EQ(again->range.begin, stolen->range.begin);
  // Nothing failed twice: nothing more moves.
  EXPECT_EQ(pool.fail(0, {}), 0);
}

TEST(WorkPoolTest, FailedPeIsNeitherQueuedForNorStolenFrom) {
  // fail(): "nothing is queued for it or stolen from it any more". Its
  // host thread, asking as a CPU thread whose speed is still a guess, is
  // given a probe of a dynamic chunk; the rest of that chunk must not be
  // parked in the failed PE's queue for others to steal.
  const std::int64_t trips = 1600;
  WorkPool pool(trips, 1, {makePe(1, 1, true), makePe(1, 1, true, true)});
  pool.dynamic(Scheme::Gss, 1, 0);
  pool.fail(0, {});
  const std::optional<Grant> mine = pool.next(0);
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->source, RangeSource::Dynamic);
  // The CPU takes the rest; none of it may come from PE 0.
  std::int64_t handedOut = mine->range.size();
  std::int64_t stolenFromFailed = 0;
  while (std::optional<Grant> grant = pool.next(1)) {
    handedOut += grant->range.size();
    if (grant->source == RangeSource::Stolen && grant->from == 0)
      stolenFromFailed += grant->range.size();
  }
  EXPECT_EQ(handedOut, trips);
  EXPECT_EQ(stolenFromFailed, 0)
      << "the failed PE's probe of [" << mine->range.begin << ", "
      << mine->range.end << ") left the rest of its chunk in its queue";
}

TEST(WorkPoolTest, FailedPeRunsAtCpuThreadSpeed) {
  // A failed device's host thread is sized as one CPU thread: PE 1 (the
  // CPU, 2 workers, measured 200/s) makes it 100/s.
  WorkPool pool(1000, 1, {makePe(10000, 1), makePe(200, 2, false, true)});
  EXPECT_DOUBLE_EQ(pool.speed(0), 10000);
  pool.fail(0, {});
  EXPECT_DOUBLE_EQ(pool.speed(0), 100);
}

TEST(WorkPoolTest, StopHandsOutNothingMore) {
  WorkPool pool(1000, 1, {makePe(1, 1), makePe(1, 1)});
  pool.queue(0, {0, 500});
  pool.dynamic(Scheme::Gss, 1, 500);
  ASSERT_TRUE(pool.next(1));
  const std::optional<Grant> held = pool.next(0);
  ASSERT_TRUE(held);
  pool.fail(0, std::span(&held->range, 1));
  pool.stop();
  EXPECT_FALSE(pool.next(0));
  EXPECT_FALSE(pool.next(1));
  EXPECT_GT(pool.undistributed(), 0); // left behind, not handed out
}

TEST(WorkPoolTest, GuessedPeProbesFirst) {
  // Guessed speeds, 1 + 3 workers: a probe is ceil(10000 / 32) = 313,
  // rounded up to the granule of 7: 315.
  const std::int64_t trips = 10000;
  const std::int64_t granule = 7;
  const std::int64_t probe = 315;
  WorkPool pool(trips, granule, {makePe(1, 1, true), makePe(3, 3, true, true)});
  pool.dynamic(Scheme::Gss, 1, 0);
  std::optional<Grant> grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->source, RangeSource::Dynamic);
  EXPECT_EQ(grant->range, (Range{0, probe}));
  // GSS's chunk for a quarter share was ceil(1429 / 4) = 358 granules,
  // 2506 iterations: the rest waits in PE 0's own queue.
  // The CPU PE is guessed too: its first grant (dynamic) is a probe.
  std::optional<Grant> cpu = pool.next(1);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->source, RangeSource::Dynamic);
  EXPECT_EQ(cpu->range.begin, 2506);
  EXPECT_LE(cpu->range.size(), probe);
  // Measured (done) lifts the limit; the rest of the chunk is PE 0's own.
  pool.done(0, grant->range, 0.001);
  std::int64_t at = probe;
  while (at < 2506) {
    grant = pool.next(0);
    ASSERT_TRUE(grant);
    EXPECT_EQ(grant->source, RangeSource::Own);
    EXPECT_EQ(grant->range.begin, at);
    at = grant->range.end;
  }
  EXPECT_EQ(at, 2506);
  // Before the first done() every grant of a guessed PE is a probe: its
  // own queue, recovered work and steals alike.
  WorkPool fresh(trips, granule, {makePe(1, 1, true), makePe(1, 1, true)});
  fresh.queue(0, {0, 7000});
  fresh.queue(1, {7000, trips});
  for (int i = 0; i < 3; ++i) {
    grant = fresh.next(0);
    ASSERT_TRUE(grant);
    EXPECT_LE(grant->range.size(), 630); // ceil(10000 / 16) = 625 -> 630
  }
  // A measured PE's first grant is not limited.
  WorkPool measured(trips, 1, {makePe(1, 1, false), makePe(1, 1, false)});
  measured.dynamic(Scheme::Gss, 1, 0);
  EXPECT_EQ(measured.next(0)->range.size(), 5000);
}

TEST(WorkPoolTest, DoneUpdatesSpeed) {
  // With only guesses, the guesses.
  WorkPool guesses(1000, 1, {makePe(5, 1, true), makePe(7, 2, true, true)});
  EXPECT_DOUBLE_EQ(guesses.speed(0), 5);
  EXPECT_DOUBLE_EQ(guesses.speed(1), 7);

  WorkPool pool(
      1000, 1,
      {makePe(5, 1, true), makePe(7, 2, true, true), makePe(11, 1, false)});
  // Nothing measured yet: PE 2's estimate is no guess; the guessed PEs
  // are taken to be as fast per thread as it.
  EXPECT_DOUBLE_EQ(pool.speed(0), 11);
  EXPECT_DOUBLE_EQ(pool.speed(1), 22);
  EXPECT_DOUBLE_EQ(pool.speed(2), 11);
  // One chunk: what it took.
  pool.done(0, {0, 100}, 0.5);
  EXPECT_DOUBLE_EQ(pool.speed(0), 200);
  // More: past the first chunk (which pays one-time costs).
  pool.done(0, {100, 400}, 0.5);
  EXPECT_DOUBLE_EQ(pool.speed(0), 600);
  pool.done(0, {400, 500}, 0.5);
  EXPECT_DOUBLE_EQ(pool.speed(0), 400); // 400 iterations in the last 1 s
  // A guessed PE not measured yet is guessed as fast per thread as the
  // fastest PE known (PE 0, 400/s), times its two threads; a PE whose
  // speed is no guess keeps its estimate.
  EXPECT_DOUBLE_EQ(pool.speed(1), 800);
  EXPECT_DOUBLE_EQ(pool.speed(2), 11);
  // A PE of two workers: each measures its own time; the PE runs two.
  pool.done(1, {500, 600}, 1.0);
  EXPECT_DOUBLE_EQ(pool.speed(1), 200);
  pool.done(1, {600, 700}, 1.0);
  pool.done(1, {700, 800}, 1.0);
  EXPECT_DOUBLE_EQ(pool.speed(1), 200);
  // Chunks then follow the measured speeds: GSS for PE 0 is
  // 400 / (400 + 200 + 11) of what is left.
  pool.dynamic(Scheme::Gss, 1, 0);
  EXPECT_EQ(
      pool.next(0)->range,
      (Range{0, static_cast<std::int64_t>(std::ceil(1000.0 * 400.0 / 611.0))}));
}

TEST(WorkPoolTest, UndistributedCountsWhatIsLeft) {
  // T = 1005 in granules of 10: 101 granules, the last one of 5.
  WorkPool pool(1005, 10, {makePe(1, 1)});
  pool.dynamic(Scheme::Css, 50, 0);
  EXPECT_EQ(pool.undistributed(), 1005);
  const std::optional<Grant> grant = pool.next(0);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->range, (Range{0, 500}));
  EXPECT_EQ(pool.undistributed(), 505);
  EXPECT_EQ(pool.next(0)->range, (Range{500, 1000}));
  EXPECT_EQ(pool.undistributed(), 5);
  EXPECT_EQ(pool.next(0)->range, (Range{1000, 1005}));
  EXPECT_EQ(pool.undistributed(), 0);
  // A dynamic stage that starts after stage 1.
  WorkPool later(1005, 10, {makePe(1, 1)});
  later.queue(0, {0, 300});
  later.dynamic(Scheme::Gss, 1, 300);
  EXPECT_EQ(later.undistributed(), 1005);
}

TEST(WorkPoolTest, BadConstructionThrows) {
  EXPECT_THROW(WorkPool(-1, 1, {makePe(1, 1)}), std::invalid_argument);
  EXPECT_THROW(WorkPool(10, 0, {makePe(1, 1)}), std::invalid_argument);
  EXPECT_THROW(WorkPool(10, 1, {}), std::invalid_argument);
  EXPECT_THROW(WorkPool(10, 1, {makePe(0, 1)}), std::invalid_argument);
  EXPECT_THROW(WorkPool(10, 1, {makePe(1, -1)}), std::invalid_argument);
  EXPECT_THROW(WorkPool(10, 1, {makePe(1, 1)}, -1), std::invalid_argument);
  WorkPool empty(0, 1, {makePe(1, 1)});
  empty.dynamic(Scheme::Gss, 1, 0);
  EXPECT_FALSE(empty.next(0));
}

//===----------------------------------------------------------------------===//
// WorkPool: random speeds, random failures, many threads
//===----------------------------------------------------------------------===//

TEST(WorkPoolTest, RandomFailuresStillRunEachIterationOnce) {
  std::mt19937_64 random(20240611);
  for (int trial = 0; trial < 150; ++trial) {
    // 3 or 4 PEs: devices (one worker each, may fail) and a CPU team.
    const int peCount = 3 + static_cast<int>(random() % 2);
    std::vector<PoolPe> pes;
    std::vector<double> trueSpeed;
    std::vector<int> failAt; // the grant a device fails at, 0: never
    for (int p = 0; p < peCount; ++p) {
      const bool cpu = p == peCount - 1;
      const int workers = cpu ? 1 + static_cast<int>(random() % 4) : 1;
      const double guess =
          std::uniform_real_distribution<double>(1, 1000)(random);
      pes.push_back(makePe(guess, workers, random() % 2 == 0, cpu));
      trueSpeed.push_back(
          std::uniform_real_distribution<double>(1, 1000)(random));
      failAt.push_back(
          !cpu && random() % 3 != 0 ? 1 + static_cast<int>(random() % 6) : 0);
    }
    const std::int64_t trips = 1 + static_cast<std::int64_t>(random() % 30000);
    const std::int64_t granule = 1 + static_cast<std::int64_t>(random() % 20);
    // CPU threads may cut at a divisor of the granule (1: the granule).
    const std::int64_t cpuGranule =
        random() % 2 == 0 ? granule
                          : granule / (granule % 2 == 0 ? 2 : granule);
    const int mode = static_cast<int>(random() % 3); // static, dynamic, both
    const SchemeCase scheme = AllSchemes[random() % std::size(AllSchemes)];
    SCOPED_TRACE("trial " + std::to_string(trial) + " trips " +
                 std::to_string(trips) + " granule " + std::to_string(granule) +
                 " cpu granule " + std::to_string(cpuGranule) + " mode " +
                 std::to_string(mode) + " " +
                 std::string(schemeName(scheme.scheme)));

    WorkPool pool(trips, granule, pes, cpuGranule);
    std::int64_t begin = 0;
    if (mode != 1) {
      const std::int64_t units = (trips + granule - 1) / granule;
      const std::int64_t staticUnits = mode == 0 ? units : units / 2;
      for (int p = 0; p < peCount; ++p) {
        const std::int64_t end =
            p + 1 == peCount && mode == 0
                ? trips
                : std::min(trips, begin + staticUnits / peCount * granule);
        pool.queue(static_cast<std::size_t>(p), {begin, end});
        begin = end;
      }
    }
    if (mode != 0)
      pool.dynamic(scheme.scheme, scheme.chunk, begin);

    Ledger ledger(trips, cpuGranule);
    std::atomic<std::int64_t> moved{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < peCount; ++p)
      for (int w = 0; w < pes[static_cast<std::size_t>(p)].workers; ++w)
        threads.emplace_back([&, p] {
          const auto pe = static_cast<std::size_t>(p);
          const double speed = trueSpeed[pe];
          if (pes[pe].cpu) {
            while (std::optional<Grant> grant = pool.next(pe)) {
              ledger.run(grant->range);
              pool.done(pe, grant->range,
                        static_cast<double>(grant->range.size()) / speed);
              std::this_thread::yield();
            }
            return;
          }
          // A device: up to two grants in flight; when it takes its
          // failAt-th grant it fails, hands back what it holds unfinished,
          // and from then on runs as a CPU thread.
          std::vector<Range> inflight;
          int grants = 0;
          bool failed = false;
          while (true) {
            std::optional<Grant> grant;
            if (failed || inflight.size() < 2)
              grant = pool.next(pe);
            if (!grant) {
              if (inflight.empty())
                break;
              ledger.run(inflight.front());
              pool.done(pe, inflight.front(),
                        static_cast<double>(inflight.front().size()) / speed);
              inflight.erase(inflight.begin());
              continue;
            }
            ++grants;
            if (failed) {
              ledger.run(grant->range);
              pool.done(pe, grant->range,
                        static_cast<double>(grant->range.size()) / 100.0);
              continue;
            }
            inflight.push_back(grant->range);
            if (grants == failAt[pe]) {
              moved += pool.fail(pe, inflight);
              inflight.clear();
              failed = true;
            }
            std::this_thread::yield();
          }
        });
    for (std::thread &thread : threads)
      thread.join();
    const std::int64_t wrong = ledger.firstWrong();
    ASSERT_EQ(wrong, -1) << "iteration " << wrong << " ran "
                         << (wrong >= 0 ? ledger.countOf(wrong) : 0)
                         << " times; " << moved.load() << " moved";
    EXPECT_FALSE(ledger.badRange());
    EXPECT_FALSE(ledger.unaligned());
    EXPECT_EQ(pool.undistributed(), 0);
  }
}

} // namespace
