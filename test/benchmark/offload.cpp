//===- benchmark/offload.cpp - Generated against hand-written kernels ----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What a `#pragma fpm partition` loop costs when fpm-rewrite generates its
// OpenCL C kernel, on a 2-core machine whose only OpenCL device is PoCL (a
// CPU device). The two loops of fpm-bench-coexec (coexec_bench.hpp: matmul
// rows, C = A * B in ikj order, and one 9-point Perona-Malik sweep) are
// written as pragma'd loops in offload_loops.cpp, which the build rewrites
// with fpm_rewrite_sources; each is measured beside the hand-written kernel
// and C++ body of coexec_bench.hpp, on the same arrays:
//
//   generated kernel    the pragma'd copy with devices(gpu), on PoCL
//   hand-written kernel coexec_bench.hpp's kernel through
//                       fpm_parallel_for_kernel, devices "gpu", on PoCL
//   generated CPU body  the pragma'd copy with devices(cpu), 1 thread (T_cpu)
//   hand-written body   coexec_bench.hpp's C++ body through fpm_parallel_for,
//                       devices "cpu", 1 thread
//   co-executed         the pragma'd copy with the default devices (all) and
//                       schedule (auto): a team of 2 OpenMP threads, one
//                       running the CPU body, one feeding PoCL
//   best static split   the oracle of coexec_bench.hpp over the pragma'd
//                       copies: devices(gpu) runs rows [0, r*T), devices(cpu)
//                       the rest, at once on two threads; r swept, its 3 best
//                       splits measured in the rounds, the best median kept
//
// PoCL gets one compute unit throughout (FPM_OPENCL_CPU_UNITS=1, set before
// the first call): what the runtime gives it by default beside a team of 2
// on 2 cores. Every configuration is called once to warm up (program
// builds, PoCL's compiles per work-group size) under the loop name of its
// timed calls: a pragma fixes its loop's name, so unlike fpm-bench-coexec
// the warm-up cannot have a name of its own, and the hand-written loops are
// treated alike. A loop's first call has no measured speeds and runs GSS's
// decreasing chunks; the later ones split by the speeds measured (one PE
// alone: its whole range, in a few chunks so that copies overlap kernels),
// and the co-executed loop's timed calls are its 2nd and later. Then
// rounds: each round calls every configuration in turn (in reverse order
// every other round), so that the drift of a shared machine hits all alike;
// each generated / hand-written pair twice, ABBA. The pair must run on the
// same device buffers: on this VM one kernel ran 20% faster on one pooled
// buffer than on another of the same size, so two kernels on buffers of
// their own differ by that much. The runtime pools buffers by size and
// flags, so the stencil's hand-written `out` argument ends where the
// pragma's section does; and as it hands out the most recently released
// first, matmul's A and B (same size, both inputs) trade buffers at every
// call: ABBA gives each kernel both. Tables
// show the median over all timed calls and their min-max spread.
//
// `--only rowptr` measures a loop over a matrix allocated row by row
// (`double **`, offload_rowptr.c, whose rows the runtime packs for PoCL and
// scatters back) in the generated slots, and the same loop over flat arrays
// (`a[i*n : n]`) in the hand-written ones: the ratio is what following the
// row pointers costs against a flat matrix.
//
// Outputs are poisoned with NaN before every call and checked against a
// serial reference: bit for bit for everything the pragma generated (the
// generated kernel is compiled with FP_CONTRACT OFF, this program with
// -ffp-contract=off), within 1e-4 relative for the hand-written matmul
// kernel (PoCL may contract it to FMA); a wrong result is printed and makes
// the exit status 1.
//
// Ratios: generated / hand-written (of the medians; per-round ratios' range
// beside); co-execution efficiency (1 / (1/T_cpu + 1/T_ocl)) / T with T_cpu
// and T_ocl the pragma'd loop alone on each PE; the best single PE
// min(T_cpu, T_ocl) / T (a speedup); T / the best static split.
//
//   fpm-bench-offload [--gpu] [--quick] [--rounds N] [--matmul N]
//                     [--stencil M N]
//                     [--only matmul|stencil|columns|blocks|rowptr|masked]
//
// `--only masked` times a scattered-write loop instead (offload_masked.c: a
// covariance fill whose section is all of cov at every iteration, merged
// through a write mask) against the same loop on the CPU alone and against
// unmasked rows (runMasked).
//
// --gpu runs the same on a GPU instead of PoCL, as fpm-bench-coexec --gpu
// (its header says how): the GPU whole, a team of all cores, T_cpu on all
// threads but the one that feeds the GPU, default sizes matmul 1024 and
// stencil 4096 x 4096. The pragmas say devices(gpu), every OpenCL device
// the runtime finds: it skips (77) unless the GPU is the only one.
// FPM_BENCH_DEVICE_TYPE=cpu lets PoCL stand in for the GPU (testing).
//
// --quick (small sizes, 2 rounds) is the CTest test bench-offload-quick: it
// checks results, never times. Exit status 77 when there is no CPU OpenCL
// device (PoCL). FPM_DEVICES and FPM_SCHEDULE are unset: they would
// override the pragmas.
//
//===----------------------------------------------------------------------===//

