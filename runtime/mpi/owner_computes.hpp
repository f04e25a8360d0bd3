//===- mpi/owner_computes.hpp - Ranks keep what they wrote ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Inside a data region (residency/), a rank keeps what its share of a loop
// wrote of a resident array instead of broadcasting it: before a loop it
// receives, point to point, only the bytes its ranges read that another
// rank wrote since it last had them (cluster/rank_holdings.hpp says which,
// alike on every rank), and the region's end or `update host` makes the
// arrays whole on every rank again. Outside a region, and for arrays no
// region maps, a loop's writes go to every rank as before
// (section_broadcast.hpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cluster/cluster_plan.hpp"
#include "fpm/fpm.h"
#include "residency/copy_cost.hpp"

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

namespace fpm::mpi {

/// Installs the residency layer that makes region ends and `update host`
/// collective (once; every cluster loop calls it).
void keepWritesOnRanks();

/// What receiving bytes from other ranks before a loop costs this rank, as
/// the exchanges so far took (from the first message posted to the last
/// one done): what a kept split weighs a row that changes ranks by.
residency::CopyCost rankCopyCost();

/// One split loop's arrays over `comm`, sorted into those a rank keeps (an
/// array inside one resident array) and those it broadcasts (the rest).
/// Where an array only partly lies in a resident one, or is an array of
/// row pointers (whose rows may be anywhere), every kept array is made
/// whole on every rank first and nothing is kept in this call.
class OwnerComputes {
public:
  OwnerComputes(MPI_Comm comm, std::span<const fpm_arg> data,
                std::int64_t tripCount);
  ~OwnerComputes();
  OwnerComputes(const OwnerComputes &) = delete;
  OwnerComputes &operator=(const OwnerComputes &) = delete;
  /// Before the loop: each rank receives what it lacks of what its ranges
  /// of `grants` read; with no grants (self-scheduling, ranges not known
  /// yet), of what the whole loop reads.
  void receiveReads(std::span<const ChunkMaster::Grant> grants);
  /// After the loop ran as `grants` (every range, in iteration order):
  /// each kept array's written ranges stay with the rank that ran them.
  void keepWrites(std::span<const ChunkMaster::Grant> grants);
  /// The loop's arguments whose writes still go to every rank.
  std::span<const fpm_arg> broadcast() const { return broadcast_; }

private:
  struct Kept; ///< an array of the loop that a rank keeps
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  std::int64_t tripCount_;
  std::vector<fpm_arg> broadcast_;
  std::vector<Kept> kept_;
};

/// Every array that ranks keep parts of is whole on every rank again
/// (collective): before a loop that runs whole on every rank and may read
/// any of them.
void gatherEverything(MPI_Comm comm);

} // namespace fpm::mpi
