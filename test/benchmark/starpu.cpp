//===- benchmark/starpu.cpp - StarPU beside fpm on the same loops ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The loops of fpm-bench-coexec (matmul rows and the Perona-Malik stencil,
// coexec_bench.hpp) run by StarPU the way its documentation teaches, beside
// fpm on the same processing elements (PEs): one CPU thread and PoCL with
// one compute unit, on a 2-core machine.
//
// StarPU: a codelet per loop with a CPU implementation (coexec_bench.hpp's
// loop body, compiled in this file with the flags fpm's CPU body gets) and
// an OpenCL one (coexec_bench.hpp's kernel source, built with the same
// options); the arrays registered and partitioned into row blocks by a
// filter (the stencil's input with a one-row shadow), one task per block.
// One call registers the arrays, submits the tasks, waits, unpartitions and
// unregisters: as with fpm, a call starts from the host's arrays and ends
// with the result in them. One CPU worker and one OpenCL worker on PoCL:
// STARPU_NCPU=1, STARPU_NOPENCL=1, STARPU_OPENCL_ON_CPUS=1, STARPU_NCUDA=0,
// and POCL_MAX_PTHREAD_COUNT=1 (StarPU cannot make sub-devices; fpm gets a
// 1-compute-unit sub-device), set by this program before starpu_init.
// STARPU_HOME and the performance models live in a temporary folder that
// the program removes. The stencil's kernel indexes `out` by the rows of
// `in`, one row before the block StarPU gives it; a three-line kernel
// appended to the same source shifts the pointer (the body is the same).
//
// Schedulers: `dmda` with a history-based performance model, calibrated
// first (STARPU_CALIBRATE=1, enough calls that every block size has more
// than 10 samples on each worker), at several block sizes; the two best in
// a selection run go on to the rounds, and the better median is reported.
// `eager` at its best block size is StarPU's dynamic baseline. Each StarPU
// run is a process of its own (forked from a server that the program starts
// before anything touches OpenMP or OpenCL): starpu_init, the program
// built, one small warm-up call on each worker, then the timed calls. Its
// first timed call is "the first call after calibration": a new run that
// loads the calibrated model from disk, with fresh data.
//
// fpm: `auto` over the CPU team of 2 threads (one runs the body, one feeds
// PoCL's 1-compute-unit sub-device), as fpm-bench-coexec. Its first call
// knows nothing (a training loop, called 5 times, then its profiles are
// flushed to a private store); "first call from stored profiles" is that
// loop's first call in a new process (forked like StarPU's, warmed up the
// same way on a small instance), which splits by the stored FPMs; "after
// convergence" is the training loop called on in the rounds. Each PE alone
// (T_cpu, T_ocl) and the oracle (the best static split, swept and run in
// the rounds) come from coexec_bench.hpp, as in fpm-bench-coexec.
//
// Rounds: every configuration once in turn (the StarPU and fpm processes in
// a rotating order, 0.3 s apart so that the other runtime's idle threads
// are asleep), so that the drift of a shared machine hits all alike. Each
// StarPU process times 1 + 3 calls: the first is its first call, the median
// of the other 3 is the round's value. Medians over the rounds, with their
// range (min-max). Every call's output is poisoned before and checked after
// against a serial reference (stencil: bit for bit; matmul: relative 1e-4).
//
// The matmul loop also runs as a user writes it for fpm: one pragma
// (starpu_pragma.cpp, rewritten at build time, its kernel generated from the
// body), auto, trained like auto's loop and called in the same rounds.
//
// Lines of code: the program counts the StarPU-specific lines of this file
// (between `starpu-loc` markers: codelets, CPU and OpenCL implementations,
// perf model, registration, partitioning, submission; not blank lines,
// comments, or benchmark scaffolding such as the row counter).
//
//   fpm-bench-starpu [--quick] [--rounds N] [--blocks B,...] [--matmul N]
//                    [--stencil M N] [--only matmul|stencil]
//
// --quick runs small sizes, one round (the CTest smoke test
// bench-starpu-quick, which checks that StarPU and fpm compute the serial
// loop's result, never a time); any wrong result makes the exit status 1.
//
//===----------------------------------------------------------------------===//

#include "coexec_bench.hpp"
#include "starpu_pragma.hpp"

#include <starpu.h>

#include <fcntl.h>
#include <omp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace fpm::bench;

//===----------------------------------------------------------------------===//
// The loops for StarPU, as its documentation teaches
//===----------------------------------------------------------------------===//

/// Rows the CPU implementations ran in this process (measurement only).
std::atomic<std::int64_t> starpuCpuRows{0};

// starpu-loc: begin (both loops)
starpu_opencl_program programs; // the loop's kernels, built for each device

/// A block's OpenCL buffer: StarPU gives each block a buffer of its own.
cl_mem deviceMatrix(void *buffer) {
  if (STARPU_MATRIX_GET_OFFSET(buffer) != 0 ||
      STARPU_MATRIX_GET_LD(buffer) != STARPU_MATRIX_GET_NX(buffer))
    die("StarPU gave a block buffer at an offset or with padded rows");
  return reinterpret_cast<cl_mem>(STARPU_MATRIX_GET_DEV_HANDLE(buffer));
}

/// Runs `kernel` over `rows` work-items, in groups of 64 as fpm does.
void launch(cl_kernel kernel, cl_command_queue queue, std::size_t rows) {
  const std::size_t local = 64;
  cl_int status = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &rows,
                                         rows % local == 0 ? &local : nullptr,
                                         0, nullptr, nullptr);
  if (status == CL_SUCCESS)
    status = clFinish(queue);
  if (status != CL_SUCCESS)
    STARPU_OPENCL_REPORT_ERROR(status);
  starpu_opencl_release_kernel(kernel);
}

