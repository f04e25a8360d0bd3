//===- exec/coexec.cpp - One loop over CPU threads and devices ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A call opens its PEs, builds the planner's view of them from the loop's
// state (speeds measured in this process, stored FPMs, partial FPMs of
// repeated `auto` and `numerical` calls), fills a WorkPool with the plan,
// and runs one OpenMP region in which threads 0 .. devices-1 drive one
// device each and the others run the CPU body. Every driver draws from the
// pool through a PoolFeed, which also logs what its PE ran. A device that
// fails hands its unfinished ranges back; its thread then runs CPU chunks,
// so that whatever happens a thread is left to run the recovered work.
// One file of some 730 lines, as its parts (WorkerLog, observations,
// Call, viewPes, describe, keepLastSplit) are private to coexecute(), the
// steps of one call.
//
//===----------------------------------------------------------------------===//

#include "exec/coexec.hpp"

#include "balance/balance.hpp"
#include "device/backend.hpp"
#include "device/cpu_driver.hpp"
#include "device/faults.hpp"
#include "exec/host_access.hpp"
#include "exec/loop_pes.hpp"
#include "exec/loop_state.hpp"
#include "exec/plan.hpp"
#include "exec/verbose_splits.hpp"
#include "exec/work_pool.hpp"
#include "partition/partition.hpp"
#include "residency/residency.hpp"
#include "store/online_profiles.hpp"
#include "support/environment.hpp"
#include "trace/trace.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fpm {
namespace {

/// A device opened for the call.
using Device = std::unique_ptr<PeDevice>;

/// The CPU team's threads' trace lanes start here; devices' lanes are
/// theirs (PeDevice::lane()).
constexpr int CpuLane = 1;

double seconds(std::int64_t nanoseconds) {
  return static_cast<double>(nanoseconds) * 1e-9;
}

//===----------------------------------------------------------------------===//
// One call.
//===----------------------------------------------------------------------===//

/// What one worker thread did, merged after the region.
struct WorkerLog {
  std::string device; ///< the PE its busy time counts for
  double busy = 0;
  std::int64_t iterations = 0;
  // The first chunk apart: it pays one-time costs, and is left out of the
  // speed the next call starts from when there are others.
  int chunks = 0;
  double firstBusy = 0;
  std::int64_t firstIterations = 0;

  /// Every chunk's size and time, for the profile store; kept only for a
  /// named loop (the store's key), so others allocate nothing per chunk.
  bool profiling = false;
  std::vector<Sample> samples;

