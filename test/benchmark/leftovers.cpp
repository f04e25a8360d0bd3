//===- benchmark/leftovers.cpp - A reduction loop's ranges of every size -===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What a device range that does not end on a whole work-group costs when
// it comes at a new size at every call: the k-means step of
// leftovers_loops.cpp (a `#pragma fpm partition` loop with reductions, its
// kernel generated), called again and again as k-means calls it, with
// the points fixed and the centroids moving. Under `auto` the split
// between the CPU and PoCL moves from call to call (partial FPMs), so the
// device's range ends at another iteration each time; under `gss` device
// ranges end on multiples of 64 but at the loop's end. PoCL compiles a
// kernel for each work-group size it is launched with (and again at global
// offset 0 and for small grids): a launch of a size it has not seen costs
// a compile inside the call.
//
// Each configuration runs in a process of its own (this program again,
// with --child), from empty caches: a fresh POCL_CACHE_DIR (PoCL's
// compiled kernels), FPM_CACHE_DIR (fpm's program binaries) and
// FPM_PROFILE_DIR (no stored FPMs); then a second process on the same
// folders, as a program's next run:
//
//   cpu    FPM_DEVICES=cpu, 2 threads: the baseline
//   gss    FPM_DEVICES=all, FPM_SCHEDULE=gss: one CPU thread and PoCL
//   auto   FPM_DEVICES=all, FPM_SCHEDULE=auto
//
// It prints per configuration and run the total of the timed calls, its
// ratio to the cpu baseline's and to gss's of the same run, the first
// call, the median of the others, and the kernel variants PoCL compiled (the
// folders under the kernel's name in POCL_CACHE_DIR: one per work-group size,
// global offset 0 and small grid, that PoCL 3.1 keeps; 0 elsewhere). Every
// call's labels, count of moved points and inertia are checked against the
// serial loop (labels and counts exactly, the inertia within 1e-9
// relative: its partial sums add in another order); a wrong result makes
// the exit status 1.
//
//   fpm-bench-leftovers [--quick] [--calls N] [--points N] [--clusters K]
//
// --quick (20000 points, 6 calls) is the CTest test bench-leftovers-quick:
// it checks results, never times. Exit status 77 when there is no OpenCL
// CPU device (PoCL).
//
//===----------------------------------------------------------------------===//

#include "leftovers_loops.hpp"

#include <CL/cl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

extern char **environ;

namespace {

using namespace fpm::bench::leftovers;
namespace fs = std::filesystem;

struct Options {
  bool quick = false;
  int calls = 20;
  int points = 200000;
  int clusters = 8;
};

[[noreturn]] void die(const std::string &why) {
  std::fprintf(stderr, "fpm-bench-leftovers: %s\n", why.c_str());
  std::exit(2);
}

bool hasCpuDevice() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0)
    return false;
  std::vector<cl_platform_id> ids(count);
  clGetPlatformIDs(count, ids.data(), nullptr);
  for (cl_platform_id platform : ids) {
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, nullptr) ==
        CL_SUCCESS)
      return true;
  }
  return false;
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

