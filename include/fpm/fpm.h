/*===- fpm/fpm.h - The fpm runtime's C API -------------------------*- C
-*-===*\
|*                                                                            *|
|* Part of fpm, under the Apache License v2.0 with LLVM Exceptions.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Runs one data-parallel loop split across the runtime's processing elements
 * (PEs). This is what `fpm-rewrite` turns `#pragma fpm partition` into, and
 * it is usable by hand from C11 and C++17 alike; `fpm.hpp` is a thinner C++
 * layer over it.
 *
 * The loop is seen in its *logical* iteration space: a trip count T and
 * iterations 0 .. T-1. The caller maps logical iteration k back to its own
 * loop variable (i = lower + k * step), so any integer type, any step sign
 * and any comparison reduce to one unsigned-free form with no overflow.
 *
 * Link with -lfpmrt; the library finds its own dependencies (libomp).
 *
 * Environment variables (docs/environment.md): FPM_SCHEDULE overrides every
 * loop's schedule, FPM_DEVICES its devices, FPM_VERBOSE=1 prints on stderr
 * how each loop was split (its first 5 distinct splits, then a line saying
 * that further ones are not printed, and their count at exit),
 * FPM_PROFILE_DIR is where named loops keep their
 * profiles. FPM_BENCHMARK is set by `fpm-profile -- PROGRAM`: each named
 * loop is then benchmarked on every PE at its first call (see fpm-profile
 * --help).
 */
#ifndef FPM_FPM_H
#define FPM_FPM_H

#include <stddef.h>
#include <stdint.h>

#include "fpm/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. 0 is success. */
enum {
  FPM_OK = 0,
  FPM_ERROR_INVALID_ARGUMENT = 1, /* a bad schedule string, count or body */
  FPM_ERROR_STOPPED = 2,          /* a body asked the loop to stop */
  FPM_ERROR_RUNTIME = 3           /* the runtime failed (out of memory, ...) */
};

/*
 * Runs logical iterations [begin, end) of the loop. Called concurrently from
 * several threads with disjoint ranges; each iteration of the loop is passed
 * in exactly one call. Returns 0 to go on, non-zero to stop the loop: no new
 * chunks are handed out, chunks already running finish, and fpm_parallel_for
 * returns FPM_ERROR_STOPPED. (The C++ layer uses this to carry an exception
 * out of the loop.)
 */
typedef int (*fpm_body_fn)(int64_t begin, int64_t end, void *context);

/*
 * An array a loop touches, or an argument of its OpenCL kernel. For an array
 * (IN, OUT, INOUT): `data` is its first element, `size` the bytes of one
 * element, `length` its elements, and the section logical iteration k
 * touches is elements
 *   [offset + k * stride, offset + k * stride + count)
 * as the pragma's `A[i*n : n]` says (the section of a chunk is the union of
 * its iterations'). stride = 0 makes the section the same for every
 * iteration: shared data; with stride = 0 and count = 0 it is the whole
 * array. With `rows` > 1 an iteration touches `rows` such runs, `pitch`
 * elements apart: run r is
 *   [offset + k * stride + r * pitch, ... + count)
 * as a section over later dimensions says (`A[0:m][j:1]`, a column of an
 * m x n matrix: offset 0, stride 1, count 1, rows m, pitch n).
 * Zero-initialise, then set fields (or take fpm_scalar_arg's,
 * fpm_origin_arg's or fpm_describe_sections' args).
 */
