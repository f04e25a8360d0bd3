//===- mpi/cluster_loop.hpp - One loop across the ranks --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: libfpmrt-mpi, the loops of libfpmrt spread over
// the ranks of an MPI communicator (fpm/fpm_mpi.h says what a caller gets;
// README.md here how it works). This file: runAcross(), the collective
// behind fpm_mpi_parallel_for and _reduce and the router of a pragma
// program (api.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/part.hpp"

#include <mpi.h>

namespace fpm::mpi {

/// Runs the loop across the ranks of `comm` (collective) and returns the
/// status, the same on every rank; fpm_last_error() says what failed.
int runAcross(MPI_Comm comm, const LoopArguments &arguments);

} // namespace fpm::mpi
