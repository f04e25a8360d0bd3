//===- mpi/cluster_loop.cpp - One loop across the ranks -------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The collective calls of fpm/fpm_mpi.h. The thin MPI side of the cluster
// path: what to plan and how to self-schedule is cluster/'s (plain
// functions, no MPI); each rank's share runs through libfpmrt's
// runLoopPart (api/part.hpp) on its own PEs; here are only the messages:
// node views to rank 0, the split back, chunk requests and grants, the
// written sections (section_broadcast.hpp) and the reductions' partial
// results. A little over 600 lines: the static and the self-scheduled path
// share one call's agreement, plan, statuses and results, in the order
// every rank must make the same collectives.
//
//===----------------------------------------------------------------------===//

#include "mpi/cluster_loop.hpp"

#include "api/part.hpp"
#include "cluster/cluster_plan.hpp"
#include "cluster/node_model.hpp"
#include "data/sections.hpp"
#include "exec/loop_call.hpp"
#include "exec/loop_state.hpp"
#include "exec/schedule_string.hpp"
#include "exec/trip_count.hpp"
#include "exec/verbose_splits.hpp"
#include "mpi/agreement.hpp"
#include "mpi/owner_computes.hpp"
#include "mpi/section_broadcast.hpp"
#include "reduce/reductions.hpp"
#include "residency/residency.hpp"
#include "support/environment.hpp"
#include "trace/trace.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fpm::mpi {
namespace {

/// Message tags of the self-scheduling protocol.
constexpr int RequestTag = 0x7f01;
constexpr int GrantTag = 0x7f02;

/// What this process measured of each loop in earlier cluster calls: its
/// share's iterations per second, the next call's node speed.
std::mutex speedsMutex;
std::map<std::string, double, std::less<>> speeds;
/// Rank 0: each loop's last static split across ranks, which a data region
/// keeps while it is nearly as good (keepPreviousSplit).
std::map<std::string, std::vector<Range>, std::less<>> lastSplits;

/// The loop's LoopCall fields that name it (loopKey, loopLabel).
LoopCall naming(const fpm_loop *loop) {
  LoopCall call;
  if (loop) {
    call.name = loop->name ? loop->name : "";
    call.file = loop->file ? loop->file : "";
    call.line = loop->line;
  }
  return call;
}

/// This rank's part runs and what they gave: reductions' partials and
/// the time and iterations to learn the node's speed from.
struct Runs {
  int status = FPM_OK;
  std::string error;
  std::vector<RangePartials> partials;
  std::int64_t iterations = 0;
  double seconds = 0;
};

/// Runs `range` of the loop here; a slow rank (FPM_TEST_SLOW_RANK) then
/// sleeps so that its time is `factor` times what it took.
void runPart(const LoopArguments &arguments, Range range, double slowness,
             Runs &runs) {
  if (range.size() <= 0 || runs.status != FPM_OK)
    return;
  PartOutcome outcome;
  const int status = runLoopPart(arguments, range, outcome);
  if (status != FPM_OK) {
    runs.status = status;
    runs.error = fpm_last_error();
    return;
  }
  if (slowness > 1)
    std::this_thread::sleep_for(
        std::chrono::duration<double>(outcome.seconds * (slowness - 1)));
  runs.iterations += range.size();
  runs.seconds += outcome.seconds * slowness;
  for (RangePartials &partials : outcome.partials)
    runs.partials.push_back(std::move(partials));
}

/// What this rank tells rank 0 for planning: workers, a measured speed
/// (0: none) and its node FPM's points, as doubles. The node FPM is what
/// this node's planner makes of w iterations by `schedule` (the loop's, as
/// runLoopPart will plan its share), so that rank 0 splits by what each
/// node will do.
std::vector<double> describeNode(const LoopArguments &arguments,
                                 const std::string &key, int ranks,
                                 const LoopSchedule &schedule,
                                 std::int64_t grain) {
  const NodePes pes = nodePes(arguments);
  std::vector<double> view{static_cast<double>(pes.workers), 0.0};
  {
    const std::lock_guard<std::mutex> lock(speedsMutex);
    if (auto it = speeds.find(key); it != speeds.end())
      view[1] = it->second;
  }
  if (pes.models.empty())
    return view;
  // A node FPM costs up to MaxNodeSamples plans (milliseconds each: the exact
  // optimum or WDAH): made once per loop, shape, schedule and set of PEs
  // (stored profiles are read once per process).
  static std::mutex cacheMutex;
  static std::map<std::string, std::vector<double>, std::less<>> cache;
  std::string shape = key + '\n' + std::to_string(arguments.tripCount) + ' ' +
                      std::to_string(ranks) + ' ' + schedule.text + ' ' +
                      std::to_string(grain);
  for (const Profile &model : pes.models)
    shape += ' ' + model.device;
  const std::lock_guard<std::mutex> lock(cacheMutex);
  auto [it, added] = cache.try_emplace(shape);
  if (added) {
    NodeSplit split;
    if (schedule.kind == LoopSchedule::Kind::Static)
      split.schedule = schedule;
    split.grain = grain;
    split.alignment = pes.alignment;
    try {
      const Profile node =
          nodeProfile(pes.models, nodeSampleSizes(arguments.tripCount, ranks),
                      "node", split);
      for (const ProfilePoint &point : node.points) {
        it->second.push_back(static_cast<double>(point.size));
        it->second.push_back(point.time);
      }
    } catch (const std::exception &) {
      // No node FPM (the planner refused these PEs): rank 0 splits by
      // speeds, and this rank's own call reports what is wrong.
      it->second.clear();
    }
  }
  view.insert(view.end(), it->second.begin(), it->second.end());
  return view;
}

NodeView readNode(std::span<const double> view, const std::string &loop) {
  NodeView node;
  node.workers = static_cast<int>(view[0]);
  if (view[1] > 0)
    node.speed = view[1];
  if (view.size() > 2) {
    Profile model;
    model.kernel = loop;
    model.device = "node";
    for (std::size_t i = 2; i + 1 < view.size(); i += 2)
      model.points.push_back(
          {static_cast<std::int64_t>(view[i]), view[i + 1], {}, {}});
    node.model = std::move(model);
  }
  return node;
}

/// Every rank's view, on rank 0 (empty elsewhere).
std::vector<NodeView> gatherNodes(MPI_Comm comm, int rank, int ranks,
                                  const std::vector<double> &mine,
                                  const std::string &loop) {
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(rank == 0 ? ranks : 0);
  check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm),
        "MPI_Gather");
  std::vector<int> offsets(counts.size());
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<double> all(static_cast<std::size_t>(total));
  check(MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                    offsets.data(), MPI_DOUBLE, 0, comm),
        "MPI_Gatherv");
  std::vector<NodeView> nodes;
  for (std::size_t r = 0; r < counts.size(); ++r)
    nodes.push_back(readNode(std::span<const double>(all).subspan(
                                 static_cast<std::size_t>(offsets[r]),
                                 static_cast<std::size_t>(counts[r])),
                             loop));
  return nodes;
}