enum fpm_arg_kind {
  FPM_ARG_SCALAR = 0,    /* a value: `data` points to `size` bytes */
  FPM_ARG_IN = 1,        /* an array the loop reads */
  FPM_ARG_OUT = 2,       /* an array the loop writes (every element of the
                            section of each iteration it runs) */
  FPM_ARG_INOUT = 3,     /* an array the loop reads and writes */
  FPM_ARG_LOCAL = 4,     /* kernels only: __local scratch of `size` bytes per
                            work-group */
  FPM_ARG_REDUCTION = 5, /* kernels only: reduction `offset` of the call's
                            fpm_reduction list (fpm_parallel_reduce); the
                            kernel gets a __global pointer to one element of
                            `size` bytes per work-group of each launch, and
                            work-group g stores its partial result at
                            element get_group_id(0) */
  FPM_ARG_ORIGIN = 6,    /* kernels only: a long, the `origin` of the array
                            of argument `offset`: where its element 0 is in
                            the buffer the kernel gets (fpm_origin_arg) */
  FPM_ARG_END = 7,       /* kernels only: a ulong, the end of the launch's
                            range of logical iterations (fpm_end_arg) */
  FPM_ARG_MASK = 8       /* kernels only: the write mask of the array of
                            argument `offset` (fpm_mask_arg), a __global
                            uchar pointer with one byte per `size` bytes of
                            the array's buffer */
};

typedef struct fpm_arg {
  int kind; /* enum fpm_arg_kind */
  void *data;
  size_t size;
  int64_t length;
  int64_t offset, stride, count;
  /* An array's element 0, as the program indexes it, is element `origin`
     from `data`: 0 unless a section reaches below it (a pointer into an
     array, `p[i-1:3]`: fpm_describe_sections). A kernel's buffer starts at
     `data`; a kernel that indexes the array from its element 0 takes the
     origin as an FPM_ARG_ORIGIN argument, and one that does not is
     refused an array whose origin is not 0. */
  int64_t origin;
  /* How many elements an array has from its element 0, when the program
     says (an array, not a pointer: `double a[n]`); 0 when unknown. A
     device's copies read no element outside them, and a section written
     outside them keeps the loop on the CPU: an over-declared section (a
     guarded stencil's `a[i-1:3]` at i = 0) never touches memory that is
     not the array's. */
  int64_t extent;
  /* The clause and section that describe an array, as the program writes
     them (`out(c[i*n:n])`), for messages; may be NULL. */
  const char *clause;
  /* The runs an iteration touches and the elements from one run's start to
     the next's (>= count); 0 or 1 row: one run, and pitch is unused. */
  int64_t rows, pitch;
  /* 0: `data` is the array itself, as above. > 0: `data` is an array of
     pointers to rows (`double **rows`, each row allocated on its own), and
     each row has `row_length` elements of `size` bytes, from the element
     its pointer points to: the section `rows[lower:length][0:row_length]`.
     Then offset, stride, count, length, origin and extent count rows (the
     pointers), origin is 0, rows is 0 or 1, and a device gets the rows a
     range touches packed into one buffer, row r at element
     r * row_length, and for a written section copied back into the rows
     the pointers point to: the rows a written section touches must not
     share memory. */
  int64_t row_length;
} fpm_arg;

/* What the runtime knows about a loop. Zero-initialise, then set fields. */
typedef struct fpm_loop {
  /* Stable name: the key of its stored profiles (pragma `name(...)`, or the
     rewriter's default `<file stem>.<function>.<k>`). May be NULL. */
  const char *name;
  /* A schedule as in the pragma's `schedule(...)`, without the clause:
     "gss", "gss, 80", "css(4)", "wdah, 100", "equal", "auto", ...
     NULL or "" means "auto". FPM_SCHEDULE, when set, wins. */
  const char *schedule;
  /* "cpu", "gpu" (every OpenCL device), "all", or PE ids ("cpu, opencl1"),
     separated by commas or spaces; NULL means "all". FPM_DEVICES, when
     set, wins. */
  const char *devices;
  /* The minimal package in iterations (the seeds' lambda); 0: the runtime
     chooses. */
  int64_t grain;
  /* Where the loop is, for messages and traces. May be NULL / 0. */
  const char *file;
  int line;
  /* The arrays the loop's iterations read and write (the pragma's in, out
     and inout clauses) as FPM_ARG_IN, _OUT and _INOUT sections; may be
     NULL / 0. Here a stride may be negative (a loop running down an array)
     and sections may overlap; every section of iterations [0, trip_count)
     must lie in [0, length). fpm-profile uses the written ones to benchmark
     the loop without changing the program's results: it saves them first
     and puts them back after each run (a loop without them is profiled
     online only). */
  const fpm_arg *data;
  int data_count;
} fpm_loop;

