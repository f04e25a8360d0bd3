//===- benchmark/coexec.cpp - CPU and OpenCL co-execution vs an oracle ----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// How well fpm_parallel_for_kernel splits one loop between the CPU team and
// an OpenCL device, on a 2-core machine whose only OpenCL device is PoCL (a
// CPU device). Two loops, one logical iteration per row:
//
//   matmul   C = A * B, floats, 1280 x 1280 by default; row i reads
//            A[i*n : n] and all of B and writes C[i*n : n] (ikj order on
//            both sides; about 0.3 s on one core);
//   stencil  one Jacobi sweep of a 9-point Perona-Malik diffusion on an
//            (8192 + 2) x 4096 grid by default; iteration k writes row k + 1
//            from rows k .. k + 2 (sections in[k*n : 3n], out[n + k*n : n]).
//            A sweep is cheap (about 60 ms on one core); a grid big enough
//            for 0.2 s would take gigabytes.
//
// The co-execution configuration is the runtime's default on 2 cores: a
// team of 2 OpenMP threads, one running the C++ body and one feeding PoCL,
// which gets a 1-compute-unit sub-device. Its processing elements alone:
// T_cpu (devices "cpu", 1 OpenMP thread) and T_ocl (devices "gpu",
// FPM_OPENCL_CPU_UNITS=1). The whole machine on one device (2 CPU threads;
// PoCL with 2 compute units) is reported too, for honesty.
//
// Each configuration is called once under a loop name of its own to warm
// up (program builds, PoCL's per-work-group-size compiles), then `calls`
// times under another name, in rounds: each round calls every configuration
// once in turn, so that the drift of a shared (virtual) machine hits all
// alike. The first timed call of a loop starts from no measured speeds (the
// runtime keeps them per loop name); the median of the rest shows what it
// learned. Outputs are poisoned with NaN before every call and checked
// against a serial reference (stencil: bit-exact, both sides evaluate the
// same float operations in the same order without contraction; matmul:
// relative 1e-4, PoCL may contract to FMA). The CPU time other processes
// took during each workload is printed: above 5%, the times are suspect.
//
// The oracle is the best static split: OpenCL runs rows [0, r*T), the CPU
// the rest, concurrently on two std::threads (each through fpm with 1 PE:
// devices "gpu" with FPM_OPENCL_CPU_UNITS=1, and devices "cpu" with 1 OpenMP
// thread); r sweeps 0 .. 1 by 0.05 and then +-0.05 around the best by 0.01
// (rows rounded to multiples of 8), the median of 3 runs each; the 3 best
// splits then take part in the rounds like configurations, and the best of
// their medians is the oracle (the least of many noisy 3-run medians would
// be biased low, and noise can pick a wrong split). "native" is the kernel
// through plain OpenCL host code on a 1-compute-unit PoCL sub-device: one
// upload of the inputs, one NDRange, one download, with the buffers kept
// across calls or created and released in each call; fpm's overhead is
// T_ocl over each.
//
// Columns: median and first call time; the ratio to the oracle's time;
// co-execution efficiency (1 / (1/T_cpu + 1/T_ocl)) / T; the share of the
// iterations the CPU body ran (counted in the body).
//
// --overhead measures only fpm's OpenCL path alone (devices "gpu", a
// 1-compute-unit sub-device) against the native host code above with its
// buffers kept: the same kernel, sizes, work-groups of 64 and sub-device,
// launched at offset 0. Each round runs fpm, native, fpm under a second
// loop name and a second native instance (its own context and buffers), in
// an order that rotates every round; it prints fpm / native per round as a
// median with min-max over --calls rounds (default 15, two pairs each),
// beside native / native' and fpm / fpm': the same configuration measured
// twice, the noise band.
//
//   fpm-bench-coexec [--gpu] [--quick] [--overhead] [--calls N]
//                    [--matmul N] [--stencil M N] [--only matmul|stencil]
//
// --gpu runs all of the above on a GPU instead of PoCL: the first
// CL_DEVICE_TYPE_GPU device of the runtime's list (named by its id, say
// devices "opencl0", so that no other OpenCL device joins in), whole, for
// T_ocl, the oracle's OpenCL side and the native baseline; a team of all
// cores (omp_get_num_procs()) for the co-execution, of which the runtime
// takes one thread to feed the GPU, so T_cpu is devices "cpu" with the
// other threads; no FPM_OPENCL_CPU_UNITS, no 2-CU row. Default sizes are
// matmul 1024 and stencil 4096 x 4096 (--matmul, --stencil, --quick
// override them). Without a GPU it prints "no GPU OpenCL device: skipped"
// and exits 77. FPM_BENCH_DEVICE_TYPE=cpu makes the first CPU device (PoCL)
// stand in for the GPU, to test these paths without one (bench-coexec-gpu-
// quick).
//
// --quick runs small sizes (the CTest smoke test, bench-coexec-quick); it
// and the full run exit with status 1 when any result is wrong. This file is
// compiled with -O3 -march=native (see CMakeLists.txt); FPM_DEVICES and
// FPM_SCHEDULE are unset, FPM_OPENCL_CPU_UNITS is set per configuration.
//
//===----------------------------------------------------------------------===//