/// The self-scheduling master on rank 0: serves the other ranks' requests
/// from a thread of its own when MPI allows it, while this thread runs
/// chunks too; else between its own chunks.
std::vector<ChunkMaster::Grant>
runMaster(MPI_Comm comm, int ranks, const ClusterPlan &plan, bool threaded,
          const LoopArguments &arguments, double slowness, Runs &runs) {
  ChunkMaster master(plan);
  std::atomic<bool> stopped{false};
  int open = ranks - 1; // ranks not yet told that nothing is left
  std::exception_ptr serverError;
  auto serveOne = [&](const MPI_Status &probe) {
    std::int64_t request = 0;
    MPI_Status status;
    check(MPI_Recv(&request, 1, MPI_INT64_T, probe.MPI_SOURCE, RequestTag, comm,
                   &status),
          "MPI_Recv");
    if (request != FPM_OK)
      stopped = true; // its part failed: hand out nothing more
    std::optional<Range> range;
    if (!stopped)
      range = master.next(status.MPI_SOURCE);
    const std::int64_t grant[2] = {range ? range->begin : -1,
                                   range ? range->end : -1};
    check(MPI_Send(grant, 2, MPI_INT64_T, status.MPI_SOURCE, GrantTag, comm),
          "MPI_Send");
    if (!range)
      --open;
  };
  auto serveAll = [&](bool block) {
    while (open > 0) {
      MPI_Status probe;
      int waiting = 1;
      if (block)
        check(MPI_Probe(MPI_ANY_SOURCE, RequestTag, comm, &probe), "MPI_Probe");
      else
        check(MPI_Iprobe(MPI_ANY_SOURCE, RequestTag, comm, &waiting, &probe),
              "MPI_Iprobe");
      if (!waiting)
        return;
      serveOne(probe);
    }
  };
  std::thread server;
  if (threaded && open > 0)
    server = std::thread([&] {
      try {
        serveAll(true);
      } catch (...) {
        serverError = std::current_exception();
      }
    });
  runPart(arguments, plan.shares[0], slowness, runs);
  if (runs.status != FPM_OK)
    stopped = true;
  while (!stopped) {
    if (!threaded)
      serveAll(false);
    const std::optional<Range> range = master.next(0);
    if (!range)
      break;
    runPart(arguments, *range, slowness, runs);
    if (runs.status != FPM_OK)
      stopped = true;
  }
  if (server.joinable())
    server.join();
  else
    serveAll(true);
  if (serverError)
    std::rethrow_exception(serverError);
  return master.grants();
}

