//===- exec/exec.cpp - Runs one loop over the processing elements ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A call looks up a Plan (the parsed schedule and its split for this trip
// count, grain and team size) in a small per-thread cache, then runs one
// `#pragma omp parallel` region in which every thread is a PE:
//  - self-scheduling: all threads draw from one ChunkGenerator (reset, not
//    rebuilt, when the plan is reused), so the hot path allocates nothing;
//  - static partitioners: the distribution is computed once per plan, and
//    each thread runs the packages of its PE.
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

#include "exec/coexec.hpp"
#include "exec/schedule_string.hpp"
#include "partition/partition.hpp"
#include "schedule/schedule.hpp"
#include "store/online_profiles.hpp"
#include "trace/trace.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fpm {
namespace {

/// The exact solvers grow as O(p (N/G)^2): they get at most this many
/// granules, which they solve in milliseconds.
constexpr std::int64_t ExactSolverUnits = 1024;
/// The others get at most this many: finer splits gain nothing on CPU
/// threads, and WDAH's search slows down past ~1e7 granules.
constexpr std::int64_t StaticUnits = std::int64_t{1} << 20;

/// How many plans each thread keeps: a program's hot loops, roughly.
constexpr std::size_t PlanCacheSize = 8;
/// How many loop names' profile recorders each thread keeps at hand.
constexpr std::size_t RecorderCacheSize = 8;
/// The most calls of a named loop between two clock reads that ask whether
/// to time a call (a read costs as much as ~20% of a one-thread call).
constexpr std::uint32_t MaxAskStride = 256;

/// The most chunk or package sizes a verbose line lists.
constexpr std::size_t VerboseListed = 8;

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// A schedule split for one shape of call.
struct Plan {
  // The key.
  std::string scheduleText;
  std::int64_t tripCount = 0;
  std::int64_t grain = 0;
  int threads = 1;

  LoopSchedule schedule;
  /// Iterations per granule: chunks and packages are whole granules but for
  /// the last, which ends at T.
  std::int64_t granule = 1;

  /// Self-scheduling over ceil(T / granule) granules.
  std::unique_ptr<ChunkGenerator> generator;
  /// Static: PE p runs packages[firstPackage[p] .. firstPackage[p + 1]),
  /// in iterations, laid out PE after PE.
  std::vector<Chunk> packages;
  std::vector<std::size_t> firstPackage;

  /// Per thread, the iterations it ran and its busy time in a call that is
  /// profiled (one slot each, so that the call allocates nothing).
  std::vector<Sample> timings;

  bool inUse = false;
  std::uint64_t lastUse = 0;
  std::string description; ///< for FPM_VERBOSE; built on first need

