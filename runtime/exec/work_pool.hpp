//===- exec/work_pool.hpp - Who runs which iterations next -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The work of one heterogeneous loop call, shared by every worker thread of
// every PE (the CPU team's threads, and one host thread per device):
//  - a queue of ranges per PE: its static packages, or its stage-1 share;
//  - a weighted self-scheduling chunker for the rest (schedule.hpp);
//  - tail-end stealing (the autonomic-framework thesis): a worker with nothing
//  left takes the back
//    of the queue that would finish last, sized so that both finish
//    together;
//  - recovery: the unfinished ranges of a PE that failed, run first by
//    whoever asks next.
// Speeds (iterations per second per PE) start from the caller's estimates
// and follow what the call measures, so that chunk sizes and steals track
// the PEs as they run. One mutex guards it all: heterogeneous chunks are
// long (a kernel launch and transfers), so it is never contended for long.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "schedule/schedule.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace fpm {

/// Where a range came from, for traces and tests.
enum class RangeSource { Recovered, Own, Dynamic, Stolen };

struct Grant {
  Range range;
  RangeSource source = RangeSource::Own;
  /// The PE it was stolen from (Stolen).
  std::size_t from = 0;
};

/// A PE as the pool sees it.
struct PoolPe {
  /// Iterations per second of the whole PE: measured, or a guess (> 0).
  double speed = 1;
  /// True when `speed` is a guess: its first chunks are kept small (a
  /// probe) until this call has measured it.
  bool guessed = true;
  /// Threads that take work for it (the CPU team's size; 1 for a device).
  int workers = 1;
  /// The CPU team (a failed device's host thread then runs at its
  /// per-thread speed).
  bool cpu = false;
  /// Ranges it keeps in flight (a device's pipelineDepth); 0 when not
  /// said. With 1, and no other worker in the pool, it takes its queue
  /// whole (next()).
  std::size_t pipeline = 0;
  /// Iterations a range needs to fill the PE (a GPU: work-groups on every
  /// compute unit): a launch of fewer takes about as long, so no range it
  /// gets from its own queue, probe or not, is cut below this. 0: none.
  std::int64_t fill = 0;
  /// Its workers take their own queue from its end rather than its start
  /// (a data region: a device before it in the pool steals the start of
  /// its queue, the rows next to the device's own, and so the same rows
  /// call after call, which then stay on the device).
  bool ownFromBack = false;
};

class WorkPool {
public:
  /// Iterations [0, tripCount), cut only at multiples of `granule` (but
  /// T) where a device may start a range, and of `cpuGranule` (0:
  /// `granule`) where only a CPU thread will: a CPU thread runs any range,
  /// so it takes its own queue and steals the back of a device's at that
  /// finer grain, and a device steals the front of the CPU team's queue.
  /// The last costly granule of a loop then need not run whole on one PE
  /// while the others wait. Nothing is handed out until queue() or
  /// dynamic() give work.
  WorkPool(std::int64_t tripCount, std::int64_t granule,
           std::vector<PoolPe> pes, std::int64_t cpuGranule = 0);

  /// Before workers start: with `false`, an idle worker does not steal
  /// from a PE whose worker has asked for work (it will run its queue), so
  /// a static split runs as planned: for experiments that measure a split
  /// (FPM_STEAL=0). A PE whose worker never asked (a team smaller than
  /// planned) is still stolen from, so every iteration runs.
  void setStealing(bool stealing) { stealing_ = stealing; }
  /// Before workers start, in a data region: `seconds(pe, range)` is what
  /// PE `pe` would spend now getting the data of `range` that others hold
  /// (residency::readSeconds()). A steal then takes only what the thief
  /// finishes, that move paid, by the time the victim finishes the rest,
  /// and nothing when the move costs more than it saves: in a region a
  /// stolen row's data moves, and stays with the thief.
  void setMoveCost(std::function<double(std::size_t, Range)> seconds) {
    moveCost_ = std::move(seconds);
  }
  /// Before workers start: appends `range` to PE `pe`'s queue.
  void queue(std::size_t pe, Range range);
  /// Before workers start: hands out [begin, T) by `scheme` (CSS's
  /// `chunk`), in granules, each chunk scaled by the asking worker's share
  /// of the speed of all live workers.
  void dynamic(Scheme scheme, std::int64_t chunk, std::int64_t begin);

