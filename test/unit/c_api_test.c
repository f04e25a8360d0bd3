/*===- c_api_test.c - fpm.h from C11, linked with -lfpmrt alone -----------===*\
|*                                                                            *|
|* Part of fpm, under the Apache License v2.0 with LLVM Exceptions.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Built by CTest with the C compiler, `-std=c11 -lfpmrt` and no OpenMP flag:
 * the library must find libomp by itself. Exits non-zero on any failure.
 */
#include "fpm/fpm.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define N 100003

static atomic_int counts[N];
static int failures;

#define CHECK(condition)                                                       \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__,    \
              #condition, fpm_last_error());                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static int count(int64_t begin, int64_t end, void *context) {
  (void)context;
  for (int64_t i = begin; i < end; ++i)
    atomic_fetch_add(&counts[i], 1);
  return 0;
}

static int stopAtOnce(int64_t begin, int64_t end, void *context) {
  (void)begin;
  (void)end;
  atomic_fetch_add((atomic_int *)context, 1);
  return 1;
}

int main(void) {
  static const char *const schedules[] = {
      NULL,     "auto",    "equal", "cpm",       "geometric",      "numerical",
      "hpopta", "optimal", "wdah",  "wdah, 100", "wdah_heuristic", "pss",
      "css(4)", "css, 4",  "gss",   "gss, 80",   "fss, 50",        "tss"};
  CHECK(fpm_cpu_threads() >= 1);
  for (size_t s = 0; s < sizeof schedules / sizeof *schedules; ++s) {
    fpm_loop loop = {0};
    loop.name = "c_api_test";
    loop.schedule = schedules[s];
    loop.file = __FILE__;
    loop.line = __LINE__;
    for (int i = 0; i < N; ++i)
      atomic_store(&counts[i], 0);
    CHECK(fpm_parallel_for(&loop, N, count, NULL) == FPM_OK);
    for (int i = 0; i < N; ++i)
      if (atomic_load(&counts[i]) != 1) {
        fprintf(stderr, "schedule %s: iteration %d ran %d times\n",
                schedules[s] ? schedules[s] : "(null)", i,
                atomic_load(&counts[i]));
        ++failures;
        break;
      }
  }

  atomic_int calls = 0;
  fpm_loop pss = {0};
  pss.schedule = "pss";
  CHECK(fpm_parallel_for(&pss, N, stopAtOnce, &calls) == FPM_ERROR_STOPPED);
  CHECK(atomic_load(&calls) <= fpm_cpu_threads());

  fpm_loop bad = {0};
  bad.schedule = "gss, 0";
  CHECK(fpm_parallel_for(&bad, 10, count, NULL) == FPM_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(fpm_last_error(), "gss, 0") != NULL);

  CHECK(fpm_trip_count(0, 10, 3, FPM_LT, 0) == 4);
  CHECK(fpm_trip_count(10, 0, -3, FPM_GE, 0) == 4);
  CHECK(fpm_trip_count(0, -1, 1, FPM_LT, 1) == -1); /* 2^64 - 1 */

  /* out(C[i:1]) for i = 2..9, sampled as fpm-rewrite does. */
  fpm_section section = {
      FPM_ARG_OUT, NULL, sizeof counts[0], {0}, {0}, 0, NULL, 1, 0, 0};
  fpm_arg arg;
  fpm_loop sampled = {0};
  section.base = counts;
  for (int s = 0; s < 3; ++s) {
    section.lower[s] = 2 + fpm_sample_iteration(8, s);
    section.length[s] = 1;
  }
  CHECK(fpm_describe_sections(&sampled, &arg, &section, 1, 8) == 1);
  CHECK(sampled.data == &arg && sampled.data_count == 1);
  CHECK(arg.data == (void *)counts && arg.offset == 2 && arg.stride == 1 &&
        arg.count == 1 && arg.length == 10);

  if (failures == 0)
    printf("c_api_test: all passed on %d threads\n", fpm_cpu_threads());
  return failures == 0 ? 0 : 1;
}