#include "coexec_bench.hpp"
#include "offload_columns.h"
#include "offload_loops.hpp"
#include "offload_masked.h"
#include "offload_rowptr.h"

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

struct Options : WorkloadOptions {
  int rounds = 9;
};

//===----------------------------------------------------------------------===//
// The pragma'd loops over a workload's arrays
//===----------------------------------------------------------------------===//

/// Which copy of a pragma'd loop: its devices clause.
enum class Copy { Gpu, Cpu, All };

/// A workload whose loop is also in offload_loops.cpp, pragma'd.
class Pragma {
public:
  virtual ~Pragma() = default;
  /// Logical iterations [begin, end) through copy `copy` of the loop.
  virtual void run(Copy copy, std::int64_t begin, std::int64_t end) = 0;
};

/// coexec_bench.hpp's workload (its inputs, reference and hand-written
/// kernel) with its pragma'd loop; the oracle splits the pragma'd copies.
template <class Base> class Generated final : public Base, public Pragma {
public:
  using Base::Base;
  void run(Copy copy, std::int64_t begin, std::int64_t end) override;
  std::string runOpenClPart(const std::string &, std::int64_t split) override {
    run(Copy::Gpu, 0, split);
    return ""; // the rewritten code reports a failure and aborts
  }
  std::string runCpuPart(const std::string &, std::int64_t split) override {
    run(Copy::Cpu, split, this->rows);
    return "";
  }
};

template <>
void Generated<Matmul>::run(Copy copy, std::int64_t begin, std::int64_t end) {
  auto *loop = copy == Copy::Gpu   ? fpm::bench::offload::matmulGpu
               : copy == Copy::Cpu ? fpm::bench::offload::matmulCpu
                                   : fpm::bench::offload::matmulAll;
  loop(a_.data(), b_.data(), c_.data(), n_, begin, end);
}

template <>
void Generated<Stencil>::run(Copy copy, std::int64_t begin, std::int64_t end) {
  auto *loop = copy == Copy::Gpu   ? fpm::bench::offload::diffuseGpu
               : copy == Copy::Cpu ? fpm::bench::offload::diffuseCpu
                                   : fpm::bench::offload::diffuseAll;
  // Iteration k writes row k + 1.
  loop(in_.data(), out_.data(), n_, dt_, inverseK2_, begin + 1, end + 1);
}

//===----------------------------------------------------------------------===//
// Loops over columns: sections that move in a later dimension
//===----------------------------------------------------------------------===//

const char *const SweepSource = R"CL(
__kernel void column_sweep(__global float *x, int m, int n) {
  const int j = (int)get_global_id(0);
  float acc = x[j];
  for (int r = 1; r < m; ++r) {
    const size_t e = (size_t)r * n + j;
    acc = acc * 0.5f + x[e];
    x[e] = acc;
  }
}
)CL";

const char *const BlocksSource = R"CL(
__kernel void center_blocks(__global float *c, int m, int n, int b) {
  const int k = (int)get_global_id(0);
  for (int r = 0; r < m; ++r) {
    __global float *row = c + (size_t)r * n + (size_t)k * b;
    float sum = 0.0f;
    for (int t = 0; t < b; ++t)
      sum += row[t];
    const float mean = sum / (float)b;
    for (int t = 0; t < b; ++t)
      row[t] -= mean;
  }
}
)CL";

/// An m x n matrix updated in place by a loop over its columns (or blocks
/// of them), each iteration's section a column `x[0:m][j:1]` (or
/// `c[0:m][k*b:b]`): rows of runs, a pitch of n apart.
class ColumnWorkload : public Workload, public Pragma {
public:
  ColumnWorkload(int rowCount, int columns, int block)
      : m_(rowCount), n_(columns), b_(block), initial_(elements()),
        x_(elements()), reference_(elements()) {
    Random random;
    for (float &v : initial_)
      v = random.next() - 0.5f;
  }
  void poison() override { x_ = initial_; } // in place: from the start
  // The oracle splits the pragma'd copies.
  std::string runOpenClPart(const std::string &, std::int64_t split) override {
    run(Copy::Gpu, 0, split);
    return "";
  }
  std::string runCpuPart(const std::string &, std::int64_t split) override {
    run(Copy::Cpu, split, rows);
    return "";
  }
  std::string check() const override {
    for (std::size_t e = 0; e < x_.size(); ++e)
      if (x_[e] != reference_[e]) // exact; NaN differs from everything
        return "x[" + std::to_string(e / static_cast<std::size_t>(n_)) + "][" +
               std::to_string(e % static_cast<std::size_t>(n_)) +
               "] = " + std::to_string(x_[e]) + ", expected " +
               std::to_string(reference_[e]);
    return "";
  }

protected:
  std::size_t elements() const {
    return static_cast<std::size_t>(m_) * static_cast<std::size_t>(n_);
  }
  /// The section of one iteration: `width` columns, `width` apart.
  fpm_arg section(int width) {
    fpm_arg arg = array(FPM_ARG_INOUT, x_.data(),
                        static_cast<std::int64_t>(elements()), 0, width, width);
    arg.rows = m_;
    arg.pitch = n_;
    return arg;
  }
  void sweep(float *x, std::int64_t begin, std::int64_t end) const {
    const auto n = static_cast<std::size_t>(n_);
    for (auto j = static_cast<std::size_t>(begin);
         j < static_cast<std::size_t>(end); ++j) {
      float acc = x[j];
      for (std::size_t r = 1; r < static_cast<std::size_t>(m_); ++r) {
        acc = acc * 0.5f + x[r * n + j];
        x[r * n + j] = acc;
      }
    }
  }
  void center(float *c, std::int64_t begin, std::int64_t end) const {
    const auto n = static_cast<std::size_t>(n_);
    const auto b = static_cast<std::size_t>(b_);
    for (auto k = static_cast<std::size_t>(begin);
         k < static_cast<std::size_t>(end); ++k)
      for (std::size_t r = 0; r < static_cast<std::size_t>(m_); ++r) {
        float *row = c + r * n + k * b;
        float sum = 0.0f;
        for (std::size_t t = 0; t < b; ++t)
          sum += row[t];
        const float mean = sum / static_cast<float>(b_);
        for (std::size_t t = 0; t < b; ++t)
          row[t] -= mean;
      }
  }

