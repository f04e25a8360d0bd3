//===- benchmark/cluster.cpp - One loop over 2 ... 4096 simulated nodes ---===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Runs libfpmrt-mpi's cross-node planning and the self-scheduling thesis's
// master protocol (cluster/: the code the MPI library runs, without MPI)
// against model nodes, for as many nodes as no test machine has. Each node has
// two PEs whose FPMs come from one of the thesis' four families
// (test/support/); what a node really takes for w iterations (a static share or
// a dynamic chunk) is what the runtime makes of it: makePlan over its PEs, each
// PE running its packages in turn (cluster/node_model.hpp's nodeTime), times a
// per-node noise factor the planner does not know (1 +- --noise). Per node
// count it prints:
//  - hierarchical static (`auto` across node FPMs made by nodeProfile, each
//    node then splitting its share over its PEs): rank 0's solve time, the
//    slowest node's nodeProfile time (the nodes make theirs in parallel),
//    messages (a gather and a broadcast: 2 ), makespan / optimum;
//  - flat static (`auto` over every PE of every node in one partition, as
//    one process with all PEs would): solve time, makespan / optimum;
//  - dynamic (`fss, 80` weighted by the node FPMs' speeds): the master's
//    time in ChunkMaster::next, messages (a request and a reply per chunk
//    and per "nothing left"), makespan / optimum, in a discrete-event
//    simulation where a message takes --latency seconds one way and the
//    master serves one request at a time.
// The optimum is `optimal`'s makespan over every PE of every node on the
// true times (the project's yardstick), at the most granules it takes
// (32768: a granule of 16 iterations at 256 nodes, where the runtime's
// 1024 would be 512, coarser than a PE's share), computed up to 512 PEs;
// beyond, the columns hold makespans in ms instead of ratios.
//
//   fpm-bench-cluster [--quick] [--family NAME] [--nodes N,...]
//                     [--schedule S] [--noise F] [--latency S] [--scale K]
//                     [--seed K]
//
// --schedule is the hierarchical split's, across nodes and in each node
// (default auto; a self-scheduling one is `auto` in the nodes).
//
//===----------------------------------------------------------------------===//

#include "cluster/cluster_plan.hpp"
#include "cluster/node_model.hpp"
#include "exec/plan.hpp"
#include "exec/schedule_string.hpp"
#include "partition/partition.hpp"
#include "support/fpm_families.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

using namespace fpm;
using fpm::test::Family;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Config {
  std::vector<int> nodes{2, 4, 16, 64, 256, 1024, 4096};
  Family family = Family::Smooth;
  double noise = 0.05;
  double latency = 5e-6; ///< one way, seconds
  double serve = 1e-6;   ///< the master's cost per request besides next()
  std::uint64_t seed = 1;
  int pesPerNode = 2;
  std::int64_t perNode = 2048; ///< iterations per node
  /// How far each PE's profile reaches (beyond: its last speed), as a
  /// profiler measures the sizes a PE gets: about a node's share.
  std::int64_t profileReach = 2048;
  /// The families' times are of microseconds per iteration; a loop worth
  /// spreading over nodes runs for longer: every time is scaled by this.
  double scale = 1000;
  /// Flat partitioning of more PEs than this is not run (its solve time
  /// grows past minutes on this machine).
  int flatLimit = 2048;
  /// The exact optimum over more PEs than this is not computed.
  int optimumLimit = 512;
  /// The hierarchical static schedule across nodes.
  std::string schedule = "auto";
};

