//===- schedule_test.cpp - Self-scheduling chunk sequences ----------------===//

#include "schedule/schedule.hpp"

#include <gtest/gtest.h>

#include "support/schedules.hpp"
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

using namespace fpm;

namespace {

using fpm::test::makeSpec;

/// Seed 001, Example 3.1: five slaves of 200, 200, 233, 533 and 1500 MHz,
/// weighted by CPU clock, I = 2048.
ScheduleSpec example31(Scheme scheme, std::optional<double> alpha) {
  ScheduleSpec spec = makeSpec(scheme, 2048, 5);
  spec.alpha = alpha;
  if (alpha)
    spec.weights = {200, 200, 233, 533, 1500};
  return spec;
}

std::vector<std::int64_t> repeat(std::int64_t value, std::size_t count) {
  return std::vector<std::int64_t>(count, value);
}

std::vector<std::int64_t>
concat(std::initializer_list<std::vector<std::int64_t>> parts) {
  std::vector<std::int64_t> all;
  for (const auto &part : parts)
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

/// The message chunkSequence throws for `spec`, or "" when it does not.
std::string errorOf(const ScheduleSpec &spec) {
  try {
    chunkSequence(spec);
  } catch (const std::invalid_argument &error) {
    return error.what();
  }
  return "";
}

std::int64_t sum(const std::vector<std::int64_t> &values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{0});
}

} // namespace

TEST(ScheduleSchemeNames, ParseAndNameRoundTrip) {
  for (Scheme scheme :
       {Scheme::Pss, Scheme::Css, Scheme::Gss, Scheme::Fss, Scheme::Tss})
    EXPECT_EQ(parseScheme(schemeName(scheme)), scheme);
  EXPECT_EQ(schemeName(Scheme::Tss), "tss");
  EXPECT_EQ(parseScheme("css"), Scheme::Css);
  EXPECT_FALSE(parseScheme("GSS"));
  EXPECT_FALSE(parseScheme("ipls"));
  EXPECT_FALSE(parseScheme(""));
}

//===----------------------------------------------------------------------===//
// Seed 001, Table 2.2: I = 1000, p = 4.
//===----------------------------------------------------------------------===//

TEST(ScheduleTable22, Pss) {
  ChunkSequence seq = chunkSequence(makeSpec(Scheme::Pss, 1000, 4));
  EXPECT_TRUE(seq.stage1.empty());
  EXPECT_EQ(seq.chunks, repeat(1, 1000));
}

TEST(ScheduleTable22, Css125) {
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Css, 1000, 4, 125)).chunks,
            repeat(125, 8));
}

TEST(ScheduleTable22, Gss) {
  const std::vector<std::int64_t> table = {250, 188, 141, 106, 79, 59, 45, 33,
                                           25,  19,  14,  11,  8,  6,  4,  3,
                                           3,   2,   1,   1,   1,  1};
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Gss, 1000, 4)).chunks, table);
}

TEST(ScheduleTable22, Fss) {
  const std::vector<std::int64_t> table =
      concat({repeat(125, 4), repeat(63, 4), repeat(31, 4), repeat(16, 4),
              repeat(8, 4), repeat(4, 4), repeat(2, 4), repeat(1, 4)});
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Fss, 1000, 4)).chunks, table);
}

TEST(ScheduleTable22, Tss) {
  // F = floor(1000 / 8) = 125, N = ceil(2000 / 126) = 16,
  // D = floor(124 / 15) = 8; the 13th chunk would be 29 but 28 remain.
  const std::vector<std::int64_t> table = {125, 117, 109, 101, 93, 85, 77,
                                           69,  61,  53,  45,  37, 28};
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Tss, 1000, 4)).chunks, table);
}

//===----------------------------------------------------------------------===//
// Seed 001, Table 3.2 (Example 3.1): I = 2048, five slaves. The table lists
// stage 1 in grant order (decreasing weight: 923, 328, 144, 123, 121);
// stage1 here is in worker order. N counts stage 1 and the chunks.
//===----------------------------------------------------------------------===//

TEST(ScheduleTable32, Gss) {
  const std::vector<std::int64_t> table = {
      410, 328, 262, 210, 168, 134, 108, 86, 69, 55, 44, 35, 28, 23, 18,
      14,  12,  9,   7,   6,   5,   4,   3,  2,  2,  2,  1,  1,  1,  1};
  ChunkSequence seq = chunkSequence(example31(Scheme::Gss, std::nullopt));
  EXPECT_EQ(seq.chunks, table);
  EXPECT_EQ(seq.chunks.size(), 30u); // N = 30
}