  int m_, n_, b_;
  std::vector<float> initial_, x_, reference_;
};

/// A sweep down each column, acc = acc * 0.5 + x[r][j] (the shape of an
/// ADI or Deriche column pass).
class ColumnSweep final : public ColumnWorkload {
public:
  ColumnSweep(int rowCount, int columns)
      : ColumnWorkload(rowCount, columns, 1) {
    name = "columns";
    title = "column sweep: x[r][j] from x[r-1][j], " + std::to_string(m_) +
            " x " + std::to_string(n_) + " floats in place (" +
            std::to_string(n_) + " iterations, a column each)";
    rows = n_;
    source = SweepSource;
    kernelName = "column_sweep";
    reference_ = initial_;
    sweep(reference_.data(), 0, n_);
    args = {section(1), scalar(m_), scalar(n_)};
  }
  void runRows(std::int64_t begin, std::int64_t end) override {
    sweep(x_.data(), begin, end);
  }
  void run(Copy copy, std::int64_t begin, std::int64_t end) override {
    fpm_bench_sweep(static_cast<int>(copy), m_, n_, x_.data(), begin, end);
  }
};

/// Blocks of b columns, each row of a block centred on its mean (a blocked
/// update over column tiles).
class ColumnBlocks final : public ColumnWorkload {
public:
  ColumnBlocks(int rowCount, int columns, int block)
      : ColumnWorkload(rowCount, columns, block) {
    name = "blocks";
    title = "column blocks: rows of each " + std::to_string(b_) +
            "-column block centred, " + std::to_string(m_) + " x " +
            std::to_string(n_) + " floats in place (" +
            std::to_string(n_ / b_) + " iterations, a block each)";
    rows = n_ / b_;
    source = BlocksSource;
    kernelName = "center_blocks";
    options = "-cl-fp32-correctly-rounded-divide-sqrt";
    reference_ = initial_;
    center(reference_.data(), 0, rows);
    args = {section(b_), scalar(m_), scalar(n_), scalar(b_)};
  }
  void runRows(std::int64_t begin, std::int64_t end) override {
    center(x_.data(), begin, end);
  }
  void run(Copy copy, std::int64_t begin, std::int64_t end) override {
    fpm_bench_blocks(static_cast<int>(copy), m_, n_, b_, x_.data(), begin, end);
  }
};

//===----------------------------------------------------------------------===//
// Rows through their pointers: an array of row pointers against a flat one
//===----------------------------------------------------------------------===//

const char *const RowsFlatSource = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
__kernel void scale_rows(__global const double *a, __global const double *x,
                         __global double *c, int n) {
  const size_t row = (size_t)get_global_id(0) * (size_t)n;
  double s = 0;
  for (int j = 0; j < n; ++j)
    s += a[row + j];
  for (int j = 0; j < n; ++j)
    c[row + j] = a[row + j] * x[j] + s;
}
)CL";

