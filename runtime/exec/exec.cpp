//===- exec/exec.cpp - Runs one loop over the processing elements ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A call with devices goes to coexec.cpp. A CPU-only call looks up
// the planner's Plan (plan.hpp) for its schedule, iterations, grain and
// team size in a small per-thread cache, then runs one `#pragma omp
// parallel` region in which every thread is a PE:
//  - self-scheduling: all threads draw from one ChunkGenerator (reset, not
//    rebuilt, when the plan is reused), so the hot path allocates nothing;
//  - static partitioners: the distribution is computed once per plan, and
//    each thread runs the packages of its PE;
//  - `auto` on several threads: equal shares, or self-scheduled chunks while
//    the threads run at different speeds (Adaptation, cpu_adaptation.hpp).
// The cache is per thread so that lookups take no lock; a plan is marked in
// use so that a body that calls the runtime again on the same thread gets a
// plan of its own.
//
// Online profiling of a named loop (store/online_profiles.hpp): a call the
// loop's recorder says is due (one per millisecond at most, never the
// loop's first) has each thread time its whole share, and adds one sample
// per thread, its iterations and busy time, to the loop's `cpu` profile
// (one thread's). Any other call costs a lookup in a small per-thread cache
// and, while calls are timed or now and then when they are not, a clock
// read and an atomic load.
//
//===----------------------------------------------------------------------===//

#include "exec/exec.hpp"

#include "device/cpu_driver.hpp"
#include "exec/coexec.hpp"
#include "exec/cpu_adaptation.hpp"
#include "exec/host_access.hpp"
#include "exec/loop_state.hpp"
#include "exec/plan.hpp"
#include "exec/schedule_string.hpp"
#include "exec/trip_count.hpp"
#include "exec/verbose_splits.hpp"
#include "schedule/schedule.hpp"
#include "store/online_profiles.hpp"
#include "support/int_math.hpp"
#include "trace/trace.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fpm {
namespace {

/// How many plans each thread keeps: a program's hot loops, roughly.
constexpr std::size_t PlanCacheSize = 8;
/// How many loop names' profile recorders each thread keeps at hand.
constexpr std::size_t RecorderCacheSize = 8;
/// The most calls of a named loop between two clock reads that ask whether
/// to time a call (a read costs as much as ~20% of a one-thread call).
constexpr std::uint32_t MaxAskStride = 256;

/// The most chunk or package sizes a verbose line lists.
constexpr std::size_t VerboseListed = 8;

/// The planner's split for one shape of call on the CPU team, with what
/// running it needs at hand.
struct CpuPlan {
  // The key.
  std::string scheduleText;
  std::int64_t iterations = 0;
  std::int64_t grain = 0;
  int threads = 1;

  LoopSchedule schedule;
  Plan plan;
  /// Self-scheduling: the plan's scheme, drawn by every thread at once.
  std::unique_ptr<ChunkGenerator> generator;

  /// Per thread, the iterations it ran and its busy time in a call that is
  /// profiled or measured for `auto` (one slot each, so that the call
  /// allocates nothing).
  std::vector<Sample> timings;
  Adaptation adaptation; ///< for `auto` on several threads

  bool inUse = false;
  std::uint64_t lastUse = 0;
  std::string description; ///< for FPM_VERBOSE; built on first need

  bool matches(std::string_view text, std::int64_t size, std::int64_t g,
               int team) const {
    return iterations == size && grain == g && threads == team &&
           scheduleText == text;
  }
};

std::unique_ptr<CpuPlan> buildPlan(std::string_view text,
                                   std::int64_t iterations, std::int64_t grain,
                                   int threads) {
  auto cpu = std::make_unique<CpuPlan>();
  cpu->scheduleText = std::string(text);
  cpu->iterations = iterations;
  cpu->grain = grain;
  cpu->threads = threads;
  cpu->schedule = parseLoopSchedule(text);
  cpu->timings.resize(static_cast<std::size_t>(threads));
  // Every PE a thread of one CPU: alike, at one speed.
  std::vector<PlanPe> pes;
  for (int t = 0; t < threads; ++t)
    pes.push_back({"cpu" + std::to_string(t), 1, 1.0, false});
  PlanRequest request;
  request.schedule = &cpu->schedule;
  request.pes = pes;
  request.tripCount = iterations;
  request.grain = grain;
  request.alike = true;
  cpu->plan = makePlan(request);
  if (cpu->plan.kind == Plan::Kind::Dynamic)
    cpu->generator = std::make_unique<ChunkGenerator>(cpu->plan.dynamic);
  return cpu;
}

/// Plans this thread used last, least recently used replaced first.
class PlanCache {
public:
  PlanCache() = default;
  PlanCache(const PlanCache &) = delete;
  PlanCache &operator=(const PlanCache &) = delete;
  /// A plan in use when its thread ends is one whose call is still
  /// running: a body called exit(), which destroys the calling thread's
  /// thread_locals while the rest of the team still draws chunks from the
  /// plan's generator. Such plans are left to the process, on purpose.
  ~PlanCache() {
    for (std::unique_ptr<CpuPlan> &slot : slots_)
      if (slot && slot->inUse)
        static_cast<void>(slot.release());
  }

