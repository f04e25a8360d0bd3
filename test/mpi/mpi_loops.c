/* End-to-end test of libfpmrt-mpi's collective calls (fpm/fpm_mpi.h), run
 * by CTest under mpirun with 1, 2 and 3 ranks (test/mpi/CMakeLists.txt):
 *
 *   mpi_loops check SCHEDULE...  every loop below with each schedule, twice
 *                                (the second call plans on what the first
 *                                measured); every rank's arrays must equal
 *                                the serial loop's bit for bit, reductions
 *                                hold the same bits on every rank
 *   mpi_loops slow               an `auto` loop called 4 times with one rank
 *                                made slow (FPM_TEST_SLOW_RANK): from call
 *                                2 on, the slow rank runs fewer iterations
 *                                than each of the others
 *   mpi_loops kernel             loops A and F with their OpenCL kernels, 4
 *                                calls, rank 0 with every OpenCL device
 *                                beside its CPU team, the others CPU-only
 *   mpi_loops disagree           (3 ranks) the last rank calls a loop with
 *                                one iteration fewer, then rank 1 another
 *                                loop: both calls fail on every rank with
 *                                the same message, and the next loop runs
 *   mpi_loops alone              rank 0 alone calls a loop, the others
 *                                finish: the job must end (FPM_MPI_TIMEOUT)
 *   mpi_loops killed             the rank MPI_LOOPS_KILL_RANK names kills
 *                                itself (SIGKILL) inside a loop body: the
 *                                job must end, in error, with a message
 *
 * Prints "mpi_loops: ok" on rank 0 and exits 0 on success; any mismatch is
 * reported on stderr and exits 1 on every rank. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "fpm/fpm_mpi.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

static void fail(const char *what, const char *schedule) {
  fprintf(stderr, "mpi_loops: rank %d: %s (schedule '%s')\n", rank, what,
          schedule);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(int status, const char *loop, const char *schedule) {
  if (status != FPM_OK) {
    char message[512];
    snprintf(message, sizeof message, "%s: %s", loop, fpm_last_error());
    fail(message, schedule);
  }
}

/* Loop A: row i of an n-column table, [i*n, i*n + n): contiguous. */
enum { RowsN = 7 };
static int64_t rowValue(int64_t i, int64_t j) {
  return (i * 31 + j * 17) % 1009 * 3 + 1;
}
static int rowsBody(int64_t begin, int64_t end, void *context) {
  int64_t *out = context;
  for (int64_t i = begin; i < end; ++i)
    for (int64_t j = 0; j < RowsN; ++j)
      out[i * RowsN + j] = rowValue(i, j);
  return 0;
}
static const char *rowsKernel =
    "__kernel void rows(__global long *out, long n) {\n"
    "  long i = get_global_id(0);\n"
    "  for (long j = 0; j < n; ++j)\n"
    "    out[i * n + j] = (i * 31 + j * 17) % 1009 * 3 + 1;\n"
    "}\n";

/* Loop B: 2 doubles every 5, from element 3: sections apart (a
   rectangle); the gaps keep what they held. */
static int gapsBody(int64_t begin, int64_t end, void *context) {
  double *out = context;
  for (int64_t k = begin; k < end; ++k) {
    out[3 + k * 5] = sin((double)k) * (double)k;
    out[3 + k * 5 + 1] = cos((double)k) / (double)(k + 1);
  }
  return 0;
}

/* Loop C: a[T-1-k] read and written, running down the array. */
static int downBody(int64_t begin, int64_t end, void *context) {
  int64_t *a = context;
  int64_t last = a[0]; /* a[0] holds T-1, never written */
  for (int64_t k = begin; k < end; ++k)
    if (last - k > 0)
      a[last - k] = a[last - k] * 2 + k;
  return 0;
}

/* Loop D: reads x[k], reduces a sum and a maximum. */
static int reduceBody(int64_t begin, int64_t end, void *context,
                      void *const *partials) {
  const double *x = context;
  double *sum = partials[0];
  int64_t *top = partials[1];
  for (int64_t k = begin; k < end; ++k) {
    *sum += x[k] * 0.1;
    int64_t v = (k * 7919) % 10007;
    if (v > *top)
      *top = v;
  }
  return 0;
}

