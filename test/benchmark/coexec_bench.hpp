//===- benchmark/coexec_bench.hpp - Shared benchmark parts ------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the co-execution benchmarks (fpm-bench-coexec, fpm-bench-repeated,
// fpm-bench-offload) share: the workloads (matmul rows, a Perona-Malik stencil
// sweep; each with its C++ body, its OpenCL kernel and an exact check), one
// loop call through fpm with its output poisoned before and checked after, the
// oracle (the best static CPU/OpenCL split, swept; coexec.cpp's header
// says how), a private profile store, and how busy the machine was; and,
// for --gpu, the GPU the OpenCL side runs on (GpuDevice).
// Header-only: each benchmark is one translation unit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fpm/fpm.h"

#include "store/online_profiles.hpp" // flushProfiles()

// The runtime's OpenCL device list and ids, for --gpu. Its header targets
// OpenCL 3.0; the native host code here calls OpenCL 1.2's API.
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "device/opencl/opencl.hpp"
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fpm::bench {

/// The program's name, for messages.
inline const char *program = "fpm-bench";

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline double median(std::vector<double> values) {
  if (values.empty())
    return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

/// Milliseconds with 3 or more significant digits.
inline std::string milliseconds(double seconds) {
  const double ms = seconds * 1e3;
  char text[32];
  std::snprintf(text, sizeof text,
                ms >= 10  ? "%.1f"
                : ms >= 1 ? "%.2f"
                          : "%.3f",
                ms);
  return text;
}

/// CPU seconds the whole machine and this process have used so far: their
/// difference over a run is what other processes took (Linux).
struct CpuUse {
  double machine = 0, self = 0;

  static CpuUse now() {
    CpuUse use;
    std::FILE *stat = std::fopen("/proc/stat", "r");
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, wait = 0,
                       irq = 0, softirq = 0, steal = 0;
    if (stat &&
        std::fscanf(stat, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user,
                    &nice, &system, &idle, &wait, &irq, &softirq, &steal) == 8)
      use.machine = static_cast<double>(user + nice + system + irq + softirq) /
                    static_cast<double>(sysconf(_SC_CLK_TCK));
    if (stat)
      std::fclose(stat);
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    use.self =
        static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
        static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) *
            1e-6;
    return use;
  }
};

[[noreturn]] inline void die(const std::string &message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  std::exit(1);
}

/// --gpu: the OpenCL device every OpenCL side runs on, whole (no
/// sub-device, no FPM_OPENCL_CPU_UNITS), beside a CPU team of all cores.
struct GpuDevice {
  std::string id;       ///< the runtime's PE id ("opencl0"), for devices
  std::string name;     ///< CL_DEVICE_NAME
  std::string platform; ///< CL_PLATFORM_NAME
  cl_device_id device = nullptr; ///< the root device, for native host code
  /// The runtime lists no other OpenCL device: its "gpu" is this one alone.
  bool alone = false;
  int team = 0;    ///< the co-execution team: omp_get_num_procs() threads
  std::string all; ///< "cpu, <id>": the co-execution's devices
};

/// Set by main under --gpu; null: the PoCL configuration (1-CU sub-device,
/// a team of 2).
inline const GpuDevice *gpu = nullptr;

/// The devices of an OpenCL-only call: the GPU's id under --gpu, else "gpu".
inline const char *openClDevices() { return gpu ? gpu->id.c_str() : "gpu"; }
/// The co-execution team: all cores under --gpu, else 2.
inline int teamThreads() { return gpu ? gpu->team : 2; }
/// The CPU PE of the co-execution alone (T_cpu): the team but the thread
/// that feeds the device (the runtime takes one per device from the team).
inline int cpuPeThreads() { return gpu ? gpu->team - 1 : 1; }

/// "1 thread", "15 threads".
inline std::string threadCount(int threads) {
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

/// The first device of the type FPM_BENCH_DEVICE_TYPE names ("cpu", for
/// testing --gpu on PoCL; default "gpu": CL_DEVICE_TYPE_GPU) in the
/// runtime's device list (platforms, then devices, in order); false if
/// there is none.
inline bool findGpuDevice(GpuDevice &found) {
  const char *type = std::getenv("FPM_BENCH_DEVICE_TYPE");
  const cl_device_type wanted = type && std::string_view(type) == "cpu"
                                    ? CL_DEVICE_TYPE_CPU
                                    : CL_DEVICE_TYPE_GPU;
  const std::vector<opencl::DeviceInfo> &devices = opencl::devices();
  for (const opencl::DeviceInfo &info : devices) {
    cl_device_type kind = 0;
    if (clGetDeviceInfo(info.device, CL_DEVICE_TYPE, sizeof kind, &kind,
                        nullptr) != CL_SUCCESS ||
        !(kind & wanted))
      continue;
    found.id = info.id;
    found.name = info.name;
    found.platform = info.platformName;
    found.device = info.device;
    found.alone = devices.size() == 1;
    found.team = std::max(omp_get_num_procs(), 2);
    found.all = "cpu, " + info.id;
    return true;
  }
  return false;
}

/// What main prints under --gpu: the device, the team, the other devices.
inline void describeGpu(const GpuDevice &device) {
  std::printf("GPU: %s = %s (platform %s), whole device%s\n", device.id.c_str(),
              device.name.c_str(), device.platform.c_str(),
              std::getenv("FPM_BENCH_DEVICE_TYPE")
                  ? " (FPM_BENCH_DEVICE_TYPE: a testing stand-in)"
                  : "");
  std::printf("co-execution: devices \"%s\", a team of %s (%d run%s the C++ "
              "body, 1 feeds the GPU); T_cpu: devices \"cpu\", %s; T_ocl: "
              "devices \"%s\"\n",
              device.all.c_str(), threadCount(device.team).c_str(),
              device.team - 1, device.team == 2 ? "s" : "",
              threadCount(device.team - 1).c_str(), device.id.c_str());
  for (const opencl::DeviceInfo &info : opencl::devices())
    if (info.id != device.id)
      std::printf("another OpenCL device, not used: %s = %s (platform %s)\n",
                  info.id.c_str(), info.name.c_str(),
                  info.platformName.c_str());
  std::printf("\n");
}

/// FPM_OPENCL_CPU_UNITS for the next calls; null unsets it (the runtime's
/// default: the cores the CPU team leaves free). Set only between calls;
/// never under --gpu.
inline void setDeviceUnits(const char *units) {
  if (units && !gpu)
    setenv("FPM_OPENCL_CPU_UNITS", units, 1);
  else
    unsetenv("FPM_OPENCL_CPU_UNITS");
}

/// Deterministic inputs in [0, 1).
class Random {
public:
  float next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(state_ >> 40) * 0x1p-24f;
  }

private:
  std::uint64_t state_ = 42;
};

constexpr float Poison = std::numeric_limits<float>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Workloads
//===----------------------------------------------------------------------===//

/// One loop: its CPU body over rows, its kernel and arguments, and a check
/// of its output against a serial reference.
class Workload {
public:
  virtual ~Workload() = default;
  /// Runs logical iterations [begin, end) on the calling thread.
  virtual void runRows(std::int64_t begin, std::int64_t end) = 0;
  /// Fills the output with NaN.
  virtual void poison() = 0;
  /// "" when the output matches the reference, else what differs.
  virtual std::string check() const = 0;
  /// The same, bit for bit: for code that evaluates the reference's float
  /// operations in the same order without contraction.
  virtual std::string checkExact() const { return check(); }
  /// The oracle's parts, each run by a thread of its own with 1 OpenMP
  /// thread (SplitRunner): rows [0, split) on OpenCL alone, and rows
  /// [split, rows) on the CPU alone, as loop `name`; "" when it ran as
  /// asked, else what went wrong. By default the workload's kernel and its
  /// C++ body, through fpm (defined below).
  virtual std::string runOpenClPart(const std::string &name,
                                    std::int64_t split);
  virtual std::string runCpuPart(const std::string &name, std::int64_t split);

  fpm_kernel kernel() const {
    fpm_kernel description{};
    description.source = source;
    description.name = kernelName;
    description.options = options;
    description.args = args.data();
    description.arg_count = static_cast<int>(args.size());
    return description;
  }

  std::string name;  ///< short, part of the loop names
  std::string title; ///< the table's heading
  std::int64_t rows = 0;
  const char *source = nullptr;
  const char *kernelName = nullptr;
  const char *options = nullptr;
  std::vector<fpm_arg> args;

protected:
  static fpm_arg array(int kind, float *data, std::int64_t length,
                       std::int64_t offset, std::int64_t stride,
                       std::int64_t count) {
    fpm_arg arg{};
    arg.kind = kind;
    arg.data = data;
    arg.size = sizeof(float);
    arg.length = length;
    arg.offset = offset;
    arg.stride = stride;
    arg.count = count;
    return arg;
  }
  template <class T> static fpm_arg scalar(T &value) {
    fpm_arg arg{};
    arg.kind = FPM_ARG_SCALAR;
    arg.data = &value;
    arg.size = sizeof(T);
    return arg;
  }
};

const char *const MatmulSource = R"CL(
__kernel void matmul_rows(__global const float *a, __global const float *b,
                          __global float *c, int n) {
  // A 32-bit row index: as size_t i = get_global_id(0), PoCL ran these
  // rows 1.45x slower at a global offset other than 0 (README).
  const size_t i = (uint)get_global_id(0);
  __global const float *ai = a + i * n;
  __global float *ci = c + i * n;
  for (int j = 0; j < n; ++j)
    ci[j] = 0.0f;
  for (int k = 0; k < n; ++k) {
    const float aik = ai[k];
    __global const float *bk = b + (size_t)k * n;
    for (int j = 0; j < n; ++j)
      ci[j] += aik * bk[j];
  }
}
)CL";

