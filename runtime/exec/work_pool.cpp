//===- exec/work_pool.cpp - Who runs which iterations next ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/work_pool.hpp"

#include "support/int_math.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fpm {
namespace {

/// ceil(x * fraction) for x >= 0, fraction in [0, 1].
std::int64_t scaledUp(std::int64_t x, double fraction) {
  return static_cast<std::int64_t>(
      std::ceil(static_cast<long double>(x) * fraction));
}

} // namespace

WorkPool::WorkPool(std::int64_t tripCount, std::int64_t granule,
                   std::vector<PoolPe> pes, std::int64_t cpuGranule)
    : tripCount_(tripCount), granule_(granule),
      cpuGranule_(cpuGranule == 0 ? granule : cpuGranule) {
  if (tripCount < 0 || granule < 1 || cpuGranule < 0 || pes.empty())
    throw std::invalid_argument("WorkPool: bad trip count, granule or PEs");
  for (const PoolPe &pe : pes) {
    if (!(pe.speed > 0) || pe.workers < 0)
      throw std::invalid_argument("WorkPool: a PE's speed must be > 0");
    totalWorkers_ += pe.workers;
    pes_.push_back({pe, {}, false, 0, 0});
  }
  totalWorkers_ = std::max(totalWorkers_, 1);
}

void WorkPool::queue(std::size_t pe, Range range) {
  if (range.size() <= 0)
    return;
  Queue &queue = pes_.at(pe).queue;
  queue.ranges.push_back(range);
  queue.queued += range.size();
  queue.initial += range.size();
}

void WorkPool::dynamic(Scheme scheme, std::int64_t chunk, std::int64_t begin) {
  ScheduleSpec spec;
  spec.scheme = scheme;
  spec.iterations = ceilDiv(tripCount_, granule_);
  spec.workers = totalWorkers_;
  spec.chunk = chunk;
  chunker_ = std::make_unique<WeightedChunker>(spec, ceilDiv(begin, granule_));
}

double WorkPool::measuredSpeed(std::size_t pe) const {
  const PeState &state = pes_[pe];
  const int workers = std::max(state.pe.workers, 1);
  if (state.chunks >= 2 && state.seconds > state.firstSeconds)
    return static_cast<double>(state.iterations - state.firstIterations) /
           (state.seconds - state.firstSeconds) * workers;
  if (state.chunks == 1)
    return static_cast<double>(state.iterations) / state.seconds * workers;
  return state.pe.speed;
}

double WorkPool::speed(std::size_t pe) const {
  const PeState &state = pes_[pe];
  if (state.chunks > 0 || !state.pe.guessed)
    return measuredSpeed(pe);
  // Unmeasured: assume it as fast per thread as the fastest PE that is
  // known, so that no one takes everything before it is probed (its probe
  // is small, so a wrong guess costs little).
  double fastest = 0;
  for (std::size_t other = 0; other < pes_.size(); ++other) {
    const PeState &known = pes_[other];
    if (other != pe && known.pe.workers > 0 &&
        (known.chunks > 0 || !known.pe.guessed))
      fastest = std::max(fastest,
                         measuredSpeed(other) / std::max(known.pe.workers, 1));
  }
  return fastest > 0 ? fastest * std::max(state.pe.workers, 1) : state.pe.speed;
}

double WorkPool::liveSpeed() const {
  double total = 0;
  for (std::size_t pe = 0; pe < pes_.size(); ++pe)
    if (pes_[pe].pe.workers > 0)
      total += speed(pe);
  return total;
}

double WorkPool::workerShare(std::size_t pe) const {
  const double total = liveSpeed();
  const double own = speed(pe) / std::max(pes_[pe].pe.workers, 1);
  return total > 0 ? std::clamp(own / total, 1e-9, 1.0) : 1.0;
}

std::int64_t WorkPool::probeLimit(std::size_t pe) const {
  const PeState &state = pes_[pe];
  // A PE whose speed is a guess gets a small first chunk, measured before
  // a big one is entrusted to it: a wrong guess then costs little.
  if (state.pe.guessed && state.chunks == 0)
    return std::max({granule_, state.pe.fill,
                     ceilDiv(tripCount_, 8 * std::int64_t{totalWorkers_})});
  return tripCount_;
}

std::int64_t WorkPool::alignUp(std::int64_t at, std::int64_t unit) const {
  return std::min(tripCount_, ceilDiv(at, unit) * unit);
}

bool WorkPool::runsOnCpu(std::size_t pe) const {
  return pes_[pe].pe.cpu || pes_[pe].failed;
}