/* Loop E: no data clauses: runs whole on every rank. */
static int wholeBody(int64_t begin, int64_t end, void *context) {
  int64_t *out = context;
  for (int64_t k = begin; k < end; ++k)
    out[k] = k * 3;
  return 0;
}

/* Row k of an array of row pointers, 5 elements each. */
static int pointedRowsBody(int64_t begin, int64_t end, void *context) {
  double **rowsAt = context;
  for (int64_t k = begin; k < end; ++k)
    for (int64_t j = 0; j < 5; ++j)
      rowsAt[k][j] = rowsAt[k][j] * 0.5 + (double)(k + j);
  return 0;
}

/* Element (k * 7 + 3) mod T: scattered writes, a permutation of T when T
   and 7 are coprime. */
static int scatterBody(int64_t begin, int64_t end, void *context) {
  int64_t *out = ((int64_t **)context)[0];
  const int64_t T = *((int64_t **)context)[1];
  for (int64_t k = begin; k < end; ++k)
    out[(k * 7 + 3) % T] = k * k + 1;
  return 0;
}

/* Column k of a 7 x T matrix (rows 7, pitch T). */
static int columnsBody(int64_t begin, int64_t end, void *context) {
  double *matrix = ((double **)context)[0];
  const int64_t T = *((int64_t **)context)[1];
  for (int64_t k = begin; k < end; ++k)
    for (int64_t r = 0; r < 7; ++r)
      matrix[r * T + k] = matrix[r * T + k] * 0.5 + sqrt((double)(r + k));
  return 0;
}

static fpm_arg array(int kind, void *data, size_t size, int64_t length,
                     int64_t offset, int64_t stride, int64_t count) {
  fpm_arg arg;
  memset(&arg, 0, sizeof arg);
  arg.kind = kind;
  arg.data = data;
  arg.size = size;
  arg.length = length;
  arg.offset = offset;
  arg.stride = stride;
  arg.count = count;
  return arg;
}

/* Loop A over T rows, with its kernel when `kernel`; checked. */
static void runRows(const char *schedule, int64_t T, int kernel) {
  int64_t *out = calloc((size_t)(T * RowsN), sizeof *out);
  fpm_arg data =
      array(FPM_ARG_OUT, out, sizeof *out, T * RowsN, 0, RowsN, RowsN);
  int64_t n = RowsN;
  fpm_arg args[2] = {data, fpm_scalar_arg(&n, sizeof n)};
  fpm_kernel k;
  memset(&k, 0, sizeof k);
  k.source = rowsKernel;
  k.name = "rows";
  k.args = args;
  k.arg_count = 2;
  fpm_loop loop;
  memset(&loop, 0, sizeof loop);
  loop.name = kernel ? "mpi.rows.kernel" : "mpi.rows";
  loop.schedule = schedule;
  loop.data = &data;
  loop.data_count = 1;
  check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, rowsBody, out,
                             kernel ? &k : NULL),
        "loop A", schedule);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < RowsN; ++j)
      if (out[i * RowsN + j] != rowValue(i, j))
        fail("loop A: a row differs from the serial loop's", schedule);
  free(out);
}

/* Loop F: dst[i-1] = src[i-1] + 2*src[i] + src[i+1] for i in [0, T), src =
   a + 1 and dst = b + 1: both sections reach below their pointer's element
   0 at iteration 0. Described as the rewriter's code describes them
   (fpm_describe_sections: data at a[0] and b[0], origin 1), the kernel
   taking each origin. */
static const char *belowKernel =
    "__kernel void below(__global const long *src, const long src_origin,\n"
    "                    __global long *dst, const long dst_origin) {\n"
    "  src += src_origin;\n"
    "  dst += dst_origin;\n"
    "  const long i = get_global_id(0);\n"
    "  dst[i - 1] = src[i - 1] + 2 * src[i] + src[i + 1];\n"
    "}\n";
static int belowBody(int64_t begin, int64_t end, void *context) {
  int64_t *const *arrays = context;
  const int64_t *src = arrays[0];
  int64_t *dst = arrays[1];
  for (int64_t i = begin; i < end; ++i)
    dst[i - 1] = src[i - 1] + 2 * src[i] + src[i + 1];
  return 0;
}