/// Rows [begin, end) of C = A * B, ikj: each row of C is a sum of rows of B.
inline void matmulRows(const float *a, const float *b, float *c, int n,
                       std::int64_t begin, std::int64_t end) {
  const auto size = static_cast<std::size_t>(n);
  for (auto i = static_cast<std::size_t>(begin);
       i < static_cast<std::size_t>(end); ++i) {
    const float *ai = a + i * size;
    float *ci = c + i * size;
    for (std::size_t j = 0; j < size; ++j)
      ci[j] = 0.0f;
    for (std::size_t k = 0; k < size; ++k) {
      const float aik = ai[k];
      const float *bk = b + k * size;
      for (std::size_t j = 0; j < size; ++j)
        ci[j] += aik * bk[j];
    }
  }
}

class Matmul : public Workload {
public:
  explicit Matmul(int size)
      : n_(size), a_(elements()), b_(elements()), c_(elements()),
        reference_(elements()) {
    name = "matmul";
    title = "matmul rows: C = A * B, " + std::to_string(n_) + " x " +
            std::to_string(n_) + " floats (" + std::to_string(n_) +
            " iterations)";
    rows = n_;
    source = MatmulSource;
    kernelName = "matmul_rows";
    Random random;
    for (float &x : a_)
      x = random.next() - 0.5f;
    for (float &x : b_)
      x = random.next() - 0.5f;
    matmulRows(a_.data(), b_.data(), reference_.data(), n_, 0, n_);
    const auto length = static_cast<std::int64_t>(elements());
    args = {array(FPM_ARG_IN, a_.data(), length, 0, n_, n_),
            array(FPM_ARG_IN, b_.data(), length, 0, 0, 0),
            array(FPM_ARG_OUT, c_.data(), length, 0, n_, n_), scalar(n_)};
  }