/// c[i][j] = a[i][j] * x[j] + sum_j a[i][j], row by row, over two copies of
/// the same m x n matrices: rows allocated one by one behind arrays of row
/// pointers (the pragma'd loop, offload_rowptr.c), and flat arrays (the
/// hand-written kernel and C++ body, sections `a[i*n : n]`). A call writes
/// one copy of c; check() wants that one right and the other untouched.
class RowPointers final : public Workload, public Pragma {
public:
  RowPointers(int rowCount, int columns)
      : m_(rowCount), n_(columns), aFlat_(elements()), cFlat_(elements()),
        x_(static_cast<std::size_t>(n_)), reference_(elements()) {
    name = "rowptr";
    title = "rows through their pointers: c[i][j] = a[i][j] * x[j] + sum of "
            "row i, " +
            std::to_string(m_) + " x " + std::to_string(n_) +
            " doubles, `double **` rows (generated) against flat arrays "
            "(hand-written)";
    rows = m_;
    source = RowsFlatSource;
    kernelName = "scale_rows";
    Random random;
    for (double &v : aFlat_)
      v = random.next() - 0.5;
    for (double &v : x_)
      v = random.next();
    // Each row a block of its own, as `a[i] = malloc(...)` gives them.
    for (int i = 0; i < m_; ++i) {
      const auto row = static_cast<std::size_t>(i) * columnCount();
      aBlocks_.emplace_back(
          aFlat_.begin() + static_cast<std::ptrdiff_t>(row),
          aFlat_.begin() + static_cast<std::ptrdiff_t>(row + columnCount()));
      cBlocks_.emplace_back(columnCount());
    }
    for (std::size_t i = 0; i < aBlocks_.size(); ++i) {
      aRows_.push_back(aBlocks_[i].data());
      cRows_.push_back(cBlocks_[i].data());
    }
    scale(aFlat_.data(), reference_.data(), 0, m_);
    const auto all = static_cast<std::int64_t>(elements());
    args = {flat(FPM_ARG_IN, aFlat_.data(), all, n_),
            flat(FPM_ARG_IN, x_.data(), n_, 0),
            flat(FPM_ARG_OUT, cFlat_.data(), all, n_), scalar(n_)};
  }
  void poison() override {
    std::fill(cFlat_.begin(), cFlat_.end(), std::nan(""));
    for (std::vector<double> &row : cBlocks_)
      std::fill(row.begin(), row.end(), std::nan(""));
  }
  std::string check() const override {
    const bool flatRan = !std::isnan(cFlat_.front());
    for (std::size_t e = 0; e < elements(); ++e) {
      const double got =
          flatRan ? cFlat_[e] : cBlocks_[e / columnCount()][e % columnCount()];
      const double other =
          flatRan ? cBlocks_[e / columnCount()][e % columnCount()] : cFlat_[e];
      if (got != reference_[e] || !std::isnan(other)) // exact
        return std::string(flatRan ? "flat " : "row-pointer ") + "c[" +
               std::to_string(e / columnCount()) + "][" +
               std::to_string(e % columnCount()) +
               "] = " + std::to_string(got) + ", expected " +
               std::to_string(reference_[e]);
    }
    return "";
  }
  void runRows(std::int64_t begin, std::int64_t end) override {
    scale(aFlat_.data(), cFlat_.data(), begin, end);
  }
  void run(Copy copy, std::int64_t begin, std::int64_t end) override {
    fpm_bench_rowptr(static_cast<int>(copy), n_, aRows_.data(), x_.data(),
                     cRows_.data(), begin, end);
  }
  // The oracle splits the pragma'd copies.
  std::string runOpenClPart(const std::string &, std::int64_t split) override {
    run(Copy::Gpu, 0, split);
    return "";
  }
  std::string runCpuPart(const std::string &, std::int64_t split) override {
    run(Copy::Cpu, split, rows);
    return "";
  }

private:
  std::size_t columnCount() const { return static_cast<std::size_t>(n_); }
  std::size_t elements() const {
    return static_cast<std::size_t>(m_) * columnCount();
  }
  /// Rows `i*stride : stride` of a flat array (stride 0: all of it, shared).
  static fpm_arg flat(int kind, double *data, std::int64_t length,
                      std::int64_t stride) {
    fpm_arg arg{};
    arg.kind = kind;
    arg.data = data;
    arg.size = sizeof(double);
    arg.length = length;
    arg.stride = stride;
    arg.count = stride;
    return arg;
  }
  void scale(const double *a, double *c, std::int64_t begin,
             std::int64_t end) const {
    const std::size_t n = columnCount();
    for (auto i = static_cast<std::size_t>(begin);
         i < static_cast<std::size_t>(end); ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n; ++j)
        s += a[i * n + j];
      for (std::size_t j = 0; j < n; ++j)
        c[i * n + j] = a[i * n + j] * x_[j] + s;
    }
  }

  int m_, n_;
  std::vector<double> aFlat_, cFlat_, x_, reference_;
  std::vector<std::vector<double>> aBlocks_, cBlocks_;
  std::vector<double *> aRows_, cRows_;
};

//===----------------------------------------------------------------------===//
// One workload's table
//===----------------------------------------------------------------------===//

/// One row of the table, measured in every round.
struct Config {
  enum Kind { Pragmad, HandWritten, Split };
  std::string label;
  Kind kind = Pragmad;
  Copy copy = Copy::All;         ///< Pragmad: which copy
  const char *devices = nullptr; ///< HandWritten: fpm_loop::devices
  std::string loop;              ///< HandWritten: the loop's name
  int threads = 2;               ///< the OpenMP team
  std::int64_t split = 0;        ///< Split: the rows on OpenCL
  std::vector<double> times;     ///< every timed call
  std::vector<double> rounds;    ///< the sum of each round's calls
  double first = 0;              ///< the warm-up call
};

struct Spread {
  double median, low, high;
};

Spread spread(const std::vector<double> &values) {
  return {median(values), *std::min_element(values.begin(), values.end()),
          *std::max_element(values.begin(), values.end())};
}

