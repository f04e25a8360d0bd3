//===- trace/trace.hpp - What ran where -------------------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers:
//  - a Chrome trace-event recorder (FPM_TRACE=file.json): one complete
//    ("ph": "X") event per executed chunk, with the loop's name, the PE's
//    lane as the thread, and begin, end and device in args; transfers as
//    their own events; lanes named by "thread_name" metadata. The file is
//    written once, at exit (or by flush()), one per rank under MPI
//    (traceAsRank), atomically (a device or FIFO
//    such as /dev/null is written in place, in bounded time; a link's
//    target is written;
//    support/atomic_file.hpp's writeUserFile), and opens in Perfetto and
//    chrome://tracing;
//  - per-loop busy-time statistics, printed at exit under FPM_VERBOSE:
//    each PE's busy time and utilisation U_i = T_pi / T_comp (the WDAH thesis,
//    eq. 5.3: T_comp the loop's wall time over all its calls) and the
//    imbalance max_i T_pi / mean_i T_pi - 1.
// Recording takes a mutex per event: chunks on heterogeneous PEs are
// coarse (tens of microseconds and up), and nothing is recorded when
// neither FPM_TRACE nor FPM_VERBOSE is set.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fpm::trace {

using Clock = std::chrono::steady_clock;

/// Nanoseconds of Clock since its epoch: the time base of every event.
std::int64_t now();

/// True when FPM_TRACE names a file (read once, at the first call).
bool enabled();

/// True when FPM_VERBOSE is on (1, yes, true or on, as every call reads it:
/// support/environment.hpp; read once, at the first call, and off when it
/// is malformed, which the calls report): CallStats are then merged and
/// printed at exit.
bool verbose();

/// Names lane `lane` (a Chrome "tid") once, e.g. "opencl0 (NVIDIA H200)"
/// or "cpu thread 1". Lanes are small integers chosen by the caller.
void nameLane(int lane, std::string_view name);

/// One executed chunk of logical iterations [begin, end) of `loop` on PE
/// `device`, from `start` to `finish` (now() values). No-op when !enabled().
void chunk(std::string_view loop, int lane, std::string_view device,
           std::int64_t begin, std::int64_t end, std::int64_t start,
           std::int64_t finish);

/// One transfer ("upload" or "download") of `bytes` for a chunk of `loop`.
void transfer(std::string_view loop, int lane, std::string_view device,
              std::string_view direction, std::uint64_t bytes,
              std::int64_t start, std::int64_t finish);

/// A failure, as an instant event ("ph": "i") on the PE's lane.
void failure(std::string_view loop, int lane, std::string_view device,
             std::string_view what, std::int64_t at);

/// Writes the trace file now (it is also written at exit). Thread-safe;
/// a file that cannot be written is reported once on stderr.
void flush();

/// The file rank `rank` of a job writes its trace to when FPM_TRACE names
/// `file`: ".rank<N>" before the file name's extension (trace.json ->
/// trace.rank1.json; trace -> trace.rank1).
std::filesystem::path fileForRank(const std::filesystem::path &file, int rank);

/// Called by libfpmrt-mpi in a job of more than one rank, so that the
/// ranks' traces do not overwrite one another: from now on this process
/// writes its trace to fileForRank(the trace file, rank). A path that
/// exists and is not a regular file (/dev/stdout, a FIFO) is written as
/// named: each rank has its own stdout, and a FIFO is the reader's to
/// sort out. Renames once per process; a no-op when nothing is traced.
void traceAsRank(int rank);

/// For tests and tools: overrides FPM_TRACE. An empty path disables
/// recording (events already recorded are kept, but not written).
void setTraceFile(const std::filesystem::path &file);

/// For tests and tools: overrides FPM_VERBOSE.
void setVerbose(bool on);

/// For tests: forgets every recorded event, lane name and loop total, so
/// that a test (or a repeated run of one) starts from nothing.
void reset();

/// What flush() would write: the Chrome trace-event JSON of every event so
/// far, with "ts" in microseconds from the earliest event's start.
std::string traceJson();

/// What is printed at exit under FPM_VERBOSE: every loop's block, in the
/// order loops first finished a call; empty when nothing was merged.
std::string verboseReport();

/// Accumulates one call of `loop`: its wall time, and each PE's busy time.
/// Printed at exit when FPM_VERBOSE is set, one block per loop:
///   fpm: loop 'mm': 12 calls, 1.234 s
///   fpm:   cpu       busy 1.201 s  utilisation  97.3%  (8192 iterations)
///   fpm:   opencl0   busy 1.190 s  utilisation  96.4%  (4096 iterations)
///   fpm:   imbalance 0.5%
class CallStats {
public:
  /// `loop` is the loop's name (or "file:line").
  explicit CallStats(std::string loop);
  /// Adds `seconds` of busy time and `iterations` to PE `device`. From one
  /// thread (the call's), like everything on one CallStats.
  void busy(std::string_view device, double seconds, std::int64_t iterations);
  /// The same for a PE that is a team of `threads` running side by side
  /// (the CPU's): `summedSeconds` is their busy times' sum, and the PE's
  /// busy time their mean, so that its utilisation is the team's.
  void teamBusy(std::string_view device, double summedSeconds,
                std::int64_t iterations, int threads);
  /// Records the call's wall time and merges it into the loop's totals
  /// (only when verbose()). Thread-safe; called once, after every busy().
  void finish(double wallSeconds);

private:
  struct Pe {
    std::string device;
    double seconds = 0;
    std::int64_t iterations = 0;
  };
  std::string loop_;
  std::vector<Pe> pes_; // few: a linear search
};

} // namespace fpm::trace
