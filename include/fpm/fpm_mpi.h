/*===- fpm/fpm_mpi.h - One loop across the ranks of an MPI job --*- C -*-===*\
|*                                                                            *|
|* Part of fpm, under the Apache License v2.0 with LLVM Exceptions.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * libfpmrt-mpi: the loops of fpm.h spread over the ranks of an MPI
 * communicator, each rank running its share on its own PEs (its CPU team
 * and OpenCL devices) exactly as fpm_parallel_for_kernel does on one
 * machine. Link with -lfpmrt-mpi -lfpmrt and an MPI library (CMake:
 * fpm::fpmrt-mpi); programs that never use MPI never need it.
 *
 * Every call here is collective: every rank of `comm` calls it for the same
 * loop, in the same order as its other collective calls, with the same trip
 * count, schedule, body and data (SPMD: the arrays the loop reads hold the
 * same values on every rank). Each call checks first that the ranks agree
 * (loop, trip count, schedule, grain, sections, reductions); where they do
 * not, it returns FPM_ERROR_INVALID_ARGUMENT on every rank, fpm_last_error()
 * saying what differs ("loop 'heat' called with 1000 iterations on rank 0
 * but 999 on rank 2"). A rank that waits more than FPM_MPI_TIMEOUT seconds
 * (default 60) for the others to call the loop says so on stderr and
 * aborts the job (MPI_Abort): a loop only some ranks reach must be called
 * through fpm_parallel_for (fpm.h), which runs on the calling rank alone.
 * The iterations are split across the ranks:
 *  - a static schedule (or "auto") splits by node-level FPMs: each rank's
 *    time for w iterations at the split its own planner makes of them over
 *    its PEs (the same schedule), from their stored profiles; or, without
 *    those, by each rank's speed measured in earlier calls of the loop; a
 *    loop whose ranks are not known yet starts from the self-scheduling
 * thesis's two-stage schedule (80% by workers, the rest by FSS) and is split by
 * what it measured from its second call on;
 *  - a self-scheduling schedule (pss, css, gss, fss, tss, with a two-stage
 *    percentage or not) runs the self-scheduling thesis's cluster
 * self-scheduling: rank 0 is the master and hands out chunks over MPI messages
 * (from a thread of its own while it computes its own chunks too). Afterwards
 * every rank holds what the serial loop would have left: the written sections
 * (FPM_ARG_OUT and FPM_ARG_INOUT entries of loop->data) of every iteration are
 * sent from the rank that ran it to all others, and reductions are folded on
 * every rank from every range's partial results in iteration order, so all
 * ranks get the same bits.
 *
 * A loop without data (loop->data_count == 0) cannot move its results: it
 * runs whole on every rank (one FPM_VERBOSE line says so), and rank 0's
 * reduction results are sent to the others. A rank whose part fails or
 * stops makes every rank return the same error status; a rank that dies
 * takes the job down, as MPI does by default.
 *
 * MPI must be initialised (MPI_Init_thread with at least
 * MPI_THREAD_FUNNELED; with MPI_THREAD_SERIALIZED or more the master serves
 * requests from a thread, else between its own chunks).
 *
 * Environment (besides fpm.h's, read on every rank): FPM_VERBOSE=1 prints
 * on rank 0 how each loop was split across the ranks; FPM_MPI_TIMEOUT=s
 * bounds the wait for the other ranks at a call (above);
 * FPM_MPI_ALL_STDOUT=1 keeps every rank's stdout under
 * fpm_mpi_route_loops(); FPM_TEST_SLOW_RANK=r:f (tests) makes rank r
 * f times slower.
 */
#ifndef FPM_FPM_MPI_H
#define FPM_FPM_MPI_H

/* fpm uses MPI's C API only. A C++ source that includes this header first
   gets no MPI-2 C++ bindings (removed in MPI-3), whose inline functions,
   emitted unoptimised (-O0), need a library (libmpi_cxx) that
   fpm::fpmrt-mpi's MPI::MPI_C does not link. */
#if defined(__cplusplus) && !defined(OMPI_SKIP_MPICXX)
#define OMPI_SKIP_MPICXX 1
#endif
#if defined(__cplusplus) && !defined(MPICH_SKIP_MPICXX)
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "fpm/fpm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* fpm_parallel_for_kernel across the ranks of `comm` (kernel may be NULL:
   the CPU only). Returns the same status on every rank. */
int fpm_mpi_parallel_for(MPI_Comm comm, const fpm_loop *loop,
                         int64_t trip_count, fpm_body_fn body, void *context,
                         const fpm_kernel *kernel);

/* fpm_parallel_reduce across the ranks of `comm`: every rank's variables
   receive the same result. */
int fpm_mpi_parallel_reduce(MPI_Comm comm, const fpm_loop *loop,
                            int64_t trip_count, fpm_reduce_body_fn body,
                            void *context, const fpm_reduction *reductions,
                            int count, const fpm_kernel *kernel);

/*
 * From now on, every fpm_parallel_for, _kernel and _reduce call of this
 * process (a pragma program's loops) runs across MPI_COMM_WORLD as above,
 * MPI initialised at the first (MPI_THREAD_SERIALIZED) unless the program
 * did it, and finalised at exit when fpm initialised it. A loop runs split
 * only when the data clauses are known to cover everything it writes: it
 * has data and an OpenCL kernel (fpm-rewrite makes one only then); any
 * other loop runs whole on every rank. Unless FPM_MPI_ALL_STDOUT=1, the
 * stdout of every rank but 0 goes to /dev/null from this call on (stderr is
 * kept). fpm_rewrite_sources(... MPI) calls this before main().
 */
void fpm_mpi_route_loops(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FPM_FPM_MPI_H */
