//===- fpm/fpm_mpi.hpp - One loop across MPI ranks, in C++ ------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm.hpp's parallelFor and parallelReduce across the ranks of an MPI
// communicator (fpm_mpi.h says what a collective call does and gives):
//
//   fpm::mpi::parallelFor(MPI_COMM_WORLD, loop, n, nullptr,
//                         [&](std::int64_t begin, std::int64_t end) {...});
//
// where `loop.data` names what the iterations write, so that every rank
// holds all of it afterwards. A body that throws stops the loop; the rank
// where it threw rethrows it, the others throw std::runtime_error.
//
//===----------------------------------------------------------------------===//
#ifndef FPM_FPM_MPI_HPP
#define FPM_FPM_MPI_HPP

#include "fpm/fpm.hpp"
#include "fpm/fpm_mpi.h"

namespace fpm::mpi {

/// fpm::parallelFor(loop, tripCount, kernel, body) across `comm`.
template <class Body>
void parallelFor(MPI_Comm comm, const fpm_loop &loop, std::int64_t tripCount,
                 const fpm_kernel *kernel, Body &&body) {
  using BodyType = std::remove_reference_t<Body>;
  fpm::detail::ChunkContext<BodyType> state(body);
  const int status = fpm_mpi_parallel_for(
      comm, &loop, tripCount, &fpm::detail::chunkTrampoline<BodyType>, &state,
      kernel);
  if (state.error)
    std::rethrow_exception(state.error);
  if (status != FPM_OK)
    fpm::detail::throwError(status);
}

/// fpm::parallelReduce across `comm`: every rank's variables get the same
/// result.
template <class Body, class... Ts>
void parallelReduce(MPI_Comm comm, const fpm_loop &loop, std::int64_t tripCount,
                    const fpm_kernel *kernel, Body &&body,
                    Reduce<Ts>... reductions) {
  static_assert(sizeof...(Ts) > 0, "parallelReduce needs a reduction");
  using BodyType = std::remove_reference_t<Body>;
  fpm::detail::ReduceContext<BodyType, Ts...> state(body);
  const fpm_reduction list[] = {
      {reductions.op, scalarType<Ts>(), &reductions.variable}...};
  const int status = fpm_mpi_parallel_reduce(
      comm, &loop, tripCount, &fpm::detail::reduceTrampoline<BodyType, Ts...>,
      &state, list, static_cast<int>(sizeof...(Ts)), kernel);
  if (state.error)
    std::rethrow_exception(state.error);
  if (status != FPM_OK)
    fpm::detail::throwError(status);
}

} // namespace fpm::mpi

#endif // FPM_FPM_MPI_HPP