/// The exact optimum on the true (noisy) times: `optimal` over every PE of
/// every node, in granules of at most the partitioner's maxUnits (so a
/// finer split may beat it by a little); nothing past `limit` PEs, where its
/// O(p K^2) takes too long. Not the runtime's ExactSolverUnits: at 1024
/// granules each of 256 nodes' 512 PEs holds about two, and its split was
/// a fifth slower than at 32768 (semi-random, seed 1); pruned by HPOPTA's
/// bound, 32768 takes about 2 s there.
std::optional<double> exactOptimum(const std::vector<Profile> &all,
                                   const std::vector<double> &factors,
                                   int pesPerNode, std::int64_t trips,
                                   int limit) {
  if (static_cast<int>(all.size()) > limit)
    return std::nullopt;
  std::vector<Profile> scaled = all;
  for (std::size_t j = 0; j < scaled.size(); ++j)
    for (ProfilePoint &point : scaled[j].points)
      point.time *= factors[j / static_cast<std::size_t>(pesPerNode)];
  const Partitioner &optimal = *findPartitioner("optimal");
  PartitionRequest request;
  request.size = trips;
  request.granularity = std::max<std::int64_t>(
      1, (trips + optimal.maxUnits - 1) / optimal.maxUnits);
  const CostModel model(std::move(scaled));
  return evaluate(model, partition(optimal, model, request)).makespan;
}

struct Row {
  int nodes = 0;
  double best = 0;
  double hierSolve = 0, nodeModel = 0, hierRatio = 0;
  /// The node FPMs' largest error at the shares they got (noise aside),
  /// relative to the makespan the planner expected.
  double modelError = 0;
  double flatSolve = -1, flatRatio = -1;
  double dynSolve = 0, dynRatio = 0;
  long long staticMessages = 0, dynMessages = 0;
};

/// Simulates the master protocol of `plan` over nodes whose time for w
/// iterations is `nodeTime(n, w)`; returns the makespan, and adds the
/// master's time in next() to `solve` and the messages to `messages`.
double simulateDynamic(const ClusterPlan &plan, const Config &config,
                       const std::function<double(int, std::int64_t)> &nodeTime,
                       double &solve, long long &messages) {
  const int nodes = static_cast<int>(plan.shares.size());
  ChunkMaster master(plan);
  // Events: (time, node) a node becomes idle and asks (node 0 asks its own
  // master at no latency).
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> idle;
  for (int n = 0; n < nodes; ++n)
    idle.push(
        {nodeTime(n, plan.shares[static_cast<std::size_t>(n)].size()), n});
  double masterFree = 0, makespan = 0;
  while (!idle.empty()) {
    const auto [at, node] = idle.top();
    idle.pop();
    makespan = std::max(makespan, at);
    const double arrival = node == 0 ? at : at + config.latency;
    const double start = std::max(arrival, node == 0 ? at : masterFree);
    const Clock::time_point clock = Clock::now();
    const std::optional<Range> range = master.next(node);
    const double cost = secondsSince(clock);
    solve += cost;
    double reply = start + cost;
    if (node != 0) {
      masterFree = reply + config.serve;
      reply = masterFree + config.latency;
      messages += 2;
    }
    if (range)
      idle.push({reply + nodeTime(node, range->size()), node});
  }
  return makespan;
}