/*
 * Runs `body` over logical iterations [0, trip_count) split across the PEs
 * by `loop->schedule`, and returns when all are done. trip_count may be 0
 * (body is not called). `loop` may be NULL (defaults). Returns FPM_OK, or an
 * error code, in which case fpm_last_error() says what went wrong; on
 * FPM_ERROR_INVALID_ARGUMENT nothing ran.
 */
int fpm_parallel_for(const fpm_loop *loop, int64_t trip_count, fpm_body_fn body,
                     void *context);

/*
 * OpenCL: the same loop may also run on OpenCL devices, with a kernel that
 * does on the device what `body` does on the CPU. The kernel receives the
 * chunk as its global work offset and size (rounded up to whole
 * work-groups for a kernel that takes FPM_ARG_END, below): work-item
 * get_global_id(0) is logical iteration k, and it indexes the arrays
 * exactly as the host does (each buffer argument is the whole array on the
 * device; only the sections a chunk touches are copied in and out). Its
 * arguments are fpm_args in the kernel's parameter order; for a kernel of
 * more than one iteration, a written section must move with k
 * (|stride| >= count > 0), unless the kernel takes its write mask
 * (FPM_ARG_MASK, below). Shared (stride 0) inputs are copied to each
 * device once per loop call.
 */

/* A FPM_ARG_SCALAR argument: the `size` bytes at `value`, read when the loop
   runs. */
fpm_arg fpm_scalar_arg(const void *value, size_t size);

/* A FPM_ARG_ORIGIN argument: the origin of kernel argument `array` (an
   array), passed as a long. A kernel that takes one moves its pointer there
   before indexing: `__global double *p, const long fpm_origin_p` ...
   `p += fpm_origin_p;`. */
fpm_arg fpm_origin_arg(int array);

/* A FPM_ARG_END argument: the end of the range a launch runs, a ulong.
   A kernel that takes one is launched in whole work-groups of one size,
   from the range's first iteration to past its end, and its work-items at
   or past the end must do nothing but take part in their group's barriers
   (a reduction's identity); `if (get_global_id(0) >= fpm_end) return;`
   without them. A kernel without one runs no work-item outside the range:
   its range's rest past the whole groups is launched apart, in groups of
   one work-item. (OpenCL implementations such as PoCL compile a kernel
   again for every work-group size it is launched with.) */
fpm_arg fpm_end_arg(void);

/* A FPM_ARG_MASK argument: the write mask of kernel argument `array`, a
   written section the same for every iteration (stride 0: iterations write
   elements scattered over it, `cov[i][j]` and `cov[j][i]`), with one byte
   per `unit` bytes of its buffer (the size of the scalar elements the
   kernel writes; `unit` divides the array's element size). A device gets
   all of the section once per call, and each range a mask of zeros; the
   kernel sets the byte of every element it writes (`m[p - a] = 1`, p the
   element, a the array's pointer, moved by its origin as the array is),
   and after the range only the elements whose byte is set are copied back:
   the CPU's writes and other ranges' are never overwritten. The iterations
   must write disjoint elements, as a DOALL loop's do. */
fpm_arg fpm_mask_arg(int array, size_t unit);

/* The most work-items in a work-group of a kernel the runtime launches (a
   power of two; a kernel may allow fewer): a kernel that keeps one __local
   element per work-item needs this many. */
#define FPM_MAX_WORK_GROUP_SIZE 64

