//===- schedule_concurrency_test.cpp - ChunkGenerator under many threads --===//

#include "schedule/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <numeric>
#include <string>
#include <thread>

using namespace fpm;

namespace {

constexpr int ThreadCount = 8;

const Scheme AllSchemes[] = {Scheme::Pss, Scheme::Css, Scheme::Gss, Scheme::Fss,
                             Scheme::Tss};

ScheduleSpec makeSpec(Scheme scheme, std::int64_t iterations, int workers,
                      std::optional<double> alpha) {
  ScheduleSpec spec;
  spec.scheme = scheme;
  spec.iterations = iterations;
  spec.workers = workers;
  spec.chunk = 7;
  spec.alpha = alpha;
  if (alpha)
    for (int w = 0; w < workers; ++w) // uneven, with ties
      spec.weights.push_back(1.0 + (w * 5) % 4);
  return spec;
}

std::string describe(const ScheduleSpec &spec) {
  return std::string(schemeName(spec.scheme)) +
         " I=" + std::to_string(spec.iterations) +
         " P=" + std::to_string(spec.workers) +
         " alpha=" + (spec.alpha ? std::to_string(*spec.alpha) : "-");
}

struct Drawn {
  std::vector<std::int64_t> sizes; ///< every chunk's size, all threads
  std::vector<int> marks;          ///< how often each iteration came
};

/// Runs ThreadCount threads, thread t as worker t % P, each calling next()
/// until it gets nothing (and a few times more), all started together.
Drawn drawConcurrently(const ScheduleSpec &spec) {
  ChunkGenerator generator(spec);
  std::vector<std::atomic<int>> marks(
      static_cast<std::size_t>(spec.iterations));
  std::vector<std::vector<std::int64_t>> sizes(ThreadCount);
  std::latch start(ThreadCount);
  std::vector<std::thread> threads;
  for (int t = 0; t < ThreadCount; ++t)
    threads.emplace_back([&, t] {
      const int worker = t % spec.workers;
      start.arrive_and_wait();
      while (std::optional<Chunk> chunk = generator.next(worker)) {
        sizes[t].push_back(chunk->size);
        for (std::int64_t i = chunk->begin; i < chunk->begin + chunk->size; ++i)
          marks[static_cast<std::size_t>(i)].fetch_add(
              1, std::memory_order_relaxed);
      }
      // Calls after the end keep getting nothing.
      for (int extra = 0; extra < 1000; ++extra)
        if (generator.next(worker))
          sizes[t].push_back(-1);
    });
  for (std::thread &thread : threads)
    thread.join();

  Drawn drawn;
  for (const auto &mine : sizes)
    drawn.sizes.insert(drawn.sizes.end(), mine.begin(), mine.end());
  for (const auto &mark : marks)
    drawn.marks.push_back(mark.load());
  return drawn;
}

/// chunkSequence's grants (non-empty stage-1 shares and chunks), sorted.
std::vector<std::int64_t> sortedGrants(const ScheduleSpec &spec) {
  ChunkSequence seq = chunkSequence(spec);
  std::vector<std::int64_t> all;
  for (std::int64_t share : seq.stage1)
    if (share > 0)
      all.push_back(share);
  all.insert(all.end(), seq.chunks.begin(), seq.chunks.end());
  std::sort(all.begin(), all.end());
  return all;
}

void expectEachIterationOnce(const ScheduleSpec &spec, const Drawn &drawn) {
  ASSERT_EQ(drawn.marks.size(), static_cast<std::size_t>(spec.iterations));
  for (std::size_t i = 0; i < drawn.marks.size(); ++i)
    ASSERT_EQ(drawn.marks[i], 1) << "iteration " << i;
  for (std::int64_t size : drawn.sizes)
    ASSERT_GE(size, 1); // -1: a chunk after the end
}

} // namespace

//===----------------------------------------------------------------------===//
// Single-threaded: the generator grants what chunkSequence lists.
//===----------------------------------------------------------------------===//

TEST(ChunkGeneratorSerial, GrantsTheSequenceInOrderAndCoversTheRange) {
  for (Scheme scheme : AllSchemes)
    for (std::optional<double> alpha : {std::optional<double>{}, {75.0}})
      for (std::int64_t iterations : {0, 1, 13, 2048, 10007})
        for (int workers : {1, 3, 5, 16}) {
          ScheduleSpec spec = makeSpec(scheme, iterations, workers, alpha);
          SCOPED_TRACE(describe(spec));
          ChunkSequence seq = chunkSequence(spec);
          ChunkGenerator generator(spec);
          EXPECT_EQ(generator.iterations(), iterations);
          // Stage-1 shares lie first, in worker order; each worker's first
          // call takes its own (workers with none are not asked here).
          std::int64_t end = 0;
          for (std::size_t w = 0; w < seq.stage1.size(); ++w) {
            if (seq.stage1[w] == 0)
              continue;
            std::optional<Chunk> chunk = generator.next(static_cast<int>(w));
            ASSERT_TRUE(chunk);
            ASSERT_EQ(chunk->begin, end);
            ASSERT_EQ(chunk->size, seq.stage1[w]);
            end += chunk->size;
          }
          std::vector<std::int64_t> dynamic;
          while (std::optional<Chunk> chunk = generator.next(0)) {
            ASSERT_EQ(chunk->begin, end);
            dynamic.push_back(chunk->size);
            end += chunk->size;
          }
          EXPECT_EQ(dynamic, seq.chunks);
          EXPECT_EQ(end, iterations);
          EXPECT_FALSE(generator.next(workers - 1));
        }
}