TEST(ScheduleTable32, Gss80) {
  ChunkSequence seq = chunkSequence(example31(Scheme::Gss, 80));
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{123, 121, 144, 328, 923}));
  const std::vector<std::int64_t> table = {82, 66, 53, 42, 34, 27, 21, 17,
                                           14, 11, 9,  7,  6,  4,  4,  3,
                                           2,  2,  1,  1,  1,  1,  1};
  EXPECT_EQ(seq.chunks, table);
  EXPECT_EQ(seq.stage1.size() + seq.chunks.size(), 28u); // N = 28
}

TEST(ScheduleTable32, FssAsTheTextCountsIt) {
  // The printed row lists four 26s and two 1s (41 chunks summing to
  // 2048 - 26 - 1 = 2021), but its own N = 43 and the rule give five 26s
  // (R = 253 before that batch, ceil(253 / 10) = 26) and three 1s (R = 3):
  // the row dropped one of each, so this is the corrected sequence.
  const std::vector<std::int64_t> corrected = concat(
      {repeat(205, 5), repeat(103, 5), repeat(51, 5), repeat(26, 5),
       repeat(13, 5), repeat(6, 5), repeat(3, 5), repeat(2, 5), repeat(1, 3)});
  ChunkSequence seq = chunkSequence(example31(Scheme::Fss, std::nullopt));
  EXPECT_EQ(seq.chunks, corrected);
  EXPECT_EQ(seq.chunks.size(), 43u); // N = 43
  EXPECT_EQ(sum(seq.chunks), 2048);
}

TEST(ScheduleTable32, Fss80) {
  ChunkSequence seq = chunkSequence(example31(Scheme::Fss, 80));
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{123, 121, 144, 328, 923}));
  const std::vector<std::int64_t> table =
      concat({repeat(41, 5), repeat(21, 5), repeat(10, 5), repeat(5, 5),
              repeat(3, 5), repeat(1, 9)});
  EXPECT_EQ(seq.chunks, table);
  EXPECT_EQ(seq.stage1.size() + seq.chunks.size(), 39u); // N = 39
}

TEST(ScheduleTable32, Tss) {
  const std::vector<std::int64_t> table = {204, 194, 184, 174, 164, 154,
                                           144, 134, 124, 114, 104, 94,
                                           84,  74,  64,  38};
  ChunkSequence seq = chunkSequence(example31(Scheme::Tss, std::nullopt));
  EXPECT_EQ(seq.chunks, table);
  EXPECT_EQ(seq.chunks.size(), 16u); // N = 16
}

TEST(ScheduleTable32, Tss80) {
  ChunkSequence seq = chunkSequence(example31(Scheme::Tss, 80));
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{123, 121, 144, 328, 923}));
  // 409 remain: F = 40, N = ceil(818 / 41) = 20, D = floor(39 / 19) = 2.
  const std::vector<std::int64_t> table = {40, 38, 36, 34, 32, 30, 28, 26, 24,
                                           22, 20, 18, 16, 14, 12, 10, 8,  1};
  EXPECT_EQ(seq.chunks, table);
  EXPECT_EQ(seq.stage1.size() + seq.chunks.size(), 23u); // N = 23
}

TEST(ScheduleSpecExample, Gss80StageOneFollowsFromExample31Clocks) {
  // docs/profiles.md's example. Its stage1 is Example 3.1's: m =
  // ceil(2048 * 0.8) = 1639; by decreasing clock 1500 -> ceil(922.2) = 923,
  // 533 -> 328, 233 -> 144, then the tie 200/200 by worker index: worker 0
  // ceil(122.96) = 123, worker 1 (last) the rest, 121.
  ChunkSequence seq = chunkSequence(example31(Scheme::Gss, 80));
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{123, 121, 144, 328, 923}));
  ASSERT_GE(seq.chunks.size(), 3u);
  EXPECT_EQ(seq.chunks[0], 82);
  EXPECT_EQ(seq.chunks[1], 66);
  EXPECT_EQ(seq.chunks[2], 53);
  EXPECT_EQ(sum(seq.stage1) + sum(seq.chunks), 2048);
}