  void runRows(std::int64_t begin, std::int64_t end) override {
    matmulRows(a_.data(), b_.data(), c_.data(), n_, begin, end);
  }
  void poison() override { std::fill(c_.begin(), c_.end(), Poison); }
  std::string check() const override { return compare(1e-4f); }
  std::string checkExact() const override { return compare(0); }

  /// The matrices and their order, for the same loop written another way.
  const float *a() const { return a_.data(); }
  const float *b() const { return b_.data(); }
  float *c() { return c_.data(); }
  int size() const { return n_; }

protected:
  std::size_t elements() const { return static_cast<std::size_t>(n_) * n_; }

  /// "" when every element is within `tolerance` relative to the
  /// reference (0: equal), else the first that is not.
  std::string compare(float tolerance) const {
    for (std::size_t e = 0; e < c_.size(); ++e) {
      const float want = reference_[e];
      if (!(std::fabs(c_[e] - want) <=
            tolerance * std::max(1.0f, std::fabs(want))))
        return "C[" + std::to_string(e / n_) + "][" + std::to_string(e % n_) +
               "] = " + std::to_string(c_[e]) + ", expected " +
               std::to_string(want);
    }
    return "";
  }

  int n_;
  std::vector<float> a_, b_, c_, reference_;
};

// Perona-Malik diffusion on 9 points: the flux from each neighbour is
// d / (1 + d^2 / K^2), the diagonal ones weighted 1/2.
const char *const StencilSource = R"CL(
#pragma OPENCL FP_CONTRACT OFF
float flux(float d, float inverseK2) { return d / (1.0f + d * d * inverseK2); }