/* The language of a kernel's source, which decides the kinds of device
   that can run it: only the devices of a backend that builds it take part
   in a call. */
typedef enum fpm_kernel_language {
  FPM_KERNEL_OPENCL_C = 0 /* OpenCL C, for the OpenCL devices */
} fpm_kernel_language;

/* The devices' side of a loop. Zero-initialise, then set fields. */
typedef struct fpm_kernel {
  const char *source;  /* the source; NULL to read `file` */
  const char *file;    /* a source file, when `source` is NULL */
  const char *name;    /* the kernel function (OpenCL C: the __kernel) */
  const char *options; /* the build's options (clBuildProgram's); may be NULL */
  const fpm_arg *args; /* in the kernel's parameter order */
  int arg_count;
  /* An fpm_kernel_language: FPM_KERNEL_OPENCL_C, the zero a
     zero-initialised description has (an int, as fpm_arg's kind, so that
     any value a program stores is one the runtime may read and refuse).
     Added in ABI 1 (FPM_ABI_VERSION, libfpmrt.so.1). */
  int language;
} fpm_kernel;

/*
 * fpm_parallel_for over the CPU team and the OpenCL devices the loop's
 * `devices` (or FPM_DEVICES) selects, each chunk run by `body` on a CPU
 * thread or by `kernel` on a device. With kernel == NULL, or no OpenCL
 * device, it is fpm_parallel_for. A device that fails (its program does not
 * build, an enqueue or a transfer fails, the device is lost) is dropped for
 * the call: its unfinished iterations run on the other PEs, or on the CPU,
 * and a line on stderr says what failed. Every iteration runs exactly once.
 * A bad kernel description returns FPM_ERROR_INVALID_ARGUMENT before
 * anything runs.
 *
 * Environment (besides fpm_parallel_for's): FPM_TRACE=file.json writes a
 * Chrome trace of every chunk and transfer at exit; FPM_CACHE_DIR is where
 * compiled kernels are kept (default $XDG_CACHE_HOME/fpm, or ~/.cache/fpm);
 * FPM_OPENCL_CPU_UNITS caps the compute units a CPU OpenCL device uses
 * (default: the cores the CPU team leaves free); FPM_OPENCL_PIPELINE=1..4
 * sets how many chunks a device keeps in flight (default 2, so that uploads
 * overlap kernels; 1 on a CPU device); FPM_INJECT_FAULT=pe:k makes
 * PE `pe` (e.g. opencl0) fail at its k-th chunk (k = 0: its program build),
 * for testing; FPM_STEAL=0 keeps idle PEs from stealing the tail of
 * others' queues, so that a static split runs as planned (experiments).
 */
int fpm_parallel_for_kernel(const fpm_loop *loop, int64_t trip_count,
                            fpm_body_fn body, void *context,
                            const fpm_kernel *kernel);

/* The operators of reduction(op: list), as OpenMP defines them. */
enum fpm_reduction_op {
  FPM_REDUCE_ADD = 0,     /* +, identity 0 */
  FPM_REDUCE_MUL = 1,     /* *, identity 1 */
  FPM_REDUCE_MIN = 2,     /* min, identity the type's largest value */
  FPM_REDUCE_MAX = 3,     /* max, identity the type's least value */
  FPM_REDUCE_BIT_AND = 4, /* &, identity ~0 (integer types) */
  FPM_REDUCE_BIT_OR = 5,  /* |, identity 0 (integer types) */
  FPM_REDUCE_BIT_XOR = 6, /* ^, identity 0 (integer types) */
  FPM_REDUCE_AND = 7,     /* &&, identity 1 (the result is 0 or 1) */
  FPM_REDUCE_OR = 8       /* ||, identity 0 (the result is 0 or 1) */
};