/// A worker rank of the dynamic path: runs its stage-1 share, then asks
/// rank 0 for ranges until none is left (after a failure it asks only to be
/// told so).
void runWorker(MPI_Comm comm, const LoopArguments &arguments, Range share,
               double slowness, Runs &runs) {
  runPart(arguments, share, slowness, runs);
  for (;;) {
    const std::int64_t request = runs.status;
    check(MPI_Send(&request, 1, MPI_INT64_T, 0, RequestTag, comm), "MPI_Send");
    std::int64_t grant[2];
    check(MPI_Recv(grant, 2, MPI_INT64_T, 0, GrantTag, comm, MPI_STATUS_IGNORE),
          "MPI_Recv");
    if (grant[0] < 0)
      return;
    runPart(arguments, {grant[0], grant[1]}, slowness, runs);
  }
}

/// The grants of the dynamic path, from rank 0 to every rank.
std::vector<ChunkMaster::Grant>
shareGrants(MPI_Comm comm, int rank, std::vector<ChunkMaster::Grant> grants) {
  std::vector<std::int64_t> flat;
  for (const ChunkMaster::Grant &grant : mergeGrants(grants))
    flat.insert(flat.end(), {grant.node, grant.range.begin, grant.range.end});
  std::int64_t size = static_cast<std::int64_t>(flat.size());
  check(MPI_Bcast(&size, 1, MPI_INT64_T, 0, comm), "MPI_Bcast");
  flat.resize(static_cast<std::size_t>(size));
  for (std::int64_t at = 0; at < size; at += INT_MAX / 2)
    check(MPI_Bcast(
              flat.data() + at,
              static_cast<int>(std::min<std::int64_t>(INT_MAX / 2, size - at)),
              MPI_INT64_T, 0, comm),
          "MPI_Bcast");
  if (rank == 0)
    return mergeGrants(grants);
  grants.clear();
  for (std::size_t i = 0; i + 2 < flat.size(); i += 3)
    grants.push_back(
        {static_cast<int>(flat[i]), Range{flat[i + 1], flat[i + 2]}});
  return grants;
}

