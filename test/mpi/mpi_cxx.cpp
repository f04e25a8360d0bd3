// The C++ layer of libfpmrt-mpi (fpm/fpm_mpi.hpp) under mpirun: a
// reduction whose result every rank holds with the same bits, and a body
// that throws on one rank only: every rank's call fails, the throwing rank
// rethrows its own exception, the others a std::runtime_error, and the job
// goes on (the next loop runs). Prints "mpi_cxx: ok" on rank 0.
#include "fpm/fpm_mpi.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace {

int rank = 0;

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "mpi_cxx: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

struct Thrown : std::runtime_error {
  Thrown() : std::runtime_error("thrown on purpose") {}
};

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t n = 5000;
  std::vector<double> x(n);
  for (std::int64_t i = 0; i < n; ++i)
    x[static_cast<std::size_t>(i)] = 1.0 / static_cast<double>(i + 3);
  fpm_arg data{};
  data.kind = FPM_ARG_IN;
  data.data = x.data();
  data.size = sizeof(double);
  data.length = n;
  data.stride = 1;
  data.count = 1;
  fpm_loop loop{};
  loop.name = "mpi.cxx.sum";
  loop.schedule = "fss";
  loop.data = &data;
  loop.data_count = 1;

  double sum = 0;
  long long count = 0;
  fpm::mpi::parallelReduce(
      MPI_COMM_WORLD, loop, n, nullptr,
      [&](std::int64_t begin, std::int64_t end, double &s, long long &c) {
        for (std::int64_t i = begin; i < end; ++i) {
          s += x[static_cast<std::size_t>(i)];
          ++c;
        }
      },
      fpm::reduce(FPM_REDUCE_ADD, sum), fpm::reduce(FPM_REDUCE_ADD, count));
  double serial = 0;
  for (double v : x)
    serial += v;
  if (count != n)
    fail("the count of iterations is wrong");
  if (std::abs(sum - serial) > 1e-12 * serial)
    fail("the sum is not the serial loop's");
  double root = sum;
  MPI_Bcast(&root, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (std::memcmp(&root, &sum, sizeof sum) != 0)
    fail("the sum's bits differ from rank 0's");

  // Thrown on the last rank only (its share is not empty: static, equal).
  loop.name = "mpi.cxx.throw";
  loop.schedule = "equal";
  bool threw = false, thrown = false;
  try {
    fpm::mpi::parallelFor(MPI_COMM_WORLD, loop, n, nullptr,
                          [&](std::int64_t, std::int64_t) {
                            if (rank == ranks - 1)
                              throw Thrown();
                          });
  } catch (const Thrown &) {
    thrown = true;
  } catch (const std::runtime_error &) {
    threw = true;
  }
  if (rank == ranks - 1 ? !thrown : !threw)
    fail("the failed loop did not fail alike on every rank");

  loop.name = "mpi.cxx.after";
  std::int64_t ran = 0;
  fpm::mpi::parallelReduce(
      MPI_COMM_WORLD, loop, n, nullptr,
      [&](std::int64_t begin, std::int64_t end, std::int64_t &c) {
        c += end - begin;
      },
      fpm::reduce(FPM_REDUCE_ADD, ran));
  if (ran != n)
    fail("the loop after the failed one did not run every iteration");
  if (rank == 0)
    std::printf("mpi_cxx: ok\n");
  MPI_Finalize();
  return 0;
}
