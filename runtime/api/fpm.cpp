//===- api/fpm.cpp - The C API of include/fpm/fpm.h -----------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Thin over exec/: reads the environment's overrides, turns C arguments into
// a LoopCall, and exceptions into status codes and fpm_last_error(). The
// environment is read once per call (readLoopEnvironment(), a few hundred
// nanoseconds) so that a program, or a test, may change it between loops.
// A little over 600 lines: every extern "C" entry point is here, each a
// few lines over the shared steps above them (describeCall, runCall), so
// that the C ABI reads as one list.
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm.h"

#include "api/part.hpp"
#include "data/sections.hpp"
#include "exec/devices.hpp"
#include "exec/exec.hpp"
#include "exec/loop_pes.hpp"
#include "exec/loop_state.hpp"
#include "exec/schedule_string.hpp"
#include "exec/trip_count.hpp"
#include "profiling/benchmark.hpp"
#include "reduce/reductions.hpp"
#include "residency/residency.hpp"
#include "store/online_profiles.hpp"
#include "support/environment.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

thread_local std::string lastError;

int fail(int status, std::string message) {
  lastError = std::move(message);
  return status;
}

std::string_view view(const char *text) {
  return text ? std::string_view(text) : std::string_view();
}

/// The PEs a call may use: FPM_DEVICES when set, else the loop's own (a
/// local call, a node's model of it under MPI, and the CPU-only notice all
/// ask this one rule).
fpm::DeviceSelection selectedDevices(const fpm_loop *loop,
                                     const fpm::LoopEnvironment &environment) {
  return environment.devices.empty()
             ? fpm::parseDevices(loop ? view(loop->devices) : "", "devices")
             : fpm::parseDevices(environment.devices, "FPM_DEVICES");
}

/// What a call of `arguments` is, as the local call (runCall) and a node's
/// model of it under MPI (nodePes) both see it: the loop's names, its
/// iterations, schedule (FPM_SCHEDULE over the loop's), devices
/// (selectedDevices) and kernel, checked (`spec` holds it for the call's
/// life). One place, so that the MPI node model plans the PEs the local
/// call will run on.
fpm::LoopCall describeCall(const fpm::LoopArguments &arguments,
                           const fpm::LoopEnvironment &environment,
                           std::optional<fpm::KernelSpec> &spec) {
  const fpm_loop defaults{};
  const fpm_loop &info = arguments.loop ? *arguments.loop : defaults;
  fpm::LoopCall call;
  call.name = view(info.name);
  call.file = view(info.file);
  call.line = info.line;
  call.grain = info.grain;
  call.tripCount = arguments.tripCount;
  call.schedule =
      environment.schedule.empty() ? view(info.schedule) : environment.schedule;
  call.devices = selectedDevices(&info, environment);
  if (arguments.kernel && arguments.tripCount > 0)
    spec = fpm::makeKernelSpec(*arguments.kernel, arguments.tripCount);
  call.kernel = spec ? &*spec : nullptr;
  return call;
}