/// `a[r] / b[r]` over rounds r (the rounds' sums of two configurations).
Spread ratios(const std::vector<double> &a, const std::vector<double> &b) {
  std::vector<double> quotients;
  for (std::size_t r = 0; r < a.size(); ++r)
    quotients.push_back(a[r] / b[r]);
  return spread(quotients);
}

/// What the summary table shows of one workload.
struct Summary {
  std::string name;
  Spread generated, handWritten, kernelRatio;
  double cpuAlone = 0, openClAlone = 0, coexecuted = 0, oracle = 0;
  double oracleShare = 0;
};

bool runWorkload(Workload &workload, Pragma &pragma, const Options &options,
                 std::vector<Summary> &summaries) {
  // The hand-written kernel's results within a tolerance (matmul), the
  // pragma'd loops' bit for bit.
  Bench handBench(workload, options.quick);
  Bench exactBench(workload, options.quick, /*exact=*/true);
  const Clock::time_point started = Clock::now();
  const CpuUse before = CpuUse::now();
  const std::string prefix = "offload." + workload.name + ".";

  std::vector<Config> configs;
  auto pragmad = [&](std::string label, Copy copy, int threads) {
    Config config;
    config.label = std::move(label);
    config.copy = copy;
    config.threads = threads;
    configs.push_back(std::move(config));
  };
  auto handWritten = [&](std::string label, const char *devices, int threads) {
    Config config;
    config.label = std::move(label);
    config.kind = Config::HandWritten;
    config.devices = devices;
    config.loop = prefix + "hand." + devices;
    config.threads = threads;
    configs.push_back(std::move(config));
  };
  enum { GeneratedKernel, HandKernel, GeneratedCpu, HandCpu, Coexecuted };
  // Under --gpu: the GPU whole, the CPU team but the thread that feeds it.
  const std::string device = gpu ? "the GPU" : "PoCL";
  const std::string threads = threadCount(cpuPeThreads());
  pragmad("generated kernel: pragma, devices(gpu), " + device + " (T_ocl)",
          Copy::Gpu, teamThreads());
  handWritten("hand-written kernel: fpm_parallel_for_kernel, " + device,
              openClDevices(), teamThreads());
  pragmad("generated CPU body: pragma, devices(cpu), " + threads + " (T_cpu)",
          Copy::Cpu, cpuPeThreads());
  handWritten("hand-written C++ body: fpm_parallel_for, " + threads, "cpu",
              cpuPeThreads());
  pragmad(gpu ? "co-executed: pragma, default devices, " + threads +
                    " + the GPU"
              : std::string("co-executed: pragma, default devices, CPU "
                            "thread + PoCL"),
          Copy::All, teamThreads());

  auto call = [&](Config &config) {
    omp_set_num_threads(config.threads);
    double seconds = 0;
    if (config.kind == Config::Pragmad) {
      workload.poison();
      const Clock::time_point start = Clock::now();
      pragma.run(config.copy, 0, workload.rows);
      seconds = since(start);
      exactBench.verify(config.label);
    } else {
      std::int64_t cpuRows = 0;
      seconds = handBench.fpmCall(config.label, config.loop, config.devices,
                                  nullptr, cpuRows);
      if (std::strcmp(config.devices, openClDevices()) == 0 && cpuRows > 0) {
        std::fprintf(stderr, "%s: %s, %s: %lld rows ran on the CPU\n", program,
                     workload.name.c_str(), config.label.c_str(),
                     static_cast<long long>(cpuRows));
        handBench.ok = false;
      }
    }
    omp_set_num_threads(teamThreads());
    return seconds;
  };
  for (Config &config : configs)
    config.first = call(config);

  // The best static split of the pragma'd copies: the sweep's best 3 take
  // part in the rounds.
  SplitRunner runner(exactBench);
  const Oracle oracle = findOracle(exactBench, runner);
  setDeviceUnits("1"); // findOracle unsets it
  for (std::int64_t split : oracle.candidates) {
    Config config;
    config.kind = Config::Split;
    config.split = split;
    char label[96];
    std::snprintf(label, sizeof label,
                  "static split of the pragma'd copies, OpenCL share %.2f",
                  static_cast<double>(split) /
                      static_cast<double>(workload.rows));
    config.label = label;
    configs.push_back(std::move(config));
  }

  // A round: each generated / hand-written pair ABBA, then the rest; every
  // other round in reverse.
  std::vector<std::size_t> order = {GeneratedKernel, HandKernel,   HandKernel,
                                    GeneratedKernel, GeneratedCpu, HandCpu,
                                    HandCpu,         GeneratedCpu, Coexecuted};
  for (std::size_t c = Coexecuted + 1; c < configs.size(); ++c)
    order.push_back(c);
  for (int round = 0; round < options.rounds; ++round) {
    for (Config &config : configs)
      config.rounds.push_back(0);
    for (std::size_t o = 0; o < order.size(); ++o) {
      Config &config = configs[order[round % 2 ? order.size() - 1 - o : o]];
      double seconds = 0;
      if (config.kind == Config::Split) {
        seconds = runner.run(config.split);
        exactBench.verify(config.label);
      } else {
        seconds = call(config);
      }
      config.times.push_back(seconds);
      config.rounds.back() += seconds;
    }
  }

  const Config *best = nullptr;
  for (const Config &config : configs)
    if (config.kind == Config::Split &&
        (!best || median(config.times) < median(best->times)))
      best = &config;

  Summary summary;
  summary.name = workload.name;
  summary.generated = spread(configs[GeneratedKernel].times);
  summary.handWritten = spread(configs[HandKernel].times);
  summary.kernelRatio =
      ratios(configs[GeneratedKernel].rounds, configs[HandKernel].rounds);
  summary.cpuAlone = median(configs[GeneratedCpu].times);
  summary.openClAlone = median(configs[GeneratedKernel].times);
  summary.coexecuted = median(configs[Coexecuted].times);
  summary.oracle = median(best->times);
  summary.oracleShare =
      static_cast<double>(best->split) / static_cast<double>(workload.rows);
  const double ideal = 1 / (1 / summary.cpuAlone + 1 / summary.openClAlone);

  std::printf("### %s\n\n", workload.title.c_str());
  std::printf("| configuration | median ms | min-max ms | warm-up ms |\n");
  std::printf("| --- | ---: | ---: | ---: |\n");
  for (const Config &config : configs) {
    const Spread s = spread(config.times);
    const std::string first =
        config.kind == Config::Split ? "-" : milliseconds(config.first);
    std::printf("| %s%s | %s | %s-%s | %s |\n", config.label.c_str(),
                &config == best ? " (best)" : "",
                milliseconds(s.median).c_str(), milliseconds(s.low).c_str(),
                milliseconds(s.high).c_str(), first.c_str());
  }
  const Spread cpuRatio =
      ratios(configs[GeneratedCpu].rounds, configs[HandCpu].rounds);
  std::printf("\ngenerated / hand-written kernel on %s: %.3f (per round "
              "%.3f-%.3f)\n",
              device.c_str(),
              summary.generated.median / summary.handWritten.median,
              summary.kernelRatio.low, summary.kernelRatio.high);
  std::printf("generated / hand-written CPU body, %s: %.3f (per round "
              "%.3f-%.3f)\n",
              threads.c_str(),
              summary.cpuAlone / median(configs[HandCpu].times), cpuRatio.low,
              cpuRatio.high);
  std::printf(
      "co-executed pragma loop: %s ms; efficiency (1/(1/T_cpu + "
      "1/T_ocl)) / T = %.3f; best single PE / T = %.2fx; T / best "
      "static split = %.3f\n",
      milliseconds(summary.coexecuted).c_str(), ideal / summary.coexecuted,
      std::min(summary.cpuAlone, summary.openClAlone) / summary.coexecuted,
      summary.coexecuted / summary.oracle);
  std::printf("oracle sweep, %d splits (OpenCL share: ms):", oracle.points);
  for (const auto &[split, seconds] : oracle.sweep)
    std::printf(" %.2f: %s",
                static_cast<double>(split) / static_cast<double>(workload.rows),
                milliseconds(seconds).c_str());
  std::printf("\n%s\n\n", machineNote(before, started).c_str());
  std::fflush(stdout);
  summaries.push_back(summary);
  return handBench.ok && exactBench.ok;
}

