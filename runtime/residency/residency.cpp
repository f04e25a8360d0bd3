//===- residency/residency.cpp - Arrays that stay on devices --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The registry of resident arrays and their coherence (residency.hpp).
// Invariant: for every array, the union of its holders' current bytes is
// the whole array (the host holds all of it at begin(); a write moves bytes
// to the writer; a read adds a holder), so that every byte has a current
// copy somewhere.
//
//===----------------------------------------------------------------------===//

#include "residency/residency.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>

namespace fpm::residency {

void ByteSet::addSorted(std::span<const Bytes> ranges) {
  // Merge the two ordered lists, then join what touches.
  std::vector<Bytes> all;
  all.reserve(ranges_.size() + ranges.size());
  std::ranges::merge(ranges_, ranges, std::back_inserter(all), {},
                     &Bytes::first, &Bytes::first);
  std::vector<Bytes> joined;
  joined.reserve(all.size());
  for (const Bytes &r : all) {
    if (r.first >= r.last)
      continue;
    if (!joined.empty() && r.first <= joined.back().last)
      joined.back().last = std::max(joined.back().last, r.last);
    else
      joined.push_back(r);
  }
  ranges_ = std::move(joined);
}

void ByteSet::removeSorted(std::span<const Bytes> ranges) {
  std::vector<Bytes> kept;
  kept.reserve(ranges_.size() + ranges.size());
  auto cut = ranges.begin();
  for (Bytes r : ranges_) {
    // The cuts that end before r are past for this and later ranges.
    while (cut != ranges.end() && cut->last <= r.first)
      ++cut;
    for (auto c = cut; c != ranges.end() && c->first < r.last; ++c) {
      if (c->first >= c->last)
        continue;
      if (c->first > r.first)
        kept.push_back({r.first, c->first});
      r.first = std::max(r.first, c->last);
      if (r.first >= r.last)
        break;
    }
    if (r.first < r.last)
      kept.push_back(r);
  }
  ranges_ = std::move(kept);
}

std::vector<Bytes> ByteSet::missing(Bytes range) const {
  std::vector<Bytes> gaps;
  std::size_t at = range.first;
  for (auto r =
           std::ranges::upper_bound(ranges_, range.first, {}, &Bytes::last);
       r != ranges_.end() && r->first < range.last; ++r) {
    if (r->first > at)
      gaps.push_back({at, r->first});
    at = std::max(at, r->last);
  }
  if (at < range.last)
    gaps.push_back({at, range.last});
  return gaps;
}

std::vector<Bytes> ByteSet::within(Bytes range) const {
  std::vector<Bytes> parts;
  for (auto r =
           std::ranges::upper_bound(ranges_, range.first, {}, &Bytes::last);
       r != ranges_.end() && r->first < range.last; ++r)
    parts.push_back(
        {std::max(r->first, range.first), std::min(r->last, range.last)});
  return parts;
}

class Array {
public:
  Array(const Mapping &mapping)
      : base(static_cast<std::byte *>(mapping.data)), bytes(mapping.bytes),
        map(mapping.map), name(mapping.name) {
    current[nullptr].add({0, bytes});
  }

  std::byte *const base;
  const std::size_t bytes;
  const Map map;
  const std::string name;
  int count = 1; ///< regions that map it
  /// FPM_CHECK_DATA: the checksum of the host's bytes a device holds too.
  std::uint64_t mirrored = 0;

  /// That checksum now (FNV-1a over the bytes, in order). Called with
  /// `mutex` held.
  std::uint64_t mirroredChecksum() {
    ByteSet shared;
    const ByteSet &host = current[nullptr];
    for (const auto &[holder, set] : current)
      if (holder)
        for (const Bytes &range : set.ranges())
          for (const Bytes &part : host.within(range))
            shared.add(part);
    std::uint64_t hash = 1469598103934665603ull;
    for (const Bytes &range : shared.ranges())
      for (std::size_t at = range.first; at < range.last; ++at)
        hash = (hash ^ static_cast<std::uint8_t>(base[at])) * 1099511628211ull;
    return hash;
  }

  std::mutex mutex; ///< guards what follows
  /// Each holder's current bytes; the host's entry always exists.
  std::map<Holder, ByteSet> current;
  std::map<Holder, std::unique_ptr<DeviceCopy>> copies;