  /// The next range for a worker of PE `pe`: recovered work first, then
  /// the PE's own queue, then the dynamic chunks, then a steal; nothing
  /// when no work is left but what others are running.
  std::optional<Grant> next(std::size_t pe);
  /// `range`, run by PE `pe`, took `seconds` (updates its speed).
  void done(std::size_t pe, Range range, double seconds);
  /// PE `pe` failed: its queue and `unfinished` are recovered work, run
  /// first by whoever asks next. Its worker may go on calling next(pe) to
  /// run work on the CPU instead (it is then sized at a CPU thread's
  /// speed); nothing is queued for it or stolen from it any more. Returns
  /// the iterations that moved.
  std::int64_t fail(std::size_t pe, std::span<const Range> unfinished);
  /// Hand out nothing more (a body asked the loop to stop).
  void stop();

  /// The speed estimate of PE `pe` now: what it measured in this call (past
  /// its first chunk, once it has run more than one), else the caller's
  /// estimate, else (a guess) the per-thread speed of the fastest PE known.
  double speed(std::size_t pe) const;
  /// Iterations not handed out yet (queued, dynamic or recovered).
  std::int64_t undistributed() const;
  /// After the call: the range each PE ran, when each ran one unbroken
  /// range (or none) and they follow one another in PE order over all the
  /// iterations: the split the call ended with, steals included (a steal
  /// takes the end of a queue next to the thief's). Nothing otherwise.
  std::optional<std::vector<Range>> ranInOrder() const;

private:
  struct Queue {
    std::deque<Range> ranges;
    std::int64_t queued = 0;  // iterations in `ranges`
    std::int64_t initial = 0; // iterations queued before the start
  };
  struct PeState {
    PoolPe pe;
    Queue queue;
    bool failed = false;
    bool asked = false; // its worker has called next()
    // Measured in this call; the first chunk apart, as it pays one-time
    // costs (a device's kernel specialisation, cold caches).
    std::int64_t iterations = 0;
    double seconds = 0;
    int chunks = 0;
    std::int64_t firstIterations = 0;
    double firstSeconds = 0;
    // What it ran in this call, failure or not: the extent and the count.
    std::int64_t ranFirst = 0, ranLast = 0, ranCount = 0;
  };

  double measuredSpeed(std::size_t pe) const;
  double workerShare(std::size_t pe) const;
  double liveSpeed() const;
  std::int64_t probeLimit(std::size_t pe) const;
  /// What takeFront() or takeBack() would take.
  Range peek(const Queue &queue, std::int64_t size, std::int64_t unit,
             bool front) const;
  Range takeFront(Queue &queue, std::int64_t size, std::int64_t unit);
  Range takeBack(Queue &queue, std::int64_t size, std::int64_t unit);
  std::optional<Grant> steal(std::size_t pe);
  std::int64_t alignUp(std::int64_t at, std::int64_t unit) const;
  bool runsOnCpu(std::size_t pe) const;

  mutable std::mutex mutex_;
  std::int64_t tripCount_;
  std::int64_t granule_;
  std::int64_t cpuGranule_;
  int totalWorkers_ = 0;
  std::vector<PeState> pes_;
  Queue recovered_;
  std::unique_ptr<WeightedChunker> chunker_; // in granules
  bool stopped_ = false;
  bool stealing_ = true;
  std::function<double(std::size_t, Range)> moveCost_;
};

} // namespace fpm