/// The loop's reductions, when it has any: checked against the kernel's
/// reduction arguments, each of which must name one of them, every one
/// once.
std::vector<fpm::Reduction> checkReductions(std::span<const fpm_reduction> list,
                                            const fpm::KernelSpec *kernel) {
  std::vector<fpm::Reduction> reductions = fpm::makeReductions(list);
  if (!kernel)
    return reductions;
  const std::string what = fpm::kernelTitle(kernel->language) +
                           std::string(" '") + kernel->name + "'";
  std::vector<int> passed(reductions.size(), 0);
  for (std::size_t a = 0; a < kernel->args.size(); ++a) {
    const fpm::KernelArg &arg = kernel->args[a];
    if (arg.kind != fpm::KernelArg::Kind::Reduction)
      continue;
    const std::string where = what + ", argument " + std::to_string(a) + ": ";
    if (arg.offset >= static_cast<std::int64_t>(reductions.size()))
      throw std::invalid_argument(where + "reduction " +
                                  std::to_string(arg.offset) + " of " +
                                  std::to_string(reductions.size()));
    const fpm::Reduction &reduction =
        reductions[static_cast<std::size_t>(arg.offset)];
    if (arg.size != reduction.size())
      throw std::invalid_argument(
          where + "a value of " + std::to_string(arg.size) +
          " bytes for a reduction of " + std::to_string(reduction.size()));
    if (reduction.type == FPM_TYPE_LONG_DOUBLE &&
        kernel->language == FPM_KERNEL_OPENCL_C)
      throw std::invalid_argument(where + "OpenCL C has no long double");
    ++passed[static_cast<std::size_t>(arg.offset)];
  }
  for (std::size_t r = 0; r < passed.size(); ++r)
    if (passed[r] != 1)
      throw std::invalid_argument(
          what + ": reduction " + std::to_string(r) + " is passed " +
          std::to_string(passed[r]) +
          " times; each must be passed once (FPM_ARG_REDUCTION)");
  return reductions;
}

/// The router of every top-level call (setLoopRouter), and how many routed
/// calls run now: a loop nested in a routed loop's body runs locally.
std::atomic<fpm::LoopRouter> router{nullptr};
std::atomic<int> routing{0};

/// fpm_parallel_for_kernel and fpm_parallel_reduce: `reduceBody` with
/// `reductions`, else `body`; iterations `part` only when set, and then the
/// reductions' partials go to `outcome` instead of the variables.
int runCall(const fpm::LoopArguments &arguments, std::optional<fpm::Range> part,
            fpm::PartOutcome *outcome) {
  const fpm_loop *loop = arguments.loop;
  const int64_t trip_count = arguments.tripCount;
  const fpm_body_fn body = arguments.body;
  const fpm_reduce_body_fn reduceBody = arguments.reduceBody;
  void *const context = arguments.context;
  const std::span<const fpm_reduction> reductionList = arguments.reductions;
  const fpm_kernel *const kernel = arguments.kernel;
  try {
    const fpm_loop defaults{};
    const fpm_loop &info = loop ? *loop : defaults;
    const fpm::LoopEnvironment environment = fpm::readLoopEnvironment();
    // FPM_CHECK_DATA: between loops, the program must not change what the
    // devices of a data region hold too without `update device`.
    const bool checkData = environment.checkData && fpm::residency::active();
    if (checkData)
      if (const std::vector<std::string> changed =
              fpm::residency::changedSinceCheckpoint();
          !changed.empty())
        throw std::invalid_argument(
            "FPM_CHECK_DATA: the program changed " + changed.front() +
            " on the host inside a data region without 'update device' "
            "(fpm_update_device): the devices' copies are stale");
    std::optional<fpm::KernelSpec> spec;
    fpm::LoopCall call = describeCall(arguments, environment, spec);
    call.part = part;
    call.body = body;
    call.context = context;
    call.verbose = environment.verbose;
    call.steal = environment.steal;
    const bool overridden = !environment.schedule.empty();
    if (info.data_count < 0)
      throw std::invalid_argument("fpm_loop: data_count is negative (" +
                                  std::to_string(info.data_count) + ")");
    if (info.data_count > 0 && !info.data)
      throw std::invalid_argument("fpm_loop: data_count is " +
                                  std::to_string(info.data_count) +
                                  " but data is NULL");
    if (info.data_count > 0)
      call.data = {info.data, static_cast<std::size_t>(info.data_count)};
    if (trip_count > 0)
      fpm::checkLoopData(call.data, trip_count);

    // Reductions: every chunk's partial results go to `partials`; a
    // benchmark's runs to `benchmarkPartials`, which nothing applies.
    std::optional<fpm::ReductionPartials> partials, benchmarkPartials;
    fpm::ReduceCall reduceCall, benchmarkCall;
    if (reduceBody) {
      partials.emplace(checkReductions(reductionList, call.kernel));
      benchmarkPartials.emplace(checkReductions(reductionList, call.kernel));
      reduceCall = {reduceBody, context, &*partials};
      benchmarkCall = {reduceBody, context, &*benchmarkPartials};
      call.body = fpm::runReduceChunk;
      call.context = &reduceCall;
      call.reductions = &*partials;
    }

    // Verbose notes only: built when they will be printed.
    std::string note;
    if (call.verbose) {
      if (overridden)
        note = "schedule from FPM_SCHEDULE";
      if (!call.devices.cpu && !kernel)
        note += std::string(note.empty() ? "" : "; ") +
                "devices without cpu, but no OpenCL kernel: running on the "
                "CPU";
      call.note = note;
    }

    try {
      // fpm-profile: benchmark the loop first (once per process).
      if (trip_count > 0)
        if (std::optional<fpm::BenchmarkSettings> settings =
                fpm::benchmarkSettings(environment.benchmark)) {
          fpm::LoopCall benchmarked = call;
          if (reduceBody) {
            benchmarked.context = &benchmarkCall;
            benchmarked.reductions = &*benchmarkPartials;
          }
          fpm::benchmarkLoop(benchmarked, *settings);
        }
      const auto start = std::chrono::steady_clock::now();
      const fpm::LoopStatus status = fpm::runLoop(call);
      if (checkData)
        fpm::residency::checkpoint();
      if (status == fpm::LoopStatus::Stopped)
        return fail(FPM_ERROR_STOPPED, "a body stopped the loop");
      if (outcome) {
        outcome->seconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
        if (partials)
          for (auto &[range, values] : partials->records())
            outcome->partials.push_back({range, std::move(values)});
      } else if (partials) {
        partials->apply();
      }
      return FPM_OK;
    } catch (const fpm::ScheduleError &error) {
      // Name where a bad schedule came from: the user set it, not the code.
      return fail(FPM_ERROR_INVALID_ARGUMENT,
                  overridden ? "FPM_SCHEDULE: " + std::string(error.what())
                             : error.what());
    }
  } catch (const std::invalid_argument &error) {
    return fail(FPM_ERROR_INVALID_ARGUMENT, error.what());
  } catch (const std::exception &error) {
    return fail(FPM_ERROR_RUNTIME, error.what());
  } catch (...) {
    return fail(FPM_ERROR_RUNTIME, "unknown error");
  }
}