//===----------------------------------------------------------------------===//
// Rules the tables do not reach.
//===----------------------------------------------------------------------===//

TEST(ScheduleRules, TssFirstChunkIsAtLeastOne) {
  // floor(5 / 8) = 0 is one; then N = 5, D = 0.
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Tss, 5, 4)).chunks, repeat(1, 5));
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Tss, 1, 1)).chunks, repeat(1, 1));
}

TEST(ScheduleRules, MoreWorkersThanIterations) {
  for (Scheme scheme : {Scheme::Pss, Scheme::Gss, Scheme::Fss, Scheme::Tss})
    EXPECT_EQ(chunkSequence(makeSpec(scheme, 3, 8)).chunks, repeat(1, 3))
        << schemeName(scheme);
}

TEST(ScheduleRules, CssLastChunkIsWhatRemains) {
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Css, 10, 2, 4)).chunks,
            (std::vector<std::int64_t>{4, 4, 2}));
  EXPECT_EQ(chunkSequence(makeSpec(Scheme::Css, 3, 2, 100)).chunks,
            (std::vector<std::int64_t>{3}));
}

TEST(ScheduleRules, StageOneLastShareTakesTheRestAndTiesGoByIndex) {
  // m = ceil(10 * 0.5) = 5; shares ceil(5/3) = 2 each for workers 0 and 1
  // (equal weights, index order), worker 2 the remaining 1.
  ScheduleSpec spec = makeSpec(Scheme::Gss, 10, 3);
  spec.alpha = 50;
  spec.weights = {1, 1, 1};
  ChunkSequence seq = chunkSequence(spec);
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{2, 2, 1}));
  EXPECT_EQ(seq.chunks, (std::vector<std::int64_t>{2, 1, 1, 1}));
}

TEST(ScheduleRules, StageOneSharesAreCappedByWhatRemainsOfM) {
  // m = ceil(3 * 0.5) = 2: the heavy worker 1 takes ceil(1.6) = 2, the
  // others nothing.
  ScheduleSpec spec = makeSpec(Scheme::Pss, 3, 3);
  spec.alpha = 50;
  spec.weights = {1, 8, 1};
  ChunkSequence seq = chunkSequence(spec);
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{0, 2, 0}));
  EXPECT_EQ(seq.chunks, repeat(1, 1));
}

TEST(ScheduleRules, AlphaHundredLeavesNoDynamicChunks) {
  ScheduleSpec spec = makeSpec(Scheme::Fss, 1000, 4);
  spec.alpha = 100;
  spec.weights = {1, 2, 3, 4};
  ChunkSequence seq = chunkSequence(spec);
  EXPECT_EQ(seq.stage1, (std::vector<std::int64_t>{100, 200, 300, 400}));
  EXPECT_TRUE(seq.chunks.empty());
}

TEST(ScheduleRules, NoIterationsNoChunks) {
  for (Scheme scheme :
       {Scheme::Pss, Scheme::Css, Scheme::Gss, Scheme::Fss, Scheme::Tss}) {
    ScheduleSpec spec = makeSpec(scheme, 0, 3);
    EXPECT_TRUE(chunkSequence(spec).chunks.empty());
    spec.alpha = 75;
    spec.weights = {1, 2, 3};
    ChunkSequence seq = chunkSequence(spec);
    EXPECT_EQ(seq.stage1, repeat(0, 3));
    EXPECT_TRUE(seq.chunks.empty());
  }
}

TEST(ScheduleRules, WeightsAreIgnoredWithoutAlpha) {
  ScheduleSpec spec = makeSpec(Scheme::Gss, 100, 2);
  spec.weights = {1, 2, 3};
  EXPECT_EQ(validate(spec), "");
  EXPECT_TRUE(chunkSequence(spec).stage1.empty());
}

