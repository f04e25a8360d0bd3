//===- mpi/agreement.cpp - Ranks agree on a loop, in bounded time ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "mpi/agreement.hpp"

#include "mpi/section_broadcast.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fpm::mpi {
namespace {

/// Message tags of the agreement, beside the self-scheduling protocol's.
constexpr int ShapeTag = 0x7f03;
constexpr int VerdictTag = 0x7f04;

using Clock = std::chrono::steady_clock;

/// Waits between polls until a deadline: yields at first (ranks usually
/// arrive together), then sleeps longer each time, up to 2 ms, so that a
/// rank waiting for a slow one leaves the cores to the others.
class Poller {
public:
  explicit Poller(std::chrono::seconds timeout)
      : deadline_(Clock::now() + timeout) {}

  /// Waits a little; false once the deadline has passed.
  bool wait() {
    if (Clock::now() >= deadline_)
      return false;
    if (polls_++ < 100) {
      std::this_thread::yield();
      return true;
    }
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, std::chrono::microseconds(2000));
    return true;
  }

private:
  Clock::time_point deadline_;
  int polls_ = 0;
  std::chrono::microseconds pause_{10};
};

/// Ends the job: a loop some rank never reached.
[[noreturn]] void abortJob(MPI_Comm comm, const std::string &line) {
  std::fprintf(stderr, "fpm: %s\n", line.c_str());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  std::abort(); // MPI_Abort does not return; if an MPI's did, still end.
}

/// Receives the message with `tag` from `source` that MPI_Iprobe found.
std::string receive(MPI_Comm comm, const MPI_Status &probed, int tag) {
  int size = 0;
  check(MPI_Get_count(&probed, MPI_BYTE, &size), "MPI_Get_count");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  check(MPI_Recv(bytes.data(), size, MPI_BYTE, probed.MPI_SOURCE, tag, comm,
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  return bytes;
}

/// Waits for `requests` to complete, or aborts the job saying `line`.
void completeOrAbort(MPI_Comm comm, std::vector<MPI_Request> &requests,
                     Poller &poller, const std::string &line) {
  for (;;) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                      MPI_STATUSES_IGNORE),
          "MPI_Testall");
    if (done)
      return;
    if (!poller.wait())
      abortJob(comm, line);
  }
}

std::string timeoutAdvice(long seconds) {
  return " (FPM_MPI_TIMEOUT=" + std::to_string(seconds) +
         "); every rank must call a collective loop; a loop only some "
         "ranks reach runs on each alone through fpm_parallel_for "
         "(fpm/fpm.h), not fpm_mpi_parallel_for; aborting the job";
}

std::string rootAgreement(MPI_Comm comm, int ranks, const LoopShape &mine,
                          std::chrono::seconds timeout) {
  Poller poller(timeout);
  std::vector<LoopShape> shapes(static_cast<std::size_t>(ranks));
  shapes[0] = mine;
  std::vector<bool> arrived(shapes.size());
  arrived[0] = true;
  std::string unreadable;
  for (int missing = ranks - 1; missing > 0;) {
    int waiting = 0;
    MPI_Status probed;
    check(MPI_Iprobe(MPI_ANY_SOURCE, ShapeTag, comm, &waiting, &probed),
          "MPI_Iprobe");
    if (waiting) {
      const std::string bytes = receive(comm, probed, ShapeTag);
      const auto from = static_cast<std::size_t>(probed.MPI_SOURCE);
      try {
        shapes[from] = decodeLoopShape(bytes);
      } catch (const std::invalid_argument &error) {
        if (unreadable.empty())
          unreadable = mine.label + ": rank " + std::to_string(from) +
                       " sent " + error.what();
      }
      if (!arrived[from]) {
        arrived[from] = true;
        --missing;
      }
      continue;
    }
    if (!poller.wait()) {
      std::string absent;
      for (std::size_t r = 1; r < arrived.size(); ++r)
        if (!arrived[r])
          absent += (absent.empty() ? "" : ", ") + std::to_string(r);
      abortJob(comm, mine.label + ": rank 0 waited " +
                         std::to_string(timeout.count()) + " s for rank" +
                         (missing > 1 ? "s " : " ") + absent +
                         " to call it too" + timeoutAdvice(timeout.count()));
    }
  }
  std::string verdict =
      unreadable.empty() ? describeDisagreement(shapes) : unreadable;
  std::vector<MPI_Request> sends(static_cast<std::size_t>(ranks - 1));
  for (int r = 1; r < ranks; ++r)
    check(MPI_Isend(verdict.data(), static_cast<int>(verdict.size()), MPI_BYTE,
                    r, VerdictTag, comm,
                    &sends[static_cast<std::size_t>(r - 1)]),
          "MPI_Isend");
  completeOrAbort(comm, sends, poller,
                  mine.label +
                      ": rank 0 could not tell the other ranks "
                      "whether they agree within " +
                      std::to_string(timeout.count()) +
                      " s (FPM_MPI_TIMEOUT); aborting the job");
  return verdict;
}

std::string workerAgreement(MPI_Comm comm, int rank, const LoopShape &mine,
                            std::chrono::seconds timeout) {
  Poller poller(timeout);
  const std::string bytes = encodeLoopShape(mine);
  std::vector<MPI_Request> send(1);
  check(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0,
                  ShapeTag, comm, send.data()),
        "MPI_Isend");
  const std::string line = mine.label + ": rank " + std::to_string(rank) +
                           " waited " + std::to_string(timeout.count()) +
                           " s for rank 0 to say that every rank called it" +
                           timeoutAdvice(timeout.count());
  for (;;) {
    int waiting = 0;
    MPI_Status probed;
    check(MPI_Iprobe(0, VerdictTag, comm, &waiting, &probed), "MPI_Iprobe");
    if (waiting) {
      std::string verdict = receive(comm, probed, VerdictTag);
      completeOrAbort(comm, send, poller, line);
      return verdict;
    }
    if (!poller.wait())
      abortJob(comm, line);
  }
}

} // namespace

std::string agreeOnLoop(MPI_Comm comm, const LoopShape &mine,
                        std::chrono::seconds timeout) {
  int rank = 0, ranks = 1;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  if (ranks == 1)
    return {};
  return rank == 0 ? rootAgreement(comm, ranks, mine, timeout)
                   : workerAgreement(comm, rank, mine, timeout);
}

} // namespace fpm::mpi