Row runCase(int nodes, const Config &config) {
  Row row;
  row.nodes = nodes;
  const int pes = nodes * config.pesPerNode;
  const std::int64_t trips = config.perNode * nodes;
  std::vector<Profile> all = test::makeFamily(
      config.family, pes, config.profileReach, 1, config.seed, 64);
  for (Profile &profile : all)
    for (ProfilePoint &point : profile.points)
      point.time *= config.scale;
  std::mt19937_64 random(config.seed * 7919 + static_cast<unsigned>(nodes));
  std::uniform_real_distribution<double> noise(1 - config.noise,
                                               1 + config.noise);
  std::vector<double> factors;
  for (int n = 0; n < nodes; ++n)
    factors.push_back(noise(random));
  auto nodePes = [&](int n) {
    return std::span<const Profile>(all).subspan(
        static_cast<std::size_t>(n * config.pesPerNode),
        static_cast<std::size_t>(config.pesPerNode));
  };
  // The schedule is the loop's on both levels, as in the runtime: across
  // nodes, and in each node over its PEs (`auto` where it self-schedules).
  const LoopSchedule across = parseLoopSchedule(config.schedule);
  NodeSplit within;
  if (across.kind == LoopSchedule::Kind::Static)
    within.schedule = across;
  // What node n takes for w iterations: its planner's split, noisy.
  auto nodeTime = [&](int n, std::int64_t w) {
    return fpm::nodeTime(nodePes(n), within, w) *
           factors[static_cast<std::size_t>(n)];
  };
  const std::optional<double> optimum =
      exactOptimum(all, factors, config.pesPerNode, trips, config.optimumLimit);
  row.best = optimum.value_or(-1);
  // Ratios to the optimum, or, where it is not computed, absolute seconds.
  const double best = optimum.value_or(1);

  // Hierarchical: node FPMs (each node its own, in parallel: the slowest
  // counts), then rank 0 plans.
  std::vector<NodeView> views(static_cast<std::size_t>(nodes));
  const std::vector<std::int64_t> sizes = nodeSampleSizes(trips, nodes);
  for (int n = 0; n < nodes; ++n) {
    const Clock::time_point start = Clock::now();
    views[static_cast<std::size_t>(n)].model =
        nodeProfile(nodePes(n), sizes, "node", within);
    row.nodeModel = std::max(row.nodeModel, secondsSince(start));
  }
  const LoopSchedule automatic = parseLoopSchedule("auto");
  Clock::time_point start = Clock::now();
  const ClusterPlan hier = planCluster(across, views, trips, 0);
  row.hierSolve = secondsSince(start);
  // The node FPMs' error where it matters: the largest gap between a
  // node's time and what its FPM predicted, noise aside, against the
  // makespan the planner expected.
  double makespan = 0, expected = 0, gap = 0;
  for (int n = 0; n < nodes; ++n) {
    const auto node = static_cast<std::size_t>(n);
    const std::int64_t share = hier.shares[node].size();
    const double time = nodeTime(n, share);
    makespan = std::max(makespan, time);
    if (share > 0) {
      const double predicted = CostModel({*views[node].model}).time(0, share);
      expected = std::max(expected, predicted);
      gap = std::max(gap, std::abs(time / factors[node] - predicted));
    }
  }
  row.modelError = expected > 0 ? gap / expected : 0;
  row.hierRatio = makespan / best;
  row.staticMessages = 2LL * (nodes - 1);

  // Flat: every PE in one partition.
  if (pes <= config.flatLimit) {
    std::vector<PlanPe> planPes;
    for (int j = 0; j < pes; ++j)
      planPes.push_back({"pe" + std::to_string(j), 1, 1, false});
    PlanRequest request;
    request.schedule = &automatic;
    request.pes = planPes;
    request.tripCount = trips;
    request.models = all;
    start = Clock::now();
    const Plan flat = makePlan(request);
    row.flatSolve = secondsSince(start);
    const CostModel model(all);
    makespan = 0;
    for (int j = 0; j < pes; ++j) {
      // A PE runs its packages one after another (WDAH gives several).
      double time = 0;
      for (const Range &package : flat.packages[static_cast<std::size_t>(j)])
        time += model.time(static_cast<std::size_t>(j), package.size());
      makespan = std::max(
          makespan,
          time * factors[static_cast<std::size_t>(j / config.pesPerNode)]);
    }
    row.flatRatio = makespan / best;
  }

  // Dynamic: the self-scheduling thesis's FSS-80, weighted by the node FPMs'
  // speeds.
  std::vector<NodeView> speeds(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    const std::int64_t share = config.perNode;
    speeds[static_cast<std::size_t>(n)].speed =
        static_cast<double>(share) / fpm::nodeTime(nodePes(n), within, share);
  }
  start = Clock::now();
  const ClusterPlan dynamic =
      planCluster(parseLoopSchedule("fss, 80"), speeds, trips, 0);
  row.dynSolve = secondsSince(start);
  row.dynRatio = simulateDynamic(dynamic, config, nodeTime, row.dynSolve,
                                 row.dynMessages) /
                 best;
  return row;
}

