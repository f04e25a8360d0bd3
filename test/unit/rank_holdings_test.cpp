//===- unit/rank_holdings_test.cpp - Which rank holds which bytes ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "cluster/rank_holdings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using fpm::RankHoldings;
using Bytes = RankHoldings::Bytes;
using Transfer = RankHoldings::Transfer;
using StretchRun = RankHoldings::Run;

namespace {

constexpr std::size_t Row = 8; // bytes per row of the test's grids
constexpr std::size_t Rows = 30;

Bytes rows(std::size_t first, std::size_t last) {
  return {first * Row, last * Row};
}

/// One sweep of a 3-point stencil over rows [1, Rows - 1) split as `cuts`
/// (rank r runs [cuts[r], cuts[r + 1])): each rank first receives what it
/// lacks of rows [begin - 1, end + 1) of `from`, then writes its rows of
/// `to`. Returns the transfers, every rank's alike.
std::vector<Transfer> sweep(RankHoldings &from, RankHoldings &to,
                            const std::vector<std::size_t> &cuts) {
  std::vector<Transfer> all;
  for (std::size_t r = 0; r + 1 < cuts.size(); ++r) {
    if (cuts[r] == cuts[r + 1])
      continue;
    const Bytes reads[] = {rows(cuts[r] - 1, cuts[r + 1] + 1)};
    for (const Transfer &transfer : from.toRead(static_cast<int>(r), reads))
      all.push_back(transfer);
  }
  for (const Transfer &transfer : all)
    from.received(transfer);
  for (std::size_t r = 0; r + 1 < cuts.size(); ++r) {
    const Bytes writes[] = {rows(cuts[r], cuts[r + 1])};
    to.wrote(static_cast<int>(r), writes);
  }
  return all;
}

std::size_t total(const std::vector<Transfer> &transfers) {
  std::size_t bytes = 0;
  for (const Transfer &transfer : transfers)
    bytes += transfer.bytes.size();
  return bytes;
}

} // namespace

TEST(RankHoldingsTest, EveryRankHoldsTheArrayAtFirst) {
  const RankHoldings holdings(3, 100);
  EXPECT_TRUE(holdings.whole());
  const Bytes all[] = {{0, 100}};
  EXPECT_TRUE(holdings.toRead(2, all).empty());
  EXPECT_TRUE(holdings.notEverywhere({0, 100}).empty());
}

TEST(RankHoldingsTest, AStencilsSteadyStateMovesItsHalosOnly) {
  RankHoldings a(3, Rows * Row), b(3, Rows * Row);
  const std::vector<std::size_t> cuts{1, 10, 20, Rows - 1};
  // The first sweep reads a as the region found it: nothing moves.
  EXPECT_TRUE(sweep(a, b, cuts).empty());
  // Then each rank lacks only its neighbours' boundary rows.
  const std::vector<Transfer> halos{{1, 0, rows(10, 11)},
                                    {0, 1, rows(9, 10)},
                                    {2, 1, rows(20, 21)},
                                    {1, 2, rows(19, 20)}};
  EXPECT_EQ(sweep(b, a, cuts), halos);
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(sweep(a, b, cuts), halos);
    EXPECT_EQ(sweep(b, a, cuts), halos);
  }
}

TEST(RankHoldingsTest, AMovedSplitMovesTheRowsThatChangedRanks) {
  RankHoldings a(3, Rows * Row), b(3, Rows * Row);
  sweep(a, b, {1, 10, 20, Rows - 1});
  sweep(b, a, {1, 10, 20, Rows - 1});
  // Rank 1 now also runs rows 8 and 9, which rank 0 wrote: it receives
  // them with its new halo, row 7, in one transfer; rank 0 reads only rows
  // it wrote.
  const std::vector<Transfer> moved = sweep(a, b, {1, 8, 20, Rows - 1});
  EXPECT_EQ(moved, (std::vector<Transfer>{{0, 1, rows(7, 10)},
                                          {2, 1, rows(20, 21)},
                                          {1, 2, rows(19, 20)}}));
  EXPECT_EQ(total(moved), 5 * Row);
}

TEST(RankHoldingsTest, WhatARankReceivedItHoldsUntilAnotherWrites) {
  RankHoldings holdings(3, 40);
  const Bytes written[] = {{10, 20}};
  holdings.wrote(1, written);
  const Bytes wanted[] = {{0, 40}};
  const std::vector<Transfer> first = holdings.toRead(0, wanted);
  ASSERT_EQ(first, (std::vector<Transfer>{{1, 0, {10, 20}}}));
  holdings.received(first.front());
  EXPECT_TRUE(holdings.toRead(0, wanted).empty());
  EXPECT_EQ(holdings.toRead(2, wanted),
            (std::vector<Transfer>{{1, 2, {10, 20}}}));
  // Rank 2 writes part of it: rank 0's copy of that part is stale.
  const Bytes rewritten[] = {{15, 25}};
  holdings.wrote(2, rewritten);
  EXPECT_EQ(holdings.toRead(0, wanted),
            (std::vector<Transfer>{{2, 0, {15, 25}}}));
  EXPECT_EQ(holdings.toRead(1, wanted),
            (std::vector<Transfer>{{2, 1, {15, 25}}}));
}

TEST(RankHoldingsTest, TheLaterOfTwoOverlappingWritesHoldsTheBytes) {
  RankHoldings holdings(2, 40);
  const Bytes early[] = {{0, 30}};
  const Bytes late[] = {{20, 40}};
  holdings.wrote(0, early);
  holdings.wrote(1, late);
  EXPECT_EQ(holdings.notEverywhere({0, 40}),
            (std::vector<StretchRun>{{0, {0, 20}}, {1, {20, 40}}}));
}

TEST(RankHoldingsTest, BytesEveryRankReceivedAreEverywhereAgain) {
  RankHoldings holdings(3, 40);
  const Bytes written[] = {{8, 16}};
  holdings.wrote(2, written);
  holdings.received({2, 0, {8, 16}});
  EXPECT_FALSE(holdings.whole());
  holdings.received({2, 1, {8, 12}});
  EXPECT_EQ(holdings.notEverywhere({0, 40}),
            (std::vector<StretchRun>{{2, {12, 16}}}));
  holdings.received({2, 1, {12, 16}});
  EXPECT_TRUE(holdings.whole());
}

TEST(RankHoldingsTest, EverywhereMakesTheArrayWholeAgain) {
  RankHoldings a(3, Rows * Row), b(3, Rows * Row);
  sweep(a, b, {1, 10, 20, Rows - 1});
  const std::vector<StretchRun> runs = b.notEverywhere({0, Rows * Row});
  EXPECT_EQ(runs,
            (std::vector<StretchRun>{
                {0, rows(1, 10)}, {1, rows(10, 20)}, {2, rows(20, Rows - 1)}}));
  b.everywhere({0, 15 * Row});
  EXPECT_EQ(
      b.notEverywhere({0, Rows * Row}),
      (std::vector<StretchRun>{{1, rows(15, 20)}, {2, rows(20, Rows - 1)}}));
  b.everywhere({0, Rows * Row});
  EXPECT_TRUE(b.whole());
}

TEST(RankHoldingsTest, RangesPastTheEndAreCut) {
  RankHoldings holdings(2, 16);
  const Bytes written[] = {{8, 64}};
  holdings.wrote(1, written);
  const Bytes wanted[] = {{0, 1000}};
  EXPECT_EQ(holdings.toRead(0, wanted),
            (std::vector<Transfer>{{1, 0, {8, 16}}}));
}