#include "coexec_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace fpm::bench;

/// One row of the table.
struct Row {
  std::string label;
  double median = 0;
  double first = std::nan("");
  double cpuShare = 0;
};

struct Options : WorkloadOptions {
  int calls = 7;
  bool overhead = false; ///< --overhead: fpm OpenCL-only / native only
  bool callsGiven = false;
};

//===----------------------------------------------------------------------===//
// Native OpenCL: the same kernel, one upload, one NDRange, one download
//===----------------------------------------------------------------------===//

void check(cl_int status, const char *what) {
  if (status != CL_SUCCESS)
    die(std::string("native OpenCL: ") + what +
        " failed: " + std::to_string(status));
}

class NativeOpenCl {
public:
  explicit NativeOpenCl(Workload &workload) : workload_(workload) {
    if (gpu) { // the whole device (clReleaseDevice: a no-op on a root one)
      device_ = gpu->device;
    } else {
      cl_device_id root = cpuDevice();
      if (!root)
        die("native OpenCL: no CPU device");
      const cl_device_partition_property byCounts[] = {
          CL_DEVICE_PARTITION_BY_COUNTS, 1,
          CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
      cl_uint made = 0;
      check(clCreateSubDevices(root, byCounts, 1, &device_, &made),
            "clCreateSubDevices");
    }
    cl_int status = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    queue_ = clCreateCommandQueue(context_, device_, 0, &status);
    check(status, "clCreateCommandQueue");
    const char *source = workload.source;
    program_ =
        clCreateProgramWithSource(context_, 1, &source, nullptr, &status);
    check(status, "clCreateProgramWithSource");
    check(clBuildProgram(program_, 1, &device_, workload.options, nullptr,
                         nullptr),
          "clBuildProgram");
    kernel_ = clCreateKernel(program_, workload.kernelName, &status);
    check(status, "clCreateKernel");
    kept_.resize(workload.args.size());
    fresh_.resize(workload.args.size());
  }
  ~NativeOpenCl() {
    release(kept_);
    clReleaseKernel(kernel_);
    clReleaseProgram(program_);
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
    clReleaseDevice(device_);
  }

  /// One loop call; with `keepBuffers`, the buffers of the previous call
  /// are reused, else created and released inside the call.
  double run(bool keepBuffers) {
    workload_.poison();
    const Clock::time_point start = Clock::now();
    std::vector<cl_mem> &buffers = keepBuffers ? kept_ : fresh_;
    if (!buffers[firstArray()])
      make(buffers);
    setArgs(buffers);
    const std::vector<fpm_arg> &args = workload_.args;
    const std::int64_t rows = workload_.rows;
    for (std::size_t a = 0; a < args.size(); ++a)
      if (args[a].kind == FPM_ARG_IN || args[a].kind == FPM_ARG_INOUT) {
        const auto [offset, bytes] = span(args[a], rows);
        check(clEnqueueWriteBuffer(queue_, buffers[a], CL_FALSE, offset, bytes,
                                   static_cast<char *>(args[a].data) + offset,
                                   0, nullptr, nullptr),
              "clEnqueueWriteBuffer");
      }
    const std::size_t global = static_cast<std::size_t>(rows);
    const std::size_t local = 64;
    check(clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global,
                                 rows % 64 == 0 ? &local : nullptr, 0, nullptr,
                                 nullptr),
          "clEnqueueNDRangeKernel");
    for (std::size_t a = 0; a < args.size(); ++a)
      if (args[a].kind == FPM_ARG_OUT || args[a].kind == FPM_ARG_INOUT) {
        const auto [offset, bytes] = span(args[a], rows);
        check(clEnqueueReadBuffer(queue_, buffers[a], CL_FALSE, offset, bytes,
                                  static_cast<char *>(args[a].data) + offset, 0,
                                  nullptr, nullptr),
              "clEnqueueReadBuffer");
      }
    check(clFinish(queue_), "clFinish");
    if (!keepBuffers)
      release(fresh_);
    return since(start);
  }

