//===- partition/wdah.cpp - WDAH tree search with a backtrack budget ------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Thesis 000, chapter 4. Each PE offers workload packages W_j taken from the
// increasing region of its FPM, none larger than its priority; a depth-first
// branch-and-cut search builds the solution one package at a time, always on
// the PE with the highest priority (eq. 4.6, decremented by each package it
// gets), trying that PE's packages fastest first, cutting branches whose
// makespan cannot improve on the best found, and stopping after B returns
// from the recursion (Algorithm 2's BackTrack). B = 1 is WDAH-Heuristic
// (Algorithm 4).
//
//===----------------------------------------------------------------------===//

#include "partition/wdah.hpp"

#include "partition/algorithms.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <tuple>

namespace fpm {
namespace wdah {

std::vector<std::vector<WorkloadPackage>>
workloadPackages(const CostModel &model, std::int64_t granularity) {
  const std::int64_t g = granularity;
  std::vector<std::vector<WorkloadPackage>> result(model.size());
  for (std::size_t pe = 0; pe < model.size(); ++pe) {
    // Packages must be multiples of G, so a profile size off the grid is
    // rounded down (never past the measured point), and G itself, "the
    // smallest possible workload size", is always there: any remaining
    // multiple of G can then be filled, as the thesis' N mod w_min = 0
    // requirement intends.
    std::vector<std::int64_t> sizes{g};
    for (const ProfilePoint &point : model.profile(pe).points)
      sizes.push_back(std::max(g, point.size / g * g));
    std::ranges::sort(sizes);
    auto [first, last] = std::ranges::unique(sizes);
    sizes.erase(first, last);

    std::vector<WorkloadPackage> packages;
    packages.reserve(sizes.size());
    for (std::int64_t size : sizes)
      packages.push_back({size, model.time(pe, size)});
    // The increasing region runs up to and including the fastest size (the
    // largest one among equally fast sizes), judged by the cost model's
    // times of the packages actually offered.
    std::size_t fastest = 0;
    for (std::size_t i = 1; i < packages.size(); ++i)
      if (packages[i].speed() >= packages[fastest].speed())
        fastest = i;
    packages.resize(fastest + 1);
    // Sizes are distinct, so this order is total and sort is deterministic.
    std::ranges::sort(
        packages, [](const WorkloadPackage &a, const WorkloadPackage &b) {
          return std::tuple(a.speed(), a.size) > std::tuple(b.speed(), b.size);
        });
    result[pe] = std::move(packages);
  }
  return result;
}

std::vector<double>
priorities(std::span<const std::vector<WorkloadPackage>> packages,
           std::int64_t size) {
  double total = 0;
  for (const std::vector<WorkloadPackage> &w : packages)
    total += w.front().speed();
  std::vector<double> result;
  result.reserve(packages.size());
  for (const std::vector<WorkloadPackage> &w : packages)
    result.push_back(w.front().speed() / total * static_cast<double>(size));
  return result;
}

namespace {

/// At most about this many sizes per PE, so that memory and the search's
/// scans stay bounded when profiles reach a huge N / G.
constexpr std::int64_t MaxFineSizes = std::int64_t{1} << 16;
/// The caps settle in a few rounds; this bounds a cycle between roundings.
constexpr int MaxCapRounds = 100;

/// The least multiple of G that holds `priority` (G at the least), and at
/// most the largest multiple of G: a priority is a share of N, but in
/// doubles N = 2^63 - 1 rounds up to 2^63, which no int64 holds.
std::int64_t capFor(double priority, std::int64_t g) {
  const std::int64_t most = std::numeric_limits<std::int64_t>::max() / g;
  const double units = std::ceil(priority / static_cast<double>(g));
  if (!(units < static_cast<double>(most)))
    return most * g;
  return std::max(g, static_cast<std::int64_t>(units) * g);
}

/// The sizes one PE may be offered, ascending: the multiples of G (of a
/// coarser step past MaxFineSizes, with the profile's own sizes) up to the
/// end of its increasing region and N. They are timed only as far as a cap
/// asks, so that all PEs together time about N / G sizes, not p times that.
class FineSizes {
public:
  FineSizes(const CostModel &model, std::size_t pe,
            std::span<const WorkloadPackage> region, std::int64_t g,
            std::int64_t size)
      : model_(&model), pe_(pe) {
    for (const WorkloadPackage &package : region)
      end_ = std::max(end_, package.size);
    end_ = std::min(end_, size);
    step_ = g * ((end_ / g + MaxFineSizes - 1) / MaxFineSizes);
    nextStep_ = step_;
    // W_j always holds G, and G <= N: the first size is G.
    for (const WorkloadPackage &package : region)
      if (package.size <= end_)
        region_.push_back(package.size);
    std::ranges::sort(region_);
  }