Range WorkPool::peek(const Queue &queue, std::int64_t size, std::int64_t unit,
                     bool front) const {
  size = std::max<std::int64_t>(size, 1);
  if (front) {
    const Range &first = queue.ranges.front();
    return {first.begin,
            std::min(first.end, alignUp(first.begin + size, unit))};
  }
  const Range &last = queue.ranges.back();
  return {std::max(last.begin, (last.end - size) / unit * unit), last.end};
}

Range WorkPool::takeFront(Queue &queue, std::int64_t size, std::int64_t unit) {
  const Range taken = peek(queue, size, unit, true);
  Range &front = queue.ranges.front();
  if (taken.end >= front.end)
    queue.ranges.pop_front();
  else
    front.begin = taken.end;
  queue.queued -= taken.size();
  return taken;
}

Range WorkPool::takeBack(Queue &queue, std::int64_t size, std::int64_t unit) {
  const Range taken = peek(queue, size, unit, false);
  Range &back = queue.ranges.back();
  if (taken.begin <= back.begin)
    queue.ranges.pop_back();
  else
    back.end = taken.begin;
  queue.queued -= taken.size();
  return taken;
}

std::optional<Grant> WorkPool::next(std::size_t pe) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_)
    return std::nullopt;
  PeState &self = pes_.at(pe);
  self.asked = true;
  const double share = workerShare(pe);
  const std::int64_t limit = probeLimit(pe);

  if (recovered_.queued > 0) {
    const std::int64_t size =
        std::min(std::max(granule_, scaledUp(recovered_.queued, share)), limit);
    return Grant{takeFront(recovered_, size, granule_), RangeSource::Recovered,
                 pe};
  }

  if (Queue &own = self.queue; own.queued > 0) {
    // Halves for its workers, down to an eighth of the initial share: big
    // enough to keep a device busy, small enough to pipeline transfers
    // and leave a tail others can steal. A lone worker that runs one range
    // at a time gains from neither, and pays per range: a launch, and, on
    // PoCL, ranges past the first run a kernel variant compiled for a
    // non-zero global offset (fpm-bench-coexec's matmul ran 1.45x slower
    // per row in it until its kernel indexed rows in 32 bits), so it takes
    // the queue whole.
    // CPU threads cut finer than granules: the last eighth of a share then
    // need not run whole on one thread while the others wait. A GPU's
    // range fills it: on an H100, fpm-bench-coexec's 1024-row matmul took
    // 448 ms in ranges of 512, 256, 128 and 128 rows, one launch's time
    // each, against 115 ms in one.
    const std::int64_t workers = std::max(self.pe.workers, 1);
    const bool alone = self.pe.pipeline == 1 && self.pe.workers == 1 &&
                       totalWorkers_ == 1 && !self.failed;
    const std::int64_t unit = runsOnCpu(pe) ? cpuGranule_ : granule_;
    const std::int64_t size = std::min(
        alone ? own.queued
              : std::max({unit, self.pe.fill, ceilDiv(own.queued, 2 * workers),
                          ceilDiv(own.initial, 8 * workers)}),
        limit);
    return Grant{self.pe.ownFromBack ? takeBack(own, size, unit)
                                     : takeFront(own, size, unit),
                 RangeSource::Own, pe};
  }

  if (chunker_ && chunker_->remaining() > 0) {
    const std::optional<Chunk> chunk = chunker_->next(share);
    Range range{chunk->begin * granule_,
                std::min(tripCount_, (chunk->begin + chunk->size) * granule_)};
    // A probe keeps the head; the rest waits in its own queue, where its
    // other workers, or thieves, find it (a failed PE's thread queues
    // nothing: the rest is recovered work, for anyone).
    if (range.size() > limit) {
      const std::int64_t cut = alignUp(range.begin + limit, granule_);
      if (cut < range.end) {
        Queue &rest = self.failed ? recovered_ : self.queue;
        rest.ranges.push_front({cut, range.end});
        rest.queued += range.end - cut;
        rest.initial += range.end - cut;
        range.end = cut;
      }
    }
    return Grant{range, RangeSource::Dynamic, pe};
  }
  return steal(pe);
}

