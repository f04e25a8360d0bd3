//===- mpi/owner_computes.cpp - Ranks keep what they wrote ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "mpi/owner_computes.hpp"

#include "cluster/rank_holdings.hpp"
#include "data/sections.hpp"
#include "mpi/section_broadcast.hpp"
#include "residency/residency.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace fpm::mpi {
namespace {

using residency::Bytes;

/// Tag of the point-to-point transfers (beside the master's 0x7f01, 0x7f02
/// and the agreement's 0x7f03, 0x7f04).
constexpr int TransferTag = 0x7f05;

/// What every rank knows of one resident array that ranks keep parts of.
struct Holding {
  std::byte *base;
  MPI_Comm comm;
  RankHoldings ranks;
};

/// In the order loops first kept them, the same on every rank (addresses
/// differ between ranks, so they cannot give the order).
std::mutex holdingsMutex;
std::vector<std::shared_ptr<Holding>> holdings;

/// rankCopyCost()'s line.
std::mutex rankCopiesMutex;
residency::CopyCost rankCopies;

/// The bytes of `arg`'s sections over `range`, as bytes of the array it
/// lies `offset` bytes into, cut to that array's `size` bytes (an input
/// declared past the array's ends reads nothing there).
std::vector<Bytes> arrayBytes(const fpm_arg &arg, Range range,
                              std::ptrdiff_t offset, std::size_t size) {
  std::vector<Bytes> bytes;
  const auto element = static_cast<std::ptrdiff_t>(arg.size);
  for (const SectionRect &rect :
       sectionRects(ArgSection(arg), range.begin, range.end))
    for (std::int64_t row = 0; row < rect.rows; ++row) {
      const std::ptrdiff_t first =
          offset + (rect.first + row * rect.pitch) * element;
      const std::ptrdiff_t last = first + rect.width * element;
      const std::ptrdiff_t from = std::max<std::ptrdiff_t>(first, 0);
      const std::ptrdiff_t to =
          std::min(last, static_cast<std::ptrdiff_t>(size));
      if (from < to)
        bytes.push_back(
            {static_cast<std::size_t>(from), static_cast<std::size_t>(to)});
    }
  return bytes;
}

/// Makes `range` of `holding` whole on every rank: each part some rank
/// lacks, broadcast from the rank that wrote it. Holds holdingsMutex.
void gatherRange(Holding &holding, Bytes range) {
  int rank = 0;
  check(MPI_Comm_rank(holding.comm, &rank), "MPI_Comm_rank");
  std::uint64_t received = 0;
  for (const RankHoldings::Run &run : holding.ranks.notEverywhere(range)) {
    std::byte *const first = holding.base + run.bytes.first;
    std::byte *const last = holding.base + run.bytes.last;
    if (run.owner == rank)
      residency::acquireHost(first, last);
    broadcastBytes(holding.comm, first,
                   static_cast<std::int64_t>(run.bytes.size()), run.owner);
    if (run.owner != rank) {
      residency::hostWrote(first, last);
      received += run.bytes.size();
    }
  }
  holding.ranks.everywhere(range);
  residency::countFromRanks(0, received);
}

/// Calls `use(holding, bytes)` for each holding that [first, last)
/// overlaps, with the overlap, and forgets those whole afterwards: every
/// rank holds all of them, as before any loop kept anything. Holds
/// holdingsMutex.
template <class Use>
void forEachHolding(const std::byte *first, const std::byte *last, Use use) {
  for (const std::shared_ptr<Holding> &holding : holdings) {
    const std::byte *const end = holding->base + holding->ranks.bytes();
    const std::byte *const from =
        std::max<const std::byte *>(first, holding->base);
    const std::byte *const to = std::min(last, end);
    if (from < to)
      use(*holding, Bytes{static_cast<std::size_t>(from - holding->base),
                          static_cast<std::size_t>(to - holding->base)});
  }
  std::erase_if(holdings, [](const std::shared_ptr<Holding> &holding) {
    return holding->ranks.whole();
  });
}

bool mpiRunning() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

class RankLayer final : public residency::RankLayer {
public:
  void gather(std::byte *first, std::byte *last) override {
    const std::lock_guard lock(holdingsMutex);
    if (holdings.empty() || !mpiRunning())
      return;
    forEachHolding(first, last, [](Holding &holding, Bytes range) {
      gatherRange(holding, range);
    });
  }
  void wroteEverywhere(const std::byte *first, const std::byte *last) override {
    const std::lock_guard lock(holdingsMutex);
    forEachHolding(first, last, [](Holding &holding, Bytes range) {
      holding.ranks.everywhere(range);
    });
  }
  void released(const std::byte *base) override {
    const std::lock_guard lock(holdingsMutex);
    std::erase_if(holdings, [&](const std::shared_ptr<Holding> &holding) {
      return holding->base == base;
    });
  }
};

/// Throws unless `comm` has the ranks, in order, that keep `holding`'s
/// parts: they alone know who holds what.
void requireSameRanks(const Holding &holding, MPI_Comm comm) {
  int same = MPI_UNEQUAL;
  check(MPI_Comm_compare(holding.comm, comm, &same), "MPI_Comm_compare");
  if (same != MPI_IDENT && same != MPI_CONGRUENT)
    throw std::invalid_argument(
        "a data region's array that ranks keep parts of is used by a loop "
        "over another communicator: update the host (fpm_update_host) "
        "between them");
}

void gatherAllLocked(MPI_Comm comm) {
  for (const std::shared_ptr<Holding> &holding : holdings) {
    requireSameRanks(*holding, comm);
    gatherRange(*holding, {0, holding->ranks.bytes()});
  }
  holdings.clear();
}

/// Bytes from one rank to another of a holding.
struct Move {
  Holding *holding;
  RankHoldings::Transfer transfer;
};

/// Sends and receives `moves` (every rank's, in the same order on every
/// rank), then records them in their holdings.
void exchange(MPI_Comm comm, int rank, std::span<const Move> moves) {
  constexpr std::size_t Piece = std::size_t{1} << 30;
  const double started = MPI_Wtime();
  std::vector<MPI_Request> requests;
  for (const Move &move : moves) {
    const RankHoldings::Transfer &transfer = move.transfer;
    if (transfer.from != rank && transfer.to != rank)
      continue;
    std::byte *const first = move.holding->base + transfer.bytes.first;
    const std::size_t size = transfer.bytes.size();
    // A kept range may still be on this rank's devices.
    if (transfer.from == rank)
      residency::acquireHost(first, first + size);
    for (std::size_t done = 0; done < size; done += Piece) {
      const int count = static_cast<int>(std::min(Piece, size - done));
      MPI_Request request;
      check(transfer.from == rank
                ? MPI_Isend(first + done, count, MPI_BYTE, transfer.to,
                            TransferTag, comm, &request)
                : MPI_Irecv(first + done, count, MPI_BYTE, transfer.from,
                            TransferTag, comm, &request),
            transfer.from == rank ? "MPI_Isend" : "MPI_Irecv");
      requests.push_back(request);
    }
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                    MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  std::uint64_t received = 0;
  for (const Move &move : moves) {
    const RankHoldings::Transfer &transfer = move.transfer;
    if (transfer.to == rank) {
      std::byte *const first = move.holding->base + transfer.bytes.first;
      residency::hostWrote(first, first + transfer.bytes.size());
      received += transfer.bytes.size();
    }
    move.holding->ranks.received(transfer);
  }
  residency::countFromRanks(received, 0);
  countReceived(received);
  if (received > 0) {
    const std::lock_guard lock(rankCopiesMutex);
    rankCopies.add(received, MPI_Wtime() - started);
  }
}

} // namespace

struct OwnerComputes::Kept {
  const fpm_arg *arg;
  std::shared_ptr<Holding> holding;
  std::ptrdiff_t offset; ///< of arg.data from the array's first byte
};

residency::CopyCost rankCopyCost() {
  const std::lock_guard lock(rankCopiesMutex);
  return rankCopies;
}

void keepWritesOnRanks() {
  static RankLayer layer;
  static std::once_flag installed;
  std::call_once(installed, [] { residency::setRankLayer(&layer); });
}

void gatherEverything(MPI_Comm comm) {
  const std::lock_guard lock(holdingsMutex);
  gatherAllLocked(comm);
}

OwnerComputes::OwnerComputes(MPI_Comm comm, std::span<const fpm_arg> data,
                             std::int64_t tripCount)
    : comm_(comm), tripCount_(tripCount) {
  check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &ranks_), "MPI_Comm_size");
  broadcast_.assign(data.begin(), data.end());
  if (ranks_ == 1 || tripCount < 1 || !residency::active())
    return;
  struct Candidate {
    const fpm_arg *arg;
    std::span<std::byte> array;
  };
  std::vector<Candidate> candidates;
  bool mixed = false; // an array that lies partly in a resident one
  for (const fpm_arg &arg : data) {
    if (arg.row_length > 0) {
      mixed = true;
      continue;
    }
    const auto [firstElement, lastElement] = sectionExtent(arg, 0, tripCount);
    const auto *base = static_cast<const std::byte *>(arg.data);
    const auto element = static_cast<std::ptrdiff_t>(arg.size);
    const std::byte *first = base + firstElement * element;
    const std::byte *last = base + lastElement * element;
    const std::vector<std::span<std::byte>> arrays =
        residency::residentArrays(first, last);
    if (arrays.empty())
      continue;
    const std::span<std::byte> array = arrays.front();
    const bool startsInside =
        base >= array.data() && base < array.data() + array.size();
    const bool inside = startsInside && first >= array.data() &&
                        last <= array.data() + array.size();
    // An input declared past the array's ends (a guarded stencil's
    // a[i-1:3] at i = 0) reads only what lies in it.
    if (arrays.size() == 1 &&
        (inside || (startsInside && arg.kind == FPM_ARG_IN)))
      candidates.push_back({&arg, array});
    else
      mixed = true;
  }
  const std::lock_guard lock(holdingsMutex);
  if (mixed) {
    gatherAllLocked(comm);
    return;
  }
  broadcast_.clear();
  for (const fpm_arg &arg : data)
    if (std::ranges::none_of(candidates, [&](const Candidate &candidate) {
          return candidate.arg == &arg;
        }))
      broadcast_.push_back(arg);
  for (const Candidate &candidate : candidates) {
    auto found = std::ranges::find_if(holdings, [&](const auto &holding) {
      return holding->base == candidate.array.data();
    });
    if (found == holdings.end()) {
      holdings.push_back(std::make_shared<Holding>(
          Holding{candidate.array.data(), comm,
                  RankHoldings(ranks_, candidate.array.size())}));
      found = std::prev(holdings.end());
    } else {
      requireSameRanks(**found, comm);
    }
    kept_.push_back({candidate.arg, *found,
                     static_cast<const std::byte *>(candidate.arg->data) -
                         candidate.array.data()});
  }
}