//===----------------------------------------------------------------------===//
// A scattered-write loop: writes merged through a write mask
//===----------------------------------------------------------------------===//

/// `--only masked`: the symmetric covariance fill of offload_masked.c,
/// whose written section is all of cov at every iteration, on PoCL through
/// its write mask against the same loop on the CPU alone (the
/// `FPM_DEVICES=cpu` of the same program), and against the same rows
/// without the mirror on PoCL, whose section moves and needs no mask (what
/// the mask costs: the array whole to the device once per call, back with
/// its mask after every range, and a merge on the host). Rounds as the
/// other workloads', each pair ABBA; every result checked bit for bit
/// against a serial reference (cov poisoned with NaN before each call).
bool runMasked(const Options &options) {
  const int m = options.quick ? 8 : 64, n = options.quick ? 160 : 1024;
  const auto cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<double> data(static_cast<std::size_t>(m) * n), cov(cells),
      reference(cells);
  Random random;
  for (double &v : data)
    v = random.next() - 0.5;
  fpm_bench_covariance(1, m, n, data.data(), reference.data(), 0, n);
  const Clock::time_point started = Clock::now();
  const CpuUse before = CpuUse::now();

  struct Run {
    std::string label;
    int copy = 0;    ///< fpm_bench_covariance's
    int threads = 2; ///< the OpenMP team
    bool mirrored = true;
    std::vector<double> times, rounds;
  };
  enum { MaskedOcl, RowsOcl, Cpu1, Cpu2, All };
  std::vector<Run> runs;
  auto add = [&](std::string label, int copy, int threads, bool mirrored) {
    Run run;
    run.label = std::move(label);
    run.copy = copy;
    run.threads = threads;
    run.mirrored = mirrored;
    runs.push_back(std::move(run));
  };
  // Under --gpu: the GPU whole, the CPU team but the thread that feeds it.
  const std::string device = gpu ? "the GPU" : "PoCL";
  const std::string threads = threadCount(cpuPeThreads());
  const std::string team = threadCount(teamThreads());
  const int all = teamThreads(), cpuPe = cpuPeThreads();
  add("masked: out(cov[0:n][0:n]), devices(gpu), " + device + " (T_ocl)", 0,
      all, true);
  add("rows, no mask: inout(cov[i:1][0:n]) without the mirror, devices(gpu), " +
          device,
      3, all, false);
  add("masked loop, devices(cpu), " + threads + " (T_cpu)", 1, cpuPe, true);
  add("masked loop, devices(cpu), " + team + " (CPU only)", 1, all, true);
  add(gpu ? "masked loop, default devices: " + threads + " + the GPU (T)"
          : std::string("masked loop, default devices: CPU thread + PoCL (T)"),
      2, all, true);
  bool ok = true;
  auto call = [&](Run &run) {
    omp_set_num_threads(run.threads);
    std::fill(cov.begin(), cov.end(), std::nan(""));
    const Clock::time_point start = Clock::now();
    fpm_bench_covariance(run.copy, m, n, data.data(), cov.data(), 0, n);
    const double seconds = since(start);
    omp_set_num_threads(teamThreads());
    for (std::size_t e = 0; e < cells && ok; ++e) {
      // Without the mirror only the upper triangle is written.
      const bool upper =
          e % static_cast<std::size_t>(n) >= e / static_cast<std::size_t>(n);
      if ((run.mirrored || upper) && !(cov[e] == reference[e])) {
        std::fprintf(
            stderr, "%s: masked, %s: cov[%zu][%zu] = %g, expected %g\n",
            program, run.label.c_str(), e / static_cast<std::size_t>(n),
            e % static_cast<std::size_t>(n), cov[e], reference[e]);
        ok = false;
      }
    }
    return seconds;
  };
  for (Run &run : runs)
    call(run); // warm-up: builds, PoCL's compiles, first speeds
  const std::vector<int> order = {MaskedOcl, RowsOcl, RowsOcl, MaskedOcl, Cpu2,
                                  All,       All,     Cpu2,    Cpu1};
  for (int round = 0; round < options.rounds; ++round) {
    for (Run &run : runs)
      run.rounds.push_back(0);
    for (std::size_t o = 0; o < order.size(); ++o) {
      Run &run = runs[static_cast<std::size_t>(
          order[round % 2 ? order.size() - 1 - o : o])];
      const double seconds = call(run);
      run.times.push_back(seconds);
      run.rounds.back() += seconds;
    }
  }

  std::printf("### covariance fill, %d samples of %d variables: cov[i][j] and "
              "cov[j][i] for j >= i (%d iterations, writes merged through a "
              "write mask)\n\n",
              m, n, n);
  std::printf("| configuration | median ms | min-max ms |\n");
  std::printf("| --- | ---: | ---: |\n");
  for (const Run &run : runs) {
    const Spread s = spread(run.times);
    std::printf("| %s | %s | %s-%s |\n", run.label.c_str(),
                milliseconds(s.median).c_str(), milliseconds(s.low).c_str(),
                milliseconds(s.high).c_str());
  }
  auto ratio = [&](int a, int b) {
    const Spread r = ratios(runs[static_cast<std::size_t>(a)].rounds,
                            runs[static_cast<std::size_t>(b)].rounds);
    std::printf("%.3f (per round %.3f-%.3f)",
                median(runs[static_cast<std::size_t>(a)].times) /
                    median(runs[static_cast<std::size_t>(b)].times),
                r.low, r.high);
  };
  const double tCpu = median(runs[Cpu1].times),
               tOcl = median(runs[MaskedOcl].times),
               t = median(runs[All].times);
  std::printf("\nmasked / unmasked rows on %s (what the mask costs): ",
              device.c_str());
  ratio(MaskedOcl, RowsOcl);
  std::printf("\nCPU only, %s / co-executed with %s (speedup of "
              "offloading with masks): ",
              team.c_str(), device.c_str());
  ratio(Cpu2, All);
  std::printf("\nco-executed: efficiency (1/(1/T_cpu + 1/T_ocl)) / T = %.3f; "
              "best single PE / T = %.2fx\n",
              1 / (1 / tCpu + 1 / tOcl) / t, std::min(tCpu, tOcl) / t);
  std::printf("bytes a device range moves back: %zu of cov and %zu of mask, "
              "against %zu of rows for all the unmasked loop's ranges\n",
              cells * sizeof(double), cells, cells * sizeof(double));
  std::printf("%s\n\n", machineNote(before, started).c_str());
  std::fflush(stdout);
  return ok;
}

