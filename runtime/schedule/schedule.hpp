//===- schedule/schedule.hpp - Self-scheduling chunk generators -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: the self-scheduling schemes of the self-scheduling
// thesis (ch. 2: PSS, CSS(k), GSS, FSS with a = 2, TSS; 3.2: the two-stage
// schemes that first hand out alpha% of the iterations by worker weight) as
//  - chunkSequence(): the chunk sizes a master grants, in grant order, as
//    fpm-partition prints them (docs/profiles.md);
//  - ChunkGenerator: the same chunks drawn by many threads at once, with no
//    lock on the hot path, as the runtime's executor uses them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace fpm {

enum class Scheme { Pss, Css, Gss, Fss, Tss };

/// The scheme called `name` ("pss", "css", "gss", "fss", "tss": the
/// FPM_SELF_SCHEDULE lines of fpm/schedules.def), if any, and its name.
std::optional<Scheme> parseScheme(std::string_view name);
std::string_view schemeName(Scheme scheme);

struct ScheduleSpec {
  Scheme scheme = Scheme::Gss;
  std::int64_t iterations = 0; ///< I >= 0
  int workers = 1;             ///< P >= 1
  std::int64_t chunk = 1;      ///< CSS's k >= 1
  /// Two-stage (the self-scheduling thesis, 3.2): the percentage of I handed
  /// out by weight first, in (0, 100]; absent for the plain scheme.
  std::optional<double> alpha;
  std::vector<double> weights; ///< one > 0 per worker, with alpha
};

/// The problem with a spec, or an empty string when it is valid.
std::string validate(const ScheduleSpec &spec);

/// What a master grants for `spec`, in grant order. stage1 has one share per
/// worker in worker order (empty without alpha); stage1 and chunks together
/// sum to I. Throws std::invalid_argument for an invalid spec.
struct ChunkSequence {
  std::vector<std::int64_t> stage1;
  std::vector<std::int64_t> chunks;
};
ChunkSequence chunkSequence(const ScheduleSpec &spec);

/// A range of iterations [begin, begin + size).
struct Chunk {
  std::int64_t begin = 0;
  std::int64_t size = 0;
};

/// Hands out the chunks of a schedule to threads that call next()
/// concurrently. Every iteration in [0, I) is handed out exactly once.
/// A worker's first call takes its stage-1 share; when the dynamic chunks
/// run out, stage-1 shares that no worker came for are handed out too, so
/// that nothing is lost when fewer workers show up than the spec named.
class ChunkGenerator {
public:
  explicit ChunkGenerator(const ScheduleSpec &spec);
  ChunkGenerator(const ChunkGenerator &) = delete;
  ChunkGenerator &operator=(const ChunkGenerator &) = delete;
  ~ChunkGenerator();

  /// The next chunk for `worker` (0 <= worker < P), or nothing when all
  /// iterations are handed out. Thread-safe and lock-free.
  std::optional<Chunk> next(int worker) noexcept;

  /// Makes every chunk available again, as if just constructed, so that a
  /// loop called many times reuses one table instead of allocating. Not
  /// concurrently with next(): whatever starts the drawing threads after it
  /// publishes it.
  void reset() noexcept;

  std::int64_t iterations() const { return iterations_; }

private:
  struct State;
  std::int64_t iterations_;
  std::unique_ptr<State> state_;
};

/// Stage-1 shares of a two-stage spec (the self-scheduling thesis, 3.2), one
/// per worker in worker order: ceil(I * alpha / 100) iterations split by
/// weight, largest weight first. Empty without alpha. Throws
/// std::invalid_argument for a bad spec.
std::vector<std::int64_t> stage1Shares(const ScheduleSpec &spec);

/// Self-scheduling over unlike workers, for the heterogeneous executor:
/// each chunk is the scheme's next one scaled by the asking worker's share
/// of the team's speed (weighted factoring, after Hummel et al.), so that a
/// device ten times faster gets chunks ten times larger. With every share
/// 1/P the chunks are exactly chunkSequence()'s. Not thread-safe: the
/// caller serialises next().
class WeightedChunker {
public:
  /// Chunks [begin, spec.iterations) by spec.scheme over spec.workers;
  /// alpha and weights are ignored (stage 1 is stage1Shares()). Throws
  /// std::invalid_argument for a bad spec or begin.
  WeightedChunker(const ScheduleSpec &spec, std::int64_t begin);

  /// The next chunk for a worker with `share` (in (0, 1]) of the speed of
  /// all workers, or nothing when every iteration is handed out.
  std::optional<Chunk> next(double share);

  std::int64_t remaining() const { return end_ - next_; }

private:
  Scheme scheme_;
  int workers_;
  std::int64_t chunk_; // CSS's k
  std::int64_t next_;
  std::int64_t end_;
  // FSS: the batch's remaining count at its start, and requests left in it.
  std::int64_t batchStart_ = 0;
  int batchLeft_ = 0;
  // TSS: the current unscaled size and its decrement.
  std::int64_t tssSize_ = 0;
  std::int64_t tssDelta_ = 0;
};

} // namespace fpm