cl_kernel loadKernel(const char *name, cl_command_queue *queue) {
  cl_kernel kernel = nullptr;
  const int device = starpu_worker_get_devid(starpu_worker_get_id());
  const int status =
      starpu_opencl_load_kernel(&kernel, queue, &programs, name, device);
  if (status != CL_SUCCESS)
    STARPU_OPENCL_REPORT_ERROR(status);
  return kernel;
}

template <class T> void setArg(cl_kernel kernel, cl_uint index, const T &arg) {
  const cl_int status = clSetKernelArg(kernel, index, sizeof(T), &arg);
  if (status != CL_SUCCESS)
    STARPU_OPENCL_REPORT_ERROR(status);
}

starpu_data_handle_t registerRows(float *rows, int count, int n) {
  starpu_data_handle_t handle = nullptr;
  starpu_matrix_data_register(&handle, STARPU_MAIN_RAM,
                              reinterpret_cast<uintptr_t>(rows), n, n, count,
                              sizeof(float));
  return handle;
}

void partitionRows(starpu_data_handle_t handle, unsigned blocks,
                   unsigned shadow = 0) {
  starpu_data_filter filter{};
  filter.filter_func = shadow ? starpu_matrix_filter_vertical_block_shadow
                              : starpu_matrix_filter_vertical_block;
  filter.nchildren = blocks;
  filter.filter_arg_ptr = reinterpret_cast<void *>(uintptr_t{shadow});
  starpu_data_partition(handle, &filter);
}

starpu_perfmodel historyModel(const char *symbol) {
  starpu_perfmodel model{};
  model.type = STARPU_HISTORY_BASED;
  model.symbol = symbol;
  return model;
}
// starpu-loc: end

// starpu-loc: begin (matmul)
void matmulCpu(void *buffers[], void *) {
  const auto rows = static_cast<std::int64_t>(STARPU_MATRIX_GET_NY(buffers[2]));
  starpuCpuRows += rows; // not counted: measurement
  matmulRows(reinterpret_cast<const float *>(STARPU_MATRIX_GET_PTR(buffers[0])),
             reinterpret_cast<const float *>(STARPU_MATRIX_GET_PTR(buffers[1])),
             reinterpret_cast<float *>(STARPU_MATRIX_GET_PTR(buffers[2])),
             static_cast<int>(STARPU_MATRIX_GET_NX(buffers[2])), 0, rows);
}

void matmulOpenCl(void *buffers[], void *) {
  cl_command_queue queue = nullptr;
  cl_kernel kernel = loadKernel("matmul_rows", &queue);
  for (cl_uint a = 0; a < 3; ++a)
    setArg(kernel, a, deviceMatrix(buffers[a]));
  setArg(kernel, 3, static_cast<int>(STARPU_MATRIX_GET_NX(buffers[2])));
  launch(kernel, queue, STARPU_MATRIX_GET_NY(buffers[2]));
}

starpu_perfmodel matmulModel = historyModel("fpm_bench_matmul_rows");

starpu_codelet matmulCodelet = [] {
  starpu_codelet codelet{};
  codelet.cpu_funcs[0] = matmulCpu;
  codelet.opencl_funcs[0] = matmulOpenCl;
  codelet.nbuffers = 3;
  codelet.modes[0] = STARPU_R;
  codelet.modes[1] = STARPU_R;
  codelet.modes[2] = STARPU_W;
  codelet.model = &matmulModel;
  codelet.name = "matmul_rows";
  return codelet;
}();

/// C = A * B (n x n), one task per block of `block` rows of A and C.
void starpuMatmul(float *a, float *b, float *c, int n, int block,
                  starpu_codelet *codelet) {
  starpu_data_handle_t ha = registerRows(a, n, n), hb = registerRows(b, n, n),
                       hc = registerRows(c, n, n);
  const auto blocks = static_cast<unsigned>(n / block);
  partitionRows(ha, blocks);
  partitionRows(hc, blocks);
  for (unsigned k = 0; k < blocks; ++k) {
    const int status = starpu_task_insert(
        codelet, STARPU_R, starpu_data_get_sub_data(ha, 1, k), STARPU_R, hb,
        STARPU_W, starpu_data_get_sub_data(hc, 1, k), 0);
    STARPU_CHECK_RETURN_VALUE(status, "starpu_task_insert");
  }
  starpu_task_wait_for_all();
  starpu_data_unpartition(ha, STARPU_MAIN_RAM);
  starpu_data_unpartition(hc, STARPU_MAIN_RAM);
  for (starpu_data_handle_t handle : {ha, hb, hc})
    starpu_data_unregister(handle);
}
// starpu-loc: end

// starpu-loc: begin (stencil)
// StarPU gives a block's `out` rows from the block's first; the kernel
// indexes `out` from the row before, as it indexes `in`.
const char *const StencilBlockKernel = R"CL(
__kernel void diffuse_block(__global const float *in, __global float *out,
                            int n, float dt, float inverseK2) {
  diffuse_rows(in, out - n, n, dt, inverseK2);
}
)CL";

void stencilCpu(void *buffers[], void *arg) {
  float dt = 0, inverseK2 = 0;
  starpu_codelet_unpack_args(arg, &dt, &inverseK2);
  const auto rows = static_cast<std::int64_t>(STARPU_MATRIX_GET_NY(buffers[1]));
  const auto n = static_cast<int>(STARPU_MATRIX_GET_NX(buffers[1]));
  starpuCpuRows += rows; // not counted: measurement
  diffuseRows(
      reinterpret_cast<const float *>(STARPU_MATRIX_GET_PTR(buffers[0])),
      reinterpret_cast<float *>(STARPU_MATRIX_GET_PTR(buffers[1])) - n, n, dt,
      inverseK2, 0, rows);
}