static void runBelow(const char *schedule, int64_t T, int kernel) {
  int64_t *a = malloc(sizeof(int64_t) * (size_t)(T + 2));
  int64_t *b = malloc(sizeof(int64_t) * (size_t)(T + 1));
  for (int64_t e = 0; e < T + 2; ++e)
    a[e] = e * 7 % 101 - 50;
  for (int64_t e = 0; e < T + 1; ++e)
    b[e] = -1;
  int64_t *arrays[2] = {a + 1, b + 1};
  fpm_section sections[2];
  memset(sections, 0, sizeof sections);
  for (int s = 0; s < 2; ++s) {
    sections[s].kind = s == 0 ? FPM_ARG_IN : FPM_ARG_OUT;
    sections[s].base = arrays[s];
    sections[s].size = sizeof(int64_t);
    for (int sample = 0; sample < 3; ++sample) {
      sections[s].lower[sample] = fpm_sample_iteration(T, sample) - 1;
      sections[s].length[sample] = s == 0 ? 3 : 1;
    }
  }
  fpm_arg data[2];
  fpm_loop loop;
  memset(&loop, 0, sizeof loop);
  loop.name = kernel ? "mpi.below.kernel" : "mpi.below";
  loop.schedule = schedule;
  if (!fpm_describe_sections(&loop, data, sections, 2, T) ||
      data[0].data != a || data[1].data != b || data[0].origin != 1 ||
      data[1].origin != 1)
    fail("loop F: the sections are not described from a[0] and b[0]", schedule);
  fpm_arg args[4] = {data[0], fpm_origin_arg(0), data[1], fpm_origin_arg(2)};
  fpm_kernel k;
  memset(&k, 0, sizeof k);
  k.source = belowKernel;
  k.name = "below";
  k.args = args;
  k.arg_count = 4;
  check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, belowBody, arrays,
                             kernel ? &k : NULL),
        "loop F", schedule);
  for (int64_t i = 0; i < T; ++i)
    if (b[i] != a[i] + 2 * a[i + 1] + a[i + 2])
      fail("loop F: an element differs from the serial loop's", schedule);
  if (b[T] != -1)
    fail("loop F: an element past the sections was written", schedule);
  free(a);
  free(b);
}