__kernel void diffuse_rows(__global const float *in, __global float *out,
                           int n, float dt, float inverseK2) {
  const size_t i = (uint)get_global_id(0) + 1; // 32 bits, as matmul_rows
  __global const float *up = in + (i - 1) * n;
  __global const float *row = in + i * n;
  __global const float *down = in + (i + 1) * n;
  __global float *o = out + i * n;
  o[0] = row[0];
  for (int j = 1; j < n - 1; ++j) {
    const float c = row[j];
    const float side = flux(up[j] - c, inverseK2) +
                       flux(down[j] - c, inverseK2) +
                       flux(row[j - 1] - c, inverseK2) +
                       flux(row[j + 1] - c, inverseK2);
    const float diagonal = flux(up[j - 1] - c, inverseK2) +
                           flux(up[j + 1] - c, inverseK2) +
                           flux(down[j - 1] - c, inverseK2) +
                           flux(down[j + 1] - c, inverseK2);
    o[j] = c + dt * (side + 0.5f * diagonal);
  }
  o[n - 1] = row[n - 1];
}
)CL";

inline float flux(float d, float inverseK2) {
#pragma clang fp contract(off)
  return d / (1.0f + d * d * inverseK2);
}

/// Rows begin + 1 .. end of `out` from `in` ((m + 2) x n), as the kernel:
/// the same float operations in the same order, none contracted.
inline void diffuseRows(const float *in, float *out, int n, float dt,
                        float inverseK2, std::int64_t begin, std::int64_t end) {
#pragma clang fp contract(off)
  const auto size = static_cast<std::size_t>(n);
  for (auto i = static_cast<std::size_t>(begin) + 1;
       i <= static_cast<std::size_t>(end); ++i) {
    const float *up = in + (i - 1) * size;
    const float *row = in + i * size;
    const float *down = in + (i + 1) * size;
    float *o = out + i * size;
    o[0] = row[0];
    for (std::size_t j = 1; j + 1 < size; ++j) {
      const float c = row[j];
      const float side =
          flux(up[j] - c, inverseK2) + flux(down[j] - c, inverseK2) +
          flux(row[j - 1] - c, inverseK2) + flux(row[j + 1] - c, inverseK2);
      const float diagonal =
          flux(up[j - 1] - c, inverseK2) + flux(up[j + 1] - c, inverseK2) +
          flux(down[j - 1] - c, inverseK2) + flux(down[j + 1] - c, inverseK2);
      o[j] = c + dt * (side + 0.5f * diagonal);
    }
    o[size - 1] = row[size - 1];
  }
}