  /// A plan for this shape, not in use; built (and maybe thrown from) on a
  /// miss. `spare` owns it when every slot is in use.
  CpuPlan &get(std::string_view text, std::int64_t iterations,
               std::int64_t grain, int threads,
               std::unique_ptr<CpuPlan> &spare) {
    ++clock_;
    CpuPlan *victim = nullptr;
    for (std::unique_ptr<CpuPlan> &slot : slots_) {
      if (slot && !slot->inUse &&
          slot->matches(text, iterations, grain, threads)) {
        slot->lastUse = clock_;
        return *slot;
      }
    }
    std::unique_ptr<CpuPlan> fresh =
        buildPlan(text, iterations, grain, threads);
    fresh->lastUse = clock_;
    std::unique_ptr<CpuPlan> *slotFor = nullptr;
    for (std::unique_ptr<CpuPlan> &slot : slots_) {
      if (!slot) {
        slotFor = &slot;
        break;
      }
      if (!slot->inUse && (!victim || slot->lastUse < victim->lastUse)) {
        victim = slot.get();
        slotFor = &slot;
      }
    }
    if (!slotFor) {
      spare = std::move(fresh);
      return *spare;
    }
    *slotFor = std::move(fresh);
    return **slotFor;
  }

private:
  std::array<std::unique_ptr<CpuPlan>, PlanCacheSize> slots_;
  std::uint64_t clock_ = 0;
};

/// Marks a plan in use for the length of a call.
class InUse {
public:
  explicit InUse(CpuPlan &plan) : plan_(plan) { plan_.inUse = true; }
  InUse(const InUse &) = delete;
  InUse &operator=(const InUse &) = delete;
  ~InUse() { plan_.inUse = false; }

private:
  CpuPlan &plan_;
};

void listSizes(std::ostringstream &out,
               const std::vector<std::int64_t> &sizes) {
  for (std::size_t i = 0; i < sizes.size() && i < VerboseListed; ++i)
    out << (i ? ", " : "") << sizes[i];
  if (sizes.size() > VerboseListed)
    out << ", ... (" << sizes.size() << " in all)";
}

std::string describe(const CpuPlan &cpu) {
  const Plan &plan = cpu.plan;
  std::ostringstream out;
  out << cpu.iterations << " iteration" << (cpu.iterations == 1 ? "" : "s")
      << ", schedule " << cpu.schedule.text;
  if (!plan.reason.empty())
    out << " (" << plan.reason << ")";
  out << " on " << cpu.threads << " CPU thread"
      << (cpu.threads == 1 ? "" : "s");
  if (plan.granule > 1)
    out << ", grain " << plan.granule;
  out << ": ";
  if (plan.kind == Plan::Kind::Static) {
    std::vector<std::int64_t> perThread;
    std::vector<std::int64_t> packageCounts;
    bool several = false;
    for (std::size_t pe = 0; pe < plan.packages.size(); ++pe) {
      perThread.push_back(plan.planned(pe));
      const auto count = static_cast<std::int64_t>(plan.packages[pe].size());
      packageCounts.push_back(count);
      several = several || count > 1;
    }
    out << "iterations per thread ";
    listSizes(out, perThread);
    if (several) {
      out << "; packages per thread ";
      listSizes(out, packageCounts);
    }
    return out.str();
  }
  const ScheduleSpec &spec = plan.dynamic;
  if (spec.scheme == Scheme::Pss || spec.scheme == Scheme::Css) {
    // ~T chunks: never listed.
    const std::int64_t size = spec.scheme == Scheme::Pss ? 1 : spec.chunk;
    out << "chunks of " << size * plan.granule << " iteration"
        << (size * plan.granule == 1 ? "" : "s") << " ("
        << ceilDiv(spec.iterations, size) << " chunks)";
    return out.str();
  }
  const ChunkSequence sequence = chunkSequence(spec);
  // Granules to iterations: every chunk is whole granules but the last.
  std::int64_t at = 0;
  auto iterations = [&](std::int64_t units) {
    const std::int64_t begin = at * plan.granule;
    at += units;
    const std::int64_t end =
        at >= spec.iterations ? cpu.iterations : at * plan.granule;
    return end - begin;
  };
  if (!sequence.stage1.empty()) {
    std::vector<std::int64_t> shares;
    for (std::int64_t units : sequence.stage1)
      shares.push_back(iterations(units));
    out << "stage 1 shares ";
    listSizes(out, shares);
    out << "; then ";
  }
  std::vector<std::int64_t> chunks;
  for (std::int64_t units : sequence.chunks)
    chunks.push_back(iterations(units));
  out << "chunks ";
  listSizes(out, chunks);
  return out.str();
}

/// Prints a verbose line once per loop site and split, for the first few
/// splits of the loop (printSplit), from any thread.
void printOnce(const LoopCall &call, CpuPlan &plan) {
  if (plan.description.empty())
    plan.description = describe(plan);
  std::ostringstream line;
  line << "fpm: " << loopLabel(call) << ": " << plan.description;
  if (!call.note.empty())
    line << " (" << call.note << ")";
  line << "\n";
  std::string text = line.str();
  printSplit(loopKey(call), loopLabel(call), text, text);
}

/// What FPM_TRACE or FPM_VERBOSE asks of a call: each thread's busy time
/// (in the plan's timings) and, traced, its chunks under `loop`.
struct Recording {
  bool trace = false;
  std::string_view loop;
};

/// A named loop's profile recorder as one thread keeps it, and how often
/// this thread asks it whether a call is due: every call while calls are
/// timed, else every `stride` calls or so (up to MaxAskStride), so that a
/// loop of microsecond calls does not read the clock each time.
struct RecorderSlot {
  const char *name = nullptr;
  ProfileRecorder *recorder = nullptr;
  std::uint32_t skip = 0;   ///< calls left before the next ask
  std::uint32_t stride = 0; ///< the mean calls between asks; 0: none yet
};

/// The slot of the loop named `name` (not empty), from a small per-thread
/// cache: names are usually string literals, so the slot whose pointer
/// matches is tried first; the text decides.
RecorderSlot &recorderFor(std::string_view name) {
  thread_local std::array<RecorderSlot, RecorderCacheSize> slots;
  thread_local std::size_t replace = 0;
  for (RecorderSlot &slot : slots)
    if (slot.name == name.data() && slot.recorder->loop() == name)
      return slot;
  for (RecorderSlot &slot : slots)
    if (slot.recorder && slot.recorder->loop() == name) {
      slot.name = name.data();
      return slot;
    }
  RecorderSlot &slot = slots[replace];
  replace = (replace + 1) % slots.size();
  slot = {name.data(), &profileRecorder(name, CpuProfileId, CpuProfileName)};
  return slot;
}

/// Whether this call of the slot's loop is to be timed (its recorder's
/// due()); `now` is trace::now() when the caller has read it, else < 0.
/// Asks are spaced at random around the stride, so that a program that
/// alternates shapes has each of them timed.
bool timeThisCall(RecorderSlot &slot, std::int64_t now) {
  if (slot.skip > 0) {
    --slot.skip;
    return false;
  }
  const bool due = slot.recorder->due(now >= 0 ? now : trace::now());
  // A thread's first ask says nothing of the rate of calls (and the loop's
  // first call is never due).
  if (slot.stride == 0)
    slot.stride = 1;
  else
    slot.stride = due ? std::max<std::uint32_t>(slot.stride / 2, 1)
                      : std::min<std::uint32_t>(slot.stride * 2, MaxAskStride);
  if (slot.stride > 1) {
    thread_local std::uint32_t random = 2463534242u; // xorshift32
    random ^= random << 13;
    random ^= random >> 17;
    random ^= random << 5;
    slot.skip = slot.stride / 2 + random % slot.stride;
  }
  return due;
}

/// One thread's share of a call: its chunks through the CPU runner, timed
/// when `timings` is set (traced too with `recording`'s trace), and its
/// iterations and busy time written to its slot of `timings` at the end.
class ThreadShare {
public:
  ThreadShare(const LoopCall &call, const Recording *recording, Sample *timings,
              int worker)
      : target_{recording ? recording->loop : std::string_view(), 1 + worker},
        runner_(call.body, call.context, timings != nullptr,
                recording && recording->trace ? &target_ : nullptr),
        slot_(timings ? timings + worker : nullptr) {}
  ThreadShare(const ThreadShare &) = delete;
  ThreadShare &operator=(const ThreadShare &) = delete;
  ~ThreadShare() {
    if (slot_)
      *slot_ = {runner_.iterations(), runner_.busySeconds()};
  }
  /// Runs [begin, end) of the call's iterations; true when the loop must
  /// stop.
  bool run(std::int64_t begin, std::int64_t end, std::atomic<bool> &stop) {
    if (runner_.run({begin, end}) == 0)
      return false;
    stop.store(true, std::memory_order_relaxed);
    return true;
  }

private:
  TraceTarget target_;
  CpuChunkRunner runner_;
  Sample *slot_;
};

/// One thread's share of a self-scheduled loop.
void drawChunks(const LoopCall &call, const CpuPlan &cpu,
                ChunkGenerator &generator, int worker, std::atomic<bool> &stop,
                const Recording *recording, Sample *timings) {
  ThreadShare share(call, recording, timings, worker);
  const std::int64_t units = generator.iterations();
  const std::int64_t granule = cpu.plan.granule;
  const std::int64_t base = call.iterations().begin;
  while (!stop.load(std::memory_order_relaxed)) {
    const std::optional<Chunk> chunk = generator.next(worker);
    if (!chunk)
      return;
    // Granules to iterations; the last granule ends at the last iteration.
    // No overflow: an end below `units` granules is below it.
    const std::int64_t unitEnd = chunk->begin + chunk->size;
    const std::int64_t begin = chunk->begin * granule;
    const std::int64_t end =
        unitEnd >= units ? cpu.iterations : unitEnd * granule;
    if (share.run(base + begin, base + end, stop))
      return;
  }
}

/// The packages of PEs worker, worker + team, ...: all of them when the team
/// came out smaller than planned.
void runPackages(const LoopCall &call, const CpuPlan &cpu, int worker, int team,
                 std::atomic<bool> &stop, const Recording *recording,
                 Sample *timings) {
  ThreadShare share(call, recording, timings, worker);
  const std::int64_t base = call.iterations().begin;
  const std::vector<std::vector<Range>> &packages = cpu.plan.packages;
  for (std::size_t pe = static_cast<std::size_t>(worker); pe < packages.size();
       pe += static_cast<std::size_t>(team))
    for (const Range &package : packages[pe]) {
      if (stop.load(std::memory_order_relaxed))
        return;
      if (share.run(base + package.begin, base + package.end, stop))
        return;
    }
}

} // namespace