  bool matches(std::string_view text, std::int64_t trips, std::int64_t g,
               int team) const {
    return tripCount == trips && grain == g && threads == team &&
           scheduleText == text;
  }
};

/// Identical constant-speed profiles, one per thread: all PEs are CPU
/// threads of one machine until stored profiles exist (a later issue).
CostModel identicalThreads(int threads, std::int64_t tripCount) {
  std::vector<Profile> profiles;
  profiles.reserve(static_cast<std::size_t>(threads));
  // Two points, so that interpolating partitioners (numerical's Akima) have
  // a segment; time = size, speed 1 everywhere.
  const std::int64_t largest = std::max<std::int64_t>(tripCount, 2);
  for (int t = 0; t < threads; ++t) {
    Profile profile;
    profile.kernel = "loop";
    profile.device = "cpu" + std::to_string(t);
    profile.points = {{1, 1.0, {}, {}},
                      {largest, static_cast<double>(largest), {}, {}}};
    profiles.push_back(std::move(profile));
  }
  return CostModel(std::move(profiles));
}

void buildStatic(Plan &plan) {
  const Partitioner &partitioner = *plan.schedule.partitioner;
  const std::int64_t granule =
      staticGranule(partitioner, plan.tripCount, plan.grain);
  plan.granule = granule;

  const CostModel model = identicalThreads(plan.threads, plan.tripCount);
  PartitionRequest request;
  request.size = plan.tripCount;
  request.granularity = granule;
  request.backtrack = plan.schedule.backtrack;
  const Distribution distribution = partition(partitioner, model, request);

  plan.firstPackage.assign(1, 0);
  std::int64_t begin = 0;
  for (const std::vector<std::int64_t> &pe : distribution.packages) {
    for (std::int64_t size : pe)
      if (size > 0) {
        plan.packages.push_back({begin, size});
        begin += size;
      }
    plan.firstPackage.push_back(plan.packages.size());
  }
  // A partitioner bug must not lose or repeat iterations.
  if (begin != plan.tripCount ||
      plan.firstPackage.size() != static_cast<std::size_t>(plan.threads) + 1)
    throw std::logic_error(std::string(partitioner.name) +
                           " returned a distribution of " +
                           std::to_string(begin) + " iterations over " +
                           std::to_string(plan.firstPackage.size() - 1) +
                           " PEs for " + std::to_string(plan.tripCount) +
                           " iterations over " + std::to_string(plan.threads));
}

ScheduleSpec dynamicSpec(const Plan &plan) {
  ScheduleSpec spec;
  spec.scheme = plan.schedule.scheme;
  spec.iterations = ceilDiv(plan.tripCount, plan.granule);
  spec.workers = plan.threads;
  spec.chunk = plan.schedule.chunk;
  spec.alpha = plan.schedule.alpha;
  // Stage-1 weights are equal: every PE is a thread of the same CPU. They
  // come from profiles once GPU PEs take part (a later issue).
  if (spec.alpha)
    spec.weights.assign(static_cast<std::size_t>(plan.threads), 1.0);
  return spec;
}

std::unique_ptr<Plan> buildPlan(std::string_view text, std::int64_t tripCount,
                                std::int64_t grain, int threads) {
  auto plan = std::make_unique<Plan>();
  plan->scheduleText = std::string(text);
  plan->tripCount = tripCount;
  plan->grain = grain;
  plan->threads = threads;
  plan->schedule = parseLoopSchedule(text);
  plan->timings.resize(static_cast<std::size_t>(threads));
  if (plan->schedule.kind == LoopSchedule::Kind::Static) {
    buildStatic(*plan);
  } else {
    plan->granule = grain > 0 ? grain : 1;
    plan->generator = std::make_unique<ChunkGenerator>(dynamicSpec(*plan));
  }
  return plan;
}

/// Plans this thread used last, least recently used replaced first.
class PlanCache {
public:
  /// A plan for this shape, not in use; built (and maybe thrown from) on a
  /// miss. `spare` owns it when every slot is in use.
  Plan &get(std::string_view text, std::int64_t tripCount, std::int64_t grain,
            int threads, std::unique_ptr<Plan> &spare) {
    ++clock_;
    Plan *victim = nullptr;
    for (std::unique_ptr<Plan> &slot : slots_) {
      if (slot && !slot->inUse &&
          slot->matches(text, tripCount, grain, threads)) {
        slot->lastUse = clock_;
        return *slot;
      }
    }
    std::unique_ptr<Plan> fresh = buildPlan(text, tripCount, grain, threads);
    fresh->lastUse = clock_;
    std::unique_ptr<Plan> *slotFor = nullptr;
    for (std::unique_ptr<Plan> &slot : slots_) {
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
  std::array<std::unique_ptr<Plan>, PlanCacheSize> slots_;
  std::uint64_t clock_ = 0;
};

/// Marks a plan in use for the length of a call.
class InUse {
public:
  explicit InUse(Plan &plan) : plan_(plan) { plan_.inUse = true; }
  InUse(const InUse &) = delete;
  InUse &operator=(const InUse &) = delete;
  ~InUse() { plan_.inUse = false; }

private:
  Plan &plan_;
};

void listSizes(std::ostringstream &out,
               const std::vector<std::int64_t> &sizes) {
  for (std::size_t i = 0; i < sizes.size() && i < VerboseListed; ++i)
    out << (i ? ", " : "") << sizes[i];
  if (sizes.size() > VerboseListed)
    out << ", ... (" << sizes.size() << " in all)";
}

std::string describe(const Plan &plan) {
  std::ostringstream out;
  out << plan.tripCount << " iteration" << (plan.tripCount == 1 ? "" : "s")
      << ", schedule " << plan.schedule.text;
  if (plan.schedule.automatic)
    out << " (" << plan.schedule.partitioner->name
        << ": the CPU threads are alike)";
  out << " on " << plan.threads << " CPU thread"
      << (plan.threads == 1 ? "" : "s");
  if (plan.granule > 1)
    out << ", grain " << plan.granule;
  out << ": ";
  if (plan.schedule.kind == LoopSchedule::Kind::Static) {
    std::vector<std::int64_t> perThread;
    std::vector<std::int64_t> packageCounts;
    bool several = false;
    for (std::size_t pe = 0; pe + 1 < plan.firstPackage.size(); ++pe) {
      std::int64_t sum = 0;
      for (std::size_t i = plan.firstPackage[pe]; i < plan.firstPackage[pe + 1];
           ++i)
        sum += plan.packages[i].size;
      perThread.push_back(sum);
      const auto count = static_cast<std::int64_t>(plan.firstPackage[pe + 1] -
                                                   plan.firstPackage[pe]);
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
  const ScheduleSpec spec = dynamicSpec(plan);
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
        at >= spec.iterations ? plan.tripCount : at * plan.granule;
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

/// Prints a verbose line once per loop site and split, from any thread.
void printOnce(const LoopCall &call, Plan &plan) {
  if (plan.description.empty())
    plan.description = describe(plan);
  std::ostringstream line;
  line << "fpm: " << loopLabel(call) << ": " << plan.description;
  if (!call.note.empty())
    line << " (" << call.note << ")";
  line << "\n";
  static std::mutex mutex;
  static std::set<std::string> printed;
  std::string text = line.str();
  std::lock_guard<std::mutex> lock(mutex);
  if (printed.insert(text).second)
    std::fputs(text.c_str(), stderr);
}

/// Busy time per thread, kept only when FPM_TRACE or FPM_VERBOSE asks.
struct ThreadLog {
  alignas(64) double busy = 0; // one cache line per thread
  std::int64_t iterations = 0;
};

struct Recording {
  bool trace = false;
  std::string_view loop;
  std::vector<ThreadLog> threads;
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

/// One thread's iterations and busy time over its whole share of a call,
/// written to `slot` at the end; nothing when `slot` is null.
class ShareTimer {
public:
  explicit ShareTimer(Sample *slot)
      : slot_(slot), start_(slot ? trace::now() : 0) {}
  ShareTimer(const ShareTimer &) = delete;
  ShareTimer &operator=(const ShareTimer &) = delete;
  ~ShareTimer() {
    if (slot_)
      *slot_ = {iterations, static_cast<double>(trace::now() - start_) * 1e-9};
  }
  std::int64_t iterations = 0;

private:
  Sample *slot_;
  std::int64_t start_;
};

/// Runs one chunk; true when the loop must stop.
inline bool runChunk(const LoopCall &call, std::int64_t begin, std::int64_t end,
                     std::atomic<bool> &stop, Recording *recording,
                     int worker) {
  int status = 0;
  if (recording) {
    const std::int64_t start = trace::now();
    status = call.body(begin, end, call.context);
    const std::int64_t finish = trace::now();
    ThreadLog &log = recording->threads[static_cast<std::size_t>(worker)];
    log.busy += static_cast<double>(finish - start) * 1e-9;
    log.iterations += end - begin;
    if (recording->trace)
      trace::chunk(recording->loop, 1 + worker, "cpu", begin, end, start,
                   finish);
  } else {
    status = call.body(begin, end, call.context);
  }
  if (status != 0) {
    stop.store(true, std::memory_order_relaxed);
    return true;
  }
  return false;
}

/// One thread's share of a self-scheduled loop.
void drawChunks(const LoopCall &call, const Plan &plan,
                ChunkGenerator &generator, int worker, std::atomic<bool> &stop,
                Recording *recording, Sample *timings) {
  ShareTimer timer(timings ? timings + worker : nullptr);
  const std::int64_t units = generator.iterations();
  while (!stop.load(std::memory_order_relaxed)) {
    const std::optional<Chunk> chunk = generator.next(worker);
    if (!chunk)
      return;
    // Granules to iterations; the last granule ends at T. No overflow:
    // an end below `units` granules is below T.
    const std::int64_t unitEnd = chunk->begin + chunk->size;
    const std::int64_t begin = chunk->begin * plan.granule;
    const std::int64_t end =
        unitEnd >= units ? call.tripCount : unitEnd * plan.granule;
    timer.iterations += end - begin;
    if (runChunk(call, begin, end, stop, recording, worker))
      return;
  }
}

/// The packages of PEs worker, worker + team, ...: all of them when the team
/// came out smaller than planned.
void runPackages(const LoopCall &call, const Plan &plan, int worker, int team,
                 std::atomic<bool> &stop, Recording *recording,
                 Sample *timings) {
  ShareTimer timer(timings ? timings + worker : nullptr);
  const auto pes = static_cast<int>(plan.firstPackage.size()) - 1;
  for (int pe = worker; pe < pes; pe += team)
    for (std::size_t i = plan.firstPackage[static_cast<std::size_t>(pe)];
         i < plan.firstPackage[static_cast<std::size_t>(pe) + 1]; ++i) {
      if (stop.load(std::memory_order_relaxed))
        return;
      const Chunk &package = plan.packages[i];
      timer.iterations += package.size;
      if (runChunk(call, package.begin, package.begin + package.size, stop,
                   recording, worker))
        return;
    }
}

} // namespace

std::int64_t staticGranule(const Partitioner &partitioner,
                           std::int64_t tripCount, std::int64_t grain) {
  // The grain is the least granule; a huge loop gets coarser ones, so that
  // no partitioner runs for long (a CPU plan is cached, but the first call
  // pays).
  std::int64_t cap = partitioner.exact ? ExactSolverUnits : StaticUnits;
  if (partitioner.maxUnits > 0)
    cap = std::min(cap, partitioner.maxUnits);
  return std::max({grain, std::int64_t{1}, ceilDiv(tripCount, cap)});
}

int cpuThreads() {
  // A region here would get one thread: plan for one.
  if (omp_get_active_level() >= omp_get_max_active_levels())
    return 1;
  return std::max(omp_get_max_threads(), 1);
}

std::string loopLabel(const LoopCall &call) {
  std::string label =
      "loop '" +
      (call.name.empty() ? std::string("(unnamed)") : std::string(call.name)) +
      "'";
  if (!call.file.empty())
    label +=
        " (" + std::string(call.file) + ":" + std::to_string(call.line) + ")";
  return label;
}

LoopStatus runLoop(const LoopCall &call) {
  if (call.tripCount < 0)
    throw std::invalid_argument("the trip count must be >= 0, got " +
                                std::to_string(call.tripCount));
  if (call.grain < 0)
    throw std::invalid_argument("the grain must be >= 0, got " +
                                std::to_string(call.grain));
  if (!call.body)
    throw std::invalid_argument("the loop has no body");

  // With a kernel and OpenCL PEs, the CPU team and the devices together;
  // else (or when no device can be used) the CPU team alone.
  std::string coexecutionNote;
  if (call.kernel && call.devices.wantsOpenCl() && call.tripCount > 0) {
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
  std::unique_ptr<Plan> spare;
  Plan &plan =
      cache.get(call.schedule, call.tripCount, call.grain, threads, spare);
  const InUse inUse(plan);
  if (call.verbose)
    printOnce(call, plan);
  if (call.tripCount == 0)
    return LoopStatus::Completed;

  // Per-chunk times only when someone reads them.
  std::optional<Recording> recording;
  const bool tracing = trace::enabled();
  if (tracing || call.verbose) {
    recording.emplace();
    recording->trace = tracing;
    recording->loop =
        call.name.empty() ? std::string_view("(unnamed)") : call.name;
    recording->threads.resize(static_cast<std::size_t>(threads));
    if (tracing)
      for (int t = 0; t < threads; ++t)
        trace::nameLane(1 + t, "cpu thread " + std::to_string(t));
  }
  Recording *record = recording ? &*recording : nullptr;
  const std::int64_t started = record ? trace::now() : 0;

  // Online profiling: when this call is due, each thread's share.
  ProfileRecorder *recorder = nullptr;
  Sample *timings = nullptr;
  if (!call.name.empty()) {
    RecorderSlot &slot = recorderFor(call.name);
    if (timeThisCall(slot, record ? started : -1)) {
      recorder = slot.recorder;
      // A thread of a smaller team than planned leaves its slot empty.
      std::fill(plan.timings.begin(), plan.timings.end(), Sample{0, 0.0});
      timings = plan.timings.data();
    }
  }

  std::atomic<bool> stop{false};
  if (plan.generator) {
    ChunkGenerator &generator = *plan.generator;
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
  // A stopped call's shares are cut short where a body failed: not kept.
  if (recorder && !stopped)
    recorder->record(plan.granule, plan.timings, trace::now());
  if (record) {
    // The CPU team is one PE: its busy time is its threads' mean.
    trace::CallStats stats{std::string(record->loop)};
    double busy = 0;
    std::int64_t iterations = 0;
    for (const ThreadLog &log : record->threads) {
      busy += log.busy;
      iterations += log.iterations;
    }
    stats.busy("cpu", busy / threads, iterations);
    stats.finish(static_cast<double>(trace::now() - started) * 1e-9);
  }
  return stopped ? LoopStatus::Stopped : LoopStatus::Completed;
}

} // namespace fpm