  void add(std::int64_t size, double seconds) {
    if (profiling)
      samples.emplace_back(size, seconds);
    if (chunks++ == 0) {
      firstBusy = seconds;
      firstIterations = size;
    }
    busy += seconds;
    iterations += size;
  }
  /// Iterations and seconds to learn speed from.
  std::pair<std::int64_t, double> measured() const {
    if (chunks >= 2 && busy > firstBusy)
      return {iterations - firstIterations, busy - firstBusy};
    return {iterations, busy};
  }
  std::string rescueDevice; ///< set when a failed device's thread ran CPU work
  double rescueBusy = 0;
  std::int64_t rescueIterations = 0;
};

/// What each of the `live` PEs ran in a call and how long it was busy, for
/// the partial FPMs: logs `0 .. devices-1` are the devices', the rest the
/// CPU team's threads (pool PE `devices`), whose time is their mean busy
/// time, as they run side by side. Tail stealing may have moved part of a
/// share: what a PE ran is what counts. With `probe` > 0 (a loop's first
/// call in this process) each worker's first chunk is left out of the
/// speed, as it pays compiles and cold caches, and a PE that ran fewer
/// iterations than `probe` teaches nothing (as for PeRecord).
std::vector<Observation> observations(std::span<const WorkerLog> logs,
                                      std::span<const PoolPe> pes,
                                      std::span<const std::size_t> live,
                                      std::int64_t probe) {
  const std::size_t cpuPe = pes.size() - 1;
  std::vector<std::int64_t> ran(pes.size(), 0), timed(pes.size(), 0);
  std::vector<double> busy(pes.size(), 0);
  for (std::size_t w = 0; w < logs.size(); ++w) {
    const std::size_t pe = std::min(w, cpuPe);
    const auto [iterations, seconds] =
        probe > 0 ? logs[w].measured()
                  : std::pair{logs[w].iterations, logs[w].busy};
    ran[pe] += logs[w].iterations;
    timed[pe] += iterations;
    busy[pe] += seconds;
  }
  std::vector<Observation> result;
  for (std::size_t pe : live) {
    Observation observation;
    if (timed[pe] > 0 && busy[pe] > 0 && ran[pe] >= probe) {
      const double seconds = busy[pe] / std::max(pes[pe].workers, 1);
      observation = {ran[pe], seconds * static_cast<double>(ran[pe]) /
                                  static_cast<double>(timed[pe])};
    }
    result.push_back(observation);
  }
  return result;
}

/// The region of one call: which thread drives which PE, and what they
/// logged.
class Call {
public:
  Call(const LoopCall &call, std::string key, std::span<const Device> devices,
       int cpuWorkers, WorkPool &pool, std::vector<InjectedFault> faults,
       const HostAccess &host)
      : call_(call), key_(std::move(key)), label_(loopLabel(call)),
        traceLoop_(call.name.empty() ? std::string_view(key_) : call.name),
        devices_(devices), cpuWorkers_(cpuWorkers), pool_(pool),
        faults_(std::move(faults)), tracing_(trace::enabled()),
        logs_(devices_.size() + static_cast<std::size_t>(cpuWorkers)),
        base_(call.iterations().begin), host_(host) {
    for (WorkerLog &log : logs_)
      log.profiling = !call.name.empty();
  }

  /// Runs on every thread of the region.
  void work(int thread) {
    const auto deviceCount = static_cast<int>(devices_.size());
    try {
      if (thread < deviceCount)
        driveDevice(static_cast<std::size_t>(thread));
      else if (thread - deviceCount < cpuWorkers_)
        driveCpu(cpuPe(), CpuLane + thread - deviceCount,
                 logs_[static_cast<std::size_t>(thread)], false);
    } catch (...) {
      // Not a device failure (drivers handle those): stop the loop and
      // hand the error to the caller.
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!error_)
        error_ = std::current_exception();
      stop();
    }
  }

  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  std::exception_ptr error() const { return error_; }
  const std::vector<WorkerLog> &logs() const { return logs_; }
  const std::vector<std::string> &failedDevices() const { return failed_; }

private:
  /// A driver's view of the pool as PE `pe`, logging what it ran in `log`
  /// (as its rescue work, for a failed device's thread). Ranges are the
  /// pool's shifted to the call's part.
  class PoolFeed final : public WorkFeed {
  public:
    PoolFeed(Call &call, std::size_t pe, WorkerLog &log, bool rescue)
        : call_(call), pe_(pe), log_(log), rescue_(rescue) {}

    std::optional<Range> next() override {
      const std::optional<Grant> grant = call_.pool_.next(pe_);
      if (!grant)
        return std::nullopt;
      return shift(grant->range, call_.base_);
    }
    void done(Range range, double seconds) override {
      call_.pool_.done(pe_, shift(range, -call_.base_), seconds);
      if (rescue_) {
        log_.rescueBusy += seconds;
        log_.rescueIterations += range.size();
      } else {
        log_.add(range.size(), seconds);
      }
    }
    std::int64_t fail(std::span<const Range> unfinished,
                      std::string_view why) override {
      std::vector<Range> ranges;
      for (const Range &range : unfinished)
        ranges.push_back(shift(range, -call_.base_));
      const std::int64_t moved = call_.pool_.fail(pe_, ranges);
      call_.reportFailure(pe_, why, moved);
      return moved;
    }
    bool stopped() const override { return call_.stopped(); }

  private:
    static Range shift(Range range, std::int64_t by) {
      return {range.begin + by, range.end + by};
    }
    Call &call_;
    std::size_t pe_;
    WorkerLog &log_;
    bool rescue_;
  };

  void stop() {
    stop_.store(true, std::memory_order_relaxed);
    pool_.stop();
  }