void printSummary(const std::vector<Summary> &summaries) {
  std::printf("### Summary (medians, ms)\n\n");
  std::printf("| loop | generated kernel | hand-written kernel | generated / "
              "hand-written | T_cpu | T_ocl | co-executed T | best static "
              "split | efficiency | best single PE / T | T / best static "
              "split |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
              "| ---: | ---: |\n");
  for (const Summary &s : summaries) {
    const double ideal = 1 / (1 / s.cpuAlone + 1 / s.openClAlone);
    std::printf(
        "| %s | %s | %s | %.3f (%.3f-%.3f) | %s | %s | %s | %s "
        "(share %.2f) | %.3f | %.2fx | %.3f |\n",
        s.name.c_str(), milliseconds(s.generated.median).c_str(),
        milliseconds(s.handWritten.median).c_str(),
        s.generated.median / s.handWritten.median, s.kernelRatio.low,
        s.kernelRatio.high, milliseconds(s.cpuAlone).c_str(),
        milliseconds(s.openClAlone).c_str(), milliseconds(s.coexecuted).c_str(),
        milliseconds(s.oracle).c_str(), s.oracleShare, ideal / s.coexecuted,
        std::min(s.cpuAlone, s.openClAlone) / s.coexecuted,
        s.coexecuted / s.oracle);
  }
  std::printf("\n");
}

} // namespace