static void checkSchedule(const char *schedule) {
  const int64_t T = 997;
  runRows(schedule, T, 0);
  runBelow(schedule, T, 0);

  /* B */
  int64_t lengthB = 3 + T * 5;
  double *gaps = malloc(sizeof(double) * (size_t)lengthB);
  double *serialGaps = malloc(sizeof(double) * (size_t)lengthB);
  for (int64_t i = 0; i < lengthB; ++i)
    gaps[i] = serialGaps[i] = -1.0 - (double)i;
  gapsBody(0, T, serialGaps);
  fpm_arg dataB = array(FPM_ARG_OUT, gaps, sizeof(double), lengthB, 3, 5, 2);
  fpm_loop loop;
  memset(&loop, 0, sizeof loop);
  loop.name = "mpi.gaps";
  loop.schedule = schedule;
  loop.data = &dataB;
  loop.data_count = 1;
  check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, gapsBody, gaps, NULL),
        "loop B", schedule);
  if (memcmp(gaps, serialGaps, sizeof(double) * (size_t)lengthB) != 0)
    fail("loop B: the array differs from the serial loop's", schedule);
  free(gaps);
  free(serialGaps);

  /* C */
  int64_t *down = malloc(sizeof(int64_t) * (size_t)T);
  int64_t *serialDown = malloc(sizeof(int64_t) * (size_t)T);
  for (int64_t i = 0; i < T; ++i)
    down[i] = serialDown[i] = i * 5 + 1;
  down[0] = serialDown[0] = T - 1;
  downBody(0, T - 1, serialDown);
  fpm_arg dataC = array(FPM_ARG_INOUT, down, sizeof(int64_t), T, T - 1, -1, 1);
  loop.name = "mpi.down";
  loop.data = &dataC;
  /* T-1 iterations: iteration k writes a[T-1-k], never a[0]. */
  check(
      fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T - 1, downBody, down, NULL),
      "loop C", schedule);
  if (memcmp(down, serialDown, sizeof(int64_t) * (size_t)T) != 0)
    fail("loop C: the array differs from the serial loop's", schedule);
  free(down);
  free(serialDown);

  /* D */
  double *x = malloc(sizeof(double) * (size_t)T);
  for (int64_t i = 0; i < T; ++i)
    x[i] = 1.0 / (double)(i + 1);
  double sum = 0.5, serialSum = 0.5;
  int64_t top = -1, serialTop = -1;
  {
    void *partials[2] = {&serialSum, &serialTop};
    reduceBody(0, T, x, partials);
  }
  fpm_arg dataD = array(FPM_ARG_IN, x, sizeof(double), T, 0, 1, 1);
  fpm_reduction reductions[2] = {{FPM_REDUCE_ADD, FPM_TYPE_DOUBLE, &sum},
                                 {FPM_REDUCE_MAX, FPM_TYPE_INT64, &top}};
  loop.name = "mpi.reduce";
  loop.data = &dataD;
  check(fpm_mpi_parallel_reduce(MPI_COMM_WORLD, &loop, T, reduceBody, x,
                                reductions, 2, NULL),
        "loop D", schedule);
  if (top != serialTop)
    fail("loop D: the maximum differs from the serial loop's", schedule);
  if (fabs(sum - serialSum) > 1e-12 * fabs(serialSum))
    fail("loop D: the sum is not the serial loop's", schedule);
  double rootSum = sum;
  MPI_Bcast(&rootSum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (memcmp(&rootSum, &sum, sizeof sum) != 0)
    fail("loop D: the sum's bits differ from rank 0's", schedule);
  free(x);

  /* F: a column per iteration, rows a pitch apart */
  {
    double *matrix = malloc(sizeof(double) * 7 * (size_t)T);
    double *serialMatrix = malloc(sizeof(double) * 7 * (size_t)T);
    for (int64_t i = 0; i < 7 * T; ++i)
      matrix[i] = serialMatrix[i] = (double)(i % 23);
    int64_t columns = T;
    void *serialContext[2] = {serialMatrix, &columns};
    columnsBody(0, T, serialContext);
    void *context[2] = {matrix, &columns};
    fpm_arg dataF =
        array(FPM_ARG_INOUT, matrix, sizeof(double), 7 * T, 0, 1, 1);
    dataF.rows = 7;
    dataF.pitch = T;
    loop.name = "mpi.columns";
    loop.data = &dataF;
    loop.data_count = 1;
    check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, columnsBody, context,
                               NULL),
          "loop F", schedule);
    if (memcmp(matrix, serialMatrix, sizeof(double) * 7 * (size_t)T) != 0)
      fail("loop F: the matrix differs from the serial loop's", schedule);
    free(matrix);
    free(serialMatrix);
  }

  /* H: rows through their pointers (row_length 5), each row a block of
     its own, allocated in another order on odd ranks: every rank gets the
     rows the others wrote in its own rows, and its pointers unchanged. */
  {
    double **rowsAt = malloc(sizeof(double *) * (size_t)T);
    double **kept = malloc(sizeof(double *) * (size_t)T);
    double *serialRows = malloc(sizeof(double) * 5 * (size_t)T);
    for (int64_t i = 0; i < T; ++i) {
      const int64_t r = rank % 2 ? T - 1 - i : i;
      rowsAt[r] = malloc(sizeof(double) * 5);
      kept[r] = rowsAt[r];
    }
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < 5; ++j)
        rowsAt[i][j] = serialRows[i * 5 + j] = (double)((i * 5 + j) % 17);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < 5; ++j)
        serialRows[i * 5 + j] = serialRows[i * 5 + j] * 0.5 + (double)(i + j);
    fpm_arg dataH = array(FPM_ARG_INOUT, rowsAt, sizeof(double), T, 0, 1, 1);
    dataH.row_length = 5;
    loop.name = "mpi.pointed-rows";
    loop.data = &dataH;
    loop.data_count = 1;
    check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, pointedRowsBody,
                               rowsAt, NULL),
          "loop H", schedule);
    for (int64_t i = 0; i < T; ++i) {
      if (rowsAt[i] != kept[i])
        fail("loop H: a row pointer changed", schedule);
      if (memcmp(rowsAt[i], serialRows + i * 5, sizeof(double) * 5) != 0)
        fail("loop H: a row differs from the serial loop's", schedule);
      free(rowsAt[i]);
    }
    free(rowsAt);
    free(kept);
    free(serialRows);
  }

  /* G: scattered writes declared as the whole array (stride 0): no rank
     can send the elements it wrote, so every rank runs the loop whole. */
  {
    int64_t *out = malloc(sizeof(int64_t) * (size_t)T);
    int64_t *serialOut = malloc(sizeof(int64_t) * (size_t)T);
    for (int64_t i = 0; i < T; ++i)
      out[i] = serialOut[i] = -1;
    int64_t count = T;
    void *serialContext[2] = {serialOut, &count};
    scatterBody(0, T, serialContext);
    void *context[2] = {out, &count};
    fpm_arg dataG = array(FPM_ARG_OUT, out, sizeof(int64_t), T, 0, 0, T);
    loop.name = "mpi.scatter";
    loop.data = &dataG;
    loop.data_count = 1;
    check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, scatterBody, context,
                               NULL),
          "loop G", schedule);
    if (memcmp(out, serialOut, sizeof(int64_t) * (size_t)T) != 0)
      fail("loop G: the array differs from the serial loop's", schedule);
    free(out);
    free(serialOut);
  }

  /* E */
  int64_t *whole = calloc((size_t)T, sizeof *whole);
  loop.name = "mpi.whole";
  loop.data = NULL;
  loop.data_count = 0;
  check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, wholeBody, whole, NULL),
        "loop E", schedule);
  for (int64_t k = 0; k < T; ++k)
    if (whole[k] != k * 3)
      fail("loop E: the array differs from the serial loop's", schedule);
  free(whole);
}