/// A top-level call: to the router when there is one.
int parallelFor(const fpm::LoopArguments &arguments) {
  if (const fpm::LoopRouter route = router.load(); route) {
    if (routing.fetch_add(1) == 0) {
      struct Leave {
        ~Leave() { routing.fetch_sub(1); }
      } leave;
      return route(arguments);
    }
    routing.fetch_sub(1);
  }
  return runCall(arguments, std::nullopt, nullptr);
}

} // namespace

int fpm::runLoopPart(const LoopArguments &arguments, Range part,
                     PartOutcome &outcome) {
  outcome = {};
  return runCall(arguments, part, &outcome);
}

int fpm::runLoopHere(const LoopArguments &arguments) {
  return runCall(arguments, std::nullopt, nullptr);
}

void fpm::setLoopRouter(LoopRouter route) { router.store(route); }

int fpm::setLastError(int status, std::string message) {
  return fail(status, std::move(message));
}

int fpm::checkReduceArguments(const char *caller, fpm_reduce_body_fn body,
                              const fpm_reduction *reductions, int count) {
  if (count < 0 || (count > 0 && !reductions))
    return fail(FPM_ERROR_INVALID_ARGUMENT,
                std::string(caller) + ": a bad reduction list (count " +
                    std::to_string(count) + ")");
  if (!body)
    return fail(FPM_ERROR_INVALID_ARGUMENT, "the loop has no body");
  return FPM_OK;
}