/* The arithmetic types a reduction variable may have. */
enum fpm_scalar_type {
  FPM_TYPE_BOOL = 0, /* _Bool, bool */
  FPM_TYPE_INT8 = 1,
  FPM_TYPE_UINT8 = 2,
  FPM_TYPE_INT16 = 3,
  FPM_TYPE_UINT16 = 4,
  FPM_TYPE_INT32 = 5,
  FPM_TYPE_UINT32 = 6,
  FPM_TYPE_INT64 = 7,
  FPM_TYPE_UINT64 = 8,
  FPM_TYPE_FLOAT = 9,
  FPM_TYPE_DOUBLE = 10,
  FPM_TYPE_LONG_DOUBLE = 11 /* CPU only: OpenCL C has no long double */
};

/* One variable of reduction(op: list): `variable` holds its value before
   the loop and receives op(value before, every iteration's contribution). */
typedef struct fpm_reduction {
  int op;         /* enum fpm_reduction_op */
  int type;       /* enum fpm_scalar_type */
  void *variable; /* of that type */
} fpm_reduction;

/*
 * A body of a loop with reductions: as fpm_body_fn, and partials[r] points
 * to this chunk's accumulator of reduction r (of its type, set to op's
 * identity), into which the body combines its iterations' contributions.
 */
typedef int (*fpm_reduce_body_fn)(int64_t begin, int64_t end, void *context,
                                  void *const *partials);

/*
 * fpm_parallel_for_kernel for a loop with `count` reductions. Each chunk
 * gets accumulators of its own; on a device, each work-group reduces its
 * items and the host combines the work-groups' results (FPM_ARG_REDUCTION).
 * Partial results are combined in the order of their iteration ranges, not
 * in the order PEs finish, then into each variable: the same cuts on the
 * same PEs give the same bits. A static schedule on the CPU team alone
 * cuts alike every call; a dynamic one, `auto` learning the PEs' speeds,
 * and an idle PE stealing the tail of another's queue (with devices;
 * FPM_STEAL=0 makes it rarer, not impossible) may cut differently, so a
 * floating-point sum may differ in its last bits from call to call (and
 * from the serial loop's, as with OpenMP). A chunk that fails on a device
 * is rerun elsewhere and counted once. Variables are written only when the
 * loop completes (FPM_OK). kernel may be NULL (the CPU only).
 */
int fpm_parallel_reduce(const fpm_loop *loop, int64_t trip_count,
                        fpm_reduce_body_fn body, void *context,
                        const fpm_reduction *reductions, int count,
                        const fpm_kernel *kernel);

/*
 * Whether fpm_parallel_for_kernel would accept `kernel` for `trip_count`
 * iterations: 1 if so; else 0, and fpm_last_error() says why (written
 * sections of neighbouring iterations that overlap, say, named by their
 * `clause`). Code that fpm-rewrite generates asks this before each call and
 * runs the loop on the CPU when the answer is no; the reason is then
 * printed on stderr once per loop (`loop`, which may be NULL, names it).
 */
int fpm_kernel_fits(const fpm_loop *loop, const fpm_kernel *kernel,
                    int64_t trip_count);

/* The comparison in a canonical loop's test, the loop variable on the left. */
enum fpm_compare {
  FPM_LT = 0, /* v <  upper */
  FPM_LE = 1, /* v <= upper */
  FPM_GT = 2, /* v >  upper */
  FPM_GE = 3, /* v >= upper */
  FPM_NE = 4  /* v != upper */
};

/*
 * The trip count of `for (v = lower; v CMP upper; v += step)`, computed
 * without overflow, as OpenMP evaluates it once before the loop. The values
 * are the loop variable's, converted to 64 bits: with is_unsigned != 0,
 * lower and upper are read as uint64_t bit patterns (an unsigned loop
 * variable), step stays signed (`v -= 2` is step -2). Returns the count
 * (0 when the test fails at once), or -1 when the loop never ends or its
 * count is not representable: step 0, a step pointing away from the bound,
 * `!=` with a bound the steps never hit exactly, or more than INT64_MAX
 * iterations. An unsigned variable wraps around at 2^64, as C's does.
 * Iteration k then has v = lower + k * step, computed in the loop
 * variable's type.
 */