/* Counts the iterations this rank runs. */
static int countBody(int64_t begin, int64_t end, void *context) {
  int64_t *out = context;
  for (int64_t k = begin; k < end; ++k) {
    double v = 0;
    for (int j = 0; j < 2000; ++j)
      v += sin((double)(k + j));
    out[k] = (int64_t)(v * 1000);
  }
  __atomic_fetch_add(&out[-1], end - begin, __ATOMIC_RELAXED);
  return 0;
}

static void checkSlowRank(void) {
  const int64_t T = 4000;
  int64_t *buffer = calloc((size_t)T + 1, sizeof *buffer);
  int64_t *out = buffer + 1;
  fpm_arg data = array(FPM_ARG_OUT, out, sizeof *out, T, 0, 1, 1);
  fpm_loop loop;
  memset(&loop, 0, sizeof loop);
  loop.name = "mpi.slow";
  loop.data = &data;
  loop.data_count = 1;
  int64_t *counts = malloc(sizeof(int64_t) * (size_t)ranks);
  for (int call = 1; call <= 4; ++call) {
    buffer[0] = 0;
    check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, countBody, out, NULL),
          "slow loop", "auto");
    MPI_Allgather(&buffer[0], 1, MPI_INT64_T, counts, 1, MPI_INT64_T,
                  MPI_COMM_WORLD);
    if (rank == 0) {
      printf("mpi_loops: call %d: iterations by rank:", call);
      for (int r = 0; r < ranks; ++r)
        printf(" %lld", (long long)counts[r]);
      printf("\n");
    }
    if (call >= 2 && ranks >= 2)
      for (int r = 0; r < ranks; ++r)
        if (r != 1 && counts[1] >= counts[r])
          fail("the slow rank 1 did not get a smaller share", "auto");
  }
  free(counts);
  free(buffer);
}

/* A call that must fail alike on every rank: prints rank 0's message and
   checks that every rank's is `expected`. */