fpm::NodePes fpm::nodePes(const LoopArguments &arguments) {
  NodePes node;
  node.workers = cpuThreads();
  try {
    const LoopEnvironment environment = readLoopEnvironment();
    std::optional<KernelSpec> spec;
    const LoopCall call = describeCall(arguments, environment, spec);
    std::vector<LoopPe> pes;
    if (call.kernel && call.devices.wantsDevices())
      pes = coexecutionPes(call);
    for (const LoopPe &pe : pes)
      node.alignment = std::lcm(node.alignment, pe.alignment);
    if (pes.empty())
      pes.push_back({std::string(CpuProfileId), "", cpuThreads()});
    node.workers = 0;
    for (const LoopPe &pe : pes)
      node.workers += pe.id == CpuProfileId ? pe.threads : 1;
    if (call.name.empty())
      return node;
    const std::string loop(call.name);
    for (const LoopPe &pe : pes) {
      std::optional<Profile> stored = storedProfile(loop, pe.id);
      if (!stored) {
        node.models.clear();
        return node;
      }
      // One CPU thread's FPM: a team of c runs c*w in the time of w.
      if (pe.id == CpuProfileId)
        for (ProfilePoint &point : stored->points)
          point.size *= pe.threads;
      node.models.push_back(std::move(*stored));
    }
  } catch (const std::exception &) {
    node.models.clear(); // the call itself reports a bad setting
  }
  return node;
}

extern "C" int fpm_parallel_for_kernel(const fpm_loop *loop, int64_t trip_count,
                                       fpm_body_fn body, void *context,
                                       const fpm_kernel *kernel) {
  return parallelFor({loop, trip_count, body, nullptr, context, {}, kernel});
}

extern "C" int fpm_parallel_reduce(const fpm_loop *loop, int64_t trip_count,
                                   fpm_reduce_body_fn body, void *context,
                                   const fpm_reduction *reductions, int count,
                                   const fpm_kernel *kernel) {
  if (const int status = fpm::checkReduceArguments("fpm_parallel_reduce", body,
                                                   reductions, count);
      status != FPM_OK)
    return status;
  return parallelFor({loop,
                      trip_count,
                      nullptr,
                      body,
                      context,
                      {reductions, static_cast<std::size_t>(count)},
                      kernel});
}

extern "C" fpm_arg fpm_scalar_arg(const void *value, size_t size) {
  fpm_arg arg{};
  arg.kind = FPM_ARG_SCALAR;
  arg.data = const_cast<void *>(value);
  arg.size = size;
  return arg;
}

extern "C" fpm_arg fpm_origin_arg(int array) {
  fpm_arg arg{};
  arg.kind = FPM_ARG_ORIGIN;
  arg.offset = array;
  arg.size = sizeof(std::int64_t);
  return arg;
}

extern "C" fpm_arg fpm_mask_arg(int array, size_t unit) {
  fpm_arg arg{};
  arg.kind = FPM_ARG_MASK;
  arg.offset = array;
  arg.size = unit;
  return arg;
}

extern "C" fpm_arg fpm_end_arg(void) {
  fpm_arg arg{};
  arg.kind = FPM_ARG_END;
  arg.size = sizeof(std::uint64_t);
  return arg;
}

namespace {

/// Says on stderr, once per loop of the process, that `loop` runs on the
/// CPU only and why: a reason that only the values of a run could show
/// (fpm-rewrite says the others once, at the clause). Nothing where the
/// loop may use no device anyway (`FPM_DEVICES=cpu`, `devices(cpu)`).
void sayCpuOnly(const fpm_loop *loop, const std::string &why) {
  try {
    const fpm::LoopEnvironment environment = fpm::readLoopEnvironment();
    if (!selectedDevices(loop, environment).wantsDevices())
      return;
  } catch (const std::exception &) {
    // The call itself reports a malformed selection.
  }
  fpm::LoopCall call;
  call.name = loop ? view(loop->name) : std::string_view();
  call.file = loop ? view(loop->file) : std::string_view();
  call.line = loop ? loop->line : 0;
  bool first = false;
  fpm::withLoopState(fpm::loopKey(call), [&](fpm::LoopState &state) {
    first = !state.saidCpuOnly;
    state.saidCpuOnly = true;
  });
  if (first)
    std::fprintf(stderr, "fpm: %s: runs on the CPU only: %s\n",
                 fpm::loopLabel(call).c_str(), why.c_str());
}

} // namespace

