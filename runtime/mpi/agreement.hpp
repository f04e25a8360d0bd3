//===- mpi/agreement.hpp - Ranks agree on a loop, in bounded time -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The first messages of every cluster loop call (cluster_loop.cpp): each
// rank's LoopShape (cluster/loop_agreement.hpp) to rank 0, and rank 0's
// verdict back, so that ranks that called different loops, or the same
// loop differently, fail alike instead of overflowing a buffer or hanging
// in mismatched collectives. Point-to-point and polled, so that a loop some
// rank never reaches ends the job after FPM_MPI_TIMEOUT with a message,
// rather than waiting for ever.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cluster/loop_agreement.hpp"

#include <mpi.h>

#include <chrono>
#include <string>

namespace fpm::mpi {

/// Sends `mine` to rank 0 of `comm` and returns rank 0's verdict, the same
/// on every rank: empty when every rank called the loop alike, else the
/// line saying what differs (describeDisagreement). Collective. A rank that
/// has waited `timeout` for the others (rank 0) or for rank 0's verdict
/// (the others) says so on stderr, naming the loop and, on rank 0, the
/// ranks that did not call it, and aborts the job (MPI_Abort).
std::string agreeOnLoop(MPI_Comm comm, const LoopShape &mine,
                        std::chrono::seconds timeout);

} // namespace fpm::mpi