  /// Seconds of the kernel alone over rows [begin, end), launched at
  /// global offset `begin` on the buffers of the last kept run(true).
  double kernelOnly(std::int64_t begin, std::int64_t end) {
    setArgs(kept_);
    const auto offset = static_cast<std::size_t>(begin);
    const auto global = static_cast<std::size_t>(end - begin);
    const std::size_t local = 64;
    const Clock::time_point start = Clock::now();
    check(clEnqueueNDRangeKernel(queue_, kernel_, 1, &offset, &global,
                                 global % 64 == 0 ? &local : nullptr, 0,
                                 nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(queue_), "clFinish");
    return since(start);
  }

private:
  std::size_t firstArray() const {
    for (std::size_t a = 0; a < workload_.args.size(); ++a)
      if (workload_.args[a].kind != FPM_ARG_SCALAR)
        return a;
    return 0;
  }

  /// The bytes rows [0, rows) of `arg` touch: [offset, offset + bytes).
  static std::pair<std::size_t, std::size_t> span(const fpm_arg &arg,
                                                  std::int64_t rows) {
    const std::int64_t first = arg.stride == 0 ? 0 : arg.offset;
    const std::int64_t last =
        arg.stride == 0 && arg.count == 0
            ? arg.length
            : arg.offset + (rows - 1) * arg.stride + arg.count;
    return {static_cast<std::size_t>(first) * arg.size,
            static_cast<std::size_t>(last - first) * arg.size};
  }

  void make(std::vector<cl_mem> &buffers) {
    const std::vector<fpm_arg> &args = workload_.args;
    for (std::size_t a = 0; a < args.size(); ++a) {
      if (args[a].kind == FPM_ARG_SCALAR)
        continue;
      const cl_mem_flags flags = args[a].kind == FPM_ARG_IN ? CL_MEM_READ_ONLY
                                 : args[a].kind == FPM_ARG_OUT
                                     ? CL_MEM_WRITE_ONLY
                                     : CL_MEM_READ_WRITE;
      cl_int status = CL_SUCCESS;
      buffers[a] = clCreateBuffer(context_, flags,
                                  static_cast<std::size_t>(args[a].length) *
                                      args[a].size,
                                  nullptr, &status);
      check(status, "clCreateBuffer");
    }
  }

  void setArgs(const std::vector<cl_mem> &buffers) {
    const std::vector<fpm_arg> &args = workload_.args;
    for (std::size_t a = 0; a < args.size(); ++a) {
      const auto index = static_cast<cl_uint>(a);
      if (args[a].kind == FPM_ARG_SCALAR)
        check(clSetKernelArg(kernel_, index, args[a].size, args[a].data),
              "clSetKernelArg");
      else
        check(clSetKernelArg(kernel_, index, sizeof(cl_mem), &buffers[a]),
              "clSetKernelArg");
    }
  }

  static void release(std::vector<cl_mem> &buffers) {
    for (cl_mem &buffer : buffers)
      if (buffer) {
        clReleaseMemObject(buffer);
        buffer = nullptr;
      }
  }

  Workload &workload_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  std::vector<cl_mem> kept_;  ///< made once, reused by every call
  std::vector<cl_mem> fresh_; ///< made and released in each call
};

//===----------------------------------------------------------------------===//
// One workload's table
//===----------------------------------------------------------------------===//

/// One row of the table, measured one call per round.
struct Config {
  enum Kind { Fpm, NativeKept, NativePerCall, Split };
  std::string label;
  Kind kind = Fpm;
  std::string tag; ///< the loop's name is coexec.<workload>.<tag>
  const char *devices = nullptr;
  const char *schedule = nullptr;
  int threads = 2;
  const char *units = nullptr; ///< FPM_OPENCL_CPU_UNITS, or unset
  std::int64_t split = 0;      ///< a static split's rows on OpenCL
  std::vector<double> times;
  std::int64_t cpuRows = 0; ///< in the calls after the first
};

bool runWorkload(Workload &workload, const Options &options) {
  Bench bench(workload, options.quick);
  const Clock::time_point started = Clock::now();
  const CpuUse before = CpuUse::now();
  std::vector<Config> configs;
  auto fpm = [&](std::string label, std::string tag, const char *devices,
                 const char *schedule, int threads, const char *units) {
    Config config;
    config.label = std::move(label);
    config.tag = std::move(tag);
    config.devices = devices;
    config.schedule = schedule;
    config.threads = threads;
    config.units = units;
    configs.push_back(std::move(config));
  };
  // The co-execution configuration's PEs alone, then the whole machine on
  // one device (PoCL gets both compute units: the team leaves both cores
  // free).
  // Under --gpu: the CPU team but the thread that feeds the GPU, the GPU
  // whole, and all cores (the GPU has no second size).
  const std::string threads = threadCount(cpuPeThreads());
  const std::string team = threadCount(teamThreads());
  if (gpu) {
    fpm("cpu only, " + threads + " (T_cpu)", "cpu1", "cpu", nullptr,
        cpuPeThreads(), nullptr);
    fpm("gpu only, whole device (T_ocl)", "ocl1", openClDevices(), nullptr,
        teamThreads(), nullptr);
    fpm("cpu only, " + team, "cpu2", "cpu", nullptr, teamThreads(), nullptr);
  } else {
    fpm("cpu only, 1 thread (T_cpu)", "cpu1", "cpu", nullptr, 1, nullptr);
    fpm("opencl only, 1 CU (T_ocl)", "ocl1", "gpu", nullptr, 2, "1");
    fpm("cpu only, 2 threads", "cpu2", "cpu", nullptr, 2, nullptr);
    fpm("opencl only, 2 CUs", "ocl2", "gpu", nullptr, 2, nullptr);
  }
  auto other = [&](std::string label, Config::Kind kind) {
    Config config;
    config.label = std::move(label);
    config.kind = kind;
    configs.push_back(std::move(config));
  };
  const std::string nativeOn = gpu ? "whole GPU" : "1 CU";
  other("native OpenCL, " + nativeOn + ", buffers kept", Config::NativeKept);
  other("native OpenCL, " + nativeOn + ", buffers per call",
        Config::NativePerCall);
  const std::size_t firstSchedule = configs.size();
  // The co-execution configuration: all devices, a team of 2; the runtime
  // gives PoCL the core the team leaves free. Under --gpu: the CPU and the
  // GPU, a team of all cores.
  for (const char *schedule : {"equal", "cpm", "wdah", "gss", "fss", "tss",
                               "gss, 80", "fss, 50", "auto"}) {
    std::string tag = schedule;
    std::replace(tag.begin(), tag.end(), ' ', '_');
    fpm(std::string("fpm ") + schedule, tag, gpu ? gpu->all.c_str() : "all",
        schedule, teamThreads(), nullptr);
  }

  NativeOpenCl native(workload);
  SplitRunner runner(bench);
  auto call = [&](Config &config, const std::string &suffix) {
    switch (config.kind) {
    case Config::Fpm: {
      setDeviceUnits(config.units);
      omp_set_num_threads(config.threads);
      std::int64_t cpuRows = 0;
      const double seconds =
          bench.fpmCall(config.label, bench.loopName(config.tag) + suffix,
                        config.devices, config.schedule, cpuRows);
      setDeviceUnits(nullptr);
      omp_set_num_threads(teamThreads());
      if (!config.times.empty() && suffix.empty()) // not in the first call
        config.cpuRows += cpuRows;
      return seconds;
    }
    case Config::NativeKept:
    case Config::NativePerCall: {
      const double seconds = native.run(config.kind == Config::NativeKept);
      bench.verify(config.label);
      return seconds;
    }
    case Config::Split:
      break;
    }
    return 0.0;
  };
  // Warm-up, under other loop names: program builds, PoCL's compiles.
  for (Config &config : configs)
    call(config, ".warm");
  // The sweep's best splits take part in the rounds; the best of them is
  // the oracle.
  const Oracle oracle = findOracle(bench, runner);
  for (std::int64_t split : oracle.candidates) {
    Config config;
    config.kind = Config::Split;
    config.split = split;
    configs.push_back(std::move(config));
  }
  // Rounds: every configuration once in turn, so that the drift of the
  // machine hits all alike.
  for (int round = 0; round < options.calls; ++round)
    for (Config &config : configs) {
      if (config.kind == Config::Split) {
        setDeviceUnits("1");
        config.times.push_back(runner.run(config.split));
        setDeviceUnits(nullptr);
        bench.verify("oracle split " + std::to_string(config.split));
      } else {
        config.times.push_back(call(config, ""));
      }
    }

  std::vector<Row> rows, candidates;
  for (const Config &config : configs) {
    Row row;
    row.label = config.label;
    row.first = config.times.front();
    row.median = median({config.times.begin() + 1, config.times.end()});
    const double later =
        static_cast<double>(workload.rows) * (options.calls - 1);
    const double share =
        static_cast<double>(config.split) / static_cast<double>(workload.rows);
    row.cpuShare = config.kind == Config::Split ? 1 - share
                   : config.kind == Config::Fpm
                       ? static_cast<double>(config.cpuRows) / later
                       : 0;
    if (config.kind == Config::Split) {
      char label[96];
      std::snprintf(label, sizeof label,
                    "oracle: static split, OpenCL share %.2f", share);
      row.label = label;
      candidates.push_back(row);
    } else {
      rows.push_back(row);
    }
  }
  const Row &oracleRow = *std::min_element(
      candidates.begin(), candidates.end(),
      [](const Row &x, const Row &y) { return x.median < y.median; });
  rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(firstSchedule),
              oracleRow);
  const std::size_t firstFpm = firstSchedule + 1;
  const double cpuAlone = rows[0].median, openClAlone = rows[1].median;
  const double wholeMachine =
      std::min(rows[2].median, rows[gpu ? 1 : 3].median);
  const double nativeKept = rows[firstSchedule - 2].median,
               nativePerCall = rows[firstSchedule - 1].median;
  const double oracleSeconds = oracleRow.median;
  const double oracleShare = 1 - oracleRow.cpuShare;