/// The child: `calls` k-means iterations through fpm, each checked against
/// the serial loop. Prints "first <ms> rest <ms> total <ms> wrong <count>".
int child(const Options &options) {
  const int n = options.points, k = options.clusters;
  std::vector<float> points(static_cast<std::size_t>(n) * Dims);
  // Clustered points, the same in every process: k blobs and some noise.
  unsigned state = 12345;
  auto next = [&state] {
    state = state * 1103515245u + 12345u;
    return static_cast<float>((state >> 8) & 0xffff) / 65536.0f;
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < Dims; ++j)
      points[static_cast<std::size_t>(i) * Dims + j] =
          static_cast<float>((i * 7 + j * 3) % k) * 4.0f + next() * 6.0f;
  std::vector<float> centroids(points.begin(),
                               points.begin() + static_cast<long>(k) * Dims);
  std::vector<int> label(static_cast<std::size_t>(n), -1);
  std::vector<int> serialLabel = label;
  std::vector<double> times;
  int wrong = 0;
  for (int call = 0; call < options.calls; ++call) {
    long long moved = 0, serialMoved = 0;
    const auto start = std::chrono::steady_clock::now();
    const double inertia =
        assign(points.data(), centroids.data(), label.data(), n, k, moved);
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
    const double serial = assignSerial(points.data(), centroids.data(),
                                       serialLabel.data(), n, k, serialMoved);
    if (label != serialLabel || moved != serialMoved ||
        std::fabs(inertia - serial) > 1e-9 * std::fabs(serial)) {
      std::fprintf(stderr,
                   "call %d: wrong: moved %lld (serial %lld), "
                   "inertia %.17g (serial %.17g)\n",
                   call, moved, serialMoved, inertia, serial);
      ++wrong;
      label = serialLabel;
    }
    // The update step, on the host: each centroid to its points' mean.
    std::vector<double> sum(static_cast<std::size_t>(k) * Dims, 0.0);
    std::vector<int> members(static_cast<std::size_t>(k), 0);
    for (int i = 0; i < n; ++i) {
      ++members[static_cast<std::size_t>(serialLabel[i])];
      for (int j = 0; j < Dims; ++j)
        sum[static_cast<std::size_t>(serialLabel[i]) * Dims + j] +=
            points[static_cast<std::size_t>(i) * Dims + j];
    }
    for (int c = 0; c < k; ++c)
      if (members[static_cast<std::size_t>(c)] > 0)
        for (int j = 0; j < Dims; ++j)
          centroids[static_cast<std::size_t>(c) * Dims + j] =
              static_cast<float>(sum[static_cast<std::size_t>(c) * Dims + j] /
                                 members[static_cast<std::size_t>(c)]);
  }
  double total = 0;
  for (double t : times)
    total += t;
  std::printf("first %.3f rest %.3f total %.3f wrong %d\n", times.front(),
              median(std::vector<double>(times.begin() + 1, times.end())),
              total, wrong);
  return wrong ? 1 : 0;
}

struct Run {
  double first = 0, rest = 0, total = 0;
  int wrong = 0;
  int variants = 0;    ///< kernel variants in PoCL's cache after it
  std::set<int> sizes; ///< their work-group sizes
};

/// The kernel variants PoCL 3.1 keeps under `cache`: a folder per kernel
/// (named as the kernel) of folders <lx>-<ly>-<lz>[-goffs0][-smallgrid];
/// 0-0-0 is the one for any size.
void countVariants(const fs::path &cache, Run &run) {
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(cache, error);
       !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory(error) || name.rfind("0-0-0", 0) == 0 ||
        it->path().parent_path().filename().string().rfind("fpm_kernel", 0) !=
            0)
      continue;
    ++run.variants;
    run.sizes.insert(std::atoi(name.c_str()));
  }
}

/// Runs this program with --child in `environment` added to ours.
Run spawn(const Options &options, const std::map<std::string, std::string> &env,
          const fs::path &poclCache) {
  std::vector<std::string> args = {
      "/proc/self/exe", "--child",
      "--calls",        std::to_string(options.calls),
      "--points",       std::to_string(options.points),
      "--clusters",     std::to_string(options.clusters)};
  std::vector<std::string> variables;
  for (char **e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (!env.count(name) && name != "FPM_SCHEDULE" && name != "FPM_DEVICES")
      variables.push_back(entry);
  }
  for (const auto &[name, value] : env)
    variables.push_back(name + "=" + value);
  std::vector<char *> argv, envp;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string &v : variables)
    envp.push_back(v.data());
  envp.push_back(nullptr);
  int pipeEnds[2];
  if (pipe(pipeEnds) != 0)
    die("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipeEnds[0]);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) !=
      0)
    die("cannot start a child process");
  posix_spawn_file_actions_destroy(&actions);
  close(pipeEnds[1]);
  std::string output;
  char buffer[256];
  for (ssize_t got; (got = read(pipeEnds[0], buffer, sizeof buffer)) > 0;)
    output.append(buffer, static_cast<std::size_t>(got));
  close(pipeEnds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Run run;
  if (std::sscanf(output.c_str(), "first %lf rest %lf total %lf wrong %d",
                  &run.first, &run.rest, &run.total, &run.wrong) != 4)
    die("a child process failed: " + output);
  if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && run.wrong == 0))
    die("a child process failed");
  countVariants(poclCache, run);
  return run;
}