LoopStatus runLoop(const LoopCall &call) {
  if (call.tripCount < 0)
    throw std::invalid_argument(negativeTripCount(call.tripCount));
  if (call.grain < 0)
    throw std::invalid_argument("the grain must be >= 0, got " +
                                std::to_string(call.grain));
  if (!call.body)
    throw std::invalid_argument("the loop has no body");
  const Range iterations = call.iterations();
  if (iterations.begin < 0 || iterations.end > call.tripCount ||
      iterations.begin > iterations.end)
    throw std::invalid_argument(
        "the part [" + std::to_string(iterations.begin) + ", " +
        std::to_string(iterations.end) + ") is not within the loop's " +
        std::to_string(call.tripCount) + " iterations");

  // With a kernel and devices, the CPU team and the devices together;
  // else (or when no device can be used) the CPU team alone.
  std::string coexecutionNote;
  if (call.kernel && call.devices.wantsDevices() && iterations.size() > 0) {
    if (std::optional<LoopStatus> status =
            runCoexecution(call, coexecutionNote))
      return *status;
  }
  if (!coexecutionNote.empty() && call.verbose) {
    LoopCall cpuOnly = call;
    std::string note(call.note);
    note +=
        (note.empty() ? "" : "; ") + coexecutionNote + ": running on the CPU";
    cpuOnly.note = note;
    cpuOnly.kernel = nullptr;
    return runLoop(cpuOnly);
  }

  const int threads = cpuThreads();
  thread_local PlanCache cache;
  std::unique_ptr<CpuPlan> spare;
  CpuPlan &plan =
      cache.get(call.schedule, iterations.size(), call.grain, threads, spare);
  const InUse inUse(plan);
  if (call.verbose)
    printOnce(call, plan);
  if (iterations.size() == 0)
    return LoopStatus::Completed;
  // In a data region: the host's copies of what the call reads, current;
  // what it writes, the host's once it ran (below).
  const HostAccess host(call);
  if (host.needed())
    host.before(iterations);
  // Per-chunk times only when someone reads them.
  std::optional<Recording> recording;
  const bool tracing = trace::enabled();
  if (tracing || call.verbose) {
    recording.emplace();
    recording->trace = tracing;
    recording->loop =
        call.name.empty() ? std::string_view("(unnamed)") : call.name;
    if (tracing)
      for (int t = 0; t < threads; ++t)
        trace::nameLane(1 + t, "cpu thread " + std::to_string(t));
  }
  const Recording *record = recording ? &*recording : nullptr;
  const std::int64_t started = record ? trace::now() : 0;

  // Online profiling: when this call is due, each thread's share.
  ProfileRecorder *recorder = nullptr;
  if (!call.name.empty()) {
    RecorderSlot &slot = recorderFor(call.name);
    if (timeThisCall(slot, record ? started : -1))
      recorder = slot.recorder;
  }
  // `auto` measures its threads now and then (Adaptation).
  const bool adaptive = plan.schedule.automatic && threads > 1;
  const bool measured = adaptive && plan.adaptation.measureThisCall();
  // Each thread's iterations and busy time, for whoever of these reads
  // them; a thread of a smaller team than planned leaves its slot empty.
  Sample *timings = nullptr;
  if (record || recorder || measured) {
    std::fill(plan.timings.begin(), plan.timings.end(), Sample{0, 0.0});
    timings = plan.timings.data();
  }

  std::atomic<bool> stop{false};
  ChunkGenerator *drawn = plan.adaptation.guided() ? plan.adaptation.generator()
                                                   : plan.generator.get();
  if (drawn) {
    ChunkGenerator &generator = *drawn;
    generator.reset();
    if (threads == 1) {
      drawChunks(call, plan, generator, 0, stop, record, timings);
    } else {
#pragma omp parallel num_threads(threads)
      drawChunks(call, plan, generator, omp_get_thread_num(), stop, record,
                 timings);
    }
  } else if (threads == 1) {
    runPackages(call, plan, 0, 1, stop, record, timings);
  } else {
#pragma omp parallel num_threads(threads)
    runPackages(call, plan, omp_get_thread_num(), omp_get_num_threads(), stop,
                record, timings);
  }
  const bool stopped = stop.load(std::memory_order_relaxed);
  if (host.needed() && !stopped)
    host.after(iterations);
  // A stopped call's shares are cut short where a body failed: not kept.
  if (recorder && !stopped)
    recorder->record(plan.plan.granule, plan.timings, trace::now());
  if (measured && !stopped)
    plan.adaptation.update(call, plan.timings,
                           ceilDiv(plan.iterations, plan.plan.granule),
                           plan.threads);
  if (record) {
    trace::CallStats stats{std::string(record->loop)};
    double busy = 0;
    std::int64_t ran = 0;
    for (const auto &[iterations, seconds] : plan.timings) {
      busy += seconds;
      ran += iterations;
    }
    stats.teamBusy("cpu", busy, ran, threads);
    stats.finish(static_cast<double>(trace::now() - started) * 1e-9);
  }
  return stopped ? LoopStatus::Stopped : LoopStatus::Completed;
}

} // namespace fpm