  const double ideal = 1 / (1 / cpuAlone + 1 / openClAlone);
  std::printf("### %s\n\n", workload.title.c_str());
  std::printf("| configuration | median ms | first ms | / oracle | "
              "efficiency | CPU share |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Row &row : rows) {
    const std::string first =
        std::isnan(row.first) ? "-" : milliseconds(row.first);
    std::printf("| %s | %s | %s | %.3f | %.3f | %.1f%% |\n", row.label.c_str(),
                milliseconds(row.median).c_str(), first.c_str(),
                row.median / oracleSeconds, ideal / row.median,
                row.cpuShare * 100);
  }
  std::printf("\nT_cpu %s ms, T_ocl %s ms, ideal 1/(1/T_cpu + 1/T_ocl) "
              "%s ms\n",
              milliseconds(cpuAlone).c_str(), milliseconds(openClAlone).c_str(),
              milliseconds(ideal).c_str());
  std::printf("oracle: OpenCL share r* = %.2f, %s ms, efficiency %.3f; "
              "the sweep's best %zu splits in the rounds (OpenCL share: "
              "ms):",
              oracleShare, milliseconds(oracleSeconds).c_str(),
              ideal / oracleSeconds, candidates.size());
  for (const Row &candidate : candidates)
    std::printf(" %.2f: %s", 1 - candidate.cpuShare,
                milliseconds(candidate.median).c_str());
  std::printf("\n");
  std::printf("oracle sweep, %d splits (OpenCL share: ms):", oracle.points);
  for (const auto &[split, seconds] : oracle.sweep)
    std::printf(" %.2f: %s", static_cast<double>(split) / workload.rows,
                milliseconds(seconds).c_str());
  std::printf("\n");
  std::printf("fpm over native OpenCL (%s): %+.1f%% against buffers kept, "
              "%+.1f%% against buffers per call\n",
              nativeOn.c_str(), (openClAlone / nativeKept - 1) * 100,
              (openClAlone / nativePerCall - 1) * 100);
  std::printf("dynamic schedules within 10%% of the oracle:");
  for (std::size_t r = firstFpm; r < rows.size(); ++r) {
    const std::string &name = rows[r].label;
    if (name == "fpm equal" || name == "fpm cpm" || name == "fpm wdah")
      continue;
    std::printf(" %s %s (%.3f);", name.substr(4).c_str(),
                rows[r].median <= 1.1 * oracleSeconds ? "yes" : "NO",
                rows[r].median / oracleSeconds);
  }
  const auto bestFpm = std::min_element(
      rows.begin() + static_cast<std::ptrdiff_t>(firstFpm), rows.end(),
      [](const Row &x, const Row &y) { return x.median < y.median; });
  std::printf("\nbest fpm co-execution (%s, %s ms) against the best "
              "whole-machine single device (%s ms): %.2fx\n",
              bestFpm->label.c_str(), milliseconds(bestFpm->median).c_str(),
              milliseconds(wholeMachine).c_str(),
              wholeMachine / bestFpm->median);
  std::printf("%s\n\n", machineNote(before, started).c_str());
  std::fflush(stdout);
  return bench.ok;
}