  std::size_t cpuPe() const { return devices_.size(); }

  /// Runs CPU chunks from the pool as PE `pe` until none is left.
  void driveCpu(std::size_t pe, int lane, WorkerLog &log, bool rescue) {
    PoolFeed pool(*this, pe, log, rescue);
    HostAccessFeed inRegion(pool, host_);
    WorkFeed &feed = host_.needed() ? static_cast<WorkFeed &>(inRegion) : pool;
    const TraceTarget target{traceLoop_, lane};
    if (runCpuDriver(feed, call_.body, call_.context,
                     tracing_ ? &target : nullptr) != 0)
      stop();
  }

  /// Drives device `d` until the pool is empty; if it fails, runs CPU
  /// chunks instead, so that what it handed back has a thread to run it.
  void driveDevice(std::size_t d) {
    PeDevice &device = *devices_[d];
    WorkerLog &log = logs_[d];
    log.device = device.found().id;
    const TraceTarget target{traceLoop_, device.lane()};
    const FaultSeam faults(faults_, log.device);
    PoolFeed pool(*this, d, log, false);
    HostAccessFeed inRegion(pool, host_);
    WorkFeed &feed = device.usesHostMemory() && host_.needed()
                         ? static_cast<WorkFeed &>(inRegion)
                         : pool;
    if (device.run(feed, {*call_.kernel, faults, tracing_ ? &target : nullptr,
                          call_.reductions, call_.body, call_.context}))
      return;
    log.rescueDevice = log.device + " on cpu";
    driveCpu(d, device.rescueLane(), log, true);
  }

  void reportFailure(std::size_t d, std::string_view why, std::int64_t moved) {
    const FoundDevice &info = devices_[d]->found();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      failed_.push_back(info.id);
    }
    std::ostringstream line;
    line << "fpm: " << label_ << ": " << info.id << " (" << info.name
         << ") failed: " << why << "; "
         << (moved > 0 ? "its " + std::to_string(moved) +
                             " unfinished iterations run on the other PEs"
                       : std::string("nothing of it was lost"))
         << ", and it is not used for this loop again\n";
    std::fputs(line.str().c_str(), stderr);
  }

  const LoopCall &call_;
  std::string key_;
  std::string label_;
  std::string_view traceLoop_;
  std::span<const Device> devices_;
  int cpuWorkers_;
  WorkPool &pool_;
  std::vector<InjectedFault> faults_;
  bool tracing_;
  std::vector<WorkerLog> logs_;
  std::int64_t base_; ///< the call's first iteration
  /// A data region's side of a CPU range, or of a host-memory device's.
  const HostAccess &host_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::exception_ptr error_;
  std::vector<std::string> failed_;
};

/// The planner's and the pool's view of `devices` and the CPU team, from
/// what earlier calls of loop `key` measured and the loop's stored FPMs.
struct PeViews {
  std::vector<PlanPe> plan;
  std::vector<PoolPe> pool;
  std::vector<std::size_t> live; ///< PEs with a thread, in order
  std::vector<Profile> models;   ///< of the live PEs, or none
};

