//===- exec/plan.cpp - Who runs which iterations --------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/plan.hpp"

#include "balance/balance.hpp"
#include "partition/partition.hpp"
#include "support/int_math.hpp"

#include <algorithm>
#include <stdexcept>

namespace fpm {
namespace {

/// Constant-speed profiles of the PEs' speeds: what the partitioners split
/// by when no PE has an FPM (time = size / speed, two points so that the
/// interpolating ones have a segment).
std::vector<Profile> speedProfiles(const PlanRequest &request,
                                   std::span<const std::size_t> live) {
  std::vector<Profile> profiles;
  const std::int64_t largest = std::max<std::int64_t>(request.tripCount, 2);
  for (std::size_t p : live) {
    const PlanPe &pe = request.pes[p];
    Profile profile;
    profile.kernel = std::string(request.loop);
    profile.device = pe.id;
    profile.points = {
        {1, 1.0 / pe.speed, {}, {}},
        {largest, static_cast<double>(largest) / pe.speed, {}, {}}};
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

} // namespace

std::int64_t Plan::planned(std::size_t pe) const {
  std::int64_t sum = 0;
  if (pe < packages.size())
    for (const Range &range : packages[pe])
      sum += range.size();
  return sum;
}

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

Plan makePlan(const PlanRequest &request) {
  const LoopSchedule &schedule = *request.schedule;
  const std::int64_t trips = request.tripCount;
  std::vector<std::size_t> live; // the PEs with workers, in order
  for (std::size_t p = 0; p < request.pes.size(); ++p)
    if (request.pes[p].workers > 0)
      live.push_back(p);
  if (live.empty())
    throw std::invalid_argument("no PE takes part in the loop");
  const bool measured =
      std::none_of(live.begin(), live.end(),
                   [&](std::size_t p) { return request.pes[p].guessed; });
  const bool modelled = !request.models.empty();

  Plan plan;
  plan.packages.resize(request.pes.size());
  plan.modelled = modelled;
  const std::int64_t grain = std::max<std::int64_t>(request.grain, 1);
  // The least multiple of the grain that is aligned.
  plan.granule = ceilDiv(std::max(request.alignment, grain), grain) * grain;

  // `auto`: on partial FPMs, numerical; threads alike, equal; with stored
  // FPMs of every PE, for PEs that run one range each (nodes), geometric,
  // else the exact optimum (on coarser granules for a long loop) up to 16
  // PEs, else WDAH; with speeds measured, a split by them (cpm); else the
  // guided schedule, which measures as it goes. Static schedules on partial
  // FPMs too: the caller asks for those only for `auto` and `numerical`.
  bool isStatic = schedule.kind == LoopSchedule::Kind::Static;
  plan.partitioner = schedule.partitioner;
  if (request.partial) {
    isStatic = true;
    plan.partitioner = findPartitioner("numerical");
    plan.onPartialModels = true;
    plan.reason = "numerical on partial FPMs, refined at every call";
  } else if (schedule.automatic) {
    if (request.alike) {
      plan.partitioner = findPartitioner("equal");
      plan.reason = "equal: the CPU threads are alike";
    } else if (modelled && request.wholeShares) {
      // The least makespan of one share per PE, to the iteration (the
      // bisection's answer is exact where every FPM's time rises with its
      // share, as a node's does): no coarse granules, at any PE count.
      plan.partitioner = findPartitioner("geometric");
      plan.reason = "geometric on stored profiles, one share per PE";
    } else if (modelled) {
      // The exact optimum on granules coarsened to at most
      // ExactSolverUnits loses under a granule per PE: little while every
      // PE has many (1/64 of an even share, at most); WDAH on the fine
      // granules beyond (a cluster's ranks).
      const bool exact =
          trips / plan.granule <= ExactSolverUnits ||
          static_cast<std::int64_t>(live.size()) * 64 <= ExactSolverUnits;
      plan.partitioner = findPartitioner(exact ? "optimal" : "wdah");
      plan.reason = std::string(plan.partitioner->name) + " on stored profiles";
    } else if (measured) {
      plan.partitioner = findPartitioner("cpm");
      plan.reason = "cpm on measured speeds";
    } else {
      isStatic = false;
      plan.reason = "gss: no speeds measured yet";
    }
  } else if (modelled && isStatic) {
    plan.reason = "on stored profiles";
  }
  plan.kind = isStatic ? Plan::Kind::Static : Plan::Kind::Dynamic;

  if (isStatic) {
    // Coarser for a long loop, still a multiple of the aligned one.
    plan.granule *= ceilDiv(
        staticGranule(*plan.partitioner, trips, request.grain), plan.granule);
    PartitionRequest split;
    split.size = trips;
    split.granularity = plan.granule;
    split.backtrack = schedule.backtrack;
    const Distribution distribution =
        request.partial
            ? request.partial->split(split)
            : partition(*plan.partitioner,
                        CostModel(modelled ? std::vector<Profile>(
                                                 request.models.begin(),
                                                 request.models.end())
                                           : speedProfiles(request, live)),
                        split);
    std::int64_t begin = 0;
    for (std::size_t i = 0; i < live.size(); ++i)
      for (std::int64_t size : distribution.packages[i])
        if (size > 0) {
          plan.packages[live[i]].push_back({begin, begin + size});
          begin += size;
        }
    // A partitioner bug must not lose or repeat iterations.
    if (begin != trips || distribution.packages.size() != live.size())
      throw std::logic_error(std::string(plan.partitioner->name) +
                             " returned a distribution of " +
                             std::to_string(begin) + " iterations over " +
                             std::to_string(distribution.packages.size()) +
                             " PEs for " + std::to_string(trips) +
                             " iterations over " + std::to_string(live.size()));
    return plan;
  }

  // Self-scheduling, in granules; two-stage: alpha% first by the PEs'
  // speeds (the self-scheduling thesis, 3.2).
  ScheduleSpec &spec = plan.dynamic;
  spec.scheme = schedule.scheme;
  spec.iterations = ceilDiv(trips, plan.granule);
  spec.workers = static_cast<int>(request.pes.size());
  spec.chunk = schedule.chunk;
  spec.alpha = schedule.alpha;
  if (spec.alpha) {
    for (const PlanPe &pe : request.pes)
      spec.weights.push_back(pe.workers > 0 ? pe.speed : 1e-9);
    const std::vector<std::int64_t> shares = stage1Shares(spec);
    std::int64_t begin = 0;
    for (std::size_t p = 0; p < shares.size(); ++p) {
      const std::int64_t end =
          std::min(trips, begin + shares[p] * plan.granule);
      if (end > begin)
        plan.packages[p].push_back({begin, end});
      begin = end;
    }
    plan.dynamicBegin = begin;
  }
  return plan;
}

std::optional<std::vector<Range>>
keepCuts(std::span<const Range> planned, std::span<const Range> previous,
         const std::function<double(std::size_t, std::int64_t)> &time,
         std::int64_t granule, double tolerance) {
  const std::size_t pes = planned.size();
  if (pes == 0 || previous.size() != pes || previous.front().begin != 0 ||
      planned.front().begin != 0 || previous.back().end != planned.back().end)
    return std::nullopt;
  const std::int64_t trips = planned.back().end;
  granule = std::max<std::int64_t>(granule, 1);
  double makespan = 0;
  for (std::size_t p = 0; p < pes; ++p)
    if (planned[p].size() > 0)
      makespan = std::max(makespan, time(p, planned[p].size()));
  if (makespan <= 0)
    return std::nullopt;
  // The most each PE may take and finish in time: the largest such share,
  // by bisection (never less than the plan gave it).
  const double limit = makespan * (1 + tolerance);
  std::vector<std::int64_t> caps(pes);
  for (std::size_t p = 0; p < pes; ++p) {
    std::int64_t low = 0, high = trips;
    while (low < high) {
      const std::int64_t middle = low + (high - low + 1) / 2;
      if (time(p, middle) <= limit)
        low = middle;
      else
        high = middle - 1;
    }
    caps[p] = std::max(low, planned[p].size());
  }
  std::vector<std::int64_t> capsAfter(pes + 1, 0);
  for (std::size_t p = pes; p-- > 0;)
    capsAfter[p] = capsAfter[p + 1] + caps[p];
  // Each cut where it was, unless the PE before it would take more than
  // its cap, or leave the PEs after it more than theirs.
  std::vector<Range> kept(pes);
  std::int64_t cut = 0;
  for (std::size_t p = 0; p + 1 < pes; ++p) {
    std::int64_t low = std::max(cut, trips - capsAfter[p + 1]);
    std::int64_t high = std::min(trips, cut + caps[p]);
    low = std::min(trips, (low + granule - 1) / granule * granule);
    if (high < trips)
      high = high / granule * granule;
    if (low > high)
      return std::nullopt;
    const std::int64_t next = std::clamp(previous[p].end, low, high);
    kept[p] = {cut, next};
    cut = next;
  }
  kept.back() = {cut, trips};
  if (kept.back().size() > caps.back())
    return std::nullopt;
  return kept;
}

bool movesPay(std::span<const Range> planned, std::span<const Range> last,
              const std::function<double(std::size_t, std::int64_t)> &time,
              const std::function<double(std::size_t, Range)> &moveCost) {
  double kept = 0, moved = 0;
  for (std::size_t p = 0; p < planned.size(); ++p) {
    kept = std::max(kept, time(p, last[p].size()));
    double gains = 0; // what p gets that it did not run last time
    if (const Range before{planned[p].begin,
                           std::min(planned[p].end, last[p].begin)};
        before.size() > 0)
      gains += moveCost(p, before);
    if (const Range after{std::max(planned[p].begin, last[p].end),
                          planned[p].end};
        after.size() > 0)
      gains += moveCost(p, after);
    moved = std::max(moved, time(p, planned[p].size()) + gains);
  }
  return moved < kept;
}

} // namespace fpm