int64_t fpm_trip_count(int64_t lower, int64_t upper, int64_t step, int compare,
                       int is_unsigned);

/*
 * The same for a loop variable of any integer type, as C runs it: the test
 * is `(C)v CMP upper` in the comparison's type C (the usual arithmetic
 * conversions of v's type and the bound's, `long` for `unsigned i < n` with
 * a long n), and `v += step` wraps around v's type where C says so
 * (unsigned types; signed ones narrower than int), so that
 * `for (unsigned char c = 250; c != 4; ++c)` runs 10 times. var_type and
 * compare_type are FPM_INT_TYPE(T) of the two types; lower is a value of
 * v's type, upper one of C. Returns -1 as fpm_trip_count does, and also for
 * a loop that wraps around its type more than a thousand times.
 */
#define FPM_INT_TYPE(T) ((int)sizeof(T) * ((T) - 1 < (T)0 ? -1 : 1))
int64_t fpm_trip_count_typed(int64_t lower, int64_t upper, int64_t step,
                             int compare, int var_type, int compare_type);

/*
 * Sections, as fpm-rewrite describes a loop's data clauses: it evaluates each
 * section `A[lower:length]` of the in, out and inout clauses at three logical
 * iterations (samples) and lets the runtime turn them into fpm_args.
 */

/* One section `A[lower:length]` of a loop's in, out or inout clause, as the
   rewriter samples it at logical iterations 0, min(1, T-1) and T-1. */
typedef struct fpm_section {
  int kind;           /* FPM_ARG_IN, FPM_ARG_OUT or FPM_ARG_INOUT */
  void *base;         /* element 0 of the array the clause names */
  size_t size;        /* bytes of one element (a row, for an array of arrays) */
  int64_t lower[3];   /* the section's lower bound at the three iterations */
  int64_t length[3];  /* its length there */
  int64_t extent;     /* the array's elements from base, when the program
                         declares an array (`sizeof a / sizeof a[0]`); 0
                         when unknown (fpm_arg's) */
  const char *clause; /* `in(A[i*n:n])`, for messages (fpm_arg's); may be
                         NULL */
  int64_t rows, pitch; /* fpm_arg's: the same at every iteration; lower is
                          then the first run's start */
  int64_t row_length;  /* fpm_arg's: > 0 when base is an array of row
                          pointers; size is then a row element's bytes, and
                          lower, length and extent count rows */
} fpm_section;

/* The logical iteration of sample s (0, 1, 2) of a loop of trip_count >= 1
   iterations: 0, min(1, trip_count - 1), trip_count - 1. 0 for any other s
   or trip_count. */
int64_t fpm_sample_iteration(int64_t trip_count, int sample);