void stencilOpenCl(void *buffers[], void *arg) {
  float dt = 0, inverseK2 = 0;
  starpu_codelet_unpack_args(arg, &dt, &inverseK2);
  cl_command_queue queue = nullptr;
  cl_kernel kernel = loadKernel("diffuse_block", &queue);
  setArg(kernel, 0, deviceMatrix(buffers[0]));
  setArg(kernel, 1, deviceMatrix(buffers[1]));
  setArg(kernel, 2, static_cast<int>(STARPU_MATRIX_GET_NX(buffers[1])));
  setArg(kernel, 3, dt);
  setArg(kernel, 4, inverseK2);
  launch(kernel, queue, STARPU_MATRIX_GET_NY(buffers[1]));
}

starpu_perfmodel stencilModel = historyModel("fpm_bench_diffuse_rows");

starpu_codelet stencilCodelet = [] {
  starpu_codelet codelet{};
  codelet.cpu_funcs[0] = stencilCpu;
  codelet.opencl_funcs[0] = stencilOpenCl;
  codelet.nbuffers = 2;
  codelet.modes[0] = STARPU_R;
  codelet.modes[1] = STARPU_W;
  codelet.model = &stencilModel;
  codelet.name = "diffuse_rows";
  return codelet;
}();

/// Rows 1 .. m of `out` from rows 0 .. m + 1 of `in` (n columns), one task
/// per block of `block` rows; each block reads a row more on each side.
void starpuStencil(float *in, float *out, int m, int n, float dt,
                   float inverseK2, int block, starpu_codelet *codelet) {
  starpu_data_handle_t hin = registerRows(in, m + 2, n),
                       hout = registerRows(out + n, m, n);
  const auto blocks = static_cast<unsigned>(m / block);
  partitionRows(hin, blocks, 1);
  partitionRows(hout, blocks);
  for (unsigned k = 0; k < blocks; ++k) {
    const int status = starpu_task_insert(
        codelet, STARPU_R, starpu_data_get_sub_data(hin, 1, k), STARPU_W,
        starpu_data_get_sub_data(hout, 1, k), STARPU_VALUE, &dt, sizeof dt,
        STARPU_VALUE, &inverseK2, sizeof inverseK2, 0);
    STARPU_CHECK_RETURN_VALUE(status, "starpu_task_insert");
  }
  starpu_task_wait_for_all();
  starpu_data_unpartition(hin, STARPU_MAIN_RAM);
  starpu_data_unpartition(hout, STARPU_MAIN_RAM);
  starpu_data_unregister(hin);
  starpu_data_unregister(hout);
}
// starpu-loc: end

/// Non-blank, non-comment lines between the `starpu-loc` markers of loop
/// `section` and of both loops in this file (`section` "both loops": those
/// alone), lines marked "not counted" left out; 0 without the source.
int starpuLines(const std::string &section) {
  std::ifstream source(FPM_BENCH_SOURCE_DIR "/starpu.cpp");
  int lines = 0;
  bool inside = false;
  for (std::string line; std::getline(source, line);) {
    const auto first = line.find_first_not_of(" \t");
    const std::string text =
        first == std::string::npos ? "" : line.substr(first);
    if (text.rfind("// starpu-loc: begin", 0) == 0)
      inside = text.find("(" + section + ")") != std::string::npos ||
               text.find("(both loops)") != std::string::npos;
    else if (text.rfind("// starpu-loc: end", 0) == 0)
      inside = false;
    else if (inside && !text.empty() && text.rfind("//", 0) != 0 &&
             text.find("not counted") == std::string::npos)
      ++lines;
  }
  return lines;
}

//===----------------------------------------------------------------------===//
// A StarPU run: one process, one scheduler, one block size
//===----------------------------------------------------------------------===//

/// What the session processes report, line by line, to the parent.
using Report = std::map<std::string, std::vector<double>>;

/// One call of `workload` through StarPU with `codelet`, in `block`-row
/// tasks, its output poisoned before and checked after; seconds.
double starpuCall(Workload &workload, int block, starpu_codelet *codelet,
                  std::string &problem) {
  const std::vector<fpm_arg> &args = workload.args;
  workload.poison();
  const Clock::time_point start = Clock::now();
  if (workload.name == "matmul")
    starpuMatmul(static_cast<float *>(args[0].data),
                 static_cast<float *>(args[1].data),
                 static_cast<float *>(args[2].data),
                 *static_cast<int *>(args[3].data), block, codelet);
  else
    starpuStencil(
        static_cast<float *>(args[0].data), static_cast<float *>(args[1].data),
        static_cast<int>(workload.rows), *static_cast<int *>(args[2].data),
        *static_cast<float *>(args[3].data),
        *static_cast<float *>(args[4].data), block, codelet);
  const double seconds = since(start);
  if (problem.empty())
    problem = workload.check();
  return seconds;
}

/// The workload's codelet restricted to one kind of worker, with no model.
starpu_codelet restricted(const starpu_codelet &codelet, std::uint32_t where) {
  starpu_codelet copy = codelet;
  copy.where = where;
  copy.model = nullptr;
  return copy;
}

std::unique_ptr<Workload> smallInstance(const Workload &workload) {
  if (workload.name == "matmul")
    return std::make_unique<Matmul>(64);
  return std::make_unique<Stencil>(64, 64);
}

/// What one StarPU process does.
struct StarpuRun {
  std::string scheduler = "dmda";
  int block = 0;
  int calls = 0;          ///< timed calls with both workers
  bool calibrate = false; ///< STARPU_CALIBRATE=1
  bool singlePes = false; ///< then the loop on each worker alone
};