  /// Makes `ranges` (ordered, disjoint) current on the host, from the
  /// devices that hold what it lacks. Called with `mutex` held.
  void fetchToHost(std::span<const Bytes> ranges);
  void fetchToHost(Bytes range) {
    fetchToHost(std::span<const Bytes>(&range, 1));
  }
  /// `holder` alone holds `ranges` (ordered, disjoint) now. Called with
  /// `mutex` held.
  void moveTo(Holder holder, std::span<const Bytes> ranges) {
    for (auto &[other, set] : current)
      if (other != holder)
        set.removeSorted(ranges);
    current[holder].addSorted(ranges);
  }
};

namespace {

std::atomic<std::uint64_t> bytesToDevices{0}, bytesToHost{0},
    bytesFromRanksForLoops{0}, bytesFromRanksToGather{0};
std::atomic<RankLayer *> rankLayer{nullptr};

/// copyCost()'s lines, by holder and direction. Never destroyed: loops may
/// run during exit.
struct CopyCosts {
  std::mutex mutex;
  std::map<std::pair<Holder, Direction>, CopyCost> lines;
};

CopyCosts &copyCosts() {
  static CopyCosts *const instance = new CopyCosts;
  return *instance;
}

/// The resident arrays. Never destroyed: loops may run during exit.
struct Registry {
  std::shared_mutex mutex;
  std::vector<std::unique_ptr<Array>> arrays;
  std::atomic<std::size_t> count{0};
};

Registry &registry() {
  static Registry *const instance = new Registry;
  return *instance;
}

std::string describe(const void *data, std::size_t bytes) {
  return "the " + std::to_string(bytes) + " bytes at " +
         std::to_string(reinterpret_cast<std::uintptr_t>(data));
}

/// The bytes of [first, last) within `array`, if any.
bool overlap(const Array &array, const std::byte *first, const std::byte *last,
             Bytes &range) {
  const std::byte *from = std::max<const std::byte *>(first, array.base);
  const std::byte *to =
      std::min<const std::byte *>(last, array.base + array.bytes);
  if (from >= to)
    return false;
  range = {static_cast<std::size_t>(from - array.base),
           static_cast<std::size_t>(to - array.base)};
  return true;
}

/// Calls `use(array, ranges)` for each resident array that any of
/// `ranges` (bytes from `base`, ordered, disjoint) overlaps, with those
/// ranges cut to it, as bytes of it, and its mutex held.
template <class Use>
void forEachOverlap(const std::byte *base, std::span<const Bytes> ranges,
                    Use use) {
  if (ranges.empty())
    return;
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays) {
    std::vector<Bytes> within;
    for (const Bytes &range : ranges)
      if (Bytes cut;
          overlap(*array, base + range.first, base + range.last, cut))
        within.push_back(cut);
    if (within.empty())
      continue;
    std::lock_guard arrayLock(array->mutex);
    use(*array, std::span<const Bytes>(within));
  }
}

} // namespace

void Array::fetchToHost(std::span<const Bytes> ranges) {
  ByteSet &host = current[nullptr];
  for (auto &[holder, set] : current) {
    if (!holder)
      continue;
    // What the host still lacks that this device holds (two devices may
    // hold the same bytes: one download each). Only those bytes: a device
    // may count as holding bytes whose upload is still in flight, which
    // the host already has.
    for (const Bytes &range : ranges)
      for (const Bytes &part : set.within(range))
        for (const Bytes &gap : host.missing(part)) {
          const auto started = std::chrono::steady_clock::now();
          copies.at(holder)->download(gap, base);
          copied(holder, Direction::ToHost, gap.size(),
                 std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - started)
                     .count());
          bytesToHost += gap.size();
          host.add(gap);
        }
  }
}

void begin(std::span<const Mapping> arrays) {
  Registry &r = registry();
  std::unique_lock lock(r.mutex);
  for (const Mapping &mapping : arrays) {
    if (!mapping.data || mapping.bytes == 0)
      throw std::invalid_argument("fpm_data_begin: an array with no data or "
                                  "no bytes");
    const auto *first = static_cast<const std::byte *>(mapping.data);
    Array *same = nullptr;
    for (const std::unique_ptr<Array> &array : r.arrays) {
      Bytes range;
      if (!overlap(*array, first, first + mapping.bytes, range))
        continue;
      if (array->base != first || array->bytes != mapping.bytes)
        throw std::invalid_argument(
            "fpm_data_begin: " + describe(mapping.data, mapping.bytes) +
            " overlap the resident array of " +
            describe(array->base, array->bytes) +
            " without being it: map an array once, whole");
      same = array.get();
    }
    if (same) {
      ++same->count;
      continue;
    }
    r.arrays.push_back(std::make_unique<Array>(mapping));
    r.count.store(r.arrays.size());
  }
}