//===----------------------------------------------------------------------===//
// --overhead: fpm's OpenCL path alone against native host code
//===----------------------------------------------------------------------===//

/// The spread of per-round ratios: their median, least and greatest.
struct Band {
  double median = 0, low = 0, high = 0;
};

Band band(const std::vector<double> &ratios) {
  return {fpm::bench::median(ratios),
          *std::min_element(ratios.begin(), ratios.end()),
          *std::max_element(ratios.begin(), ratios.end())};
}

/// fpm with devices "gpu" on a 1-compute-unit PoCL sub-device against the
/// same kernel through NativeOpenCl (1-compute-unit sub-device, buffers
/// kept, offset 0, work-groups of 64 as fpm's), in interleaved rounds: each
/// round runs fpm, native, a second fpm loop and a second native instance
/// (its own context and buffers), in an order that rotates every round, so
/// that neither side always follows the other. Each round gives the ratio
/// fpm / native, and the two copies give the noise band: native / native'
/// and fpm / fpm', the same configuration measured twice.
bool runOverhead(Workload &workload, const Options &options) {
  Bench bench(workload, options.quick);
  const Clock::time_point started = Clock::now();
  const CpuUse before = CpuUse::now();
  NativeOpenCl native(workload), nativeCopy(workload);
  setDeviceUnits("1");
  omp_set_num_threads(teamThreads());
  std::int64_t cpuRows = 0;
  auto fpmCall = [&](const char *tag) {
    return bench.fpmCall(std::string("fpm opencl only ") + tag,
                         bench.loopName(std::string("overhead.") + tag),
                         openClDevices(), nullptr, cpuRows);
  };
  auto nativeCall = [&](NativeOpenCl &which) {
    const double seconds = which.run(true);
    bench.verify("native OpenCL");
    return seconds;
  };
  // Warm-up: builds, PoCL's compiles, the loops' first (probing) calls.
  for (int warm = 0; warm < 2; ++warm) {
    fpmCall("a");
    fpmCall("b");
    nativeCall(native);
    nativeCall(nativeCopy);
  }
  std::vector<double> times[4], ratio, fpmNoise, nativeNoise;
  for (int round = 0; round < options.calls; ++round) {
    double seconds[4];
    for (int k = 0; k < 4; ++k) {
      const int which = (k + round) % 4;
      seconds[which] = which == 0   ? fpmCall("a")
                       : which == 1 ? nativeCall(native)
                       : which == 2 ? fpmCall("b")
                                    : nativeCall(nativeCopy);
    }
    for (int k = 0; k < 4; ++k)
      times[k].push_back(seconds[k]);
    ratio.push_back(seconds[0] / seconds[1]);
    ratio.push_back(seconds[2] / seconds[3]);
    fpmNoise.push_back(seconds[0] / seconds[2]);
    nativeNoise.push_back(seconds[1] / seconds[3]);
  }
  // PoCL compiles a kernel for global offset 0 apart from the one for any
  // other offset: the same kernel over nearly the same rows, at offset 0
  // and at offset 64, on native host code alone.
  const std::int64_t shift = 64;
  std::vector<double> atZero, shifted, offsetRatio;
  if (workload.rows > 2 * shift) {
    nativeCall(native); // its buffers hold the inputs
    native.kernelOnly(0, workload.rows - shift);
    native.kernelOnly(shift, workload.rows);
    for (int round = 0; round < options.calls; ++round) {
      atZero.push_back(native.kernelOnly(0, workload.rows - shift));
      shifted.push_back(native.kernelOnly(shift, workload.rows));
      offsetRatio.push_back(shifted.back() / atZero.back());
    }
  }
  setDeviceUnits(nullptr);
  if (cpuRows > 0) {
    std::fprintf(stderr, "%s: the OpenCL-only loop ran %lld rows on the CPU\n",
                 program, static_cast<long long>(cpuRows));
    bench.ok = false;
  }
  const Band overhead = band(ratio), fpmBand = band(fpmNoise),
             nativeBand = band(nativeNoise);
  char load[64] = "?";
  if (std::FILE *file = std::fopen("/proc/loadavg", "r")) {
    if (!std::fgets(load, sizeof load, file))
      load[0] = '\0';
    std::fclose(file);
    load[std::strcspn(load, " ")] = '\0'; // the 1-minute average
  }
  std::printf("### %s\n\n", workload.title.c_str());
  std::printf("| per round (%d rounds x 2 pairs) | median | min | max |\n",
              options.calls);
  std::printf("| --- | ---: | ---: | ---: |\n");
  std::printf("| fpm OpenCL only / native | %.3f | %.3f | %.3f |\n",
              overhead.median, overhead.low, overhead.high);
  std::printf("| noise: native / native' | %.3f | %.3f | %.3f |\n",
              nativeBand.median, nativeBand.low, nativeBand.high);
  std::printf("| noise: fpm / fpm' | %.3f | %.3f | %.3f |\n", fpmBand.median,
              fpmBand.low, fpmBand.high);
  std::printf("\nmedian ms: fpm %s, fpm' %s, native %s, native' %s; "
              "load average %s at the end\n",
              milliseconds(median(times[0])).c_str(),
              milliseconds(median(times[2])).c_str(),
              milliseconds(median(times[1])).c_str(),
              milliseconds(median(times[3])).c_str(), load);
  if (!offsetRatio.empty()) {
    const Band offset = band(offsetRatio);
    std::printf("%s alone (native host code, kernel only): rows [%d, %lld) "
                "at global offset %d over rows [0, %lld) at offset 0: %.3f "
                "(%.3f-%.3f; %s ms against %s ms)\n",
                gpu ? "the GPU" : "PoCL", static_cast<int>(shift),
                static_cast<long long>(workload.rows), static_cast<int>(shift),
                static_cast<long long>(workload.rows - shift), offset.median,
                offset.low, offset.high, milliseconds(median(shifted)).c_str(),
                milliseconds(median(atZero)).c_str());
  }
  std::printf("%s\n\n", machineNote(before, started).c_str());
  std::fflush(stdout);
  return bench.ok;
}

} // namespace

