//===- mpi/section_broadcast.hpp - A loop's writes to all ranks -*- C++ -*-===//
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The broadcasts that leave every rank with what the loop wrote: the
// written sections, range by range in iteration order, each from the rank
// that ran it (cluster_loop.cpp runs the ranges), and plain bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cluster/cluster_plan.hpp"
#include "fpm/fpm.h"

#include <mpi.h>

#include <cstdint>
#include <span>

namespace fpm::mpi {

/// Throws std::runtime_error naming `what` unless `code` is MPI_SUCCESS.
void check(int code, const char *what);

/// Broadcasts `bytes` bytes at `data` from `root`, in pieces MPI's int
/// counts can say.
void broadcastBytes(MPI_Comm comm, void *data, std::int64_t bytes, int root);

/// The bytes of arrays this process has received from other ranks so far
/// (the written sections' broadcasts, and inside data regions the rows
/// received before loops and to make arrays whole): for benchmarks.
std::uint64_t bytesReceived();
void countReceived(std::uint64_t bytes);

/// Sends what each written argument of `data` (out, inout) holds after the
/// loop to every rank (collective): range by range of `grants` (every range
/// of the loop, in iteration order, with the rank that ran it), each from
/// its rank.
void broadcastWrittenSections(MPI_Comm comm, std::span<const fpm_arg> data,
                              std::span<const ChunkMaster::Grant> grants);

} // namespace fpm::mpi