  /// How many sizes are at most `cap`, timing them first.
  std::size_t within(std::int64_t cap) {
    cap = std::min(cap, end_);
    for (;;) {
      const bool step = stepsLeft_;
      const bool region = nextRegion_ < region_.size();
      if (!step && !region)
        break;
      const std::int64_t next = !region ? nextStep_
                                : !step
                                    ? region_[nextRegion_]
                                    : std::min(nextStep_, region_[nextRegion_]);
      if (next > cap)
        break;
      if (step && nextStep_ == next) {
        // Near 2^63 the next multiple may not fit in an int64 (the addition
        // overflowed, and this loop never ended).
        stepsLeft_ =
            nextStep_ <= std::numeric_limits<std::int64_t>::max() - step_;
        if (stepsLeft_)
          nextStep_ += step_;
      }
      nextRegion_ +=
          nextRegion_ < region_.size() && region_[nextRegion_] == next;
      packages_.push_back({next, model_->time(pe_, next)});
      topSpeed_.push_back(std::max(topSpeed_.empty() ? 0.0 : topSpeed_.back(),
                                   packages_.back().speed()));
    }
    return static_cast<std::size_t>(
        std::ranges::upper_bound(packages_, cap, {}, &WorkloadPackage::size) -
        packages_.begin());
  }

  /// The top speed among the sizes up to `cap` (>= G).
  double topSpeed(std::int64_t cap) { return topSpeed_[within(cap) - 1]; }