int main(int argc, char **argv) {
  program = "fpm-bench-coexec";
  Options options;
  const bool onGpu = takeGpuDefaults(argc, argv, options);
  for (int i = 1; i < argc; ++i) {
    const bool quick = std::strcmp(argv[i], "--quick") == 0;
    if (std::strcmp(argv[i], "--gpu") == 0) {
      continue;
    } else if (parseWorkloadOption(argc, argv, i, options)) {
      if (quick)
        options.calls = 3;
    } else if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      options.calls = std::max(2, std::atoi(argv[++i]));
      options.callsGiven = true;
    } else if (std::strcmp(argv[i], "--overhead") == 0) {
      options.overhead = true;
    } else {
      std::fprintf(stderr,
                   "usage: fpm-bench-coexec [--gpu] [--quick] [--overhead] "
                   "[--calls N] [--matmul N] [--stencil M N] "
                   "[--only matmul|stencil]\n");
      return 2;
    }
  }
  // The configurations choose devices and schedules per loop.
  clearOverrides();
  const PrivateProfiles profiles;
  GpuDevice device;
  if (onGpu) {
    if (!findGpuDevice(device)) {
      std::printf("fpm-bench-coexec: no GPU OpenCL device: skipped\n");
      return 77; // CTest's SKIP_RETURN_CODE
    }
    gpu = &device;
  } else if (!cpuDevice()) {
    std::printf("fpm-bench-coexec: no CPU OpenCL device (PoCL): skipped\n");
    return 77; // CTest's SKIP_RETURN_CODE
  }
  setDeviceUnits(nullptr);
  omp_set_num_threads(teamThreads());
  // Rounds of the overhead mode: each gives two ratios.
  if (options.overhead && !options.callsGiven && !options.quick)
    options.calls = 15;
  const auto run = options.overhead ? runOverhead : runWorkload;
  std::printf("fpm-bench-coexec: %d cores, %d %s after a warm-up%s\n\n",
              omp_get_num_procs(), options.calls,
              options.overhead ? "interleaved rounds of fpm's OpenCL path "
                                 "alone against native OpenCL"
                               : "calls per configuration",
              options.quick ? " (--quick)" : "");
  if (gpu)
    describeGpu(*gpu);
  else if (omp_get_num_procs() != 2)
    std::printf("(written for 2 cores: the co-execution configuration is a "
                "team of 2 threads)\n\n");
  bool ok = true;
  if (options.only.empty() || options.only == "matmul") {
    Matmul matmul(options.matmulSize);
    ok = run(matmul, options) && ok;
  }
  if (options.only.empty() || options.only == "stencil") {
    Stencil stencil(options.stencilRows, options.stencilColumns);
    ok = run(stencil, options) && ok;
  }
  if (!ok)
    std::fprintf(stderr, "fpm-bench-coexec: some results were wrong\n");
  return ok ? 0 : 1;
}