class Stencil : public Workload {
public:
  Stencil(int interiorRows, int columns)
      : m_(interiorRows), n_(columns), in_(elements()), out_(elements()),
        reference_(elements()) {
    name = "stencil";
    title = "stencil: one 9-point Perona-Malik sweep, (" + std::to_string(m_) +
            " + 2) x " + std::to_string(n_) + " floats (" + std::to_string(m_) +
            " iterations)";
    rows = m_;
    source = StencilSource;
    kernelName = "diffuse_rows";
    // OpenCL C may divide within 2.5 ulp; C++ rounds correctly.
    options = "-cl-fp32-correctly-rounded-divide-sqrt";
    Random random;
    for (float &x : in_)
      x = random.next();
    diffuseRows(in_.data(), reference_.data(), n_, dt_, inverseK2_, 0, m_);
    const auto length = static_cast<std::int64_t>(elements());
    // `out` as far as the loop writes it, rows 0 .. m (the buffer the
    // pragma's out(out[i*n : n]) gives, so that fpm-bench-offload's two
    // kernels get the same pooled device buffers).
    args = {array(FPM_ARG_IN, in_.data(), length, 0, n_, 3 * std::int64_t{n_}),
            array(FPM_ARG_OUT, out_.data(), length - n_, n_, n_, n_),
            scalar(n_), scalar(dt_), scalar(inverseK2_)};
  }

  void runRows(std::int64_t begin, std::int64_t end) override {
    diffuseRows(in_.data(), out_.data(), n_, dt_, inverseK2_, begin, end);
  }
  void poison() override { std::fill(out_.begin(), out_.end(), Poison); }
  std::string check() const override {
    // Rows 1 .. m; the boundary rows are nobody's.
    const auto n = static_cast<std::size_t>(n_);
    for (std::size_t e = n; e < (static_cast<std::size_t>(m_) + 1) * n; ++e)
      if (out_[e] != reference_[e]) // exact; NaN differs from everything
        return "out[" + std::to_string(e / n) + "][" + std::to_string(e % n) +
               "] = " + std::to_string(out_[e]) + ", expected " +
               std::to_string(reference_[e]);
    return "";
  }

protected:
  std::size_t elements() const {
    return (static_cast<std::size_t>(m_) + 2) * static_cast<std::size_t>(n_);
  }

  int m_, n_;
  float dt_ = 0.1f, inverseK2_ = 100.0f; // K = 0.1; stable: dt * 6 < 1
  std::vector<float> in_, out_, reference_;
};

//===----------------------------------------------------------------------===//
// Running a loop through fpm
//===----------------------------------------------------------------------===//

/// What the CPU body needs: the workload, the first row of this part, and
/// the count of rows the CPU ran.
struct BodyContext {
  Workload *workload;
  std::int64_t first;
  std::atomic<std::int64_t> *cpuRows;
};

inline int cpuBody(std::int64_t begin, std::int64_t end, void *context) {
  const auto &body = *static_cast<BodyContext *>(context);
  body.cpuRows->fetch_add(end - begin, std::memory_order_relaxed);
  body.workload->runRows(body.first + begin, body.first + end);
  return 0;
}

inline std::string Workload::runOpenClPart(const std::string &name,
                                           std::int64_t split) {
  std::atomic<std::int64_t> counted{0};
  fpm_loop loop{};
  loop.name = name.c_str();
  loop.devices = openClDevices();
  BodyContext context{this, 0, &counted};
  const fpm_kernel description = kernel();
  if (fpm_parallel_for_kernel(&loop, split, cpuBody, &context, &description) !=
      FPM_OK)
    return fpm_last_error();
  return counted.load() > 0 ? "the OpenCL part ran on the CPU" : "";
}

