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
//   fpm-bench-coexec [--quick] [--calls N] [--matmul N] [--stencil M N]
//                    [--only matmul|stencil]
//
// --quick runs small sizes (the CTest smoke test, bench-coexec-quick); it
// and the full run exit with status 1 when any result is wrong. This file is
// compiled with -O3 -march=native (see CMakeLists.txt); FPM_DEVICES and
// FPM_SCHEDULE are unset, FPM_OPENCL_CPU_UNITS is set per configuration.
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm.h"

#include "store/online_profiles.hpp" // flushProfiles()

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
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
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty())
    return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

/// Milliseconds with 3 or more significant digits.
std::string milliseconds(double seconds) {
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

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "fpm-bench-coexec: %s\n", message.c_str());
  std::exit(1);
}

/// FPM_OPENCL_CPU_UNITS for the next calls; null unsets it (the runtime's
/// default: the cores the CPU team leaves free). Set only between calls.
void setDeviceUnits(const char *units) {
  if (units)
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
  const size_t i = get_global_id(0);
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
void matmulRows(const float *a, const float *b, float *c, int n,
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

class Matmul final : public Workload {
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
  std::string check() const override {
    for (std::size_t e = 0; e < c_.size(); ++e) {
      const float want = reference_[e];
      if (!(std::fabs(c_[e] - want) <= 1e-4f * std::max(1.0f, std::fabs(want))))
        return "C[" + std::to_string(e / n_) + "][" + std::to_string(e % n_) +
               "] = " + std::to_string(c_[e]) + ", expected " +
               std::to_string(want);
    }
    return "";
  }

private:
  std::size_t elements() const { return static_cast<std::size_t>(n_) * n_; }

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
  const size_t i = get_global_id(0) + 1;
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
void diffuseRows(const float *in, float *out, int n, float dt, float inverseK2,
                 std::int64_t begin, std::int64_t end) {
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

class Stencil final : public Workload {
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
    args = {array(FPM_ARG_IN, in_.data(), length, 0, n_, 3 * std::int64_t{n_}),
            array(FPM_ARG_OUT, out_.data(), length, n_, n_, n_), scalar(n_),
            scalar(dt_), scalar(inverseK2_)};
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

private:
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

int cpuBody(std::int64_t begin, std::int64_t end, void *context) {
  const auto &body = *static_cast<BodyContext *>(context);
  body.cpuRows->fetch_add(end - begin, std::memory_order_relaxed);
  body.workload->runRows(body.first + begin, body.first + end);
  return 0;
}

/// One row of the table.
struct Row {
  std::string label;
  double median = 0;
  double first = std::nan("");
  double cpuShare = 0;
};

struct Options {
  bool quick = false;
  int calls = 7;
  int matmulSize = 1280;
  int stencilRows = 8192;
  int stencilColumns = 4096;
  std::string only; ///< "matmul" or "stencil"; empty: both
};

/// Everything measured for one workload, and whether all results were right.
class Bench {
public:
  Bench(Workload &workload, const Options &options)
      : workload_(workload), options_(options) {}

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
    const std::string problem = workload_.check();
    if (!problem.empty()) {
      std::fprintf(stderr, "fpm-bench-coexec: %s, %s: wrong result: %s\n",
                   workload_.name.c_str(), label.c_str(), problem.c_str());
      ok = false;
    }
  }

  Workload &workload() { return workload_; }
  const Options &options() const { return options_; }

  bool ok = true;

private:
  Workload &workload_;
  const Options &options_;
};

//===----------------------------------------------------------------------===//
// The oracle: a static split run by two threads at once
//===----------------------------------------------------------------------===//

/// Two threads that stay up across the sweep: one runs rows [0, split) on
/// OpenCL, the other rows [split, T) on the CPU, each with 1 OpenMP thread.
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
    omp_set_num_threads(1);
    Workload &workload = bench_.workload();
    const std::string name =
        "coexec." + workload.name + ".oracle." + (side == 0 ? "opencl" : "cpu");
    while (true) {
      start_.arrive_and_wait();
      if (stop_)
        return;
      std::atomic<std::int64_t> counted{0};
      fpm_loop loop{};
      loop.name = name.c_str();
      int status = FPM_OK;
      if (side == 0 && split_ > 0) {
        loop.devices = "gpu";
        BodyContext context{&workload, 0, &counted};
        const fpm_kernel kernel = workload.kernel();
        status =
            fpm_parallel_for_kernel(&loop, split_, cpuBody, &context, &kernel);
      } else if (side == 1 && split_ < workload.rows) {
        loop.devices = "cpu";
        BodyContext context{&workload, split_, &counted};
        status =
            fpm_parallel_for(&loop, workload.rows - split_, cpuBody, &context);
      }
      errors_[side] = status == FPM_OK ? "" : fpm_last_error();
      if (side == 0 && counted.load() > 0)
        errors_[side] = "the OpenCL part ran on the CPU";
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

Oracle findOracle(Bench &bench, SplitRunner &runner) {
  Workload &workload = bench.workload();
  const bool quick = bench.options().quick;
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

//===----------------------------------------------------------------------===//
// Native OpenCL: the same kernel, one upload, one NDRange, one download
//===----------------------------------------------------------------------===//

void check(cl_int status, const char *what) {
  if (status != CL_SUCCESS)
    die(std::string("native OpenCL: ") + what +
        " failed: " + std::to_string(status));
}

/// The first CPU OpenCL device (PoCL), or null.
cl_device_id cpuDevice() {
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

class NativeOpenCl {
public:
  explicit NativeOpenCl(Workload &workload) : workload_(workload) {
    cl_device_id root = cpuDevice();
    if (!root)
      die("native OpenCL: no CPU device");
    const cl_device_partition_property byCounts[] = {
        CL_DEVICE_PARTITION_BY_COUNTS, 1,
        CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_uint made = 0;
    check(clCreateSubDevices(root, byCounts, 1, &device_, &made),
          "clCreateSubDevices");
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
  Bench bench(workload, options);
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
  fpm("cpu only, 1 thread (T_cpu)", "cpu1", "cpu", nullptr, 1, nullptr);
  fpm("opencl only, 1 CU (T_ocl)", "ocl1", "gpu", nullptr, 2, "1");
  fpm("cpu only, 2 threads", "cpu2", "cpu", nullptr, 2, nullptr);
  fpm("opencl only, 2 CUs", "ocl2", "gpu", nullptr, 2, nullptr);
  auto other = [&](std::string label, Config::Kind kind) {
    Config config;
    config.label = std::move(label);
    config.kind = kind;
    configs.push_back(std::move(config));
  };
  other("native OpenCL, 1 CU, buffers kept", Config::NativeKept);
  other("native OpenCL, 1 CU, buffers per call", Config::NativePerCall);
  const std::size_t firstSchedule = configs.size();
  // The co-execution configuration: all devices, a team of 2; the runtime
  // gives PoCL the core the team leaves free.
  for (const char *schedule : {"equal", "cpm", "wdah", "gss", "fss", "tss",
                               "gss, 80", "fss, 50", "auto"}) {
    std::string tag = schedule;
    std::replace(tag.begin(), tag.end(), ' ', '_');
    fpm(std::string("fpm ") + schedule, tag, "all", schedule, 2, nullptr);
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
      omp_set_num_threads(2);
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
  const double wholeMachine = std::min(rows[2].median, rows[3].median);
  const double nativeKept = rows[4].median, nativePerCall = rows[5].median;
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
  std::printf("fpm over native OpenCL (1 CU): %+.1f%% against buffers kept, "
              "%+.1f%% against buffers per call\n",
              (openClAlone / nativeKept - 1) * 100,
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
  const CpuUse after = CpuUse::now();
  const double wall = since(started);
  const double others = std::max(
      (after.machine - before.machine) - (after.self - before.self), 0.0);
  std::printf("(%.1f s for this workload; other processes used %.0f%% of "
              "the %d cores meanwhile%s)\n\n",
              wall, 100 * others / (wall * omp_get_num_procs()),
              omp_get_num_procs(),
              others > 0.05 * wall * omp_get_num_procs()
                  ? ": the machine was not quiet, the times are suspect"
                  : "");
  std::fflush(stdout);
  return bench.ok;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      options.quick = true;
      options.calls = 3;
      options.matmulSize = 128;
      options.stencilRows = 256;
      options.stencilColumns = 256;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "matmul") == 0 ||
                std::strcmp(argv[i + 1], "stencil") == 0)) {
      options.only = argv[++i];
    } else if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      options.calls = std::max(2, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--matmul") == 0 && i + 1 < argc) {
      options.matmulSize = std::max(64, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--stencil") == 0 && i + 2 < argc) {
      options.stencilRows = std::max(64, std::atoi(argv[++i]));
      options.stencilColumns = std::max(3, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: fpm-bench-coexec [--quick] [--calls N] "
                   "[--matmul N] [--stencil M N] [--only matmul|stencil]\n");
      return 2;
    }
  }
  // The configurations choose devices and schedules per loop.
  for (const char *variable : {"FPM_DEVICES", "FPM_SCHEDULE"})
    if (std::getenv(variable)) {
      std::fprintf(stderr, "fpm-bench-coexec: ignoring %s\n", variable);
      unsetenv(variable);
    }
  // Every run learns from scratch: profiles stored by an earlier run would
  // give the first calls models they are meant to measure without.
  std::string profiles =
      (std::filesystem::temp_directory_path() / "fpm-bench-coexec-XXXXXX")
          .string();
  if (!::mkdtemp(profiles.data()))
    die("cannot create a temporary profile folder");
  setenv("FPM_PROFILE_DIR", profiles.c_str(), 1);
  struct RemoveProfiles {
    std::string path;
    ~RemoveProfiles() {
      fpm::flushProfiles(); // so that nothing is left to write at exit
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } removeProfiles{profiles};
  if (!cpuDevice()) {
    std::printf("fpm-bench-coexec: no CPU OpenCL device (PoCL): skipped\n");
    return 77; // CTest's SKIP_RETURN_CODE
  }
  setDeviceUnits(nullptr);
  omp_set_num_threads(2);
  std::printf("fpm-bench-coexec: %d cores, %d calls per configuration after "
              "a warm-up%s\n\n",
              omp_get_num_procs(), options.calls,
              options.quick ? " (--quick)" : "");
  if (omp_get_num_procs() != 2)
    std::printf("(written for 2 cores: the co-execution configuration is a "
                "team of 2 threads)\n\n");
  bool ok = true;
  if (options.only.empty() || options.only == "matmul") {
    Matmul matmul(options.matmulSize);
    ok = runWorkload(matmul, options) && ok;
  }
  if (options.only.empty() || options.only == "stencil") {
    Stencil stencil(options.stencilRows, options.stencilColumns);
    ok = runWorkload(stencil, options) && ok;
  }
  if (!ok)
    std::fprintf(stderr, "fpm-bench-coexec: some results were wrong\n");
  return ok ? 0 : 1;
}
