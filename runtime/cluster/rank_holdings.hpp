//===- cluster/rank_holdings.hpp - Which rank holds which bytes -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: RankHoldings, which rank of a job holds the newest
// copy of which bytes of one array of a data region, for libfpmrt-mpi's
// owner computes: inside a region a rank keeps what its share of a loop
// wrote, and before the next loop it receives only the bytes its share
// reads that another rank wrote since it last had them. Every rank keeps
// the same RankHoldings, updated from what every rank knows alike (the
// split, the sections, the transfers), so that each knows what to send and
// what to receive without asking. Plain values without MPI, so that the
// MPI library, its unit test and the cluster simulation run the same code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "residency/residency.hpp"

#include <cstddef>
#include <map>
#include <span>
#include <vector>

namespace fpm {

class RankHoldings {
public:
  using Bytes = residency::Bytes;

  /// An array of `bytes` bytes over `ranks` ranks, each holding all of it
  /// (a region begins with the same array on every rank).
  RankHoldings(int ranks, std::size_t bytes);

  /// `rank` wrote `ranges` (bytes of the array, ordered, disjoint): it
  /// alone holds them now. Calls in the loop's iteration order leave a byte
  /// two ranges wrote with the later one, as the serial loop does.
  void wrote(int rank, std::span<const Bytes> ranges);

  /// Bytes to move from one rank to another.
  struct Transfer {
    int from = 0, to = 0;
    Bytes bytes;
    friend bool operator==(const Transfer &, const Transfer &) = default;
  };
  /// What `rank` lacks of `ranges` (ordered, disjoint), each part from the
  /// rank that wrote it last, in byte order, joined where they touch.
  std::vector<Transfer> toRead(int rank, std::span<const Bytes> ranges) const;
  /// `transfer` arrived: its receiver holds those bytes too.
  void received(const Transfer &transfer);

  /// The parts of `range` that some rank lacks, each with the rank that
  /// wrote it last: what a broadcast from that rank gives every rank.
  struct Run {
    int owner = 0;
    Bytes bytes;
    friend bool operator==(const Run &, const Run &) = default;
  };
  std::vector<Run> notEverywhere(Bytes range) const;
  /// Every rank holds `range` now (broadcast, or written alike by all).
  void everywhere(Bytes range);
  /// Whether every rank holds every byte.
  bool whole() const;

  int ranks() const { return ranks_; }
  std::size_t bytes() const { return bytes_; }

private:
  /// Who holds a stretch of bytes: `owner` wrote it last (Everyone: no
  /// rank since the region began, or all alike), and `copies` received it
  /// since (sorted).
  static constexpr int Everyone = -1;
  struct Stretch {
    std::size_t last = 0;
    int owner = Everyone;
    std::vector<int> copies;
  };
  /// Cuts the stretch that holds `at` there, so that one starts at `at`.
  void cut(std::size_t at);
  /// `owner` alone holds `range` (Everyone: every rank).
  void assign(Bytes range, int owner);
  /// Joins each stretch with the next where both say the same, from
  /// `first` to `last`.
  void join(std::size_t first, std::size_t last);
  bool holds(const Stretch &stretch, int rank) const;
  /// Appends to `runs` the parts of `range` in the stretches `keep` takes,
  /// each with the rank that wrote it, joined where they touch.
  template <class Keep>
  void appendOwnerRuns(Bytes range, Keep keep, std::vector<Run> &runs) const;

  int ranks_;
  std::size_t bytes_;
  /// By first byte; covers [0, bytes_).
  std::map<std::size_t, Stretch> stretches_;
};

} // namespace fpm