inline std::string Workload::runCpuPart(const std::string &name,
                                        std::int64_t split) {
  std::atomic<std::int64_t> counted{0};
  fpm_loop loop{};
  loop.name = name.c_str();
  loop.devices = "cpu";
  BodyContext context{this, split, &counted};
  if (fpm_parallel_for(&loop, rows - split, cpuBody, &context) != FPM_OK)
    return fpm_last_error();
  return "";
}

/// Everything measured for one workload, and whether all results were right.
class Bench {
public:
  /// `quick`: the smoke test's sizes (a coarser oracle sweep); `exact`:
  /// verify() wants the reference bit for bit.
  Bench(Workload &workload, bool quick, bool exact = false)
      : workload_(workload), quick_(quick), exact_(exact) {}

  /// One call of the loop through fpm, its output poisoned before and
  /// checked after; adds the rows the CPU body ran to `cpuRows`.
  double fpmCall(const std::string &label, const std::string &name,
                 const char *devices, const char *schedule,
                 std::int64_t &cpuRows) {
    fpm_loop loop{};
    loop.name = name.c_str();
    loop.devices = devices;
    loop.schedule = schedule;
    std::atomic<std::int64_t> counted{0};
    BodyContext context{&workload_, 0, &counted};
    const fpm_kernel kernel = workload_.kernel();
    workload_.poison();
    const Clock::time_point start = Clock::now();
    const int status = fpm_parallel_for_kernel(&loop, workload_.rows, cpuBody,
                                               &context, &kernel);
    const double seconds = since(start);
    if (status != FPM_OK)
      die(label + ": " + fpm_last_error());
    verify(label);
    cpuRows += counted.load();
    return seconds;
  }

  std::string loopName(const std::string &tag) const {
    return "coexec." + workload_.name + "." + tag;
  }

  void verify(const std::string &label) {
    const std::string problem =
        exact_ ? workload_.checkExact() : workload_.check();
    if (!problem.empty()) {
      std::fprintf(stderr, "%s: %s, %s: wrong result: %s\n", program,
                   workload_.name.c_str(), label.c_str(), problem.c_str());
      ok = false;
    }
  }

  Workload &workload() { return workload_; }
  bool quick() const { return quick_; }

  bool ok = true;

private:
  Workload &workload_;
  bool quick_, exact_;
};

//===----------------------------------------------------------------------===//
// The oracle: a static split run by two threads at once
//===----------------------------------------------------------------------===//

/// Two threads that stay up across the sweep: one runs rows [0, split) on
/// OpenCL, the other rows [split, T) on the CPU, each with 1 OpenMP thread
/// (under --gpu the CPU side has cpuPeThreads(); the workload's
/// runOpenClPart and runCpuPart).
class SplitRunner {
public:
  explicit SplitRunner(Bench &bench) : bench_(bench) {
    for (int side = 0; side < 2; ++side)
      threads_[side] = std::thread([this, side] { work(side); });
  }
  ~SplitRunner() {
    stop_ = true;
    start_.arrive_and_wait();
    for (std::thread &thread : threads_)
      thread.join();
  }

  /// Seconds from the start of both parts to the end of the later.
  double run(std::int64_t split) {
    split_ = split;
    bench_.workload().poison();
    const Clock::time_point begin = Clock::now();
    start_.arrive_and_wait();
    done_.arrive_and_wait();
    for (const std::string &error : errors_)
      if (!error.empty())
        die("oracle: " + error);
    return std::chrono::duration<double>(std::max(ends_[0], ends_[1]) - begin)
        .count();
  }

private:
  void work(int side) {
    omp_set_num_threads(side == 0 ? 1 : cpuPeThreads());
    Workload &workload = bench_.workload();
    const std::string name =
        "coexec." + workload.name + ".oracle." + (side == 0 ? "opencl" : "cpu");
    while (true) {
      start_.arrive_and_wait();
      if (stop_)
        return;
      errors_[side].clear();
      if (side == 0 && split_ > 0)
        errors_[side] = workload.runOpenClPart(name, split_);
      else if (side == 1 && split_ < workload.rows)
        errors_[side] = workload.runCpuPart(name, split_);
      ends_[side] = Clock::now();
      done_.arrive_and_wait();
    }
  }