PeViews viewPes(const LoopCall &call, const std::string &key,
                std::span<const Device> devices, int cpuWorkers,
                std::int64_t probe, std::int64_t iterations) {
  PeViews views;
  withLoopState(key, [&](LoopState &state) {
    auto add = [&](std::string id, int workers, bool cpu, std::size_t pipeline,
                   std::int64_t fill) {
      PlanPe pe{std::move(id), workers, double(std::max(workers, 1)), true};
      // A speed measured on less than a probe's worth of iterations (a
      // device that got one chunk while it was still compiling) is no
      // better than a guess: it is probed again.
      if (auto it = state.pes.find(pe.id); it != state.pes.end() &&
                                           it->second.seconds > 0 &&
                                           it->second.iterations >= probe) {
        pe.speed = static_cast<double>(it->second.iterations) /
                   it->second.seconds * std::max(workers, 1);
        pe.guessed = false;
      }
      // In a data region the CPU team runs its queue from the end: the
      // devices before it steal its start, the same rows every call.
      views.pool.push_back({pe.speed, pe.guessed, workers, cpu, pipeline, fill,
                            cpu && !devices.empty() && residency::active()});
      views.plan.push_back(std::move(pe));
    };
    for (const Device &device : devices)
      add(device->found().id, 1, false, device->pipelineDepth(),
          device->fill());
    add(std::string(CpuProfileId), cpuWorkers, true, 0, 0);
  });
  for (std::size_t p = 0; p < views.plan.size(); ++p)
    if (views.plan[p].workers > 0)
      views.live.push_back(p);

  // The FPMs of the live PEs stored by earlier runs of a named loop: the
  // CPU's is one thread's, scaled to the team (a package of c*w iterations
  // on c threads takes what w takes on one).
  const std::size_t cpuPe = devices.size();
  if (!call.name.empty()) {
    const std::string loop(call.name);
    for (std::size_t p : views.live) {
      std::optional<Profile> stored =
          storedProfile(loop, p == cpuPe ? std::string(CpuProfileId)
                                         : devices[p]->profileId());
      if (!stored) {
        views.models.clear();
        break;
      }
      if (p == cpuPe)
        for (ProfilePoint &point : stored->points)
          point.size *= cpuWorkers;
      views.models.push_back(std::move(*stored));
    }
  }
  if (!views.models.empty()) {
    // Speeds where this process has not measured its own yet: each PE's
    // at an equal share of the loop.
    const CostModel model(views.models);
    const std::int64_t share = std::max<std::int64_t>(
        iterations / static_cast<std::int64_t>(views.live.size()), 1);
    for (std::size_t i = 0; i < views.live.size(); ++i)
      if (PlanPe &pe = views.plan[views.live[i]]; pe.guessed) {
        pe.speed = static_cast<double>(share) / model.time(i, share);
        pe.guessed = false;
        views.pool[views.live[i]].speed = pe.speed;
        views.pool[views.live[i]].guessed = false;
      }
  }
  return views;
}

/// The line FPM_VERBOSE prints for a co-executed call.
std::string describe(const LoopCall &call, const LoopSchedule &schedule,
                     const Plan &plan, const PeViews &views,
                     std::span<const Device> devices, int cpuWorkers) {
  std::ostringstream line;
  line << "fpm: " << loopLabel(call) << ": " << call.iterations().size()
       << " iterations, schedule " << schedule.text;
  if (!plan.reason.empty())
    line << " (" << plan.reason << ")";
  line << " over";
  const std::size_t cpuPe = devices.size();
  bool first = true;
  for (std::size_t p : views.live) {
    line << (first ? " " : ", ") << views.plan[p].id;
    first = false;
    if (p == cpuPe) {
      line << " (" << cpuWorkers << " thread" << (cpuWorkers == 1 ? "" : "s")
           << ")";
    } else {
      const unsigned units = devices[p]->computeUnits();
      line << " (" << devices[p]->found().name << ", " << units
           << " compute unit" << (units == 1 ? "" : "s") << ")";
    }
  }
  // Iterations per second, from earlier calls; "?" until then.
  line << "; speeds:";
  for (std::size_t p : views.live) {
    line << " " << views.plan[p].id << " ";
    if (views.plan[p].guessed)
      line << "?";
    else
      line << static_cast<long long>(views.plan[p].speed) << "/s";
  }
  const bool isStatic = plan.kind == Plan::Kind::Static;
  if (isStatic || plan.dynamic.alpha) {
    line << "; " << (isStatic ? "split" : "stage 1") << ":";
    for (std::size_t p : views.live)
      line << " " << views.plan[p].id << " " << plan.planned(p);
  }
  line << "\n";
  return line.str();
}