void starpuEnvironment(const std::string &home, const StarpuRun &run) {
  setenv("STARPU_NCPU", "1", 1);
  setenv("STARPU_NCUDA", "0", 1);
  setenv("STARPU_NOPENCL", "1", 1);
  setenv("STARPU_OPENCL_ON_CPUS", "1", 1);
  setenv("POCL_MAX_PTHREAD_COUNT", "1", 1);
  setenv("STARPU_HOME", home.c_str(), 1);
  setenv("STARPU_PERF_MODEL_DIR", (home + "/sampling").c_str(), 1);
  setenv("STARPU_SCHED", run.scheduler.c_str(), 1);
  setenv("STARPU_CALIBRATE", run.calibrate ? "1" : "0", 1);
  setenv("STARPU_SILENT", "1", 1);
}

/// In a process of its own: one StarPU run of `workload`, reported on `out`.
void runStarpu(Workload &workload, const std::string &home,
               const StarpuRun &run, std::FILE *out) {
  starpuEnvironment(home, run);
  if (starpu_init(nullptr) != 0)
    die("starpu_init failed");
  if (starpu_worker_get_count_by_type(STARPU_CPU_WORKER) != 1 ||
      starpu_worker_get_count_by_type(STARPU_OPENCL_WORKER) != 1)
    die("StarPU did not get one CPU and one OpenCL worker");
  const bool matmul = workload.name == "matmul";
  const std::string source =
      std::string(workload.source) + (matmul ? "" : StencilBlockKernel);
  if (starpu_opencl_load_opencl_from_string(source.c_str(), &programs,
                                            workload.options) != 0)
    die("StarPU could not build the kernel");
  starpu_codelet &codelet = matmul ? matmulCodelet : stencilCodelet;
  starpu_codelet cpuOnly = restricted(codelet, STARPU_CPU),
                 openClOnly = restricted(codelet, STARPU_OPENCL);
  std::string problem;
  {
    // Warm-up: each worker runs the kernel or body once, on other data.
    const std::unique_ptr<Workload> small = smallInstance(workload);
    const auto rows = static_cast<int>(small->rows);
    starpuCall(*small, rows, &openClOnly, problem);
    starpuCall(*small, rows, &cpuOnly, problem);
  }
  starpuCpuRows = 0;
  for (int call = 0; call < run.calls; ++call)
    std::fprintf(out, "time %.9g\n",
                 starpuCall(workload, run.block, &codelet, problem));
  if (run.calls > 0)
    std::fprintf(out, "cpu-share %.6g\n",
                 static_cast<double>(starpuCpuRows) /
                     static_cast<double>(workload.rows * run.calls));
  if (run.singlePes) {
    const auto rows = static_cast<int>(workload.rows);
    starpuCall(workload, rows, &openClOnly, problem); // its buffers made
    std::fprintf(out, "opencl-only %.9g\n",
                 starpuCall(workload, rows, &openClOnly, problem));
    std::fprintf(out, "cpu-only %.9g\n",
                 starpuCall(workload, rows, &cpuOnly, problem));
  }
  starpu_opencl_unload_opencl(&programs);
  starpu_shutdown(); // writes the performance model
  if (!problem.empty())
    std::fprintf(out, "wrong StarPU %s, block %d: %s\n", run.scheduler.c_str(),
                 run.block, problem.c_str());
}

/// In a process of its own: fpm's first call of the trained loop `name`
/// with `auto`, after the same kind of warm-up as StarPU's.
void runFpmFirst(Workload &workload, const std::string &name, bool quick,
                 std::FILE *out) {
  omp_set_num_threads(2);
  const std::unique_ptr<Workload> small = smallInstance(workload);
  Bench warm(*small, true);
  std::int64_t cpuRows = 0;
  setDeviceUnits("1");
  warm.fpmCall("warm-up", "starpu-bench.warm.opencl", "gpu", nullptr, cpuRows);
  setDeviceUnits(nullptr);
  warm.fpmCall("warm-up", "starpu-bench.warm.cpu", "cpu", nullptr, cpuRows);
  Bench bench(workload, quick);
  cpuRows = 0;
  const double seconds =
      bench.fpmCall("fpm auto, stored profiles", name, "all", "auto", cpuRows);
  std::fprintf(out, "time %.9g\ncpu-share %.6g\n", seconds,
               static_cast<double>(cpuRows) /
                   static_cast<double>(workload.rows));
  if (!warm.ok || !bench.ok)
    std::fprintf(out, "wrong fpm's first call from stored profiles\n");
}

//===----------------------------------------------------------------------===//
// The server: forks a fresh process for each run
//===----------------------------------------------------------------------===//

