//===- store/online_profiles.cpp - Profiles from running loops -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "store/online_profiles.hpp"

#include "store/profile_store.hpp"
#include "trace/trace.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace fpm {
namespace {

double seconds(std::int64_t nanoseconds) {
  return static_cast<double>(nanoseconds) * 1e-9;
}

//===----------------------------------------------------------------------===//
// Online profiling: what named loops' chunks took on each PE, merged into
// the profile store (store/) at exit and at most every FlushSeconds.
//===----------------------------------------------------------------------===//

constexpr double FlushSeconds = 30;

/// `size` rounded to the nearest multiple of `grain` (at least one), and
/// from 32 grains on to 5 significant bits of grains (ProfileRecorder).
std::int64_t coarseBucket(std::int64_t size, std::int64_t grain) {
  grain = std::max<std::int64_t>(grain, 1);
  // Halves up, without the overflow of size + grain / 2.
  std::int64_t units = size / grain;
  if (2 * (size % grain) >= grain)
    ++units;
  units = std::max<std::int64_t>(units, 1);
  const int drop = std::bit_width(static_cast<std::uint64_t>(units)) - 5;
  if (drop > 0) {
    const std::int64_t half = std::int64_t{1} << (drop - 1);
    units = (units >> drop) + ((units & (2 * half - 1)) >= half ? 1 : 0);
    units <<= drop;
  }
  // Overflow only past 2^62 iterations: keep the exact multiple there.
  return units <= std::numeric_limits<std::int64_t>::max() / grain
             ? units * grain
             : size / grain * grain;
}

class OnlineProfiles {
public:
  /// The process's, never destroyed (it flushes from an atexit handler,
  /// after static destructors may have run).
  static OnlineProfiles &instance() {
    static OnlineProfiles *const profiles = [] {
      auto *created = new OnlineProfiles; // deliberately never deleted
      std::atexit([] { instance().flush(); });
      return created;
    }();
    return *profiles;
  }

  /// The stored profile of `loop` on PE `device`, read once per process
  /// (a bad file is reported once by the store and is nullopt).
  std::optional<Profile> stored(const std::string &loop,
                                const std::string &device) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(loop, device);
    if (auto it = loaded_.find(key); it != loaded_.end())
      return it->second;
    std::optional<Profile> profile;
    if (const std::filesystem::path dir = profileDirectory(); !dir.empty())
      profile = ProfileStore(dir).load(loop, device);
    loaded_.emplace(key, profile);
    return profile;
  }

  void record(const std::string &loop, const std::string &device,
              const std::string &deviceName, std::int64_t grain,
              std::span<const Sample> samples) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto [entry, fresh] = entries_.try_emplace(std::make_pair(loop, device),
                                                 deviceName, Samples(grain));
      for (const auto &[size, time] : samples)
        entry->second.samples.add(size, time);
    }
    flushIfDue(trace::now());
  }

  ProfileRecorder &recorder(std::string_view loop, std::string_view device,
                            std::string_view deviceName) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto key = std::make_pair(std::string(loop), std::string(device));
    std::unique_ptr<ProfileRecorder> &slot = recorders_[key];
    if (!slot)
      slot = std::make_unique<ProfileRecorder>(
          std::move(key.first), std::move(key.second), std::string(deviceName));
    return *slot;
  }

  /// Flushes when FlushSeconds have passed since the last flush, or since
  /// the first timing before the first: on whichever thread records then,
  /// which one atomic load decides for the others.
  void flushIfDue(std::int64_t now) {
    std::int64_t last = lastFlush_.load(std::memory_order_relaxed);
    if (last == 0) {
      lastFlush_.compare_exchange_strong(last, now, std::memory_order_relaxed);
      return;
    }
    if (seconds(now - last) > FlushSeconds &&
        lastFlush_.compare_exchange_strong(last, now,
                                           std::memory_order_relaxed))
      flush();
  }

  /// Merges every sample taken so far into the store.
  void flush() {
    std::vector<std::tuple<std::string, std::string, std::string,
                           std::vector<ProfilePoint>>>
        points;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      lastFlush_.store(trace::now(), std::memory_order_relaxed);
      for (auto &[key, entry] : entries_)
        if (!entry.samples.empty()) {
          points.emplace_back(key.first, key.second, entry.deviceName,
                              entry.samples.summarize());
          entry.samples.clear();
        }
      // Each recorder under its own lock, taken after this one (record()
      // never holds it while it flushes).
      for (auto &[key, recorder] : recorders_)
        if (std::vector<ProfilePoint> taken = recorder->take(); !taken.empty())
          points.emplace_back(key.first, key.second, recorder->deviceName(),
                              std::move(taken));
    }
    const std::filesystem::path dir = profileDirectory();
    if (points.empty() || dir.empty())
      return;
    ProfileStore store(dir);
    for (const auto &[loop, device, deviceName, fresh] : points) {
      try {
        store.merge(loop, device, deviceName, fresh);
      } catch (const std::exception &error) {
        static std::once_flag once;
        std::call_once(once, [&] {
          std::fprintf(stderr, "fpm: cannot store profiles: %s\n",
                       error.what());
        });
      }
    }
  }