static void expectDisagreement(int64_t T, const char *name,
                               const char *expected) {
  int64_t *out = calloc((size_t)T + 1, sizeof *out);
  fpm_arg data = array(FPM_ARG_OUT, out, sizeof *out, T, 0, 1, 1);
  fpm_loop loop;
  memset(&loop, 0, sizeof loop);
  loop.name = name;
  loop.data = &data;
  loop.data_count = 1;
  const int status =
      fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, wholeBody, out, NULL);
  if (rank == 0)
    printf("mpi_loops: disagree: %s\n", fpm_last_error());
  if (status != FPM_ERROR_INVALID_ARGUMENT)
    fail("a call the ranks disagree on did not fail as invalid", name);
  if (strcmp(fpm_last_error(), expected) != 0) {
    fprintf(stderr, "mpi_loops: rank %d: '%s'\n", rank, fpm_last_error());
    fail("a call the ranks disagree on failed with another message", name);
  }
  free(out);
}

static void checkDisagreement(void) {
  if (ranks != 3)
    fail("the disagree mode needs 3 ranks", "");
  expectDisagreement(rank == 2 ? 999 : 1000, "mpi.heat",
                     "loop 'mpi.heat' called with 1000 iterations on rank 0 "
                     "but 999 on rank 2");
  expectDisagreement(1000, rank == 1 ? "mpi.cool" : "mpi.heat",
                     "ranks called different loops at once: loop 'mpi.heat' "
                     "on rank 0 but loop 'mpi.cool' on rank 1");
  /* The ranks are still in step: the next loop runs. */
  runRows("auto", 997, 0);
}

/* Rank 0 alone reaches a loop: it must end the job, not wait for ever. */
static void runAlone(void) {
  if (rank == 0) {
    int64_t *out = calloc(1000, sizeof *out);
    fpm_arg data = array(FPM_ARG_OUT, out, sizeof *out, 1000, 0, 1, 1);
    fpm_loop loop;
    memset(&loop, 0, sizeof loop);
    loop.name = "mpi.alone";
    loop.data = &data;
    loop.data_count = 1;
    fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, 1000, wholeBody, out, NULL);
    fail("a loop only rank 0 called returned", "");
  }
}

/* Counts as countBody does; on the rank to kill, dies in its first chunk. */
static int killedBody(int64_t begin, int64_t end, void *context) {
  const char *victim = getenv("MPI_LOOPS_KILL_RANK");
  if (victim && atoi(victim) == rank)
    raise(SIGKILL);
  return countBody(begin, end, context);
}

static void runKilled(void) {
  const int64_t T = 4000;
  int64_t *buffer = calloc((size_t)T + 1, sizeof *buffer);
  fpm_arg data = array(FPM_ARG_OUT, buffer + 1, sizeof *buffer, T, 0, 1, 1);
  fpm_loop loop;
  memset(&loop, 0, sizeof loop);
  loop.name = "mpi.killed";
  loop.data = &data;
  loop.data_count = 1;
  for (int call = 0; call < 3; ++call)
    check(fpm_mpi_parallel_for(MPI_COMM_WORLD, &loop, T, killedBody, buffer + 1,
                               NULL),
          "killed loop", "auto");
  fail("a loop whose rank was killed returned", "auto");
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 2) {
    fprintf(stderr, "usage: mpi_loops check SCHEDULE... | slow | kernel | "
                    "disagree | alone | killed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (strcmp(argv[1], "check") == 0) {
    for (int i = 2; i < argc; ++i)
      for (int call = 0; call < 2; ++call)
        checkSchedule(argv[i]);
  } else if (strcmp(argv[1], "slow") == 0) {
    checkSlowRank();
  } else if (strcmp(argv[1], "kernel") == 0) {
    /* Unlike nodes: rank 0 runs the CPU team and the OpenCL devices (PoCL
       where there is no GPU), the others the CPU team alone. */
    setenv("FPM_DEVICES", rank == 0 ? "all" : "cpu", 1);
    for (int call = 0; call < 4; ++call) {
      runRows(argc > 2 ? argv[2] : "auto", 20011, 1);
      runBelow(argc > 2 ? argv[2] : "auto", 20011, 1);
    }
  } else if (strcmp(argv[1], "disagree") == 0) {
    checkDisagreement();
  } else if (strcmp(argv[1], "alone") == 0) {
    runAlone();
  } else if (strcmp(argv[1], "killed") == 0) {
    runKilled();
  } else {
    fprintf(stderr, "mpi_loops: unknown mode '%s'\n", argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0)
    printf("mpi_loops: ok\n");
  MPI_Finalize();
  return 0;
}