/// Forked before anything touches OpenMP or OpenCL; each command line
/// ("starpu W SCHED BLOCK CALLS CALIBRATE SINGLES", "fpm-first W NAME")
/// runs in a process forked from it, which writes its report and exits.
class Server {
public:
  Server(std::vector<Workload *> workloads, std::string home, bool quick)
      : workloads_(std::move(workloads)), home_(std::move(home)),
        quick_(quick) {
    int commands[2], reports[2];
    if (pipe(commands) != 0 || pipe(reports) != 0)
      die("pipe failed");
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0)
      die("fork failed");
    if (pid_ == 0) {
      close(commands[1]);
      close(reports[0]);
      serve(commands[0], reports[1]);
      _exit(0);
    }
    close(commands[0]);
    close(reports[1]);
    to_ = fdopen(commands[1], "w");
    from_ = fdopen(reports[0], "r");
  }
  ~Server() {
    std::fprintf(to_, "quit\n");
    std::fclose(to_);
    std::fclose(from_);
    waitpid(pid_, nullptr, 0);
  }
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  /// Runs one command in a new process; its report, by key. Lines that
  /// start with "wrong" set `problem`; a process that fails ends the program.
  Report run(const std::string &command, std::string &problem) {
    // The parent's idle OpenMP threads spin for a while after a loop:
    // let them sleep first.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::fprintf(to_, "%s\n", command.c_str());
    std::fflush(to_);
    Report report;
    char *line = nullptr;
    std::size_t capacity = 0;
    while (getline(&line, &capacity, from_) > 0) {
      std::string text(line);
      if (!text.empty() && text.back() == '\n')
        text.pop_back();
      if (text.rfind("end ", 0) == 0) {
        const int status = std::atoi(text.c_str() + 4);
        std::free(line);
        if (status != 0)
          die("'" + command + "' failed (status " + std::to_string(status) +
              ")");
        return report;
      }
      if (text.rfind("wrong ", 0) == 0) {
        std::fprintf(stderr, "%s: %s\n", program, text.c_str() + 6);
        problem = text.substr(6);
        continue;
      }
      if (std::getenv("FPM_BENCH_STARPU_TRACE"))
        std::fprintf(stderr, "%s: %s\n", command.c_str(), text.c_str());
      std::istringstream words(text);
      std::string key;
      double value = 0;
      if (words >> key >> value)
        report[key].push_back(value);
    }
    std::free(line);
    die("the server stopped");
  }

private:
  void serve(int commands, int reports) {
    std::FILE *in = fdopen(commands, "r");
    char *line = nullptr;
    std::size_t capacity = 0;
    while (getline(&line, &capacity, in) > 0) {
      std::istringstream words(line);
      std::string kind;
      words >> kind;
      if (kind == "quit")
        break;
      std::fflush(nullptr);
      const pid_t child = fork();
      if (child == 0) {
        std::FILE *out = fdopen(dup(reports), "w");
        std::size_t w = 0;
        words >> w;
        Workload &workload = *workloads_.at(w);
        if (kind == "starpu") {
          StarpuRun run;
          int calibrate = 0, singles = 0;
          words >> run.scheduler >> run.block >> run.calls >> calibrate >>
              singles;
          run.calibrate = calibrate != 0;
          run.singlePes = singles != 0;
          runStarpu(workload, home_, run, out);
        } else {
          std::string name;
          words >> name;
          runFpmFirst(workload, name, quick_, out);
        }
        rusage self{};
        getrusage(RUSAGE_SELF, &self);
        std::fprintf(
            out, "cpu-seconds %.6g\n",
            static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                1e-6 * static_cast<double>(self.ru_utime.tv_usec +
                                           self.ru_stime.tv_usec));
        std::fclose(out);
        std::fflush(nullptr);
        _exit(0);
      }
      int status = 0;
      waitpid(child, &status, 0);
      const int code =
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      const std::string end = "end " + std::to_string(code) + "\n";
      if (write(reports, end.data(), end.size()) < 0)
        _exit(1);
    }
    std::free(line);
  }

  std::vector<Workload *> workloads_;
  std::string home_;
  bool quick_;
  pid_t pid_ = -1;
  std::FILE *to_ = nullptr, *from_ = nullptr;
};

/// A temporary folder for StarPU (STARPU_HOME, performance models), removed
/// with the object.
class TemporaryFolder {
public:
  TemporaryFolder() {
    path_ = (std::filesystem::temp_directory_path() /
             (std::string(program) + "-starpu-XXXXXX"))
                .string();
    if (!::mkdtemp(path_.data()))
      die("cannot create a temporary folder");
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder &) = delete;
  TemporaryFolder &operator=(const TemporaryFolder &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

//===----------------------------------------------------------------------===//
// One workload's table
//===----------------------------------------------------------------------===//

struct Options : WorkloadOptions {
  int rounds = 7;
  std::vector<int> blocks; ///< empty: chosen from the trip count
};

/// Per-round values of one configuration.
struct Series {
  std::vector<double> values;
  std::vector<double> cpuShares;
  void add(double value, double share = std::nan("")) {
    values.push_back(value);
    cpuShares.push_back(share);
  }
  double median() const { return fpm::bench::median(values); }
  double low() const {
    return values.empty() ? std::nan("")
                          : *std::min_element(values.begin(), values.end());
  }
  double high() const {
    return values.empty() ? std::nan("")
                          : *std::max_element(values.begin(), values.end());
  }
  double share() const {
    std::vector<double> known;
    for (double s : cpuShares)
      if (!std::isnan(s))
        known.push_back(s);
    return fpm::bench::median(known);
  }
};

/// Block sizes to try: multiples of 64 that divide the trip count into
/// 2 to 32 tasks (all of them up to 5, else spread), or --blocks.
std::vector<int> blockSizes(const Options &options, std::int64_t rows) {
  std::vector<int> sizes;
  for (int block : options.blocks)
    if (block > 0 && rows % block == 0 && block < rows)
      sizes.push_back(block);
  if (!options.blocks.empty())
    return sizes;
  for (std::int64_t tasks = 2; tasks <= 32; ++tasks)
    if (rows % tasks == 0 && (rows / tasks) % 64 == 0)
      sizes.push_back(static_cast<int>(rows / tasks));
  if (sizes.empty())
    sizes.push_back(static_cast<int>(rows / 2));
  while (sizes.size() > 5) // keep the ends, thin the middle
    sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(sizes.size() / 2));
  return sizes;
}

std::string starpuCommand(std::size_t workload, const StarpuRun &run) {
  return "starpu " + std::to_string(workload) + " " + run.scheduler + " " +
         std::to_string(run.block) + " " + std::to_string(run.calls) + " " +
         (run.calibrate ? "1" : "0") + " " + (run.singlePes ? "1" : "0");
}

std::string range(const Series &series) {
  return milliseconds(series.low()) + "-" + milliseconds(series.high());
}

double loadAverage() {
  double load = std::nan("");
  if (std::FILE *file = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(file, "%lf", &load) != 1)
      load = std::nan("");
    std::fclose(file);
  }
  return load;
}