extern "C" int fpm_kernel_fits(const fpm_loop *loop, const fpm_kernel *kernel,
                               int64_t trip_count) {
  try {
    if (!kernel)
      throw std::invalid_argument("no kernel");
    if (trip_count > 0)
      fpm::makeKernelSpec(*kernel, trip_count);
    return 1;
  } catch (const std::exception &error) {
    fail(FPM_ERROR_INVALID_ARGUMENT, error.what());
    sayCpuOnly(loop, error.what());
    return 0;
  }
}

extern "C" int fpm_parallel_for(const fpm_loop *loop, int64_t trip_count,
                                fpm_body_fn body, void *context) {
  return fpm_parallel_for_kernel(loop, trip_count, body, context, nullptr);
}

extern "C" int64_t fpm_trip_count(int64_t lower, int64_t upper, int64_t step,
                                  int compare, int is_unsigned) {
  const fpm::IntType type{64, is_unsigned == 0};
  return fpm::tripCount(lower, upper, step, compare, type, type);
}

extern "C" int64_t fpm_trip_count_typed(int64_t lower, int64_t upper,
                                        int64_t step, int compare, int var_type,
                                        int compare_type) {
  return fpm::tripCount(lower, upper, step, compare,
                        fpm::IntType::fromCode(var_type),
                        fpm::IntType::fromCode(compare_type));
}

extern "C" int64_t fpm_sample_iteration(int64_t trip_count, int sample) {
  if (trip_count < 1)
    return 0;
  switch (sample) {
  case 1:
    return std::min<int64_t>(1, trip_count - 1);
  case 2:
    return trip_count - 1;
  default:
    return 0;
  }
}

extern "C" int fpm_describe_sections(fpm_loop *loop, fpm_arg *args,
                                     const fpm_section *sections, int count,
                                     int64_t trip_count) {
  bool affine = trip_count > 0 && count > 0 && args && sections;
  std::string why;
  for (int i = 0; affine && i < count; ++i) {
    fpm::DescribedSection described =
        fpm::describeSection(sections[i], trip_count);
    if (described.arg)
      args[i] = *described.arg;
    else if (sections[i].clause && *sections[i].clause)
      why = std::string(sections[i].clause) + ": " + described.why;
    else
      why = "section " + std::to_string(i) + ": " + described.why;
    affine = described.arg.has_value();
  }
  // The checks fpm_parallel_for makes of fpm_loop::data: kinds, bases and
  // sizes (the sections lie in their arrays by construction).
  if (affine) {
    try {
      fpm::checkLoopData({args, static_cast<std::size_t>(count)}, trip_count);
    } catch (const std::exception &error) {
      affine = false;
      why = error.what();
    }
  }
  // fpm-rewrite passes only sections whose bounds are affine in the loop
  // variable with a length that does not change with it: what fails here
  // is a value of this run (a length of 0).
  if (!why.empty() && loop)
    sayCpuOnly(loop, why + ", so the runtime takes none of the loop's "
                           "sections");
  if (loop) {
    loop->data = affine ? args : nullptr;
    loop->data_count = affine ? count : 0;
  }
  return affine ? 1 : 0;
}

static_assert(FPM_DATA_IN == static_cast<int>(fpm::residency::Map::In) &&
              FPM_DATA_OUT == static_cast<int>(fpm::residency::Map::Out) &&
              FPM_DATA_INOUT == static_cast<int>(fpm::residency::Map::InOut) &&
              FPM_DATA_CREATE == static_cast<int>(fpm::residency::Map::Create));