  Bench &bench_;
  std::barrier<> start_{3}, done_{3};
  std::int64_t split_ = 0;
  bool stop_ = false;
  Clock::time_point ends_[2];
  std::string errors_[2];
  std::thread threads_[2];
};

struct Oracle {
  std::vector<std::int64_t> candidates; ///< the sweep's 3 best splits
  int points = 0;
  std::map<std::int64_t, double> sweep; ///< OpenCL rows -> median seconds
};

inline Oracle findOracle(Bench &bench, SplitRunner &runner) {
  Workload &workload = bench.workload();
  const bool quick = bench.quick();
  const int runs = 3;
  setDeviceUnits("1");
  std::map<std::int64_t, double> measured; // OpenCL rows -> median seconds
  std::set<std::int64_t> groupTails;       // work-group remainders compiled
  auto measure = [&](double share) {
    share = std::clamp(share, 0.0, 1.0);
    const auto split = std::min<std::int64_t>(
        workload.rows,
        std::llround(share * static_cast<double>(workload.rows) / 8.0) * 8);
    if (measured.contains(split))
      return;
    // PoCL compiles the kernel once per work-group size: the last chunk's
    // remainder is new for some splits.
    if (groupTails.insert(split % 64).second)
      runner.run(split);
    std::vector<double> times;
    for (int run = 0; run < runs; ++run)
      times.push_back(runner.run(split));
    bench.verify("oracle split " + std::to_string(split));
    measured[split] = median(times);
  };
  auto best = [&] {
    return std::min_element(
        measured.begin(), measured.end(),
        [](const auto &x, const auto &y) { return x.second < y.second; });
  };
  const double coarse = quick ? 0.25 : 0.05, fine = quick ? 0.05 : 0.01;
  for (double share = 0; share < 1 + 1e-9; share += coarse)
    measure(share);
  const double center =
      static_cast<double>(best()->first) / static_cast<double>(workload.rows);
  for (double step = -coarse + fine; step < coarse - 1e-9; step += fine)
    measure(center + step);
  setDeviceUnits(nullptr);
  Oracle oracle;
  std::vector<std::pair<double, std::int64_t>> ranked;
  for (const auto &[split, seconds] : measured)
    ranked.emplace_back(seconds, split);
  std::sort(ranked.begin(), ranked.end());
  for (std::size_t c = 0; c < std::min<std::size_t>(3, ranked.size()); ++c)
    oracle.candidates.push_back(ranked[c].second);
  oracle.points = static_cast<int>(measured.size());
  oracle.sweep = measured;
  return oracle;
}

/// The workloads both CPU/OpenCL benchmarks (fpm-bench-coexec and
/// fpm-bench-offload) run, and how big.
struct WorkloadOptions {
  bool quick = false;
  int matmulSize = 1280;
  int stencilRows = 8192;
  int stencilColumns = 4096;
  /// "matmul" or "stencil" (fpm-bench-offload: "columns", "blocks" or
  /// "rowptr" or "masked" too); empty: every one.
  std::string only;
};

/// Whether the command line has --gpu, and then its default sizes, which
/// --quick and the sizes given override wherever they stand: seconds on an
/// H100/H200 with the whole sweep (their row-per-item matmul takes 115 ms
/// per launch at 1024 rows).
inline bool takeGpuDefaults(int argc, char **argv, WorkloadOptions &options) {
  const bool onGpu = std::any_of(argv + 1, argv + argc, [](const char *arg) {
    return std::string_view(arg) == "--gpu";
  });
  if (onGpu) {
    options.matmulSize = 1024;
    options.stencilRows = 4096;
    options.stencilColumns = 4096;
  }
  return onGpu;
}