int main(int argc, char **argv) {
  program = "fpm-bench-offload";
  Options options;
  const bool onGpu = takeGpuDefaults(argc, argv, options);
  for (int i = 1; i < argc; ++i) {
    const bool quick = std::strcmp(argv[i], "--quick") == 0;
    if (std::strcmp(argv[i], "--gpu") == 0) {
      continue;
    } else if (parseWorkloadOption(argc, argv, i, options)) {
      if (quick)
        options.rounds = 2;
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      options.rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: fpm-bench-offload [--gpu] [--quick] "
                           "[--rounds N] "
                           "[--matmul N] [--stencil M N] "
                           "[--only "
                           "matmul|stencil|columns|blocks|rowptr|masked]\n");
      return 2;
    }
  }
  // They would override the pragmas' devices and schedules.
  clearOverrides();
  const PrivateProfiles profiles;
  GpuDevice device;
  if (onGpu) {
    if (!findGpuDevice(device)) {
      std::printf("fpm-bench-offload: no GPU OpenCL device: skipped\n");
      return 77; // CTest's SKIP_RETURN_CODE
    }
    // The pragmas say devices(gpu): every OpenCL device the runtime finds.
    if (!device.alone) {
      std::printf("fpm-bench-offload: --gpu: the runtime finds OpenCL devices "
                  "besides %s (%s), which the pragmas' devices(gpu) would use "
                  "too; make the GPU's ICD the only one (OCL_ICD_VENDORS): "
                  "skipped\n",
                  device.id.c_str(), device.name.c_str());
      return 77;
    }
    gpu = &device;
  } else if (!cpuDevice()) {
    std::printf("fpm-bench-offload: no CPU OpenCL device (PoCL): skipped\n");
    return 77; // CTest's SKIP_RETURN_CODE
  }
  setDeviceUnits("1");
  omp_set_num_threads(teamThreads());
  if (gpu)
    std::printf("fpm-bench-offload: %d cores, the GPU whole, %d rounds after "
                "a warm-up%s\n\n",
                omp_get_num_procs(), options.rounds,
                options.quick ? " (--quick)" : "");
  else
    std::printf("fpm-bench-offload: %d cores, PoCL on 1 compute unit, %d "
                "rounds after a warm-up%s\n\n",
                omp_get_num_procs(), options.rounds,
                options.quick ? " (--quick)" : "");
  if (gpu)
    describeGpu(*gpu);
  else if (omp_get_num_procs() != 2)
    std::printf("(written for 2 cores: the co-executed loop runs on a team "
                "of 2 threads)\n\n");
  bool ok = true;
  std::vector<Summary> summaries;
  if (options.only.empty() || options.only == "matmul") {
    Generated<Matmul> matmul(options.matmulSize);
    ok = runWorkload(matmul, matmul, options, summaries) && ok;
  }
  if (options.only.empty() || options.only == "stencil") {
    Generated<Stencil> stencil(options.stencilRows, options.stencilColumns);
    ok = runWorkload(stencil, stencil, options, summaries) && ok;
  }
  if (options.only.empty() || options.only == "columns") {
    ColumnSweep sweep(options.quick ? 64 : 2048, options.quick ? 256 : 4096);
    ok = runWorkload(sweep, sweep, options, summaries) && ok;
  }
  if (options.only.empty() || options.only == "blocks") {
    ColumnBlocks blocks(options.quick ? 64 : 2048, options.quick ? 256 : 4096,
                        options.quick ? 8 : 16);
    ok = runWorkload(blocks, blocks, options, summaries) && ok;
  }
  if (options.only.empty() || options.only == "rowptr") {
    RowPointers rowptr(options.quick ? 256 : 4096, options.quick ? 64 : 1024);
    ok = runWorkload(rowptr, rowptr, options, summaries) && ok;
  }
  if (!summaries.empty())
    printSummary(summaries);
  if (options.only.empty() || options.only == "masked")
    ok = runMasked(options) && ok;
  if (!ok)
    std::fprintf(stderr, "fpm-bench-offload: some results were wrong\n");
  return ok ? 0 : 1;
}
