//===- schedule/schedule.cpp - Self-scheduling chunk generators -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The chunk-size rules of the self-scheduling thesis (ch. 2 and 3.2). The
// dynamic sequence is deterministic, so ChunkGenerator fixes it up front: GSS,
// FSS and TSS have few chunks (O(P log I) or O(P)) and are tabulated with
// prefix offsets; PSS and CSS can have ~I chunks and are computed in closed
// form. Drawing a chunk is then one fetch_add on a chunk counter and a lookup:
// wait-free.
//
//===----------------------------------------------------------------------===//

#include "schedule/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

namespace fpm {
namespace {

/// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// GSS: C_i = ceil(R_{i-1} / P).
std::vector<std::int64_t> gssChunks(std::int64_t remaining, int workers) {
  std::vector<std::int64_t> chunks;
  while (remaining > 0) {
    const std::int64_t size = ceilDiv(remaining, workers);
    chunks.push_back(size);
    remaining -= size;
  }
  return chunks;
}

/// FSS with a = 2: batches of P equal chunks of ceil(R_batch / 2P), each
/// capped by what remains (only the last batch, of ones, is ever cut short).
std::vector<std::int64_t> fssChunks(std::int64_t remaining, int workers) {
  std::vector<std::int64_t> chunks;
  while (remaining > 0) {
    const std::int64_t size = ceilDiv(remaining, 2 * std::int64_t{workers});
    for (int i = 0; i < workers && remaining > 0; ++i) {
      const std::int64_t granted = std::min(size, remaining);
      chunks.push_back(granted);
      remaining -= granted;
    }
  }
  return chunks;
}

/// TSS as the self-scheduling thesis writes it: F = floor(I / 2P), L = 1,
/// N = ceil(2I / (F + L)), D = floor((F - L) / (N - 1)), C_i = C_{i-1} - D.
/// The floor on D is what Table 2.2 shows (D = 8 for I = 1000, P = 4); the
/// last chunk is what remains (28 there, not 29).
struct TssParameters {
  std::int64_t first = 1;
  std::int64_t delta = 0;
};

TssParameters tssParameters(std::int64_t remaining, int workers) {
  const std::int64_t last = 1;
  // Less than one iteration is one (spec); N then follows from that F.
  const std::int64_t first =
      std::max<std::int64_t>(remaining / (2 * std::int64_t{workers}), 1);
  // ceil(2R / (F + L)) written so that 2R cannot overflow: F <= R / 2.
  const std::int64_t divisor = first + last;
  const std::int64_t count =
      2 * (remaining / divisor) + ceilDiv(2 * (remaining % divisor), divisor);
  return {first, count > 1 ? (first - last) / (count - 1) : 0};
}

std::vector<std::int64_t> tssChunks(std::int64_t remaining, int workers) {
  std::vector<std::int64_t> chunks;
  if (remaining == 0)
    return chunks;
  const auto [first, delta] = tssParameters(remaining, workers);
  std::int64_t size = first;
  while (remaining > 0) {
    const std::int64_t granted =
        std::min(std::max<std::int64_t>(size, 1), remaining);
    chunks.push_back(granted);
    remaining -= granted;
    size -= delta;
  }
  return chunks;
}

/// The dynamic sequence of `scheme` for `remaining` iterations.
std::vector<std::int64_t> dynamicChunks(const ScheduleSpec &spec,
                                        std::int64_t remaining) {
  switch (spec.scheme) {
  case Scheme::Pss:
  case Scheme::Css: {
    const std::int64_t k = spec.scheme == Scheme::Pss ? 1 : spec.chunk;
    std::vector<std::int64_t> chunks;
    chunks.reserve(static_cast<std::size_t>(ceilDiv(remaining, k)));
    for (; remaining > 0; remaining -= chunks.back())
      chunks.push_back(std::min(k, remaining));
    return chunks;
  }
  case Scheme::Gss:
    return gssChunks(remaining, spec.workers);
  case Scheme::Fss:
    return fssChunks(remaining, spec.workers);
  case Scheme::Tss:
    return tssChunks(remaining, spec.workers);
  }
  return {};
}

/// m = ceil(I * A / 100), the iterations handed out by weight. Table 3.2
/// needs the ceiling (1639 of 2048 at A = 80; its shares sum to 1639).
std::int64_t stage1Total(const ScheduleSpec &spec) {
  if (!spec.alpha)
    return 0;
  // long double: I * A stays exact well past I = 1e12.
  const long double m =
      std::ceil(static_cast<long double>(spec.iterations) *
                static_cast<long double>(*spec.alpha) / 100.0L);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(m), 0,
                                  spec.iterations);
}

/// Stage-1 shares per worker, in worker order; they sum to stage1Total().
std::vector<std::int64_t> weightedShares(const ScheduleSpec &spec) {
  if (!spec.alpha)
    return {};
  const std::int64_t m = stage1Total(spec);
  const auto workers = static_cast<std::size_t>(spec.workers);
  std::vector<std::size_t> order(workers);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Decreasing weight, ties by worker index. (std::sort with the index in
  // the key: libstdc++'s stable_sort warns of a deprecated helper.)
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (spec.weights[a] != spec.weights[b])
      return spec.weights[a] > spec.weights[b];
    return a < b;
  });
  const long double total = std::accumulate(
      spec.weights.begin(), spec.weights.end(), static_cast<long double>(0));
  std::vector<std::int64_t> shares(workers, 0);
  std::int64_t left = m;
  for (std::size_t i = 0; i + 1 < workers; ++i) {
    const long double exact = static_cast<long double>(m) *
                              static_cast<long double>(spec.weights[order[i]]) /
                              total;
    const auto share = static_cast<std::int64_t>(std::ceil(exact));
    shares[order[i]] = std::clamp<std::int64_t>(share, 0, left);
    left -= shares[order[i]];
  }
  shares[order[workers - 1]] = left;
  return shares;
}

} // namespace

