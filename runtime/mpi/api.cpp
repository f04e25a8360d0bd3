//===- mpi/api.cpp - The C API of include/fpm/fpm_mpi.h -------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The collective calls, and the pragma program's way in: a router for every
// fpm_parallel_* call of the process (api/part.hpp) that starts MPI when the
// program has not, finishes it at exit, and keeps rank 0's stdout alone.
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm_mpi.h"

#include "mpi/cluster_loop.hpp"
#include "support/environment.hpp"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>

namespace {

bool startedByFpm = false;

void finishMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

/// MPI, started when the program has not; false once it has finished.
bool ensureMpi() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized)
      return;
    // Serialized: the self-scheduling master serves requests from a
    // thread while the loop's own threads compute (no MPI there).
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) ==
        MPI_SUCCESS) {
      startedByFpm = true;
      std::atexit(finishMpi);
    }
  });
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

int route(const fpm::LoopArguments &arguments) {
  if (!ensureMpi())
    return fpm::runLoopHere(arguments); // after MPI_Finalize
  // Split only where fpm-rewrite proved that the data clauses cover what
  // the loop writes: it makes an OpenCL kernel only then. Any other loop
  // runs whole on every rank (runAcross without data).
  fpm::LoopArguments routed = arguments;
  fpm_loop whole{};
  if (!arguments.kernel && arguments.loop) {
    whole = *arguments.loop;
    whole.data = nullptr;
    whole.data_count = 0;
    routed.loop = &whole;
  }
  return fpm::mpi::runAcross(MPI_COMM_WORLD, routed);
}

/// This process's rank in the job mpirun started, before MPI_Init: from
/// the launchers' variables (Open MPI, PMIx, MPICH's PMI); 0 without.
long launcherRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *value = fpm::textFromEnvironment(name))
      return std::strtol(value, nullptr, 10);
  return 0;
}

} // namespace

extern "C" int fpm_mpi_parallel_for(MPI_Comm comm, const fpm_loop *loop,
                                    int64_t trip_count, fpm_body_fn body,
                                    void *context, const fpm_kernel *kernel) {
  if (!body)
    return fpm::setLastError(FPM_ERROR_INVALID_ARGUMENT,
                             "the loop has no body");
  return fpm::mpi::runAcross(
      comm, {loop, trip_count, body, nullptr, context, {}, kernel});
}

extern "C" int fpm_mpi_parallel_reduce(MPI_Comm comm, const fpm_loop *loop,
                                       int64_t trip_count,
                                       fpm_reduce_body_fn body, void *context,
                                       const fpm_reduction *reductions,
                                       int count, const fpm_kernel *kernel) {
  if (const int status = fpm::checkReduceArguments("fpm_mpi_parallel_reduce",
                                                   body, reductions, count);
      status != FPM_OK)
    return status;
  return fpm::mpi::runAcross(comm,
                             {loop,
                              trip_count,
                              nullptr,
                              body,
                              context,
                              {reductions, static_cast<std::size_t>(count)},
                              kernel});
}

extern "C" void fpm_mpi_route_loops(void) {
  bool allStdout = false;
  try {
    allStdout = fpm::readMpiEnvironment().allStdout;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "fpm: %s\n", error.what());
  }
  if (!allStdout && launcherRank() != 0) {
    std::fflush(stdout);
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) {
      dup2(null, STDOUT_FILENO);
      close(null);
    }
  }
  fpm::setLoopRouter(route);
}