void end(std::span<const Mapping> arrays) {
  // Outside the registry's lock: the layer makes the host current as a
  // loop's host side does.
  if (RankLayer *layer = rankLayer.load())
    for (const Mapping &mapping : arrays) {
      Registry &r = registry();
      std::shared_lock lock(r.mutex);
      auto found = std::ranges::find_if(r.arrays, [&](const auto &array) {
        return array->base == mapping.data && array->bytes == mapping.bytes;
      });
      if (found == r.arrays.end() || (*found)->count > 1 ||
          ((*found)->map != Map::Out && (*found)->map != Map::InOut))
        continue;
      std::byte *const base = (*found)->base;
      lock.unlock();
      layer->gather(base, base + mapping.bytes);
    }
  std::vector<const std::byte *> released;
  Registry &r = registry();
  std::unique_lock lock(r.mutex);
  for (const Mapping &mapping : arrays) {
    auto found = std::ranges::find_if(r.arrays, [&](const auto &array) {
      return array->base == mapping.data && array->bytes == mapping.bytes;
    });
    if (found == r.arrays.end())
      throw std::invalid_argument(
          "fpm_data_end: " + describe(mapping.data, mapping.bytes) +
          " are not a resident array (fpm_data_begin "
          "maps them)");
    Array &array = **found;
    if (--array.count > 0)
      continue;
    {
      std::lock_guard arrayLock(array.mutex);
      if (array.map == Map::Out || array.map == Map::InOut)
        array.fetchToHost({0, array.bytes});
    }
    released.push_back(array.base);
    r.arrays.erase(found);
    r.count.store(r.arrays.size());
  }
  lock.unlock();
  if (RankLayer *layer = rankLayer.load())
    for (const std::byte *base : released)
      layer->released(base);
}

void updateHost(const void *data, std::size_t bytes) {
  auto *first = static_cast<std::byte *>(const_cast<void *>(data));
  if (RankLayer *layer = rankLayer.load())
    layer->gather(first, first + bytes);
  acquireHost(first, first + bytes);
}

void updateDevices(const void *data, std::size_t bytes) {
  const auto *first = static_cast<const std::byte *>(data);
  hostWrote(first, first + bytes);
  if (RankLayer *layer = rankLayer.load())
    layer->wroteEverywhere(first, first + bytes);
}

void setRankLayer(RankLayer *layer) { rankLayer.store(layer); }

std::vector<std::span<std::byte>> residentArrays(const std::byte *first,
                                                 const std::byte *last) {
  std::vector<std::span<std::byte>> found;
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays)
    if (Bytes range; overlap(*array, first, last, range))
      found.emplace_back(array->base, array->bytes);
  return found;
}

bool active() { return registry().count.load(std::memory_order_relaxed) > 0; }

Array *find(const void *data, std::size_t bytes) {
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays)
    if (array->base == data && bytes <= array->bytes)
      return array.get();
  return nullptr;
}

DeviceCopy &deviceCopy(
    Array &array, Holder holder,
    const std::function<std::unique_ptr<DeviceCopy>(std::size_t)> &make) {
  std::lock_guard lock(array.mutex);
  std::unique_ptr<DeviceCopy> &copy = array.copies[holder];
  if (!copy)
    copy = make(array.bytes);
  return *copy;
}

std::vector<Bytes> prepareRead(Array &array, Holder holder,
                               std::span<const Bytes> ranges) {
  std::lock_guard lock(array.mutex);
  ByteSet &held = array.current[holder];
  std::vector<Bytes> uploads;
  for (const Bytes &range : ranges)
    for (const Bytes &gap : held.missing(range))
      uploads.push_back(gap);
  array.fetchToHost(uploads);
  for (const Bytes &upload : uploads) {
    held.add(upload);
    bytesToDevices += upload.size();
  }
  return uploads;
}

void wrote(Array &array, Holder holder, std::span<const Bytes> ranges) {
  std::lock_guard lock(array.mutex);
  if (std::ranges::is_sorted(ranges, {}, &Bytes::first)) {
    array.moveTo(holder, ranges);
    return;
  }
  for (const Bytes &range : ranges)
    array.moveTo(holder, std::span<const Bytes>(&range, 1));
}

void acquireHost(const std::byte *first, const std::byte *last) {
  const Bytes all{0, static_cast<std::size_t>(last - first)};
  forEachOverlap(first, std::span<const Bytes>(&all, 1),
                 [](Array &array, std::span<const Bytes> ranges) {
                   array.fetchToHost(ranges);
                 });
}

void hostWrote(const std::byte *first, const std::byte *last) {
  const Bytes all{0, static_cast<std::size_t>(last - first)};
  forEachOverlap(first, std::span<const Bytes>(&all, 1),
                 [](Array &array, std::span<const Bytes> ranges) {
                   array.moveTo(nullptr, ranges);
                 });
}

void acquireHostAll() {
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays) {
    std::lock_guard arrayLock(array->mutex);
    array->fetchToHost({0, array->bytes});
  }
}

void hostWroteAll() {
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays) {
    std::lock_guard arrayLock(array->mutex);
    const Bytes whole{0, array->bytes};
    array->moveTo(nullptr, std::span<const Bytes>(&whole, 1));
  }
}