/// CPU seconds the machine has spent in niced processes (Linux): builds
/// and tests that share the machine run niced, and take little from a
/// benchmark at the default priority.
double nicedSeconds() {
  unsigned long long user = 0, nice = 0;
  double seconds = 0;
  if (std::FILE *stat = std::fopen("/proc/stat", "r")) {
    if (std::fscanf(stat, "cpu %llu %llu", &user, &nice) == 2)
      seconds =
          static_cast<double>(nice) / static_cast<double>(sysconf(_SC_CLK_TCK));
    std::fclose(stat);
  }
  return seconds;
}

bool runWorkload(Workload &workload, std::size_t index, Server &server,
                 const Options &options) {
  Bench bench(workload, options.quick);
  const Clock::time_point started = Clock::now();
  const CpuUse before = CpuUse::now();
  const double loadBefore = loadAverage(), nicedBefore = nicedSeconds();
  double childSeconds = 0; // CPU time of the forked runs
  std::string problem;
  auto serve = [&](const std::string &command) {
    Report report = server.run(command, problem);
    for (double seconds : report["cpu-seconds"])
      childSeconds += seconds;
    return report;
  };

  // fpm: each PE alone, and auto; warmed up under other names.
  struct FpmConfig {
    std::string label, tag;
    const char *devices, *schedule;
    int threads;
    const char *units;
  };
  const FpmConfig cpuAlone{
      "fpm, CPU alone (1 thread)", "cpu1", "cpu", nullptr, 1, nullptr},
      openClAlone{
          "fpm, OpenCL alone (PoCL, 1 CU)", "ocl1", "gpu", nullptr, 2, "1"},
      autoConfig{"fpm auto", "auto", "all", "auto", 2, nullptr};
  auto fpmCall = [&](const FpmConfig &config, const std::string &suffix,
                     double *cpuShare = nullptr) {
    setDeviceUnits(config.units);
    omp_set_num_threads(config.threads);
    std::int64_t cpuRows = 0;
    const double seconds =
        bench.fpmCall(config.label, bench.loopName(config.tag) + suffix,
                      config.devices, config.schedule, cpuRows);
    setDeviceUnits(nullptr);
    omp_set_num_threads(2);
    if (cpuShare)
      *cpuShare =
          static_cast<double>(cpuRows) / static_cast<double>(workload.rows);
    return seconds;
  };
  for (const FpmConfig *config : {&cpuAlone, &openClAlone, &autoConfig})
    fpmCall(*config, ".warm");
  // auto's first calls: the first knows nothing; then its profiles go to
  // the store, for the first call of a new process.
  Series fpmCold;
  for (int call = 0; call < (options.quick ? 3 : 5); ++call) {
    double share = 0;
    const double seconds = fpmCall(autoConfig, "", &share);
    if (call == 0)
      fpmCold.add(seconds, share);
  }
  // matmul only: the same loop from one pragma, its kernel generated
  // (starpu_pragma.cpp), auto on every PE, trained like auto's above.
  auto *matmul = dynamic_cast<Matmul *>(&workload);
  auto pragmaCall = [&] {
    workload.poison();
    const Clock::time_point start = Clock::now();
    pragmaMatmulRows(matmul->a(), matmul->b(), matmul->c(), matmul->size());
    const double seconds = since(start);
    bench.verify("fpm from the pragma");
    return seconds;
  };
  if (matmul)
    for (int call = 0; call < (options.quick ? 3 : 5); ++call)
      pragmaCall();
  fpm::flushProfiles();
  SplitRunner runner(bench);
  const Oracle oracle = findOracle(bench, runner);

  // StarPU: calibrate dmda's model at every block size, then pick.
  const std::vector<int> blocks = blockSizes(options, workload.rows);
  for (int block : blocks) {
    const auto tasks = static_cast<int>(workload.rows / block);
    StarpuRun run;
    run.block = block;
    run.calibrate = true;
    run.calls = options.quick ? 3 : std::max(5, (40 + tasks - 1) / tasks);
    serve(starpuCommand(index, run));
  }
  std::vector<std::pair<double, int>> dmdaByBlock, eagerByBlock;
  std::map<int, std::pair<double, double>> selection; // block -> dmda, eager
  if (blocks.size() > 1)
    for (int block : blocks)
      for (const char *scheduler : {"dmda", "eager"}) {
        StarpuRun run;
        run.scheduler = scheduler;
        run.block = block;
        run.calls = 4;
        std::vector<double> times = serve(starpuCommand(index, run))["time"];
        const double seconds = median({times.begin() + 1, times.end()});
        (scheduler == std::string("dmda") ? dmdaByBlock : eagerByBlock)
            .emplace_back(seconds, block);
        (scheduler == std::string("dmda") ? selection[block].first
                                          : selection[block].second) = seconds;
      }
  else {
    dmdaByBlock.emplace_back(0, blocks.front());
    eagerByBlock.emplace_back(0, blocks.front());
  }
  std::sort(dmdaByBlock.begin(), dmdaByBlock.end());
  std::sort(eagerByBlock.begin(), eagerByBlock.end());
  std::vector<int> dmdaBlocks;
  for (std::size_t k = 0; k < std::min<std::size_t>(2, dmdaByBlock.size()); ++k)
    dmdaBlocks.push_back(dmdaByBlock[k].second);
  const int eagerBlock = eagerByBlock.front().second;

  // Rounds.
  Series fpmCpu, fpmOpenCl, fpmAuto, fpmPragma, fpmStored, starpuCpu,
      starpuOpenCl, eager;
  std::vector<Series> splits(oracle.candidates.size());
  std::map<int, Series> dmda, dmdaFirst;
  const int callsPerRun = options.quick ? 2 : 4;
  std::vector<std::function<void()>> items;
  items.emplace_back([&] {
    fpmCpu.add(fpmCall(cpuAlone, ""));
    fpmOpenCl.add(fpmCall(openClAlone, ""));
    double share = 0;
    const double seconds = fpmCall(autoConfig, "", &share);
    fpmAuto.add(seconds, share);
    if (matmul)
      fpmPragma.add(pragmaCall());
    setDeviceUnits("1");
    for (std::size_t c = 0; c < oracle.candidates.size(); ++c) {
      splits[c].add(runner.run(oracle.candidates[c]));
      bench.verify("oracle split " + std::to_string(oracle.candidates[c]));
    }
    setDeviceUnits(nullptr);
  });
  items.emplace_back([&] {
    Report report = serve("fpm-first " + std::to_string(index) + " " +
                          bench.loopName(autoConfig.tag));
    fpmStored.add(report["time"].at(0), report["cpu-share"].at(0));
  });
  for (int block : dmdaBlocks)
    items.emplace_back([&, block] {
      StarpuRun run;
      run.block = block;
      run.calls = callsPerRun;
      Report report = serve(starpuCommand(index, run));
      const std::vector<double> &times = report["time"];
      dmdaFirst[block].add(times.at(0));
      dmda[block].add(median({times.begin() + 1, times.end()}),
                      report["cpu-share"].at(0));
    });
  items.emplace_back([&] {
    StarpuRun run;
    run.scheduler = "eager";
    run.block = eagerBlock;
    run.calls = callsPerRun;
    run.singlePes = true;
    Report report = serve(starpuCommand(index, run));
    const std::vector<double> &times = report["time"];
    eager.add(median({times.begin() + 1, times.end()}),
              report["cpu-share"].at(0));
    starpuOpenCl.add(report["opencl-only"].at(0));
    starpuCpu.add(report["cpu-only"].at(0));
  });
  for (int round = 0; round < options.rounds; ++round)
    for (std::size_t i = 0; i < items.size(); ++i)
      items[(i + static_cast<std::size_t>(round)) % items.size()]();

  // The table.
  std::size_t bestSplit = 0;
  for (std::size_t c = 1; c < splits.size(); ++c)
    if (splits[c].median() < splits[bestSplit].median())
      bestSplit = c;
  const Series &oracleSeries = splits[bestSplit];
  const double oracleSeconds = oracleSeries.median();
  const double oracleShare = static_cast<double>(oracle.candidates[bestSplit]) /
                             static_cast<double>(workload.rows);
  int dmdaBlock = dmdaBlocks.front();
  for (int block : dmdaBlocks)
    if (dmda[block].median() < dmda[dmdaBlock].median())
      dmdaBlock = block;
  const std::vector<std::pair<std::string, const Series *>> singles = {
      {"fpm CPU", &fpmCpu},
      {"fpm OpenCL", &fpmOpenCl},
      {"StarPU CPU", &starpuCpu},
      {"StarPU OpenCL", &starpuOpenCl}};
  const auto bestSingle = *std::min_element(
      singles.begin(), singles.end(), [](const auto &x, const auto &y) {
        return x.second->median() < y.second->median();
      });
  const double single = bestSingle.second->median();
  auto tasks = [&](int block) {
    return std::to_string(block) + "-row blocks, " +
           std::to_string(workload.rows / block) + " tasks";
  };
  std::printf("### %s\n\n", workload.title.c_str());
  std::printf("| configuration | median ms | range ms | / best single PE | "
              "/ oracle | CPU share |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  auto row = [&](const std::string &label, const Series &series) {
    const double share = series.share();
    const std::string shareText =
        std::isnan(share) ? "" : std::to_string(std::lround(share * 100)) + "%";
    std::printf("| %s | %s | %s | %.3f | %.3f | %s |\n", label.c_str(),
                milliseconds(series.median()).c_str(), range(series).c_str(),
                series.median() / single, series.median() / oracleSeconds,
                shareText.c_str());
  };
  row("fpm, CPU alone (1 thread)", fpmCpu);
  row("fpm, OpenCL alone (PoCL, 1 CU)", fpmOpenCl);
  row("StarPU, CPU worker alone", starpuCpu);
  row("StarPU, OpenCL worker alone", starpuOpenCl);
  char oracleLabel[96];
  std::snprintf(oracleLabel, sizeof oracleLabel,
                "oracle: best static split (fpm's PEs), OpenCL share %.2f",
                oracleShare);
  Series oracleWithShare = oracleSeries;
  for (double &share : oracleWithShare.cpuShares)
    share = 1 - oracleShare;
  row(oracleLabel, oracleWithShare);
  row("fpm auto, first call, no profiles (1 call)", fpmCold);
  row("**fpm auto, first call from stored profiles** (new process)", fpmStored);
  row("**fpm auto, after convergence**", fpmAuto);
  if (matmul)
    row("fpm auto from one pragma (generated kernel), after convergence",
        fpmPragma);
  row("**StarPU dmda, first call after calibration** (new process, " +
          tasks(dmdaBlock) + ")",
      dmdaFirst[dmdaBlock]);
  row("**StarPU dmda, calibrated** (" + tasks(dmdaBlock) + ")",
      dmda[dmdaBlock]);
  for (int block : dmdaBlocks)
    if (block != dmdaBlock)
      row("StarPU dmda, calibrated (" + tasks(block) + ")", dmda[block]);
  row("StarPU eager (" + tasks(eagerBlock) + ")", eager);
  std::printf("\n");

  std::printf("best single PE: %s, %s ms; oracle %s ms\n",
              bestSingle.first.c_str(), milliseconds(single).c_str(),
              milliseconds(oracleSeconds).c_str());
  if (!selection.empty()) {
    std::printf("block sizes, median of 3 calls after calibration (dmda / "
                "eager, ms):");
    for (const auto &[block, times] : selection)
      std::printf(" %d: %s / %s;", block, milliseconds(times.first).c_str(),
                  milliseconds(times.second).c_str());
    std::printf(" in the rounds: dmda");
    for (int block : dmdaBlocks)
      std::printf(" %d", block);
    std::printf(", eager %d\n", eagerBlock);
  }
  // The targets, on the ratio of the medians and, since a round's two
  // times were taken seconds apart, on the median of the rounds' ratios.
  auto target = [](const char *what, const Series &starpu, const Series &fpm,
                   double goal) {
    Series ratios;
    for (std::size_t r = 0; r < starpu.values.size(); ++r)
      ratios.add(starpu.values[r] / fpm.values[r]);
    const double ofMedians = starpu.median() / fpm.median();
    std::printf(
        "%s: %.3f (median of the rounds' ratios %.3f, range "
        "%.3f-%.3f; target >= %.2f: %s)\n",
        what, ofMedians, ratios.median(), ratios.low(), ratios.high(), goal,
        ofMedians >= goal && ratios.median() >= goal ? "met" : "MISSED");
  };
  target("repeated calls, dmda / fpm auto after convergence", dmda[dmdaBlock],
         fpmAuto, 1.10);
  target("first call, dmda after calibration / fpm from stored profiles",
         dmdaFirst[dmdaBlock], fpmStored, 1.0);
  if (matmul)
    target("repeated calls, dmda / fpm from one pragma after convergence",
           dmda[dmdaBlock], fpmPragma, 1.10);
  std::printf("StarPU-specific lines for this loop: %d, %d of them shared "
              "by both loops (codelet, CPU and OpenCL functions, model, "
              "registration, partition, submission; counted in starpu.cpp)\n",
              starpuLines(workload.name), starpuLines("both loops"));
  if (matmul)
    std::printf("fpm from a pragma: the loop and one `#pragma fpm partition` "
                "with its data clauses (starpu_pragma.cpp)\n");
  const CpuUse after = CpuUse::now();
  const double wall = since(started);
  const double others = std::max((after.machine - before.machine) -
                                     (after.self - before.self) - childSeconds,
                                 0.0);
  const double niced = std::min(nicedSeconds() - nicedBefore, others);
  const int cores = omp_get_num_procs();
  std::printf("(%.1f s for this workload; load average %.2f before, %.2f "
              "after; other processes used %.0f%% of the %d cores "
              "meanwhile, %.0f%% at the default priority%s)\n\n",
              wall, loadBefore, loadAverage(), 100 * others / (wall * cores),
              cores, 100 * (others - niced) / (wall * cores),
              others - niced > 0.05 * wall * cores
                  ? ": the machine was not quiet, the times are suspect"
                  : "");
  std::fflush(stdout);
  if (!problem.empty())
    bench.ok = false;
  return bench.ok;
}

} // namespace