std::optional<Scheme> parseScheme(std::string_view name) {
#define FPM_SELF_SCHEDULE(Name, Id, Argument, Summary)                         \
  if (name == Name)                                                            \
    return Scheme::Id;
#include "fpm/schedules.def"
  return std::nullopt;
}

std::string_view schemeName(Scheme scheme) {
  switch (scheme) {
#define FPM_SELF_SCHEDULE(Name, Id, Argument, Summary)                         \
  case Scheme::Id:                                                             \
    return Name;
#include "fpm/schedules.def"
  }
  return "unknown";
}

std::string validate(const ScheduleSpec &spec) {
  std::ostringstream out;
  if (spec.iterations < 0) {
    out << "the number of iterations must be >= 0, got " << spec.iterations;
  } else if (spec.workers < 1) {
    out << "the number of workers must be >= 1, got " << spec.workers;
  } else if (spec.chunk < 1) {
    out << "the chunk size must be >= 1, got " << spec.chunk;
  } else if (spec.alpha) {
    // Weights only matter with alpha; without it they are not looked at.
    const double alpha = *spec.alpha;
    if (!(alpha > 0.0 && alpha <= 100.0)) {
      out << "alpha must be in (0, 100], got " << alpha;
    } else if (spec.weights.size() != static_cast<std::size_t>(spec.workers)) {
      out << "alpha needs one weight per worker: " << spec.workers
          << " workers, " << spec.weights.size() << " weights";
    } else {
      for (std::size_t i = 0; i < spec.weights.size(); ++i) {
        const double weight = spec.weights[i];
        if (!(std::isfinite(weight) && weight > 0.0)) {
          out << "weight " << i + 1 << " must be a finite number > 0, got "
              << weight;
          break;
        }
      }
    }
  }
  return out.str();
}

ChunkSequence chunkSequence(const ScheduleSpec &spec) {
  if (std::string problem = validate(spec); !problem.empty())
    throw std::invalid_argument(problem);
  ChunkSequence sequence;
  sequence.stage1 = weightedShares(spec);
  sequence.chunks = dynamicChunks(spec, spec.iterations - stage1Total(spec));
  return sequence;
}

struct ChunkGenerator::State {
  // The dynamic chunks cover [dynamicBegin, dynamicBegin + dynamicSize).
  std::int64_t dynamicBegin = 0;
  std::int64_t dynamicSize = 0;
  std::uint64_t chunkCount = 0;
  /// PSS/CSS's fixed chunk size; 0 when the chunks are tabulated.
  std::int64_t fixedChunk = 0;
  /// GSS/FSS/TSS: chunk j is [offsets[j], offsets[j + 1]) past dynamicBegin.
  std::vector<std::int64_t> offsets;