std::vector<int> parseList(const char *text) {
  std::vector<int> values;
  for (const char *at = text; *at;) {
    char *end = nullptr;
    values.push_back(static_cast<int>(std::strtol(at, &end, 10)));
    at = *end == ',' ? end + 1 : end;
    if (end == at && *end)
      break;
  }
  return values;
}

} // namespace

int main(int argc, char **argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fpm-bench-cluster: %s needs a value\n",
                     arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--quick") {
      config.nodes = {2, 16};
      config.perNode = 256;
      config.profileReach = 256;
    } else if (arg == "--family") {
      const std::optional<Family> family = test::parseFamily(value());
      if (!family) {
        std::fprintf(stderr, "fpm-bench-cluster: unknown family\n");
        return 2;
      }
      config.family = *family;
    } else if (arg == "--nodes") {
      config.nodes = parseList(value());
    } else if (arg == "--noise") {
      config.noise = std::atof(value());
    } else if (arg == "--latency") {
      config.latency = std::atof(value());
    } else if (arg == "--schedule") {
      config.schedule = value();
    } else if (arg == "--scale") {
      config.scale = std::atof(value());
    } else if (arg == "--seed") {
      config.seed = std::strtoull(value(), nullptr, 10);
    } else {
      std::fprintf(
          stderr,
          "usage: fpm-bench-cluster [--quick] [--family NAME] "
          "[--nodes N,...] [--noise F] [--latency S] [--scale K] [--seed K]\n");
      return 2;
    }
  }
  std::printf("family %s, %d PEs per node, %lld iterations per node, times "
              "x%g, noise +-%.0f%%, latency %.1f us\n\n",
              std::string(test::familyName(config.family)).c_str(),
              config.pesPerNode, static_cast<long long>(config.perNode),
              config.scale, config.noise * 100, config.latency * 1e6);
  std::printf("| nodes | optimum ms | hier. solve ms | node FPM ms | hier. "
              "msgs | hier. "
              "makespan/opt | node FPM err %% | flat solve ms | flat "
              "makespan/opt | dyn. master "
              "ms | dyn. msgs | dyn. makespan/opt |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "\n");
  for (int nodes : config.nodes) {
    std::fprintf(stderr, "fpm-bench-cluster: %d nodes...\n", nodes);
    const Row row = runCase(nodes, config);
    // A ratio to the optimum, or the makespan in ms where there is none.
    auto ratio = [&](double value) {
      char text[32];
      if (row.best > 0)
        std::snprintf(text, sizeof text, "%.3f", value);
      else
        std::snprintf(text, sizeof text, "%.1f ms", value * 1e3);
      return std::string(text);
    };
    char best[32] = "—", flatSolve[32] = "—";
    if (row.best > 0)
      std::snprintf(best, sizeof best, "%.1f", row.best * 1e3);
    std::string flatRatio = "—";
    if (row.flatSolve >= 0) {
      std::snprintf(flatSolve, sizeof flatSolve, "%.2f", row.flatSolve * 1e3);
      flatRatio = ratio(row.flatRatio);
    }
    std::printf("| %d | %s | %.2f | %.2f | %lld | %s | %.1f | %s | %s | %.2f | "
                "%lld | %s |\n",
                row.nodes, best, row.hierSolve * 1e3, row.nodeModel * 1e3,
                row.staticMessages, ratio(row.hierRatio).c_str(),
                row.modelError * 100, flatSolve, flatRatio.c_str(),
                row.dynSolve * 1e3, row.dynMessages,
                ratio(row.dynRatio).c_str());
    std::fflush(stdout);
  }
  return 0;
}