int main(int argc, char **argv) {
  program = "fpm-bench-starpu";
  Options options;
  for (int i = 1; i < argc; ++i) {
    const bool quick = std::strcmp(argv[i], "--quick") == 0;
    if (parseWorkloadOption(argc, argv, i, options)) {
      if (quick)
        options.rounds = 1;
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      options.rounds = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
      std::istringstream list(argv[++i]);
      for (std::string block; std::getline(list, block, ',');)
        options.blocks.push_back(std::atoi(block.c_str()));
    } else {
      std::fprintf(stderr, "usage: fpm-bench-starpu [--quick] [--rounds N] "
                           "[--blocks B,...] [--matmul N] [--stencil M N] "
                           "[--only matmul|stencil]\n");
      return 2;
    }
  }
  clearOverrides();
  const PrivateProfiles profiles;
  const TemporaryFolder starpuHome;
  // The workloads (and their references) before the server is forked,
  // so that its runs share them.
  std::vector<std::unique_ptr<Workload>> workloads;
  if (options.only.empty() || options.only == "matmul")
    workloads.push_back(std::make_unique<Matmul>(options.matmulSize));
  if (options.only.empty() || options.only == "stencil")
    workloads.push_back(
        std::make_unique<Stencil>(options.stencilRows, options.stencilColumns));
  std::vector<Workload *> pointers;
  for (const auto &workload : workloads)
    pointers.push_back(workload.get());
  Server server(pointers, starpuHome.path(), options.quick);
  if (!cpuDevice()) {
    std::printf("fpm-bench-starpu: no CPU OpenCL device (PoCL): skipped\n");
    return 77; // CTest's SKIP_RETURN_CODE
  }
  setDeviceUnits(nullptr);
  omp_set_num_threads(2);
  std::printf("fpm-bench-starpu: %d cores, StarPU %d.%d.%d, %d rounds%s\n\n",
              omp_get_num_procs(), STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
              STARPU_RELEASE_VERSION, options.rounds,
              options.quick ? " (--quick)" : "");
  if (omp_get_num_procs() != 2)
    std::printf("(written for 2 cores: fpm's team is 2 threads, StarPU's "
                "workers one CPU and one OpenCL)\n\n");
  bool ok = true;
  for (std::size_t w = 0; w < workloads.size(); ++w)
    ok = runWorkload(*workloads[w], w, server, options) && ok;
  if (!ok)
    std::fprintf(stderr, "fpm-bench-starpu: some results were wrong\n");
  return ok ? 0 : 1;
}