TEST(ScheduleProperties, SumToIterationsAndEveryChunkFits) {
  const std::vector<std::int64_t> sizes = {0,    1,     2,     3,     7,
                                           13,   97,    1000,  1009,  2048,
                                           4099, 10007, 65536, 99991, 1000003};
  const std::vector<int> workerCounts = {1, 2, 3, 5, 8, 13, 64, 200};
  const std::vector<std::optional<double>> alphas = {std::nullopt, 0.5, 37.5,
                                                     75,           80,  100};
  int checked = 0;
  for (Scheme scheme :
       {Scheme::Pss, Scheme::Css, Scheme::Gss, Scheme::Fss, Scheme::Tss})
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{3}, std::int64_t{125}})
      for (std::int64_t iterations : sizes)
        for (int workers : workerCounts)
          for (const auto &alpha : alphas) {
            if (scheme != Scheme::Css && k != 1)
              continue;
            if (scheme == Scheme::Pss && iterations > 100000)
              continue;
            ScheduleSpec spec = makeSpec(scheme, iterations, workers, k);
            spec.alpha = alpha;
            if (alpha)
              for (int w = 0; w < workers; ++w) // some ties, some spread
                spec.weights.push_back(1.0 + (w * 7) % 5 + 0.25 * (w % 3));
            SCOPED_TRACE(std::string(schemeName(scheme)) +
                         " I=" + std::to_string(iterations) + " P=" +
                         std::to_string(workers) + " k=" + std::to_string(k) +
                         " alpha=" + (alpha ? std::to_string(*alpha) : "-"));
            ChunkSequence seq = chunkSequence(spec);

            const std::int64_t m = alpha ? static_cast<std::int64_t>(std::ceil(
                                               iterations * *alpha / 100.0))
                                         : 0;
            ASSERT_EQ(seq.stage1.size(), alpha ? std::size_t(workers) : 0u);
            for (std::int64_t share : seq.stage1)
              ASSERT_GE(share, 0);
            ASSERT_EQ(sum(seq.stage1), m);

            std::int64_t remaining = iterations - m;
            std::int64_t previous = std::numeric_limits<std::int64_t>::max();
            for (std::int64_t chunk : seq.chunks) {
              ASSERT_GE(chunk, 1);
              ASSERT_LE(chunk, remaining);
              // All five schemes grant chunks that never grow.
              ASSERT_LE(chunk, previous);
              if (scheme == Scheme::Css) {
                ASSERT_TRUE(chunk == k || chunk == remaining);
              }
              if (scheme == Scheme::Gss) {
                ASSERT_EQ(chunk, (remaining + workers - 1) / workers);
              }
              remaining -= chunk;
              previous = chunk;
            }
            ASSERT_EQ(remaining, 0);
            ASSERT_EQ(sum(seq.stage1) + sum(seq.chunks), iterations);
            ++checked;
          }
  EXPECT_GT(checked, 2000);
}

//===----------------------------------------------------------------------===//
// Errors.
//===----------------------------------------------------------------------===//

TEST(ScheduleValidate, ValidSpecsHaveNoProblem) {
  EXPECT_EQ(validate(makeSpec(Scheme::Gss, 0, 1)), "");
  EXPECT_EQ(validate(example31(Scheme::Tss, 80)), "");
  EXPECT_EQ(validate(example31(Scheme::Tss, 100)), "");
}

TEST(ScheduleValidate, BadSpecsAreNamedAndThrown) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    ScheduleSpec spec;
    const char *mentions;
  };
  std::vector<Case> cases;
  cases.push_back({makeSpec(Scheme::Gss, -1, 4), "iterations"});
  cases.push_back({makeSpec(Scheme::Gss, 10, 0), "workers"});
  cases.push_back({makeSpec(Scheme::Gss, 10, -3), "workers"});
  cases.push_back({makeSpec(Scheme::Css, 10, 2, 0), "chunk"});
  cases.push_back({makeSpec(Scheme::Css, 10, 2, -5), "chunk"});
  for (double alpha : {0.0, -1.0, 100.5, nan, inf}) {
    ScheduleSpec spec = example31(Scheme::Gss, 80);
    spec.alpha = alpha;
    cases.push_back({spec, "alpha"});
  }
  {
    ScheduleSpec spec = example31(Scheme::Gss, 80);
    spec.weights.pop_back();
    cases.push_back({spec, "weight"});
    spec.weights.clear();
    cases.push_back({spec, "weight"});
  }
  for (double weight : {0.0, -2.0, nan, inf}) {
    ScheduleSpec spec = example31(Scheme::Gss, 80);
    spec.weights[3] = weight;
    cases.push_back({spec, "weight 4"});
  }
  for (const Case &c : cases) {
    const std::string problem = validate(c.spec);
    EXPECT_NE(problem.find(c.mentions), std::string::npos) << problem;
    EXPECT_EQ(errorOf(c.spec), problem);
    EXPECT_THROW(ChunkGenerator{c.spec}, std::invalid_argument) << problem;
  }
}
