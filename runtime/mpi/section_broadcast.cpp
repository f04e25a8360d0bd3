//===- mpi/section_broadcast.cpp - A loop's writes to all ranks -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "mpi/section_broadcast.hpp"

#include "data/sections.hpp"
#include "residency/residency.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace fpm::mpi {
namespace {

/// Sends what iterations `range` wrote of `arg` from `root` to every rank:
/// each rectangle of it (sectionRects) as one run of bytes, or as one
/// strided datatype of its rows. An array of row pointers sends each row
/// it wrote from the root's row to each rank's own row of that index (the
/// pointers themselves mean nothing on another rank).
void broadcastSection(MPI_Comm comm, const fpm_arg &arg, Range range,
                      int root) {
  auto *base = static_cast<unsigned char *>(arg.data);
  const auto size = static_cast<std::int64_t>(arg.size);
  for (const SectionRect &rect :
       sectionRects(ArgSection(arg), range.begin, range.end)) {
    if (arg.row_length > 0) {
      forEachHostRun(arg.data, elementBytes(arg), true, rect,
                     [&](std::byte *row, std::size_t bytes) {
                       broadcastBytes(comm, row,
                                      static_cast<std::int64_t>(bytes), root);
                     });
      continue;
    }
    if (rect.rows == 1) {
      broadcastBytes(comm, base + rect.first * size, rect.width * size, root);
      continue;
    }
    const std::int64_t rowBytes = rect.width * size;
    if (rowBytes > INT_MAX)
      throw std::runtime_error("a section of more than INT_MAX bytes per "
                               "row cannot be gathered");
    constexpr std::int64_t MaxRows = std::int64_t{1} << 20;
    for (std::int64_t row = 0; row < rect.rows; row += MaxRows) {
      const int rows = static_cast<int>(std::min(MaxRows, rect.rows - row));
      MPI_Datatype rowsType;
      check(MPI_Type_create_hvector(rows, static_cast<int>(rowBytes),
                                    static_cast<MPI_Aint>(rect.pitch * size),
                                    MPI_BYTE, &rowsType),
            "MPI_Type_create_hvector");
      check(MPI_Type_commit(&rowsType), "MPI_Type_commit");
      const int code = MPI_Bcast(base + (rect.first + row * rect.pitch) * size,
                                 1, rowsType, root, comm);
      if (int rank = 0;
          MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank != root)
        countReceived(static_cast<std::uint64_t>(rows * rowBytes));
      MPI_Type_free(&rowsType);
      check(code, "MPI_Bcast");
    }
  }
}

} // namespace

void check(int code, const char *what) {
  if (code != MPI_SUCCESS)
    throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

namespace {
std::atomic<std::uint64_t> received{0};
} // namespace

std::uint64_t bytesReceived() { return received.load(); }
void countReceived(std::uint64_t bytes) { received += bytes; }

void broadcastBytes(MPI_Comm comm, void *data, std::int64_t bytes, int root) {
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rank != root)
    countReceived(static_cast<std::uint64_t>(bytes));
  constexpr std::int64_t Piece = std::int64_t{1} << 30;
  auto *at = static_cast<unsigned char *>(data);
  for (std::int64_t done = 0; done < bytes; done += Piece)
    check(MPI_Bcast(at + done, static_cast<int>(std::min(Piece, bytes - done)),
                    MPI_BYTE, root, comm),
          "MPI_Bcast");
}

void broadcastWrittenSections(MPI_Comm comm, std::span<const fpm_arg> data,
                              std::span<const ChunkMaster::Grant> grants) {
  // In a data region, a rank's writes may be on its devices: its host copy
  // is made current before it sends, and what a rank receives is its
  // host's from then on.
  const bool regions = residency::active();
  int rank = 0;
  if (regions)
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  // In iteration order: what the serial loop leaves where sections overlap
  // is the last iteration's.
  for (const fpm_arg &arg : data) {
    if (arg.kind != FPM_ARG_OUT && arg.kind != FPM_ARG_INOUT)
      continue;
    for (const ChunkMaster::Grant &grant : grants) {
      std::vector<SectionRect> rects;
      if (regions && arg.row_length == 0) {
        rects =
            sectionRects(ArgSection(arg), grant.range.begin, grant.range.end);
        if (grant.node == rank)
          residency::acquireHost(arg.data, arg.size, rects);
      }
      broadcastSection(comm, arg, grant.range, grant.node);
      if (!rects.empty())
        residency::hostWrote(arg.data, arg.size, rects);
    }
  }
}

} // namespace fpm::mpi