int parent(const Options &options) {
  if (!hasCpuDevice()) {
    std::printf("fpm-bench-leftovers: no CPU OpenCL device (PoCL): skipped\n");
    return 77; // CTest's SKIP_RETURN_CODE
  }
  std::string folder =
      (fs::temp_directory_path() / "fpm-bench-leftovers-XXXXXX").string();
  if (!::mkdtemp(folder.data()))
    die("cannot create a temporary folder");
  struct Config {
    const char *name, *devices, *schedule;
  };
  const Config configs[] = {
      {"cpu", "cpu", "auto"}, {"gss", "all", "gss"}, {"auto", "all", "auto"}};
  std::map<std::string, Run> runs[2];
  for (const Config &config : configs) {
    const fs::path root = fs::path(folder) / config.name;
    std::map<std::string, std::string> env = {
        {"FPM_DEVICES", config.devices},
        {"FPM_SCHEDULE", config.schedule},
        {"OMP_NUM_THREADS", "2"},
        {"POCL_CACHE_DIR", (root / "pocl").string()},
        {"FPM_CACHE_DIR", (root / "fpm").string()},
        {"FPM_PROFILE_DIR", (root / "profiles").string()}};
    for (int again = 0; again < 2; ++again)
      runs[again][config.name] = spawn(options, env, root / "pocl");
  }
  std::error_code ignored;
  fs::remove_all(folder, ignored);

  std::printf("fpm-bench-leftovers: %d points, %d clusters, %d calls per "
              "process, from empty caches (first run) and again (second "
              "run)\n\n",
              options.points, options.clusters, options.calls);
  std::printf("| configuration | run | total, ms | / cpu | / gss | first call, "
              "ms | later calls (median), ms | PoCL kernel variants | "
              "work-group sizes |\n| --- | --- | ---: | ---: | ---: | ---: | "
              "---: | ---: | --- |\n");
  int wrong = 0;
  for (int again = 0; again < 2; ++again)
    for (const Config &config : configs) {
      const Run &run = runs[again][config.name];
      std::string sizes;
      for (int size : run.sizes)
        sizes += (sizes.empty() ? "" : " ") + std::to_string(size);
      char overGss[32] = "";
      if (std::string(config.devices) != "cpu")
        std::snprintf(overGss, sizeof overGss, "%.2f",
                      run.total / runs[again]["gss"].total);
      std::printf("| %s | %s | %.1f | %.2f | %s | %.1f | %.2f | %d | %s |\n",
                  config.name, again ? "second" : "first", run.total,
                  run.total / runs[again]["cpu"].total, overGss, run.first,
                  run.rest, run.variants, sizes.c_str());
      wrong += run.wrong;
    }
  if (wrong) {
    std::fprintf(stderr, "fpm-bench-leftovers: %d calls were wrong\n", wrong);
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  bool isChild = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return std::atoi(argv[++i]);
    };
    if (arg == "--quick") {
      options.quick = true;
      options.points = 20000;
      options.calls = 6;
    } else if (arg == "--child") {
      isChild = true;
    } else if (arg == "--calls") {
      options.calls = value();
    } else if (arg == "--points") {
      options.points = value();
    } else if (arg == "--clusters") {
      options.clusters = value();
    } else {
      std::fprintf(stderr, "usage: fpm-bench-leftovers [--quick] [--calls N] "
                           "[--points N] [--clusters K]\n");
      return 2;
    }
  }
  if (options.calls < 2 || options.points < 1 || options.clusters < 1 ||
      options.clusters > options.points)
    die("needs --calls >= 2 and 1 <= --clusters <= --points");
  return isChild ? child(options) : parent(options);
}