  /// The sizes up to `cap`, fastest first (ties: larger first).
  std::vector<WorkloadPackage> offered(std::int64_t cap) {
    std::vector<WorkloadPackage> result(
        packages_.begin(),
        packages_.begin() + static_cast<std::ptrdiff_t>(within(cap)));
    // Sizes are distinct, so this order is total and sort is deterministic.
    std::ranges::sort(
        result, [](const WorkloadPackage &a, const WorkloadPackage &b) {
          return std::tuple(a.speed(), a.size) > std::tuple(b.speed(), b.size);
        });
    return result;
  }

private:
  const CostModel *model_;
  std::size_t pe_;
  std::int64_t end_ = 0;
  std::int64_t step_ = 0;
  std::int64_t nextStep_ = 0;
  bool stepsLeft_ = true; ///< whether nextStep_ is still to be offered
  std::vector<std::int64_t> region_; ///< W_j's sizes, ascending
  std::size_t nextRegion_ = 0;
  std::vector<WorkloadPackage> packages_; ///< timed so far, ascending
  std::vector<double> topSpeed_;          ///< over packages_[0..i]
};

} // namespace

// The thesis builds W_j and eq. 4.6 for FPMs of small packages only: it wants
// a distribution "independent of the problem size" from "minimal prior
// information" (4.2). There a PE's fastest package is far below its share of
// N, so no cap binds, and W_j is the thesis' own (4.2 asks for fine-grained
// FPMs and 4.3 for multiples of the smallest workload: where the profile has
// every multiple of G, the fine sizes are its points). With profiles up to N
// the fastest size of a rising FPM is near N: the first package, never
// revisited by a budget that backtracks near the leaves, would give most of N
// to one PE and the rest in G-sized packages to slow ones. So no package may
// exceed its PE's priority, and eq. 4.6 takes the top speed over the capped
// W_j, which moves the caps, until they settle (then every PE's share takes
// about as long). Where the profile skips multiples of G, the cost model
// times them, so that the last packages fill the remaining work exactly
// instead of in G-sized pieces.
Offer offer(const CostModel &model, std::int64_t granularity,
            std::int64_t size) {
  const std::int64_t g = granularity;
  const std::size_t p = model.size();
  std::vector<std::vector<WorkloadPackage>> region = workloadPackages(model, g);
  Offer result{{}, priorities(region, size)};
  std::vector<FineSizes> fine;
  fine.reserve(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    fine.emplace_back(model, pe, region[pe], g, size);

  std::vector<std::int64_t> caps(p, 0);
  std::vector<double> top(p);
  for (int round = 0; round < MaxCapRounds; ++round) {
    bool settled = true;
    for (std::size_t pe = 0; pe < p; ++pe) {
      std::int64_t cap = capFor(result.priorities[pe], g);
      settled = settled && cap == caps[pe];
      caps[pe] = cap;
    }
    if (settled)
      break;
    for (std::size_t pe = 0; pe < p; ++pe)
      top[pe] = fine[pe].topSpeed(caps[pe]);
    double total = 0;
    for (double speed : top)
      total += speed;
    for (std::size_t pe = 0; pe < p; ++pe)
      result.priorities[pe] = top[pe] / total * static_cast<double>(size);
  }

  result.packages.reserve(p);
  for (std::size_t pe = 0; pe < p; ++pe)
    result.packages.push_back(
        fine[pe].offered(capFor(result.priorities[pe], g)));
  return result;
}

std::size_t getProcessor(std::span<double> priorities,
                         std::span<const double> initial) {
  auto best = std::ranges::max_element(priorities); // first of equals
  if (*best < 0) {
    std::ranges::copy(initial, priorities.begin());
    best = std::ranges::max_element(priorities);
  }
  return static_cast<std::size_t>(best - priorities.begin());
}

namespace {

/// Where the remainder N mod G goes, and the makespan it leaves.
struct RemainderPlace {
  double makespan;
  std::size_t pe;
};

/// The spec's remainder (the thesis asks N mod G = 0 instead) is one package
/// on the PE where the makespan grows least; among equals, the PE that then
/// finishes first, then the lowest index.
RemainderPlace placeRemainder(std::span<const double> times, double makespan,
                              std::span<const double> remainderTimes) {
  RemainderPlace best{std::numeric_limits<double>::infinity(), 0};
  double bestTime = best.makespan;
  for (std::size_t pe = 0; pe < times.size(); ++pe) {
    double time = times[pe] + remainderTimes[pe];
    if (std::tuple(std::max(makespan, time), time) <
        std::tuple(best.makespan, bestTime)) {
      best = {std::max(makespan, time), pe};
      bestTime = time;
    }
  }
  return best;
}

/// A node of the solution list: package `index` of W_pe was created.
struct Assignment {
  std::uint32_t pe;
  std::uint32_t index;
};

struct Solution {
  std::vector<Assignment> assignments; ///< in creation order
  std::size_t remainderPe = 0;
};

/// Algorithm 2 without recursion: the search can be N/G levels deep (a PE
/// whose fastest package is G), far beyond what the call stack holds.
class Search {
public:
  /// `remainderTimes` holds t_j(N mod G) per PE, or nothing when N mod G = 0.
  Search(std::span<const std::vector<WorkloadPackage>> packages,
         std::vector<double> initial, std::vector<double> remainderTimes,
         int backtrack)
      : packages_(packages), initial_(std::move(initial)),
        priorities_(initial_.size()), assigned_(initial_.size(), 0),
        remainderTimes_(std::move(remainderTimes)),
        times_(initial_.size(), 0.0), budget_(backtrack) {}

  /// The best solution found for `size` units, a positive multiple of G.
  Solution run(std::int64_t size, std::int64_t granularity) {
    // The depth is at most N/G; reserving spares copies of a growing stack,
    // and pages never reached are never touched.
    frames_.reserve(static_cast<std::size_t>(
        std::min(size / granularity + 1, std::int64_t{1} << 22)));
    remaining_ = size;
    call();
    while (!frames_.empty()) {
      if (expand())
        continue;
      // No package left to try: this call returns.
      if (!resets_.empty() && resets_.back().depth == frames_.size() - 1) {
        assigned_ = std::move(resets_.back().assigned);
        resets_.pop_back();
      }
      frames_.pop_back();
      // Algorithm 2 decrements BackTrack after each return and recurses
      // only while it is positive; once it reaches 0 no new call, and so no
      // new terminal, can follow, so the search is over.
      if (frames_.empty() || --budget_ <= 0)
        break;
      remaining_ += topPackage().size;
      removeTopNode();
    }
    // The first descent meets no cut and can always place G, so it always
    // ends in a solution.
    assert(!best_.assignments.empty() && "WDAH found no solution");
    return std::move(best_);
  }

private:
  /// One call WDAH-Branch-and-Cut(RemSize) with RemSize > 0. Small, since
  /// there may be a million: its RemSize is implied by the nodes above it.
  struct Frame {
    double savedTime;   ///< the PE's time before this call's node went in
    std::uint32_t pe;   ///< chosen by GetProcessor
    std::uint32_t next; ///< the next package of W_pe to try
  };

  struct Reset {
    std::size_t depth;
    std::vector<std::int64_t> assigned; ///< as it was before the reset
  };

  /// The package of the top frame's node.
  const WorkloadPackage &topPackage() const {
    const Frame &frame = frames_.back();
    return packages_[frame.pe][frame.next - 1];
  }

  /// Enters WDAH-Branch-and-Cut(remaining_), which picks its PE at once.
  void call() {
    // A priority is its eq. 4.6 value less the units given since the last
    // reset (eq. 4.7): integers, so that removal (eq. 4.8) undoes it exactly.
    for (std::size_t pe = 0; pe < priorities_.size(); ++pe)
      priorities_[pe] = initial_[pe] - static_cast<double>(assigned_[pe]);
    // Algorithm 3 picks the first highest priority, as this does; only when
    // it resets is it asked, and what the reset drops kept for the undo.
    auto pe = static_cast<std::size_t>(std::ranges::max_element(priorities_) -
                                       priorities_.begin());
    if (priorities_[pe] < 0) {
      resets_.push_back({frames_.size(), assigned_});
      std::ranges::fill(assigned_, 0);
      pe = getProcessor(priorities_, initial_);
    }
    frames_.push_back({0, static_cast<std::uint32_t>(pe), 0});
  }

  /// Algorithm 2, steps 5-17, from the top frame's next package: true when
  /// it descended into a new call or ended the search.
  bool expand() {
    Frame &frame = frames_.back();
    const std::vector<WorkloadPackage> &w = packages_[frame.pe];
    while (frame.next < w.size()) {
      const WorkloadPackage &package = w[frame.next++];
      if (package.size > remaining_)
        continue;
      // The thesis cuts when the cost with the new node exceeds the best; a
      // branch that already equals it cannot end better (costs only grow),
      // so it is cut too, keeping the budget for branches that may improve.
      // Until there is a best, nothing is cut: where times add up past the
      // largest double, a cost of +inf must not cut against the initial
      // +inf, or no solution is ever found.
      if (found() &&
          std::max(cost_, times_[frame.pe] + package.time) >= bestCost_)
        continue;
      insertNode(frame, package);
      if (package.size < remaining_) {
        remaining_ -= package.size;
        call(); // invalidates `frame`
        return true;
      }
      // A terminal: the call WDAH-Branch-and-Cut(0) records it and returns.
      record();
      if (--budget_ <= 0) {
        frames_.clear();
        return true;
      }
      removeTopNode();
    }
    return false;
  }

  /// Whether a solution was recorded (every solution has a node).
  bool found() const { return !best_.assignments.empty(); }

  void insertNode(Frame &frame, const WorkloadPackage &package) {
    frame.savedTime = times_[frame.pe];
    times_[frame.pe] += package.time;
    assigned_[frame.pe] += package.size;
    cost_ = std::max(cost_, times_[frame.pe]);
  }

  void removeTopNode() {
    const Frame &frame = frames_.back();
    times_[frame.pe] = frame.savedTime;
    assigned_[frame.pe] -= topPackage().size;
    cost_ = *std::ranges::max_element(times_);
    unchanged_ = std::min(unchanged_, frames_.size() - 1);
  }

  /// fsol = sol, when it is better once the remainder is placed (so that a
  /// larger budget is never worse). Successive solutions share the path
  /// above where the search turned back, so only the rest is copied.
  void record() {
    RemainderPlace place{cost_, 0};
    if (!remainderTimes_.empty())
      place = placeRemainder(times_, cost_, remainderTimes_);
    if (found() && place.makespan >= bestCost_)
      return;
    bestCost_ = place.makespan;
    best_.remainderPe = place.pe;
    std::vector<Assignment> &path = best_.assignments;
    path.resize(std::min(unchanged_, path.size()));
    path.reserve(frames_.size());
    for (std::size_t depth = path.size(); depth < frames_.size(); ++depth)
      path.push_back({frames_[depth].pe, frames_[depth].next - 1});
    unchanged_ = frames_.size();
  }

  std::span<const std::vector<WorkloadPackage>> packages_;
  std::vector<double> initial_;        ///< eq. 4.6
  std::vector<double> priorities_;     ///< scratch for GetProcessor
  std::vector<std::int64_t> assigned_; ///< units per PE since a reset
  std::vector<Reset> resets_;
  std::vector<double> remainderTimes_;
  std::vector<double> times_;  ///< per PE, of the current path
  double cost_ = 0;            ///< the current path's makespan
  std::int64_t remaining_ = 0; ///< RemSize of the top frame
  std::vector<Frame> frames_;  ///< the calls in progress, root first
  double bestCost_ = std::numeric_limits<double>::infinity();
  Solution best_;
  std::size_t unchanged_ = 0; ///< length of the path shared with the best
  long long budget_;
};

} // namespace
} // namespace wdah

Distribution partitionWdah(const CostModel &model,
                           const PartitionRequest &request) {
  const std::size_t p = model.size();
  const std::int64_t g = request.granularity;
  const std::int64_t treeSize = request.units() * g;
  const std::int64_t remainder = request.remainder();
  std::vector<double> remainderTimes;
  if (remainder > 0)
    for (std::size_t pe = 0; pe < p; ++pe)
      remainderTimes.push_back(model.time(pe, remainder));

  Distribution result;
  result.packages.resize(p);
  if (treeSize == 0) {
    std::vector<double> idle(p, 0.0);
    std::size_t pe = wdah::placeRemainder(idle, 0, remainderTimes).pe;
    result.packages[pe].push_back(remainder);
    return result;
  }

  // Eq. 4.6 over the work the tree distributes; the remainder is not in it.
  wdah::Offer offer = wdah::offer(model, g, treeSize);
  const auto &packages = offer.packages;
  wdah::Search search(packages, std::move(offer.priorities), remainderTimes,
                      request.backtrack);
  wdah::Solution solution = search.run(treeSize, g);
  std::vector<std::size_t> counts(p, 0);
  for (wdah::Assignment node : solution.assignments)
    ++counts[node.pe];
  for (std::size_t pe = 0; pe < p; ++pe)
    result.packages[pe].reserve(counts[pe] + 1);
  for (wdah::Assignment node : solution.assignments)
    result.packages[node.pe].push_back(packages[node.pe][node.index].size);
  if (remainder > 0)
    result.packages[solution.remainderPe].push_back(remainder);
  return result;
}

// Algorithm 4 is Algorithm 2 with BackTrack = 1 (the WDAH thesis, 4.5); its
// listing drops the counter and the removal after the recursive call, which
// would stack every branch onto one list, so the shared search runs instead.
Distribution partitionWdahHeuristic(const CostModel &model,
                                    const PartitionRequest &request) {
  PartitionRequest once = request;
  once.backtrack = 1;
  return partitionWdah(model, once);
}

} // namespace fpm