/// Inside a data region a row that changes PEs moves what it wrote: a
/// static `plan` of one package per PE, in PE order, keeps the last such
/// split whole unless the plan, its moves paid (`moveCost`, seconds for
/// pool PE p to get a range's data), is predicted to finish sooner; else
/// its cuts where each PE's predicted time stays near the plan's makespan
/// (keepCuts). Predicted as the plan was (partial FPMs, stored FPMs, or
/// speeds). Remembers the split for the next call (which the call's end
/// replaces with the split it ran, steals included).
void keepLastSplit(Plan &plan, const std::string &key,
                   const std::string &balanceKey, const PeViews &views,
                   const std::optional<LoadBalancer> &balancer,
                   const std::function<double(std::size_t, Range)> &moveCost) {
  std::vector<Range> split;
  std::int64_t cut = 0;
  bool oneEach = plan.kind == Plan::Kind::Static;
  for (const std::vector<Range> &packages : plan.packages) {
    if (packages.size() > 1 ||
        (packages.size() == 1 && packages.front().begin != cut)) {
      oneEach = false;
      break;
    }
    split.push_back(packages.empty() ? Range{cut, cut} : packages.front());
    cut = split.back().end;
  }
  if (!oneEach || cut == 0) {
    withLoopState(
        key, [&](LoopState &state) { state.lastSplits.erase(balanceKey); });
    return;
  }
  std::vector<Profile> profiles;
  if (balancer)
    for (std::size_t i = 0; i < views.live.size(); ++i)
      profiles.push_back(balancer->model(i));
  else
    profiles = views.models;
  const bool modelled =
      profiles.size() == views.live.size() &&
      std::ranges::none_of(profiles, [](const Profile &profile) {
        return profile.points.empty();
      });
  const CostModel model(modelled ? std::move(profiles)
                                 : std::vector<Profile>{});
  auto time = [&](std::size_t p, std::int64_t share) {
    if (share <= 0)
      return 0.0;
    const auto live = std::ranges::find(views.live, p);
    if (live == views.live.end())
      return std::numeric_limits<double>::infinity();
    if (modelled)
      return model.time(static_cast<std::size_t>(live - views.live.begin()),
                        share);
    return static_cast<double>(share) / std::max(views.plan[p].speed, 1e-300);
  };
  withLoopState(key, [&](LoopState &state) {
    std::vector<Range> &last = state.lastSplits[balanceKey];
    std::optional<std::vector<Range>> kept;
    if (moveCost && last.size() == split.size() && last.back().end == cut &&
        !movesPay(split, last, time, moveCost))
      kept = last;
    else
      kept = keepCuts(split, last, time, plan.granule);
    if (kept) {
      split = std::move(*kept);
      for (std::size_t p = 0; p < split.size(); ++p)
        plan.packages[p] = split[p].size() > 0 ? std::vector<Range>{split[p]}
                                               : std::vector<Range>{};
    }
    last = split;
  });
}