namespace {

/// A data region's arrays (fpm_data_begin, fpm_data_end), checked.
std::vector<fpm::residency::Mapping> mappings(const fpm_data *arrays, int count,
                                              const char *call) {
  if (count < 0 || (count > 0 && !arrays))
    throw std::invalid_argument(std::string(call) + ": " +
                                std::to_string(count) + " arrays at " +
                                (arrays ? "an address" : "NULL"));
  std::vector<fpm::residency::Mapping> list;
  for (int i = 0; i < count; ++i) {
    const fpm_data &array = arrays[i];
    if (array.map < FPM_DATA_IN || array.map > FPM_DATA_CREATE)
      throw std::invalid_argument(std::string(call) + ": array " +
                                  std::to_string(i) + " has map " +
                                  std::to_string(array.map) +
                                  " (FPM_DATA_IN, _OUT, _INOUT or _CREATE)");
    list.push_back({array.data, array.bytes,
                    static_cast<fpm::residency::Map>(array.map),
                    array.name ? array.name : ""});
  }
  return list;
}

/// Runs `what`, turning its exceptions into a status and fpm_last_error.
template <class What> int guarded(What what) {
  try {
    what();
    return FPM_OK;
  } catch (const std::invalid_argument &error) {
    return fail(FPM_ERROR_INVALID_ARGUMENT, error.what());
  } catch (const std::exception &error) {
    return fail(FPM_ERROR_RUNTIME, error.what());
  }
}

} // namespace

/// What the coherence had moved when the outermost region began, for
/// FPM_VERBOSE's line at its end.
std::mutex regionsMutex;
fpm::residency::Traffic regionsStart;

extern "C" int fpm_data_begin(const fpm_data *arrays, int count) {
  return guarded([&] {
    const std::lock_guard lock(regionsMutex);
    if (!fpm::residency::active())
      regionsStart = fpm::residency::traffic();
    fpm::residency::begin(mappings(arrays, count, "fpm_data_begin"));
    if (fpm::readLoopEnvironment().checkData)
      fpm::residency::checkpoint();
  });
}

extern "C" int fpm_data_end(const fpm_data *arrays, int count) {
  return guarded([&] {
    const std::lock_guard lock(regionsMutex);
    fpm::residency::end(mappings(arrays, count, "fpm_data_end"));
    if (fpm::residency::active() || !fpm::readLoopEnvironment().verbose)
      return;
    const fpm::residency::Traffic now = fpm::residency::traffic();
    std::fprintf(
        stderr,
        "fpm: data regions ended: %llu bytes went to devices and "
        "%llu came back to the host while they lasted\n",
        static_cast<unsigned long long>(now.toDevices - regionsStart.toDevices),
        static_cast<unsigned long long>(now.toHost - regionsStart.toHost));
    // libfpmrt-mpi's ranks keep what they wrote (mpi/owner_computes.hpp).
    const std::uint64_t forLoops =
        now.fromRanksForLoops - regionsStart.fromRanksForLoops;
    const std::uint64_t toGather =
        now.fromRanksToGather - regionsStart.fromRanksToGather;
    if (forLoops + toGather > 0)
      std::fprintf(stderr,
                   "fpm: this rank received %llu bytes from other ranks "
                   "before loops and %llu to make arrays whole\n",
                   static_cast<unsigned long long>(forLoops),
                   static_cast<unsigned long long>(toGather));
  });
}

extern "C" int fpm_update_host(const void *data, size_t bytes) {
  return guarded([&] {
    fpm::residency::updateHost(data, bytes);
    if (fpm::readLoopEnvironment().checkData)
      fpm::residency::checkpoint();
  });
}

extern "C" int fpm_update_device(const void *data, size_t bytes) {
  return guarded([&] {
    fpm::residency::updateDevices(data, bytes);
    if (fpm::readLoopEnvironment().checkData)
      fpm::residency::checkpoint();
  });
}

extern "C" const char *fpm_last_error(void) { return lastError.c_str(); }

extern "C" int fpm_cpu_threads(void) { return fpm::cpuThreads(); }
