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
// A second table gives what a rank receives per call of a stencil's loop in
// a time loop (each iteration a row that reads its neighbours'): without a
// data region (every rank's writes broadcast), and inside one (each rank
// keeps what it wrote: cluster/rank_holdings.hpp) on the hierarchical
// split and on splits by speeds measured each call, beside the halos.
//
//   fpm-bench-cluster [--quick] [--family NAME] [--nodes N,...]
//                     [--schedule S] [--noise F] [--latency S]
//                     [--bandwidth B] [--scale K] [--seed K] [--no-keep]
//
// --no-keep: the region's splits by measured speeds are each call's own,
// rather than the last call's while moving rows does not pay, or while
// nearly as good (keepPreviousSplit). A row moves at --latency plus its
// bytes over --bandwidth (bytes a second, default 10e9).
//
// --schedule is the hierarchical split's, across nodes and in each node
// (default auto; a self-scheduling one is `auto` in the nodes).
//
//===----------------------------------------------------------------------===//

#include "cluster/cluster_plan.hpp"
#include "cluster/node_model.hpp"
#include "cluster/rank_holdings.hpp"
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
#include <tuple>
#include <utility>
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
  double latency = 5e-6;   ///< one way, seconds
  double bandwidth = 10e9; ///< bytes a second between two nodes
  double serve = 1e-6;     ///< the master's cost per request besides next()
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
  /// The data-region table: a stencil's loop calls in a time loop, each
  /// iteration a row of this many bytes that reads its two neighbours'.
  int regionCalls = 20;
  std::size_t rowBytes = 8192;
  /// How much a node's measured time of a call strays from its true one.
  double jitter = 0.02;
  /// Whether a region keeps the last call's split while it is nearly as
  /// good, as libfpmrt-mpi does (--no-keep: the split of every call's own).
  bool keepSplits = true;
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
  /// Bytes a rank receives per loop call of a stencil in a time loop, the
  /// mean over ranks and calls after the first: every rank's writes
  /// broadcast (no region), kept by their rank on the node FPMs' split
  /// (the same every call) and on splits by speeds measured each call,
  /// and the halo minimum.
  double broadcastBytes = 0, keptBytes = 0, movingBytes = 0, haloBytes = 0;
  /// How much longer the kept splits' calls took than with each call's
  /// own split, on the true times (the mean; negative: shorter).
  double keptSlower = 0;
  /// The most one rank received in one call on the node FPMs' split.
  double keptMax = 0;
};