/// Every range's reduction partials, from every rank to every rank, folded
/// in range order into the variables (the same bits everywhere).
void combineReductions(MPI_Comm comm, const LoopArguments &arguments,
                       const std::vector<RangePartials> &mine) {
  const std::size_t count = arguments.reductions.size();
  const std::size_t record =
      2 * sizeof(std::int64_t) + count * sizeof(ScalarValue);
  std::vector<unsigned char> bytes(mine.size() * record);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    unsigned char *at = bytes.data() + i * record;
    std::memcpy(at, &mine[i].range.begin, sizeof(std::int64_t));
    std::memcpy(at + sizeof(std::int64_t), &mine[i].range.end,
                sizeof(std::int64_t));
    std::memcpy(at + 2 * sizeof(std::int64_t), mine[i].values.data(),
                count * sizeof(ScalarValue));
  }
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  if (bytes.size() > INT_MAX)
    throw std::runtime_error("too many reduction partials to gather");
  int size = static_cast<int>(bytes.size());
  std::vector<int> sizes(static_cast<std::size_t>(ranks)),
      offsets(sizes.size());
  check(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm),
        "MPI_Allgather");
  std::int64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += sizes[r];
    if (total > INT_MAX)
      throw std::runtime_error("too many reduction partials to gather");
  }
  std::vector<unsigned char> all(static_cast<std::size_t>(total));
  check(MPI_Allgatherv(bytes.data(), size, MPI_BYTE, all.data(), sizes.data(),
                       offsets.data(), MPI_BYTE, comm),
        "MPI_Allgatherv");
  ReductionPartials partials(makeReductions(arguments.reductions));
  std::vector<ScalarValue> values(count);
  for (std::size_t at = 0; at + record <= all.size(); at += record) {
    Range range;
    std::memcpy(&range.begin, all.data() + at, sizeof(std::int64_t));
    std::memcpy(&range.end, all.data() + at + sizeof(std::int64_t),
                sizeof(std::int64_t));
    std::memcpy(values.data(), all.data() + at + 2 * sizeof(std::int64_t),
                count * sizeof(ScalarValue));
    partials.add(range, values);
  }
  partials.apply();
}

/// The status every rank returns: the worst of all (FPM_OK when all
/// succeeded), and its message.
int agree(MPI_Comm comm, int rank, const Runs &runs) {
  int status = runs.status, worst = 0;
  check(MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm),
        "MPI_Allreduce");
  if (worst == FPM_OK)
    return FPM_OK;
  return setLastError(worst, status != FPM_OK
                                 ? runs.error
                                 : "the loop failed on another rank than " +
                                       std::to_string(rank) + " (status " +
                                       std::to_string(worst) + ")");
}

/// A loop whose results cannot move: whole on every rank; rank 0's
/// reductions then go to all, so that no rank's bits differ.
int runWhole(MPI_Comm comm, int rank, const LoopArguments &arguments,
             const LoopCall &names, bool verbose, const char *why) {
  if (verbose && rank == 0)
    printSplit("mpi " + loopKey(names), loopLabel(names), "whole",
               "fpm: " + loopLabel(names) +
                   ": runs whole on every rank: " + why + "\n");
  Runs runs;
  runPart(arguments, {0, arguments.tripCount}, 1, runs);
  const int status = agree(comm, rank, runs);
  if (status != FPM_OK || arguments.reductions.empty())
    return status;
  ReductionPartials partials(makeReductions(arguments.reductions));
  for (const RangePartials &range : runs.partials)
    partials.add(range.range, range.values);
  partials.apply();
  for (const fpm_reduction &reduction : arguments.reductions)
    broadcastBytes(comm, reduction.variable,
                   static_cast<std::int64_t>(
                       makeReductions({&reduction, 1}).front().size()),
                   0);
  return FPM_OK;
}

/// FPM_VERBOSE's line for a split across ranks: how it was chosen, and
/// what each rank ran (iterations, and ranges where it got several).
std::string describeSplit(const ClusterPlan &plan, int ranks,
                          std::span<const ChunkMaster::Grant> grants) {
  std::vector<std::int64_t> iterations(static_cast<std::size_t>(ranks));
  std::vector<int> pieces(iterations.size());
  for (const ChunkMaster::Grant &grant : grants) {
    iterations[static_cast<std::size_t>(grant.node)] += grant.range.size();
    ++pieces[static_cast<std::size_t>(grant.node)];
  }
  std::ostringstream line;
  line << "across " << ranks << " ranks, " << plan.reason << ":";
  for (std::size_t r = 0; r < iterations.size(); ++r) {
    line << (r ? ", " : " ") << "rank" << r << " " << iterations[r];
    if (pieces[r] > 1)
      line << " in " << pieces[r] << " ranges";
  }
  return line.str();
}