void forget(Holder holder) {
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays) {
    std::lock_guard arrayLock(array->mutex);
    auto held = array->current.find(holder);
    if (held == array->current.end())
      continue;
    // What only it holds: the host's gaps within its bytes.
    ByteSet &host = array->current[nullptr];
    for (const Bytes &range : std::vector(held->second.ranges().begin(),
                                          held->second.ranges().end()))
      for (const Bytes &gap : host.missing(range)) {
        array->copies.at(holder)->download(gap, array->base);
        bytesToHost += gap.size();
        host.add(gap);
      }
    array->current.erase(held);
  }
}

std::vector<Bytes> rectBytes(std::span<const SectionRect> rects,
                             std::size_t size) {
  std::vector<Bytes> bytes;
  for (const SectionRect &rect : rects)
    for (std::int64_t r = 0; r < rect.rows; ++r) {
      const auto first =
          static_cast<std::size_t>(rect.first + r * rect.pitch) * size;
      bytes.push_back(
          {first, first + static_cast<std::size_t>(rect.width) * size});
    }
  return bytes;
}

/// `rects` without elements below 0: an over-declared input (a[i-1:3] at
/// i = 0) reaches none that a region maps.
std::vector<SectionRect> fromElementZero(std::span<const SectionRect> rects) {
  return clipRects(rects, 0, std::numeric_limits<std::int64_t>::max());
}

void copied(Holder holder, Direction direction, std::size_t bytes,
            double seconds) {
  CopyCosts &costs = copyCosts();
  const std::lock_guard lock(costs.mutex);
  costs.lines[{holder, direction}].add(bytes, seconds);
}

CopyCost copyCost(Holder holder, Direction direction) {
  CopyCosts &costs = copyCosts();
  const std::lock_guard lock(costs.mutex);
  const auto line = costs.lines.find({holder, direction});
  return line == costs.lines.end() ? CopyCost{} : line->second;
}

double readSeconds(const void *data, std::size_t size,
                   std::span<const SectionRect> rects, Holder reader) {
  double seconds = 0;
  forEachOverlap(
      static_cast<const std::byte *>(data),
      rectBytes(fromElementZero(rects), size),
      [&](Array &array, std::span<const Bytes> ranges) {
        static const ByteSet none;
        const ByteSet &host = array.current[nullptr];
        const auto found = array.current.find(reader);
        const ByteSet &held =
            found == array.current.end() ? none : found->second;
        std::map<Holder, std::size_t> downloads; // to the host, by device
        std::size_t uploads = 0;                 // to a device reader
        for (const Bytes &range : ranges)
          for (const Bytes &gap : held.missing(range)) {
            if (reader)
              uploads += gap.size();
            for (const auto &[holder, set] : array.current)
              if (holder && holder != reader)
                for (const Bytes &part : set.within(gap))
                  for (const Bytes &lack : host.missing(part))
                    downloads[holder] += lack.size();
          }
        for (const auto &[holder, bytes] : downloads)
          seconds += copyCost(holder, Direction::ToHost).seconds(bytes);
        if (uploads > 0)
          seconds += copyCost(reader, Direction::ToDevice).seconds(uploads);
      });
  return seconds;
}

void acquireHost(const void *data, std::size_t size,
                 std::span<const SectionRect> rects) {
  forEachOverlap(static_cast<const std::byte *>(data),
                 rectBytes(fromElementZero(rects), size),
                 [](Array &array, std::span<const Bytes> ranges) {
                   array.fetchToHost(ranges);
                 });
}

void hostWrote(const void *data, std::size_t size,
               std::span<const SectionRect> rects) {
  forEachOverlap(static_cast<const std::byte *>(data),
                 rectBytes(fromElementZero(rects), size),
                 [](Array &array, std::span<const Bytes> ranges) {
                   array.moveTo(nullptr, ranges);
                 });
}

void checkpoint() {
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays) {
    std::lock_guard arrayLock(array->mutex);
    array->mirrored = array->mirroredChecksum();
  }
}

std::vector<std::string> changedSinceCheckpoint() {
  std::vector<std::string> changed;
  Registry &r = registry();
  std::shared_lock lock(r.mutex);
  for (const std::unique_ptr<Array> &array : r.arrays) {
    std::lock_guard arrayLock(array->mutex);
    if (array->mirroredChecksum() != array->mirrored)
      changed.push_back(array->name.empty()
                            ? describe(array->base, array->bytes)
                            : "'" + array->name + "'");
  }
  return changed;
}

Traffic traffic() {
  return {bytesToDevices.load(), bytesToHost.load(),
          bytesFromRanksForLoops.load(), bytesFromRanksToGather.load()};
}

void countFromRanks(std::uint64_t forLoops, std::uint64_t toGather) {
  bytesFromRanksForLoops += forLoops;
  bytesFromRanksToGather += toGather;
}

} // namespace fpm::residency
