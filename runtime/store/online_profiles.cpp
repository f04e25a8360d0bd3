//===- store/online_profiles.cpp - Profiles from running loops -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "store/online_profiles.hpp"

#include "store/profile_store.hpp"
#include "trace/trace.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
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
    bool due = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto [entry, fresh] = entries_.try_emplace(std::make_pair(loop, device),
                                                 deviceName, Samples(grain));
      for (const auto &[size, time] : samples)
        entry->second.samples.add(size, time);
      const std::int64_t now = trace::now();
      due = lastFlush_ != 0 && seconds(now - lastFlush_) > FlushSeconds;
      if (lastFlush_ == 0)
        lastFlush_ = now;
    }
    if (due)
      flush();
  }

  /// Merges every sample taken so far into the store.
  void flush() {
    std::vector<std::tuple<std::string, std::string, std::string,
                           std::vector<ProfilePoint>>>
        points;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      lastFlush_ = trace::now();
      for (auto &[key, entry] : entries_)
        if (!entry.samples.empty()) {
          points.emplace_back(key.first, key.second, entry.deviceName,
                              entry.samples.summarize());
          entry.samples.clear();
        }
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
  std::int64_t lastFlush_ = 0;
};

} // namespace

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
