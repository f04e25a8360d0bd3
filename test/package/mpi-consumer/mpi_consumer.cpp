// An installed-package consumer of libfpmrt-mpi (fpm/fpm_mpi.hpp), run by
// test/package/check-install.sh under mpirun -np 2: a loop split `equal`ly
// across the ranks writes an array (every rank must hold all of it, as
// the serial loop leaves it, having run only its share), and a reduction
// whose result every rank holds. Prints "mpi_consumer: ok on N ranks" on
// rank 0 and exits 0; any mismatch aborts the job.
#include <fpm/fpm_mpi.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int rank = 0;

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "mpi_consumer: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

std::int64_t value(std::int64_t i) { return i * 7 % 1001 + 1; }

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  constexpr std::int64_t n = 10000;
  std::vector<std::int64_t> out(n, -1);
  fpm_arg data{};
  data.kind = FPM_ARG_OUT;
  data.data = out.data();
  data.size = sizeof(std::int64_t);
  data.length = n;
  data.stride = 1;
  data.count = 1;
  fpm_loop loop{};
  loop.name = "package.mpi_consumer.fill";
  loop.schedule = "equal"; // static: every rank gets a share
  loop.data = &data;
  loop.data_count = 1;

  // Iterations this rank ran itself (its CPU team's threads add at once).
  std::atomic<std::int64_t> ranHere{0};
  fpm::mpi::parallelFor(MPI_COMM_WORLD, loop, n, nullptr,
                        [&](std::int64_t begin, std::int64_t end) {
                          for (std::int64_t i = begin; i < end; ++i)
                            out[static_cast<std::size_t>(i)] = value(i);
                          ranHere += end - begin;
                        });
  for (std::int64_t i = 0; i < n; ++i)
    if (out[static_cast<std::size_t>(i)] != value(i))
      fail("the array is not the serial loop's");
  if (ranks > 1 && (ranHere <= 0 || ranHere >= n))
    fail("the loop was not split across the ranks");

  loop.name = "package.mpi_consumer.sum";
  data.kind = FPM_ARG_IN;
  std::int64_t sum = 0;
  fpm::mpi::parallelReduce(
      MPI_COMM_WORLD, loop, n, nullptr,
      [&](std::int64_t begin, std::int64_t end, std::int64_t &partial) {
        for (std::int64_t i = begin; i < end; ++i)
          partial += out[static_cast<std::size_t>(i)];
      },
      fpm::reduce(FPM_REDUCE_ADD, sum));
  std::int64_t serial = 0;
  for (std::int64_t i = 0; i < n; ++i)
    serial += value(i);
  if (sum != serial)
    fail("the sum is not the serial loop's");

  if (rank == 0)
    std::printf("mpi_consumer: ok on %d ranks\n", ranks);
  MPI_Finalize();
  return 0;
}