int clusterLoop(MPI_Comm comm, const LoopArguments &arguments) {
  int rank = 0, ranks = 1;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  const LoopEnvironment environment = readLoopEnvironment();
  const MpiEnvironment mpiEnvironment = readMpiEnvironment();
  const double slowness =
      mpiEnvironment.slowRank && mpiEnvironment.slowRank->rank == rank
          ? mpiEnvironment.slowRank->factor
          : 1;
  const LoopCall names = naming(arguments.loop);
  const std::string key = loopKey(names);
  const fpm_loop defaults{};
  const fpm_loop &loop = arguments.loop ? *arguments.loop : defaults;
  const std::string_view scheduleText =
      !environment.schedule.empty()
          ? environment.schedule
          : std::string_view(loop.schedule ? loop.schedule : "");
  // First, before anything that depends on the arguments: ranks that
  // disagree would run different collectives (or overflow the buffers
  // sized by rank 0's trip count), and a rank that never comes would keep
  // the others waiting.
  const bool goodDataList =
      loop.data_count >= 0 && (loop.data_count == 0 || loop.data);
  if (const std::string disagreement = agreeOnLoop(
          comm,
          loopShape(loopLabel(names), arguments.tripCount,
                    std::string(scheduleText), loop.grain,
                    goodDataList ? std::span<const fpm_arg>(
                                       loop.data, static_cast<std::size_t>(
                                                      loop.data_count))
                                 : std::span<const fpm_arg>(),
                    arguments.reductions),
          std::chrono::seconds(mpiEnvironment.timeoutSeconds));
      !disagreement.empty())
    return setLastError(FPM_ERROR_INVALID_ARGUMENT, disagreement);
  if (arguments.tripCount < 0)
    return setLastError(FPM_ERROR_INVALID_ARGUMENT,
                        negativeTripCount(arguments.tripCount));
  if (loop.data_count < 0 || (loop.data_count > 0 && !loop.data))
    return setLastError(FPM_ERROR_INVALID_ARGUMENT,
                        "fpm_loop: a bad data list (data_count " +
                            std::to_string(loop.data_count) + ")");
  const std::span<const fpm_arg> data(
      loop.data, static_cast<std::size_t>(loop.data_count));
  if (ranks == 1 || arguments.tripCount == 0)
    return runWhole(comm, rank, arguments, names, environment.verbose,
                    "one rank");
  // From here on the loop's arrays may be parts that ranks keep inside a
  // data region (owner_computes.hpp).
  keepWritesOnRanks();
  if (data.empty()) {
    gatherEverything(comm);
    return runWhole(comm, rank, arguments, names, environment.verbose,
                    "no data clauses say what it writes");
  }
  // Checked here, on every rank alike (they agreed on the arguments), so
  // that a bad loop fails before any other message.
  const LoopSchedule schedule = parseLoopSchedule(scheduleText);
  checkLoopData(data, arguments.tripCount);
  // A written section the same for every iteration (a whole-array out of a
  // loop that writes scattered elements, CSR rows): no rank can say which
  // of its elements it wrote, so none may send it to the others.
  if (std::ranges::any_of(data, [](const fpm_arg &arg) {
        return arg.kind != FPM_ARG_IN && ArgSection(arg).stride == 0;
      })) {
    gatherEverything(comm);
    return runWhole(comm, rank, arguments, names, environment.verbose,
                    "a written section is the same for every iteration");
  }

  // Rank 0 plans from every node's view and sends the split (kind -1: it
  // failed, and says why).
  const std::vector<NodeView> nodes =
      gatherNodes(comm, rank, ranks,
                  describeNode(arguments, key, ranks, schedule, loop.grain),
                  std::string(names.name.empty() ? key : names.name));
  ClusterPlan plan;
  std::vector<std::int64_t> message(1 + 2 * static_cast<std::size_t>(ranks));
  std::string planError;
  if (rank == 0) {
    try {
      plan = planCluster(schedule, nodes, arguments.tripCount, loop.grain, key);
      const std::lock_guard<std::mutex> lock(speedsMutex);
      std::vector<Range> &last = lastSplits[key];
      if (residency::active())
        keepPreviousSplit(plan, last, nodes, [&](std::size_t, Range range) {
          // The rows a node gains come from the rank that wrote them:
          // what they read, at this rank's measured exchange cost.
          std::size_t bytes = 0;
          for (const fpm_arg &arg : data)
            if (arg.kind != FPM_ARG_OUT && arg.row_length == 0)
              for (const SectionRect &rect :
                   sectionRects(ArgSection(arg), range.begin, range.end))
                bytes += static_cast<std::size_t>(rect.elements()) * arg.size;
          return rankCopyCost().seconds(bytes);
        });
      if (plan.kind == ClusterPlan::Kind::Static)
        last = plan.shares;
      else
        last.clear();
      message[0] = plan.kind == ClusterPlan::Kind::Static ? 0 : 1;
      for (int r = 0; r < ranks; ++r) {
        message[1 + 2 * r] = plan.shares[r].begin;
        message[2 + 2 * r] = plan.shares[r].end;
      }
    } catch (const std::exception &error) {
      message[0] = -1;
      planError = error.what();
    }
  }
  check(MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_INT64_T,
                  0, comm),
        "MPI_Bcast");
  if (message[0] < 0)
    return setLastError(FPM_ERROR_INVALID_ARGUMENT,
                        rank == 0 ? planError
                                  : "rank 0 could not split the loop across "
                                    "the ranks");

  Runs runs;
  std::vector<ChunkMaster::Grant> grants;
  OwnerComputes owners(comm, data, arguments.tripCount);
  if (message[0] == 0) {
    for (int r = 0; r < ranks; ++r)
      grants.push_back({r, {message[1 + 2 * r], message[2 + 2 * r]}});
    grants = mergeGrants(grants);
    owners.receiveReads(grants);
    runPart(arguments, {message[1 + 2 * rank], message[2 + 2 * rank]}, slowness,
            runs);
  } else {
    // Who runs which chunk is known only as they run.
    owners.receiveReads({});
    if (rank == 0) {
      int level = MPI_THREAD_SINGLE;
      MPI_Query_thread(&level);
      grants = runMaster(comm, ranks, plan, level >= MPI_THREAD_SERIALIZED,
                         arguments, slowness, runs);
    } else {
      runWorker(comm, arguments, {message[1 + 2 * rank], message[2 + 2 * rank]},
                slowness, runs);
    }
    grants = shareGrants(comm, rank, std::move(grants));
  }
  if (const int status = agree(comm, rank, runs); status != FPM_OK)
    return status;
  if (environment.verbose && rank == 0) {
    const std::string split = describeSplit(plan, ranks, grants);
    printSplit("mpi " + key, loopLabel(names), split,
               "fpm: " + loopLabel(names) + ": " + split + "\n");
  }

  // What this rank ran sets its speed for the next call. A share below a
  // probe's worth (an eighth of an equal one) says little: a node that paid
  // for compiling its kernels in the first call got a sliver in the second.
  // Its speed is then forgotten, and the next call learns again.
  {
    const std::int64_t probe =
        std::max<std::int64_t>(1, arguments.tripCount / (8 * ranks));
    const std::lock_guard<std::mutex> lock(speedsMutex);
    if (runs.iterations >= probe && runs.seconds > 0)
      speeds[key] = static_cast<double>(runs.iterations) / runs.seconds;
    else
      speeds.erase(key);
  }
  owners.keepWrites(grants);
  broadcastWrittenSections(comm, owners.broadcast(), grants);
  if (!arguments.reductions.empty())
    combineReductions(comm, arguments, runs.partials);
  return FPM_OK;
}

} // namespace

int runAcross(MPI_Comm comm, const LoopArguments &arguments) {
  // Every rank would write FPM_TRACE's file at exit, the last one winning.
  static std::once_flag traceNamed;
  std::call_once(traceNamed, [] {
    int rank = 0, ranks = 1;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        MPI_Comm_size(MPI_COMM_WORLD, &ranks) == MPI_SUCCESS && ranks > 1)
      trace::traceAsRank(rank);
  });
  try {
    return clusterLoop(comm, arguments);
  } catch (const std::invalid_argument &error) {
    return setLastError(FPM_ERROR_INVALID_ARGUMENT, error.what());
  } catch (const std::exception &error) {
    return setLastError(FPM_ERROR_RUNTIME, error.what());
  }
}

} // namespace fpm::mpi