/// Runs `call`; with `onlyPe`, on that PE alone (runOnOnePe()).
std::optional<LoopStatus> coexecute(const LoopCall &call, std::string &note,
                                    std::string_view onlyPe) {
  const std::string key = loopKey(call);
  const LoopSchedule schedule = parseLoopSchedule(call.schedule);
  const DeviceEnvironment environment = readDeviceEnvironment();
  std::vector<std::string> foundIds;
  for (const AnyDevice &device : allDevices())
    foundIds.push_back(device.found->id);
  std::vector<InjectedFault> faults =
      parseInjectedFaults(environment.injectFault, foundIds);
  if (call.verbose)
    describeDevicesOnce();

  LoopDevices opened = openLoopDevices(call, key, note);
  if (opened.devices.empty())
    return std::nullopt;
  std::vector<Device> &devices = opened.devices;
  int cpuWorkers = opened.cpuWorkers;
  // Ranges start where every device of the call can start one (the CPU's
  // anywhere), on one PE alone too: its benchmark splits as the loop does.
  std::int64_t alignment = 1;
  for (const Device &device : devices)
    alignment = std::lcm(alignment, device->alignment());
  if (!onlyPe.empty()) {
    std::erase_if(devices, [&](const Device &device) {
      return device->profileId() != onlyPe;
    });
    if (onlyPe != CpuProfileId)
      cpuWorkers = 0;
    if (devices.empty() && cpuWorkers == 0)
      throw std::runtime_error("no PE '" + std::string(onlyPe) +
                               "' takes part in this loop");
  }

  const Range iterations = call.iterations();
  const std::int64_t size = iterations.size();
  const std::int64_t probe =
      (size + 8 * opened.team - 1) / (8 * std::int64_t{opened.team});
  PeViews views = viewPes(call, key, devices, cpuWorkers, probe, size);
  const std::size_t cpuPe = devices.size();

  // Repeated calls of `auto` and `numerical` over several PEs balance with
  // partial FPMs (balance/): each call adds what every PE ran to its
  // model, and from the second call in this process over this set of PEs
  // on, the split is the numerical partitioner's on those models. Stored
  // FPMs seed them. `cpm` stays on one measured speed per PE: it is the
  // traditional baseline (the multidimensional-solvers paper, Fig. 8).
  const bool balancing =
      (schedule.automatic ||
       schedule.partitioner == findPartitioner("numerical")) &&
      views.live.size() > 1;
  std::string balanceKey;
  for (std::size_t p : views.live)
    balanceKey += (p == cpuPe ? "cpu*" + std::to_string(cpuWorkers)
                              : devices[p]->profileId()) +
                  " ";
  std::optional<LoadBalancer> balancer; // a copy, for this call's split
  if (balancing)
    withLoopState(key, [&](LoopState &state) {
      auto it = state.balancers.find(balanceKey);
      if (it == state.balancers.end()) {
        it =
            state.balancers.emplace(balanceKey, LoadBalancer(views.live.size()))
                .first;
        for (std::size_t i = 0; i < views.models.size(); ++i)
          it->second.seed(i, views.models[i].points);
      }
      if (it->second.observed() > 0 && it->second.ready())
        balancer = it->second;
    });

  PlanRequest request;
  request.schedule = &schedule;
  request.pes = views.plan;
  request.tripCount = size;
  request.grain = call.grain;
  request.alignment = alignment;
  request.models = views.models;
  request.partial = balancer ? &*balancer : nullptr;
  request.loop = key;
  Plan plan = makePlan(request);
  // In a data region: what a PE would spend getting a range's data (pool
  // ranges start at 0), which the kept split and steals weigh moves by.
  const HostAccess host(call);
  std::function<double(std::size_t, Range)> moveCost;
  if (host.needed())
    moveCost = [&](std::size_t pe, Range range) {
      return host.readSeconds(
          {range.begin + iterations.begin, range.end + iterations.begin},
          pe < devices.size() ? devices[pe]->holder() : nullptr);
    };
  if (residency::active() && views.live.size() > 1)
    keepLastSplit(plan, key, balanceKey, views, balancer, moveCost);

  WorkPool pool(size, plan.granule, views.pool,
                std::max<std::int64_t>(call.grain, 1));
  if (call.steal)
    pool.setStealing(*call.steal);
  if (moveCost)
    pool.setMoveCost(moveCost);
  for (std::size_t p = 0; p < plan.packages.size(); ++p)
    for (const Range &range : plan.packages[p])
      pool.queue(p, range);
  if (plan.kind == Plan::Kind::Dynamic)
    pool.dynamic(plan.dynamic.scheme, plan.dynamic.chunk, plan.dynamicBegin);

  if (call.verbose) {
    const std::string text =
        describe(call, schedule, plan, views, devices, cpuWorkers);
    // Once per loop, shape and kind of split, not per call: speeds drift
    // a little, but auto's switch to a static split is worth a line.
    const std::string kind = plan.onPartialModels              ? "|partial"
                             : plan.kind == Plan::Kind::Static ? "|static"
                                                               : "|dynamic";
    printSplit(key, loopLabel(call),
               schedule.text + "|" + std::to_string(size) + kind, text);
  }

  if (trace::enabled()) {
    for (const Device &device : devices)
      device->nameTraceLanes();
    for (int t = 0; t < cpuWorkers; ++t)
      trace::nameLane(CpuLane + t, "cpu thread " + std::to_string(t));
  }

  const std::int64_t started = trace::now();
  Call run(call, key, devices, cpuWorkers, pool, std::move(faults), host);
  const int threads = static_cast<int>(devices.size()) + cpuWorkers;
#pragma omp parallel num_threads(threads)
  {
    // A smaller team than asked for (nesting): the PEs without a thread
    // lose their queues to the others' steals.
    run.work(omp_get_thread_num());
  }
  const std::int64_t finished = trace::now();
  if (std::exception_ptr error = run.error())
    std::rethrow_exception(error);

  // What this call measured, for the next one, and the verbose report.
  trace::CallStats stats(call.name.empty() ? key : std::string(call.name));
  bool firstCall = false;
  std::vector<std::size_t> changed; // PEs whose partial FPM restarted
  withLoopState(key, [&](LoopState &state) {
    for (const std::string &id : run.failedDevices())
      state.failed.insert(id);
    std::map<std::string, std::pair<double, std::int64_t>> busy;
    for (const WorkerLog &log : run.logs()) {
      const std::string device = log.device.empty() ? "cpu" : log.device;
      if (log.iterations > 0) {
        const auto [ran, measuredSeconds] = log.measured();
        PeRecord &pe = state.pes[device];
        pe.iterations += ran;
        pe.seconds += measuredSeconds;
        busy[device].first += log.busy;
        busy[device].second += log.iterations;
      }
      if (log.rescueIterations > 0) {
        busy[log.rescueDevice].first += log.rescueBusy;
        busy[log.rescueDevice].second += log.rescueIterations;
      }
    }
    for (const auto &[device, total] : busy)
      if (device == CpuProfileId)
        stats.teamBusy(device, total.first, total.second, cpuWorkers);
      else
        stats.busy(device, total.first, total.second);
    // A kept split starts the next call where this one ended, steals
    // included: rows a thief took stay with it, and move no more.
    if (auto it = state.lastSplits.find(balanceKey);
        it != state.lastSplits.end() && run.failedDevices().empty() &&
        !run.stopped())
      if (std::optional<std::vector<Range>> ran = pool.ranInOrder())
        it->second = std::move(*ran);
    firstCall = state.calls++ == 0;
    if (auto it = state.balancers.find(balanceKey);
        balancing && it != state.balancers.end() &&
        run.failedDevices().empty() && !run.stopped())
      changed = it->second.observe(observations(
          run.logs(), views.pool, views.live, firstCall ? probe : 0));
  });
  stats.finish(seconds(finished - started));
  if (call.verbose)
    for (std::size_t i : changed)
      std::fprintf(stderr,
                   "fpm: %s: %s no longer runs at the speed its partial FPM "
                   "says; the model starts again from its last calls\n",
                   loopLabel(call).c_str(),
                   views.plan[views.live[i]].id.c_str());

  // Online profiling of a named loop: every chunk's size and time, but a
  // worker's first chunk of the loop's first call in this process, which
  // pays for PoCL's lazy compiles and cold caches. A failed device's
  // chunks are kept: they completed.
  if (!call.name.empty()) {
    const std::string loop(call.name);
    const std::string cpuName(CpuProfileName);
    for (std::size_t w = 0; w < run.logs().size(); ++w) {
      const WorkerLog &log = run.logs()[w];
      std::span<const Sample> samples = log.samples;
      if (firstCall && !samples.empty())
        samples = samples.subspan(1);
      if (samples.empty())
        continue;
      const bool device = w < devices.size();
      recordProfile(
          loop, device ? devices[w]->profileId() : std::string(CpuProfileId),
          device ? devices[w]->profileName() : cpuName, plan.granule, samples);
    }
  }
  if (!onlyPe.empty() && !run.failedDevices().empty())
    throw std::runtime_error(std::string(onlyPe) +
                             " failed while it was benchmarked");
  return run.stopped() ? LoopStatus::Stopped : LoopStatus::Completed;
}

} // namespace

std::optional<LoopStatus> runCoexecution(const LoopCall &call,
                                         std::string &note) {
  return coexecute(call, note, {});
}

LoopStatus runOnOnePe(const LoopCall &call, std::string_view pe) {
  std::string note;
  if (std::optional<LoopStatus> status = coexecute(call, note, pe))
    return *status;
  throw std::runtime_error("no PE '" + std::string(pe) +
                           "' takes part in this loop: " + note);
}

} // namespace fpm