private:
  OnlineProfiles() = default;

  struct Entry {
    Entry(std::string name, Samples taken)
        : deviceName(std::move(name)), samples(std::move(taken)) {}
    std::string deviceName;
    Samples samples;
  };
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;
  std::map<std::pair<std::string, std::string>, std::optional<Profile>> loaded_;
  std::map<std::pair<std::string, std::string>,
           std::unique_ptr<ProfileRecorder>>
      recorders_;
  std::atomic<std::int64_t> lastFlush_{0}; ///< 0: nothing recorded yet
};

} // namespace

ProfileRecorder::ProfileRecorder(std::string loop, std::string device,
                                 std::string deviceName)
    : loop_(std::move(loop)), device_(std::move(device)),
      deviceName_(std::move(deviceName)) {}

void ProfileRecorder::record(std::int64_t grain,
                             std::span<const Sample> samples,
                             std::int64_t now) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto &[size, time] : samples) {
      if (size <= 0 || !std::isfinite(time) || time <= 0)
        continue;
      const std::int64_t bucket = coarseBucket(size, grain);
      add(bucket,
          time * static_cast<double>(bucket) / static_cast<double>(size));
    }
  }
  OnlineProfiles::instance().flushIfDue(now);
}

void ProfileRecorder::add(std::int64_t size, double seconds) {
  ++clock_;
  Bucket *slot = nullptr;
  for (Bucket &bucket : buckets_) {
    if (bucket.size == size) {
      slot = &bucket;
      break;
    }
    // A free one, else the one used least recently.
    if (!slot || (slot->size != 0 &&
                  (bucket.size == 0 || bucket.lastUse < slot->lastUse)))
      slot = &bucket;
  }
  if (slot->size != size)
    *slot = Bucket{size, 0, 0, 0, {}};
  slot->lastUse = clock_;
  if (slot->count < BucketSamples) {
    slot->seconds[slot->count++] = seconds;
  } else {
    slot->seconds[slot->next] = seconds;
    slot->next = (slot->next + 1) % BucketSamples;
  }
}

std::vector<ProfilePoint> ProfileRecorder::take() {
  Samples taken(1, BucketSamples); // sizes are bucketed already
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (Bucket &bucket : buckets_) {
      for (std::size_t i = 0; i < bucket.count; ++i)
        taken.add(bucket.size, bucket.seconds[i]);
      bucket = Bucket{};
    }
  }
  return taken.empty() ? std::vector<ProfilePoint>{} : taken.summarize();
}

ProfileRecorder &profileRecorder(std::string_view loop, std::string_view device,
                                 std::string_view deviceName) {
  return OnlineProfiles::instance().recorder(loop, device, deviceName);
}

std::optional<Profile> storedProfile(const std::string &loop,
                                     const std::string &device) {
  return OnlineProfiles::instance().stored(loop, device);
}

void recordProfile(const std::string &loop, const std::string &device,
                   const std::string &deviceName, std::int64_t grain,
                   std::span<const Sample> samples) {
  OnlineProfiles::instance().record(loop, device, deviceName, grain, samples);
}

void flushProfiles() { OnlineProfiles::instance().flush(); }

} // namespace fpm
