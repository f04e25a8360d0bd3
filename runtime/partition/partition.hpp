//===- partition/partition.hpp - Static partitioners, one interface -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: the cost model every static partitioner is scored
// with (docs/profiles.md), the Distribution they return, and a
// registry through which fpm-partition, the runtime and the benchmarks reach
// every algorithm by name.
//
// Adding a partitioner: write `partition/<name>.cpp` defining a function with
// the PartitionFunction signature, and add one FPM_PARTITIONER line to
// include/fpm/schedules.def (the registry, fpm-partition, FPM_SCHEDULE and
// the pragma all read it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fpm/schedules.hpp" // MaxBacktrack, the registry's columns
#include "model/profile.hpp"
#include "model/speed.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

/// The cost model of docs/profiles.md over p processing elements (PEs),
/// one profile each. t_j(w) is the profile's time when w is a profile point,
/// otherwise w / s_j(w) with s_j linear between points, constant beyond.
class CostModel {
public:
  explicit CostModel(std::vector<Profile> profiles);

  /// Number of processing elements.
  std::size_t size() const { return profiles_.size(); }
  const Profile &profile(std::size_t pe) const { return profiles_[pe]; }
  const PiecewiseLinearSpeed &speed(std::size_t pe) const {
    return speeds_[pe];
  }
  std::span<const Profile> profiles() const { return profiles_; }

  /// t_j(w): time of one package of `units` on PE `pe`; 0 for no units.
  double time(std::size_t pe, std::int64_t units) const;
  /// Time of a list of packages on PE `pe`: the sum of their times.
  double time(std::size_t pe, std::span<const std::int64_t> packages) const;

  /// The default granularity: the smallest size in any profile.
  std::int64_t defaultGranularity() const;
  /// The largest size in any profile.
  std::int64_t largestSize() const;

private:
  std::vector<Profile> profiles_;
  std::vector<PiecewiseLinearSpeed> speeds_;
};

/// What to partition: N units in packages that are multiples of G.
struct PartitionRequest {
  std::int64_t size = 0;        ///< N >= 0
  std::int64_t granularity = 1; ///< G >= 1
  int backtrack = 100;          ///< WDAH's budget, 1 <= B <= MaxBacktrack

  std::int64_t units() const { return size / granularity; }
  std::int64_t remainder() const { return size % granularity; }
};

/// Packages per PE, in the order they were created. A PE with no work has
/// an empty list.
struct Distribution {
  std::vector<std::vector<std::int64_t>> packages;

  std::int64_t iterations(std::size_t pe) const;
  std::int64_t total() const;
};

/// A distribution scored by the cost model.
struct Evaluation {
  std::vector<double> times; ///< per PE
  double makespan = 0;       ///< the largest PE time
};

Evaluation evaluate(const CostModel &model, const Distribution &distribution);

/// The problem with a distribution, or an empty string when it is valid:
/// one list per PE, positive packages summing to N, each a multiple of G
/// except at most one holding the remainder N mod G (alone, or added to one
/// multiple of G when `singleShare` partitioners merge it into a share).
std::string checkDistribution(const Distribution &distribution,
                              const PartitionRequest &request,
                              std::size_t processors);

using PartitionFunction = Distribution (*)(const CostModel &model,
                                           const PartitionRequest &request);

/// One entry of the registry.
struct Partitioner {
  std::string_view name;
  std::string_view summary;
  PartitionFunction partition;
  /// True when it gives each PE one contiguous share (one package).
  bool singleShare;
  /// The most granules N/G it takes, or 0 for no limit. The exact solvers
  /// grow as O(p (N/G)^2), and WDAH's packages are whole granules (N/G of
  /// them at most), so beyond this they refuse rather than run for minutes
  /// or print millions of packages.
  std::int64_t maxUnits = 0;
  /// True for the exact solvers (time O(p (N/G)^2)): the runtime gives them
  /// fewer granules than the others (staticGranule()).
  bool exact = false;
};

/// Every static partitioner, in the order the spec lists them: the
/// FPM_PARTITIONER lines of fpm/schedules.def.
std::span<const Partitioner> partitioners();
/// The partitioner called `name`, or nullptr.
const Partitioner *findPartitioner(std::string_view name);

/// Runs `partitioner` after checking the request; throws
/// std::invalid_argument on a bad request (N < 0, G < 1, B outside
/// [1, MaxBacktrack], no PEs, or more granules than the partitioner's
/// maxUnits).
Distribution partition(const Partitioner &partitioner, const CostModel &model,
                       const PartitionRequest &request);

} // namespace fpm