  // Stage 1: worker w's share is [shareBegin[w], shareBegin[w] + shareSize[w]).
  std::vector<std::int64_t> shareBegin;
  std::vector<std::int64_t> shareSize;
  /// Set by whoever takes the share; empty shares start out set.
  std::vector<std::atomic<bool>> claimed;
  /// Shares not yet taken, so that calls after the end skip the scan.
  std::atomic<int> unclaimed{0};

  // Every thread hits this one; keep it off the read-only data's line.
  // Unsigned and only incremented after a check that it is below
  // chunkCount, so it exceeds chunkCount by at most the number of threads
  // racing past that check: it cannot wrap however long callers go on.
  alignas(64) std::atomic<std::uint64_t> nextChunk{0};

  explicit State(int workers) : claimed(static_cast<std::size_t>(workers)) {}

  Chunk dynamicChunk(std::uint64_t index) const {
    const auto j = static_cast<std::int64_t>(index);
    if (fixedChunk > 0) {
      // j < ceil(size / k), so j * k < size: no overflow.
      const std::int64_t offset = j * fixedChunk;
      return {dynamicBegin + offset,
              std::min(fixedChunk, dynamicSize - offset)};
    }
    const auto at = static_cast<std::size_t>(index);
    return {dynamicBegin + offsets[at], offsets[at + 1] - offsets[at]};
  }

  std::optional<Chunk> claim(std::size_t worker) {
    // The plain load keeps later calls from writing a shared line.
    if (claimed[worker].load(std::memory_order_relaxed) ||
        claimed[worker].exchange(true, std::memory_order_relaxed))
      return std::nullopt;
    unclaimed.fetch_sub(1, std::memory_order_relaxed);
    return Chunk{shareBegin[worker], shareSize[worker]};
  }
};

ChunkGenerator::ChunkGenerator(const ScheduleSpec &spec)
    : iterations_(spec.iterations) {
  if (std::string problem = validate(spec); !problem.empty())
    throw std::invalid_argument(problem);
  state_ = std::make_unique<State>(spec.workers);
  State &state = *state_;

  // Stage-1 shares lie first, in worker order; the dynamic chunks follow.
  const auto workers = static_cast<std::size_t>(spec.workers);
  std::vector<std::int64_t> shares = weightedShares(spec);
  shares.resize(workers, 0);
  state.shareBegin.resize(workers);
  state.shareSize = shares;
  std::int64_t begin = 0;
  for (std::size_t w = 0; w < workers; ++w) {
    state.shareBegin[w] = begin;
    begin += shares[w];
  }

  state.dynamicBegin = begin;
  state.dynamicSize = spec.iterations - begin;
  if (spec.scheme == Scheme::Pss || spec.scheme == Scheme::Css) {
    // ~I chunks: never tabulate (I may be 1e12).
    state.fixedChunk = spec.scheme == Scheme::Pss ? 1 : spec.chunk;
    state.chunkCount = static_cast<std::uint64_t>(
        ceilDiv(state.dynamicSize, state.fixedChunk));
  } else {
    const std::vector<std::int64_t> sizes =
        dynamicChunks(spec, state.dynamicSize);
    state.offsets.resize(sizes.size() + 1, 0);
    std::partial_sum(sizes.begin(), sizes.end(), state.offsets.begin() + 1);
    state.chunkCount = sizes.size();
  }
  reset();
  // Threads that draw chunks are started after this, which publishes it.
}

ChunkGenerator::~ChunkGenerator() = default;

void ChunkGenerator::reset() noexcept {
  State &state = *state_;
  int unclaimed = 0;
  for (std::size_t w = 0; w < state.claimed.size(); ++w) {
    const bool empty = state.shareSize[w] == 0;
    state.claimed[w].store(empty, std::memory_order_relaxed);
    unclaimed += empty ? 0 : 1;
  }
  state.unclaimed.store(unclaimed, std::memory_order_relaxed);
  state.nextChunk.store(0, std::memory_order_relaxed);
}

