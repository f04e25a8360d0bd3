//===- balance/balance.hpp - Partial FPMs for repeated loops ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: LoadBalancer, the dynamic load balancing of an
// iterative routine's loop with partial functional performance models (seed
// 002, section 4). At call k of a loop that is called again and again:
//  1. the PEs run the split d^k;
//  2. each PE's iterations d_i^k and the seconds it was busy are observed;
//  3. the points (d_i^k, s_i^k) join the PEs' partial FPMs;
//  4. the numerical partitioner (partition/numerical.cpp) on those models
//     gives d^{k+1}.
// A partial FPM is accurate only where the loop runs, which is all it needs:
// the splits it gives converge to the optimal one, and stay there.
//
// Samples at one size (sizes within a few per cent are one point) combine
// by one of the autonomic-framework thesis's estimators (5.2.3): the average
// since the start, or the last sample ("ad-hoc"). A PE whose speed changes
// (another program takes its cores, a device throttles) is caught where its
// model was measured: samples that disagree with their point on consecutive
// calls replace the PE's model, so that it follows the change instead of
// averaging it away.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"
#include "partition/partition.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace fpm {

/// How samples of one PE at one size combine into the point's speed.
enum class Estimator {
  /// Iterations over seconds of every sample since the point was made:
  /// noise averages out, a change of speed shows only slowly (the
  /// autonomic-framework thesis's
  /// "average" policy).
  Average,
  /// The last sample alone: follows every change at once, noise included
  /// (the autonomic-framework thesis's "ad-hoc" policy).
  Last,
};

struct BalanceOptions {
  /// The default, with the change rule below: between changes a loop's
  /// speed is steady and its samples differ by noise, which the average
  /// removes; the rule, not the estimator, follows real changes.
  Estimator estimator = Estimator::Average;
  /// Sizes within this fraction of each other are one point: a converged
  /// split moves by a granule or two from call to call.
  double bucket = 0.05;
  /// A sample slower or faster than its point's speed by more than this
  /// factor (1 + change) disagrees with the model. Busy times on a shared
  /// machine vary by several per cent; a changed PE by tens.
  double change = 0.3;
  /// Disagreements in the same direction on this many consecutive
  /// observations of a PE at measured sizes are a change, not an outlier.
  int confirmations = 2;
  /// Points kept per PE; the least recently updated go first (seeded
  /// points before observed ones, the farthest from the newest sample
  /// first among equals).
  std::size_t maxPoints = 16;
};

/// What one PE ran in one call: its iterations and the seconds it was busy
/// with them. Zero iterations: the PE ran nothing, nothing is learnt.
struct Observation {
  std::int64_t iterations = 0;
  double seconds = 0;
};

/// The partial FPMs of a loop's PEs, in a fixed order. A value type: copy
/// it to try a different future.
class LoadBalancer {
public:
  explicit LoadBalancer(std::size_t pes, BalanceOptions options = {});

  std::size_t size() const { return pes_.size(); }
  const BalanceOptions &options() const { return options_; }

  /// Seeds PE `pe`'s model with the points of a stored FPM, one sample
  /// each, older than any observation; beyond maxPoints the largest sizes
  /// are kept, nearest the shares of a split.
  void seed(std::size_t pe, std::span<const ProfilePoint> points);

  /// Adds one call's observations, one per PE in order. Returns the PEs
  /// whose models were replaced because their speed changed.
  std::vector<std::size_t> observe(std::span<const Observation> observations);

  /// True when every PE's model has a point: split() can be asked.
  bool ready() const;
  /// Calls observed so far.
  std::uint64_t observed() const { return observed_; }
  /// Points in PE `pe`'s model.
  std::size_t points(std::size_t pe) const { return pes_[pe].points.size(); }
  /// PE `pe`'s partial FPM as a profile (device "pe<i>"); no points when
  /// it has none.
  Profile model(std::size_t pe) const;

  /// The split of the next call: `request.size` iterations in multiples of
  /// `request.granularity` (one share holding the remainder), one package
  /// per PE, by the numerical partitioner on the partial FPMs. Throws
  /// std::logic_error when not ready(), std::invalid_argument on a bad
  /// request (as partition() does).
  Distribution split(const PartitionRequest &request) const;

private:
  /// One point of a partial FPM: the samples taken at about one size.
  struct Point {
    double iterations = 0; ///< summed over the samples the estimator keeps
    double seconds = 0;
    int samples = 0;
    std::uint64_t stamp = 0; ///< the observation that last updated it

    double size() const { return iterations / samples; }
    double speed() const { return iterations / seconds; }
  };
  struct Pe {
    std::vector<Point> points; ///< ordered by size
    /// Observations that disagreed with the model, not yet confirmed.
    std::vector<Observation> suspects;
    bool slower = false; ///< the suspects' direction
  };

  /// The point holding samples of `size`, or points.end().
  std::vector<Point>::iterator bucket(Pe &pe, double size);
  void add(Pe &pe, Observation observation, std::uint64_t stamp);

  BalanceOptions options_;
  std::vector<Pe> pes_;
  std::uint64_t observed_ = 0; ///< calls observed
};

} // namespace fpm