/*
 * Turns sampled sections into fpm_args, args[i] from sections[i] (kind and
 * size copied), for a loop of trip_count iterations: iteration k's section
 * is elements [offset + k * stride, offset + k * stride + count) from `data`,
 * with stride = lower[1] - lower[0] (0 when trip_count is 1) and count the
 * length (and rows and pitch copied: lower is the first run's start, and
 * every run lies pitch past the one before). That holds when every section
 * is affine in k: lower[2] ==
 * lower[0] + (trip_count - 1) * stride, and the same length > 0 at all
 * three samples. Then it sets loop->data = args and loop->data_count =
 * count and returns 1. Otherwise, or with trip_count < 1, count < 1, a
 * section that is no array (kind, base, size), or one whose elements do not
 * fit in int64_t bytes, it sets loop->data = NULL and loop->data_count = 0
 * and returns 0: all or nothing, since a loop that says what it writes must
 * say all of it. The contents of args are then unspecified.
 *
 * args[i].data is base whenever the section's lowest element (over all
 * iterations) is >= 0, so that the array's element 0 is element 0 of the
 * section's buffer (what an OpenCL kernel indexes): offset is then
 * lower[0] and length reaches the highest element the loop touches. A
 * section reaching below base (`p[i-1:3]` with i from 0) gets data = its
 * lowest element instead, offset and length counted from there, and origin
 * = base's index from there. Each arg gets its section's extent and
 * clause; a written section that reaches outside a known extent is not
 * described. A section over row pointers (row_length > 0) is described in
 * rows, and not when it reaches below row 0. The
 * arithmetic cannot overflow, whatever the samples hold. Three samples
 * decide a section whose bounds are affine in the loop variable exactly
 * (fpm-rewrite passes no other); any other they only test. `loop` may be
 * NULL (only the return value and args then); with a loop of trip_count >=
 * 1 that gets no sections, the reason is printed on stderr, once per loop,
 * naming the section's clause.
 */
int fpm_describe_sections(fpm_loop *loop, fpm_arg *args,
                          const fpm_section *sections, int count,
                          int64_t trip_count);

/*
 * Data regions, as OpenMP's `target data`: between fpm_data_begin and
 * fpm_data_end, the arrays they name keep their copies on the OpenCL
 * devices from one loop call to the next. A device then gets, before a
 * range runs, only what of its sections it does not hold already, and what
 * it writes stays on it until another PE, the host or the region's end
 * needs it: a stencil's time loop moves its halos, not its grids. Loops on
 * the CPU get what they touch back first, by themselves. The program's
 * own code inside a region sees the host's copies: before it reads an
 * array that loops wrote, fpm_update_host; after it writes one,
 * fpm_update_device (else its reads are stale and devices keep the old
 * values; as in OpenMP, that is the program's error; FPM_CHECK_DATA=1 finds
 * the second: a loop call fails naming the array the host changed). An array is
 * used in place on a device when a loop's argument is that array from its first
 * byte; other arrays move per call as outside a region. Regions nest: an
 * array already mapped is counted again, and leaves at its last end.
 */
enum fpm_data_map {
  FPM_DATA_IN = 0,    /* devices get it as they read it; never copied back */
  FPM_DATA_OUT = 1,   /* the host gets it back at the region's end */
  FPM_DATA_INOUT = 2, /* the same (devices copy lazily, as for IN) */
  FPM_DATA_CREATE = 3 /* scratch: never copied back */
};

/* One array of a region: `bytes` bytes from `data`; `name`, which may be
   NULL, names it in messages (FPM_CHECK_DATA's). */
typedef struct fpm_data {
  int map; /* enum fpm_data_map */
  void *data;
  size_t bytes;
  const char *name;
} fpm_data;

/* Opens a region over `count` arrays. FPM_ERROR_INVALID_ARGUMENT for an
   array with no data or bytes, an unknown map, or one that overlaps an
   array already mapped without being it. */
int fpm_data_begin(const fpm_data *arrays, int count);
/* Closes it (the same arrays): OUT and INOUT arrays are whole on the host
   again, and the devices' copies of each array whose last region this is
   are released. FPM_ERROR_RUNTIME when a device cannot give back what only
   it holds. */
int fpm_data_end(const fpm_data *arrays, int count);
/* `update host`: the host's copy of [data, data + bytes) is made current. */
int fpm_update_host(const void *data, size_t bytes);
/* `update device`: the program wrote [data, data + bytes) on the host; the
   devices' copies of it are stale. */
int fpm_update_device(const void *data, size_t bytes);

/* The message of the calling thread's last failed call, or "" when it has
   had none. A call that succeeds leaves it as it was: look at the status
   first. */
const char *fpm_last_error(void);

/* How many CPU threads the runtime's OpenMP team has. */
int fpm_cpu_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FPM_FPM_H */