TEST(ChunkGeneratorSerial, AbsentWorkersSharesComeAfterTheDynamicChunks) {
  // Example 3.1 with GSS-80, but only worker 0 shows up: it gets its own
  // share, all dynamic chunks, then the shares of workers 1..4.
  ScheduleSpec spec = makeSpec(Scheme::Gss, 2048, 5, 80);
  spec.weights = {200, 200, 233, 533, 1500};
  ChunkGenerator generator(spec);
  ChunkSequence seq = chunkSequence(spec);
  std::vector<std::int64_t> sizes;
  std::int64_t total = 0;
  while (std::optional<Chunk> chunk = generator.next(0)) {
    sizes.push_back(chunk->size);
    total += chunk->size;
  }
  std::vector<std::int64_t> expected = {123};
  expected.insert(expected.end(), seq.chunks.begin(), seq.chunks.end());
  expected.insert(expected.end(), {121, 144, 328, 923});
  EXPECT_EQ(sizes, expected);
  EXPECT_EQ(total, 2048);
  // A worker coming late finds its share taken and nothing left.
  EXPECT_FALSE(generator.next(4));
}

TEST(ChunkGeneratorSerial, OutOfRangeWorkerDrawsWithoutAShare) {
  ScheduleSpec spec = makeSpec(Scheme::Css, 20, 2, 50);
  ChunkGenerator generator(spec);
  std::int64_t total = 0;
  for (int worker : {-1, 2, 99})
    while (std::optional<Chunk> chunk = generator.next(worker))
      total += chunk->size;
  EXPECT_EQ(total, 20);
}

TEST(ChunkGeneratorSerial, TrillionIterationsNeedNoTable) {
  // PSS and CSS are computed in closed form: constructing these is instant
  // and their chunks land where the arithmetic says.
  ScheduleSpec pss = makeSpec(Scheme::Pss, 1'000'000'000'000, 64, 50);
  ChunkGenerator pssGenerator(pss);
  const std::int64_t m = 500'000'000'000;
  std::optional<Chunk> chunk = pssGenerator.next(-1);
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->begin, m);
  EXPECT_EQ(chunk->size, 1);
  chunk = pssGenerator.next(-1);
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->begin, m + 1);

  ScheduleSpec css = makeSpec(Scheme::Css, 1'000'000'000'003, 4, {});
  css.chunk = 1'000'000'000'000;
  ChunkGenerator cssGenerator(css);
  EXPECT_EQ(cssGenerator.next(0)->size, 1'000'000'000'000);
  chunk = cssGenerator.next(1);
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->begin, 1'000'000'000'000);
  EXPECT_EQ(chunk->size, 3);
  EXPECT_FALSE(cssGenerator.next(2));
}

TEST(ChunkGeneratorSerial, TrillionIterationsTabulatedSchemesCoverAll) {
  for (Scheme scheme : {Scheme::Gss, Scheme::Fss, Scheme::Tss}) {
    ScheduleSpec spec = makeSpec(scheme, 1'000'000'000'037, 16, 75);
    SCOPED_TRACE(describe(spec));
    ChunkGenerator generator(spec);
    std::int64_t end = 0;
    std::size_t count = 0;
    while (std::optional<Chunk> chunk =
               generator.next(static_cast<int>(count % 16))) {
      ++count;
      ASSERT_EQ(chunk->begin, end);
      end += chunk->size;
    }
    EXPECT_EQ(end, spec.iterations);
    EXPECT_LT(count, 2000u); // O(P log I) chunks, not O(I)
  }
}

//===----------------------------------------------------------------------===//
// Many threads at once.
//===----------------------------------------------------------------------===//

TEST(ChunkGeneratorConcurrency, EveryIterationExactlyOnce) {
  // P = 3, 5: several threads share a worker; P = 12: four workers never
  // come, and their stage-1 shares must still be handed out.
  for (Scheme scheme : AllSchemes)
    for (std::optional<double> alpha : {std::optional<double>{}, {75.0}})
      for (int workers : {1, 3, 5, 8, 12}) {
        ScheduleSpec spec = makeSpec(scheme, 100'003, workers, alpha);
        SCOPED_TRACE(describe(spec));
        Drawn drawn = drawConcurrently(spec);
        expectEachIterationOnce(spec, drawn);
      }
}

TEST(ChunkGeneratorConcurrency, ChunkSizesMatchTheSequence) {
  // With every worker present, the chunks drawn concurrently are exactly
  // those a master grants, in some order.
  for (Scheme scheme : AllSchemes)
    for (std::optional<double> alpha : {std::optional<double>{}, {75.0}})
      for (int workers : {1, 4, 5, 8}) {
        for (std::int64_t iterations : {7, 2048, 65'537}) {
          ScheduleSpec spec = makeSpec(scheme, iterations, workers, alpha);
          SCOPED_TRACE(describe(spec));
          Drawn drawn = drawConcurrently(spec);
          expectEachIterationOnce(spec, drawn);
          std::sort(drawn.sizes.begin(), drawn.sizes.end());
          EXPECT_EQ(drawn.sizes, sortedGrants(spec));
        }
      }
}

TEST(ChunkGeneratorConcurrency, FewerThreadsThanWorkersLoseNothing) {
  // 8 threads for 40 workers with a large stage 1: 32 shares belong to
  // workers that never call and are handed out after the dynamic chunks.
  for (Scheme scheme : AllSchemes) {
    ScheduleSpec spec = makeSpec(scheme, 50'021, 40, 90);
    SCOPED_TRACE(describe(spec));
    Drawn drawn = drawConcurrently(spec);
    expectEachIterationOnce(spec, drawn);
    std::sort(drawn.sizes.begin(), drawn.sizes.end());
    EXPECT_EQ(drawn.sizes, sortedGrants(spec));
  }
}