std::optional<Chunk> ChunkGenerator::next(int worker) noexcept {
  State &state = *state_;
  const std::size_t workers = state.claimed.size();
  // An out-of-range worker has no share of its own but may still draw.
  const bool known = worker >= 0 && static_cast<std::size_t>(worker) < workers;
  const std::size_t self = known ? static_cast<std::size_t>(worker) : 0;

  // A worker's first call takes its stage-1 share.
  if (known)
    if (std::optional<Chunk> share = state.claim(self))
      return share;

  // Relaxed suffices: each fetch_add returns a distinct index, and the
  // table it indexes was written before any drawing thread started.
  if (state.nextChunk.load(std::memory_order_relaxed) < state.chunkCount) {
    const std::uint64_t index =
        state.nextChunk.fetch_add(1, std::memory_order_relaxed);
    if (index < state.chunkCount)
      return state.dynamicChunk(index);
  }

  // The dynamic chunks are gone: hand out shares no worker came for, so
  // that nothing is lost when fewer workers show up than the spec named.
  if (state.unclaimed.load(std::memory_order_relaxed) > 0)
    for (std::size_t i = 1; i <= workers; ++i)
      if (std::optional<Chunk> share = state.claim((self + i) % workers))
        return share;
  return std::nullopt;
}

std::vector<std::int64_t> stage1Shares(const ScheduleSpec &spec) {
  if (std::string problem = validate(spec); !problem.empty())
    throw std::invalid_argument(problem);
  return weightedShares(spec);
}

WeightedChunker::WeightedChunker(const ScheduleSpec &spec, std::int64_t begin)
    : scheme_(spec.scheme), workers_(spec.workers), chunk_(spec.chunk),
      next_(begin), end_(spec.iterations) {
  ScheduleSpec plain = spec;
  plain.alpha.reset();
  if (std::string problem = validate(plain); !problem.empty())
    throw std::invalid_argument(problem);
  if (begin < 0 || begin > spec.iterations)
    throw std::invalid_argument("the first dynamic iteration must be in [0, " +
                                std::to_string(spec.iterations) + "], got " +
                                std::to_string(begin));
  if (scheme_ == Scheme::Tss && remaining() > 0) {
    const TssParameters tss = tssParameters(remaining(), workers_);
    tssSize_ = tss.first;
    tssDelta_ = tss.delta;
  }
}

std::optional<Chunk> WeightedChunker::next(double share) {
  const std::int64_t left = remaining();
  if (left == 0)
    return std::nullopt;
  share = std::clamp(share, 1e-9, 1.0);
  // x * share, rounded up; the tolerance forgives a share's last bits.
  auto scaledUp = [](long double x, double fraction) {
    const long double exact = x * static_cast<long double>(fraction);
    return static_cast<std::int64_t>(
        std::ceil(exact - 1e-15L * std::max(1.0L, exact)));
  };
  // The worker's speed relative to the mean worker's. Equal shares are
  // computed in integers: exactly chunkSequence()'s chunks at any size.
  const double relative = share * workers_;
  const bool equal = std::fabs(relative - 1.0) < 1e-12;
  std::int64_t size = 1;
  switch (scheme_) {
  case Scheme::Pss:
    size = std::llround(relative);
    break;
  case Scheme::Css:
    size = std::llround(static_cast<double>(chunk_) * relative);
    break;
  case Scheme::Gss:
    size = equal ? ceilDiv(left, workers_) : scaledUp(left, share);
    break;
  case Scheme::Fss:
    // A batch hands out half of what remained at its start, in P chunks.
    if (batchLeft_ == 0) {
      batchStart_ = left;
      batchLeft_ = workers_;
    }
    --batchLeft_;
    size = equal ? ceilDiv(batchStart_, 2 * std::int64_t{workers_})
                 : scaledUp(static_cast<long double>(batchStart_) / 2, share);
    break;
  case Scheme::Tss:
    size = static_cast<std::int64_t>(
        std::llround(static_cast<double>(tssSize_) * relative));
    tssSize_ = std::max<std::int64_t>(tssSize_ - tssDelta_, 1);
    break;
  }
  size = std::clamp<std::int64_t>(size, 1, left);
  const Chunk chunk{next_, size};
  next_ += size;
  return chunk;
}

} // namespace fpm