/// Bytes per rank per call (the mean, and the most) over calls 2..n of a
/// time loop of a 3-point stencil whose rows are split as `split(call)`
/// gives, two arrays swapped each call, each rank keeping what it wrote
/// and receiving the rows it reads and lacks (RankHoldings, as
/// libfpmrt-mpi inside a data region).
std::pair<double, double>
keptTraffic(int nodes, std::int64_t rows, const Config &config,
            const std::function<std::vector<Range>(int)> &split) {
  RankHoldings from(nodes, static_cast<std::size_t>(rows) * config.rowBytes),
      to = from;
  double total = 0, most = 0;
  for (int call = 0; call < config.regionCalls; ++call) {
    const std::vector<Range> shares = split(call);
    std::vector<RankHoldings::Transfer> moves;
    for (int n = 0; n < nodes; ++n) {
      const Range share = shares[static_cast<std::size_t>(n)];
      if (share.size() == 0)
        continue;
      const RankHoldings::Bytes reads[] = {
          {static_cast<std::size_t>(
               std::max<std::int64_t>(share.begin - 1, 0)) *
               config.rowBytes,
           static_cast<std::size_t>(std::min(share.end + 1, rows)) *
               config.rowBytes}};
      for (const RankHoldings::Transfer &move : from.toRead(n, reads))
        moves.push_back(move);
    }
    std::vector<double> received(static_cast<std::size_t>(nodes));
    for (const RankHoldings::Transfer &move : moves) {
      from.received(move);
      received[static_cast<std::size_t>(move.to)] +=
          static_cast<double>(move.bytes.size());
    }
    for (int n = 0; n < nodes; ++n) {
      const Range share = shares[static_cast<std::size_t>(n)];
      const RankHoldings::Bytes writes[] = {
          {static_cast<std::size_t>(share.begin) * config.rowBytes,
           static_cast<std::size_t>(share.end) * config.rowBytes}};
      to.wrote(n, writes);
    }
    std::swap(from, to);
    if (call == 0) // the region's arrays start whole on every rank
      continue;
    for (double bytes : received) {
      total += bytes;
      most = std::max(most, bytes);
    }
  }
  return {total / (nodes * (config.regionCalls - 1.0)), most};
}

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

  // A stencil in a data region, on the split above (node FPMs: the same
  // every call), and on splits by the speeds measured in the call before
  // (the runtime's rule where some node has no FPM), each time a little
  // off its true one; beside every rank's writes broadcast, and the
  // halos: two rows per call for a rank with neighbours on both sides.
  {
    const std::int64_t rows = trips;
    row.broadcastBytes = static_cast<double>(rows) * (nodes - 1) / nodes *
                         static_cast<double>(config.rowBytes);
    row.haloBytes =
        2.0 * (nodes - 1) / nodes * static_cast<double>(config.rowBytes);
    std::tie(row.keptBytes, row.keptMax) =
        keptTraffic(nodes, rows, config, [&](int) { return hier.shares; });
    std::uniform_real_distribution<double> jitter(1 - config.jitter,
                                                  1 + config.jitter);
    std::vector<Range> shares = hier.shares;
    // What keeping a split costs: its makespan on the true times against
    // that of the call's own split.
    auto trueMakespan = [&](const std::vector<Range> &split) {
      double most = 0;
      for (int n = 0; n < nodes; ++n)
        most = std::max(most,
                        nodeTime(n, split[static_cast<std::size_t>(n)].size()));
      return most;
    };
    double slower = 0;
    row.movingBytes =
        keptTraffic(nodes, rows, config, [&](int call) {
          if (call > 0) {
            std::vector<NodeView> measured(static_cast<std::size_t>(nodes));
            for (int n = 0; n < nodes; ++n) {
              const std::int64_t share = std::max<std::int64_t>(
                  shares[static_cast<std::size_t>(n)].size(), 1);
              measured[static_cast<std::size_t>(n)].speed =
                  static_cast<double>(share) /
                  (nodeTime(n, share) * jitter(random));
            }
            ClusterPlan next = planCluster(automatic, measured, trips, 0);
            const double own = trueMakespan(next.shares);
            // Rows a node gains come from the node that wrote them, at
            // the network's cost (the runtime learns it from its
            // exchanges): the rows they read, their halo included.
            if (config.keepSplits)
              keepPreviousSplit(
                  next, shares, measured, [&](std::size_t, Range range) {
                    return config.latency +
                           static_cast<double>(range.size() + 2) *
                               static_cast<double>(config.rowBytes) /
                               config.bandwidth;
                  });
            shares = next.shares;
            slower += trueMakespan(shares) / own;
          }
          return shares;
        }).first;
    row.keptSlower = slower / (config.regionCalls - 1) - 1;
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
    } else if (arg == "--bandwidth") {
      config.bandwidth = std::atof(value());
    } else if (arg == "--schedule") {
      config.schedule = value();
    } else if (arg == "--scale") {
      config.scale = std::atof(value());
    } else if (arg == "--no-keep") {
      config.keepSplits = false;
    } else if (arg == "--seed") {
      config.seed = std::strtoull(value(), nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: fpm-bench-cluster [--quick] [--family NAME] "
                   "[--nodes N,...] [--noise F] [--latency S] [--bandwidth B] "
                   "[--scale K] [--seed K] [--no-keep]\n");
      return 2;
    }
  }
  std::printf("family %s, %d PEs per node, %lld iterations per node, times "
              "x%g, noise +-%.0f%%, latency %.1f us, %.1f GB/s\n\n",
              std::string(test::familyName(config.family)).c_str(),
              config.pesPerNode, static_cast<long long>(config.perNode),
              config.scale, config.noise * 100, config.latency * 1e6,
              config.bandwidth / 1e9);
  std::printf("| nodes | optimum ms | hier. solve ms | node FPM ms | hier. "
              "msgs | hier. "
              "makespan/opt | node FPM err %% | flat solve ms | flat "
              "makespan/opt | dyn. master "
              "ms | dyn. msgs | dyn. makespan/opt |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "\n");
  std::vector<Row> rows;
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
    rows.push_back(row);
  }
  std::printf("\nA stencil in a data region: kB a rank receives per loop call "
              "(rows of %zu bytes, %d calls, the mean over ranks and calls "
              "2..%d)\n\n",
              config.rowBytes, config.regionCalls, config.regionCalls);
  std::printf("| nodes | no region (broadcast) | region, node FPMs' split | "
              "most one rank | halo minimum | region, split by measured "
              "speeds (+-%.0f%%%s) | its calls' time against their own "
              "splits' |\n",
              config.jitter * 100,
              config.keepSplits ? ", the last split kept" : "");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row &row : rows)
    std::printf("| %d | %.1f | %.2f | %.2f | %.2f | %.2f | %+.1f%% |\n",
                row.nodes, row.broadcastBytes / 1e3, row.keptBytes / 1e3,
                row.keptMax / 1e3, row.haloBytes / 1e3, row.movingBytes / 1e3,
                row.keptSlower * 100);
  return 0;
}