std::optional<Grant> WorkPool::steal(std::size_t pe) {
  // The queue that would finish last, judged by its PE's speed.
  std::size_t victim = pes_.size();
  double longest = 0;
  for (std::size_t other = 0; other < pes_.size(); ++other) {
    const PeState &state = pes_[other];
    if (other == pe || state.queue.queued == 0 ||
        (!stealing_ && state.asked && !state.failed))
      continue;
    const double left = static_cast<double>(state.queue.queued) / speed(other);
    if (left > longest) {
      longest = left;
      victim = other;
    }
  }
  if (victim == pes_.size())
    return std::nullopt;
  // Take what this worker finishes when the victim finishes the rest: the
  // back of the queue, or, where the victim is the CPU team and the thief
  // a device, the front, so that the cut falls where a CPU thread may
  // start.
  const bool cpuThief = runsOnCpu(pe);
  const bool front = !cpuThief && runsOnCpu(victim);
  const std::int64_t unit = cpuThief || front ? cpuGranule_ : granule_;
  const double thief = speed(pe) / std::max(pes_[pe].pe.workers, 1);
  const double victimSpeed = speed(victim);
  Queue &queue = pes_[victim].queue;
  std::int64_t size = std::min(
      std::max(unit, scaledUp(queue.queued, thief / (thief + victimSpeed))),
      probeLimit(pe));
  if (moveCost_ && pes_[victim].asked && !pes_[victim].failed) {
    // The move delays the thief: it takes what it finishes, move
    // included, when the victim finishes the rest (s / thief + move =
    // (queued - s) / victim), the move costed on the piece it would take
    // without it (no smaller piece costs more). A victim whose worker has
    // not asked yet may never run its queue: it is stolen from whatever
    // the cost.
    const double move = moveCost_(pe, peek(queue, size, unit, front));
    if (move > 0) {
      const double fits =
          (static_cast<double>(queue.queued) / victimSpeed - move) /
          (1 / thief + 1 / victimSpeed);
      if (fits < static_cast<double>(unit))
        return std::nullopt;
      size = std::min(size, static_cast<std::int64_t>(fits));
    }
  }
  return Grant{front ? takeFront(queue, size, unit)
                     : takeBack(queue, size, unit),
               RangeSource::Stolen, victim};
}

void WorkPool::done(std::size_t pe, Range range, double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  PeState &state = pes_.at(pe);
  seconds = std::max(seconds, 1e-9);
  if (state.chunks++ == 0) {
    state.firstIterations = range.size();
    state.firstSeconds = seconds;
  }
  state.iterations += range.size();
  state.seconds += seconds;
  state.ranFirst =
      state.ranCount > 0 ? std::min(state.ranFirst, range.begin) : range.begin;
  state.ranLast = std::max(state.ranLast, range.end);
  state.ranCount += range.size();
}

std::int64_t WorkPool::fail(std::size_t pe, std::span<const Range> unfinished) {
  const std::lock_guard<std::mutex> lock(mutex_);
  PeState &state = pes_.at(pe);
  std::int64_t moved = 0;
  for (const Range &range : state.queue.ranges) {
    recovered_.ranges.push_back(range);
    moved += range.size();
  }
  state.queue = {};
  for (const Range &range : unfinished)
    if (range.size() > 0) {
      recovered_.ranges.push_back(range);
      moved += range.size();
    }
  recovered_.queued += moved;
  // From now on its thread works as a CPU thread.
  state.failed = true;
  state.iterations = 0;
  state.seconds = 0;
  state.chunks = 0;
  state.pe.guessed = true;
  for (std::size_t other = 0; other < pes_.size(); ++other)
    if (pes_[other].pe.cpu && pes_[other].pe.workers > 0) {
      state.pe.speed = speed(other) / pes_[other].pe.workers;
      state.pe.guessed = pes_[other].pe.guessed && pes_[other].chunks == 0;
    }
  state.pe.workers = 1;
  return moved;
}

void WorkPool::stop() {
  const std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
}

std::int64_t WorkPool::undistributed() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::int64_t total = recovered_.queued;
  for (const PeState &state : pes_)
    total += state.queue.queued;
  if (chunker_ && chunker_->remaining() > 0)
    total += tripCount_ -
             (ceilDiv(tripCount_, granule_) - chunker_->remaining()) * granule_;
  return total;
}

std::optional<std::vector<Range>> WorkPool::ranInOrder() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Range> split;
  std::int64_t cut = 0;
  for (const PeState &state : pes_) {
    if (state.ranCount == 0) {
      split.push_back({cut, cut});
      continue;
    }
    if (state.ranFirst != cut ||
        state.ranLast - state.ranFirst != state.ranCount)
      return std::nullopt;
    split.push_back({state.ranFirst, state.ranLast});
    cut = state.ranLast;
  }
  if (cut != tripCount_)
    return std::nullopt;
  return split;
}

} // namespace fpm
