//===- residency/residency.hpp - Arrays that stay on devices ---*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: data regions (fpm_data_begin/fpm_data_end, the
// pragma's `data`): arrays whose device copies outlive a loop call, and the
// coherence of those copies. For each array it keeps which bytes each
// holder (the host, each opened device) has up to date. A device's driver
// asks, before a range runs, which bytes of its sections it must upload
// (the rest it already holds) and says, after, which it wrote, which stay
// on it; the host's side (a CPU chunk, the end of a region, `update host`)
// gets back what only a device holds. As StarPU's data handles keep a
// state per copy, with byte ranges in place of whole handles, so that a
// stencil's steady state moves its halos only. It also learns what copies
// cost (copy_cost.hpp) and prices what a PE lacks of a range
// (readSeconds()), for the executor's kept splits and steals.
//
// Without a region, active() is false and the drivers call nothing else
// here: a loop call is what it was.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "residency/copy_cost.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fpm::residency {

/// Bytes [first, last) of an array, counted from its start.
struct Bytes {
  std::size_t first = 0, last = 0;
  std::size_t size() const { return last - first; }
  friend bool operator==(const Bytes &, const Bytes &) = default;
};

/// A set of bytes: disjoint, sorted, non-empty ranges, merged where they
/// touch.
class ByteSet {
public:
  void add(Bytes range) { addSorted(std::span<const Bytes>(&range, 1)); }
  void remove(Bytes range) { removeSorted(std::span<const Bytes>(&range, 1)); }
  /// Many at once, in one pass over the set: `ranges` in increasing order,
  /// disjoint (a section's runs, row after row).
  void addSorted(std::span<const Bytes> ranges);
  void removeSorted(std::span<const Bytes> ranges);
  /// The parts of `range` not in the set, in order.
  std::vector<Bytes> missing(Bytes range) const;
  /// The parts of `range` in the set, in order.
  std::vector<Bytes> within(Bytes range) const;
  std::span<const Bytes> ranges() const { return ranges_; }

private:
  std::vector<Bytes> ranges_;
};

/// A device's copy of a resident array, as its kind of device keeps it
/// (OpenCL: a buffer, device/opencl/opencl_driver.cpp).
class DeviceCopy {
public:
  virtual ~DeviceCopy() = default;
  /// Copies bytes `range` of the copy to the same bytes of `host` (the
  /// array's first byte), and returns once they are there. Throws when
  /// the device cannot.
  virtual void download(Bytes range, std::byte *host) = 0;
};

/// How a region maps an array, as OpenMP's map types: `In` is copied to
/// devices where they read it, and not back; `Out` and `InOut` come back
/// to the host at the region's end; `Create` never leaves the devices.
/// (Devices get what they read lazily, so `Out` and `InOut` differ only
/// in what the program may assume.)
enum class Map { In, Out, InOut, Create };

/// One array of a region: `bytes` bytes from `data`.
struct Mapping {
  void *data = nullptr;
  std::size_t bytes = 0;
  Map map = Map::InOut;
  std::string name; ///< for messages; may be empty
};

/// Opens a region over `arrays`. An array already resident (the same data
/// and bytes, from an enclosing region) is counted again, as OpenMP's
/// present arrays are. Throws std::invalid_argument for a null or empty
/// array, or one that overlaps a resident array without being it.
void begin(std::span<const Mapping> arrays);
/// Closes a region over `arrays` (as begin() got them): each array counted
/// down, and at zero its `Out` or `InOut` bytes that only devices hold
/// come back to the host, and its device copies are released. Throws
/// std::invalid_argument for an array that is not resident.
void end(std::span<const Mapping> arrays);
/// `update host`: the bytes [data, data + bytes) that only devices hold
/// come back to the host.
void updateHost(const void *data, std::size_t bytes);
/// `update device`: the program wrote [data, data + bytes) on the host;
/// every device copy of those bytes is stale.
void updateDevices(const void *data, std::size_t bytes);

/// A layer that keeps parts of resident arrays on other processes:
/// libfpmrt-mpi, whose ranks keep what they wrote inside a region. The
/// host's copy is whole on this process only once the layer has brought
/// what others wrote, so end() and updateHost() ask it first; they are
/// then collective, as the layer's loops are.
class RankLayer {
public:
  virtual ~RankLayer() = default;
  /// The host is about to need [first, last) whole: what other processes
  /// hold of it comes here.
  virtual void gather(std::byte *first, std::byte *last) = 0;
  /// The program wrote [first, last) on the host of every process alike
  /// (`update device`).
  virtual void wroteEverywhere(const std::byte *first,
                               const std::byte *last) = 0;
  /// The array at `base` is no longer resident.
  virtual void released(const std::byte *base) = 0;
};
/// Installs `layer` (null: none); it must outlive every region.
void setRankLayer(RankLayer *layer);