OwnerComputes::~OwnerComputes() = default;

void OwnerComputes::receiveReads(std::span<const ChunkMaster::Grant> grants) {
  if (kept_.empty())
    return;
  // What each rank reads of each holding, in the order the loop's
  // arguments first name them.
  std::vector<std::pair<Holding *, std::vector<residency::ByteSet>>> reads;
  for (const Kept &kept : kept_) {
    if (kept.arg->kind == FPM_ARG_OUT)
      continue;
    auto entry = std::ranges::find(reads, kept.holding.get(),
                                   &decltype(reads)::value_type::first);
    if (entry == reads.end()) {
      reads.emplace_back(
          kept.holding.get(),
          std::vector<residency::ByteSet>(static_cast<std::size_t>(ranks_)));
      entry = std::prev(reads.end());
    }
    const std::size_t size = kept.holding->ranks.bytes();
    if (grants.empty()) {
      const std::vector<Bytes> all =
          arrayBytes(*kept.arg, {0, tripCount_}, kept.offset, size);
      for (residency::ByteSet &rankReads : entry->second)
        for (const Bytes &bytes : all)
          rankReads.add(bytes);
      continue;
    }
    for (const ChunkMaster::Grant &grant : grants)
      for (const Bytes &bytes :
           arrayBytes(*kept.arg, grant.range, kept.offset, size))
        entry->second[static_cast<std::size_t>(grant.node)].add(bytes);
  }
  std::vector<Move> moves;
  const std::lock_guard lock(holdingsMutex);
  for (const auto &[holding, rankReads] : reads)
    for (int r = 0; r < ranks_; ++r)
      for (const RankHoldings::Transfer &transfer : holding->ranks.toRead(
               r, rankReads[static_cast<std::size_t>(r)].ranges()))
        moves.push_back({holding, transfer});
  exchange(comm_, rank_, moves);
}

void OwnerComputes::keepWrites(std::span<const ChunkMaster::Grant> grants) {
  const std::lock_guard lock(holdingsMutex);
  // Grant by grant: where two ranges wrote the same bytes, the later
  // range's rank holds them, as the serial loop leaves them.
  for (const ChunkMaster::Grant &grant : grants)
    for (const Kept &kept : kept_)
      if (kept.arg->kind != FPM_ARG_IN)
        kept.holding->ranks.wrote(
            grant.node, arrayBytes(*kept.arg, grant.range, kept.offset,
                                   kept.holding->ranks.bytes()));
}

} // namespace fpm::mpi