/// Reads the workload option at argv[i] (`--quick`, `--only W`, `--matmul
/// N`, `--stencil M N`), moving i past its values; false if it is none.
inline bool parseWorkloadOption(int argc, char **argv, int &i,
                                WorkloadOptions &options) {
  const std::string_view arg = argv[i];
  const bool hasValue = i + 1 < argc;
  if (arg == "--quick") {
    options.quick = true;
    options.matmulSize = 128;
    options.stencilRows = 256;
    options.stencilColumns = 256;
  } else if (arg == "--only" && hasValue &&
             (std::string_view(argv[i + 1]) == "matmul" ||
              std::string_view(argv[i + 1]) == "stencil" ||
              std::string_view(argv[i + 1]) == "columns" ||
              std::string_view(argv[i + 1]) == "blocks" ||
              std::string_view(argv[i + 1]) == "rowptr" ||
              std::string_view(argv[i + 1]) == "masked")) {
    options.only = argv[++i];
  } else if (arg == "--matmul" && hasValue) {
    options.matmulSize = std::max(64, std::atoi(argv[++i]));
  } else if (arg == "--stencil" && i + 2 < argc) {
    options.stencilRows = std::max(64, std::atoi(argv[++i]));
    options.stencilColumns = std::max(3, std::atoi(argv[++i]));
  } else {
    return false;
  }
  return true;
}

/// Unsets FPM_DEVICES and FPM_SCHEDULE, which would override the devices
/// and schedules the configurations choose, saying so.
inline void clearOverrides() {
  for (const char *variable : {"FPM_DEVICES", "FPM_SCHEDULE"})
    if (std::getenv(variable)) {
      std::fprintf(stderr, "%s: ignoring %s\n", program, variable);
      unsetenv(variable);
    }
}

/// The first CPU OpenCL device (PoCL), or null.
inline cl_device_id cpuDevice() {
  cl_uint platforms = 0;
  if (clGetPlatformIDs(0, nullptr, &platforms) != CL_SUCCESS)
    return nullptr;
  std::vector<cl_platform_id> ids(platforms);
  if (clGetPlatformIDs(platforms, ids.data(), nullptr) != CL_SUCCESS)
    return nullptr;
  for (cl_platform_id platform : ids) {
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, nullptr) ==
        CL_SUCCESS)
      return device;
  }
  return nullptr;
}

/// A private FPM_PROFILE_DIR for the life of the object: every run learns
/// from scratch, as profiles stored by an earlier run would give the first
/// calls models they are meant to measure without.
class PrivateProfiles {
public:
  PrivateProfiles() {
    path_ = (std::filesystem::temp_directory_path() /
             (std::string(program) + "-XXXXXX"))
                .string();
    if (!::mkdtemp(path_.data()))
      die("cannot create a temporary profile folder");
    setenv("FPM_PROFILE_DIR", path_.c_str(), 1);
  }
  ~PrivateProfiles() {
    fpm::flushProfiles(); // so that nothing is left to write at exit
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  PrivateProfiles(const PrivateProfiles &) = delete;
  PrivateProfiles &operator=(const PrivateProfiles &) = delete;

private:
  std::string path_;
};

/// "(W s for this workload; other processes used P% of the C cores
/// meanwhile)", flagged when above 5%: the times are then suspect.
inline std::string machineNote(const CpuUse &before,
                               Clock::time_point started) {
  const CpuUse after = CpuUse::now();
  const double wall = since(started);
  const double others = std::max(
      (after.machine - before.machine) - (after.self - before.self), 0.0);
  const int cores = omp_get_num_procs();
  char text[200];
  std::snprintf(text, sizeof text,
                "(%.1f s for this workload; other processes used %.0f%% of "
                "the %d cores meanwhile%s)",
                wall, 100 * others / (wall * cores), cores,
                others > 0.05 * wall * cores
                    ? ": the machine was not quiet, the times are suspect"
                    : "");
  return text;
}

} // namespace fpm::bench