/// The resident arrays that [first, last) overlaps, as their bytes.
std::vector<std::span<std::byte>> residentArrays(const std::byte *first,
                                                 const std::byte *last);

/// Whether any array is resident: drivers ask nothing else when not.
bool active();

/// Whoever holds copies: nullptr is the host; a device is its opened
/// device object's address.
using Holder = const void *;

/// A resident array, as drivers see it while a loop call runs.
class Array;

/// The resident array that starts at `data` and has at least `bytes`
/// bytes, or null: a kernel argument of exactly that array keeps its
/// device copy there.
Array *find(const void *data, std::size_t bytes);

/// `holder`'s copy of `array`, made by `make(bytes of the array)` at its
/// first use.
DeviceCopy &
deviceCopy(Array &array, Holder holder,
           const std::function<std::unique_ptr<DeviceCopy>(std::size_t)> &make);

/// Of `ranges` (bytes of `array`), those that `holder` must upload from
/// the host before it reads them, in order: the host is made current there
/// first (from another device where only it holds them), and from now on
/// they count as current on `holder`.
std::vector<Bytes> prepareRead(Array &array, Holder holder,
                               std::span<const Bytes> ranges);
/// `holder` wrote `ranges` of `array`: its copy is the only current one.
void wrote(Array &array, Holder holder, std::span<const Bytes> ranges);

/// The host is about to read or write [first, last) (of any memory): every
/// resident array there gives back what only a device holds.
void acquireHost(const std::byte *first, const std::byte *last);
/// The host wrote [first, last): device copies there are stale.
void hostWrote(const std::byte *first, const std::byte *last);
/// acquireHost() and hostWrote() of every resident array, whole: for a
/// loop that does not say what it reads and writes.
void acquireHostAll();
void hostWroteAll();

/// The bytes of `rects` of an array of `size`-byte elements, run by run.
std::vector<Bytes> rectBytes(std::span<const SectionRect> rects,
                             std::size_t size);
/// acquireHost() and hostWrote() of `rects` of the array of `size`-byte
/// elements at `data`.
void acquireHost(const void *data, std::size_t size,
                 std::span<const SectionRect> rects);
void hostWrote(const void *data, std::size_t size,
               std::span<const SectionRect> rects);

/// Which way a copy between the host and a device went.
enum class Direction { ToDevice, ToHost };
/// A copy of `bytes` between the host and `holder` (a device) took
/// `seconds`: it teaches copyCost(). The downloads made here (acquireHost
/// and prepareRead) count themselves; drivers report their uploads.
void copied(Holder holder, Direction direction, std::size_t bytes,
            double seconds);
/// What a copy between the host and `holder` costs, as learned so far.
CopyCost copyCost(Holder holder, Direction direction);
/// The seconds `reader` would spend now to make the bytes of `rects` of the
/// array of `size`-byte elements at `data` current on it, by copyCost():
/// what only devices hold comes to the host (a download from each), and a
/// device reader gets what it lacks from the host (an upload). 0 outside
/// resident arrays, and for copies no earlier one has taught a cost.
double readSeconds(const void *data, std::size_t size,
                   std::span<const SectionRect> rects, Holder reader);

/// `holder` failed: what only it holds comes back to the host (throws when
/// it cannot: those bytes are lost), and it holds nothing any more.
void forget(Holder holder);

/// FPM_CHECK_DATA: remembers a checksum of what the host holds of each
/// array that a device holds too (bytes no loop may change behind the
/// devices' backs); changedSinceCheckpoint() names each array whose such
/// bytes the host changed since: the program wrote it without `update
/// device`, and the devices' copies are stale.
void checkpoint();
std::vector<std::string> changedSinceCheckpoint();

/// Bytes moved by the coherence so far, for tests and benchmarks: to
/// devices (prepareRead's ranges), and from devices to the host.
/// A RankLayer counts what this process received from others: before
/// loops, and to make arrays whole (end(), updateHost()).
struct Traffic {
  std::uint64_t toDevices = 0;
  std::uint64_t toHost = 0;
  std::uint64_t fromRanksForLoops = 0;
  std::uint64_t fromRanksToGather = 0;
};
Traffic traffic();
void countFromRanks(std::uint64_t forLoops, std::uint64_t toGather);

} // namespace fpm::residency
