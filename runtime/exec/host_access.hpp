//===- exec/host_access.hpp - CPU ranges in a data region ------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// In a data region (residency/), a CPU range (or one of a device that works
// in the host's memory, PeDevice::usesHostMemory()) reads and writes the
// host's copies of the arrays: before it runs, what of its read sections (in,
// inout) only a device holds comes back, and an inout section counts as the
// host's from then on (no other range of the call touches those elements:
// the loop is DOALL); an out section, which the range writes whole, counts
// as the host's once the range is done, and nothing of it comes back
// before (a range a body stops leaves it unspecified, as the loop does).
// The sections are the loop's (fpm_loop::data), else its kernel's; a loop
// that says neither gets every resident array, whole.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"
#include "device/driver.hpp"
#include "exec/loop_call.hpp"

#include <vector>

namespace fpm {

class HostAccess {
public:
  /// Does nothing when no region is open.
  explicit HostAccess(const LoopCall &call);
  bool needed() const { return active_; }
  /// Before CPU range `range` (the loop's logical iterations) runs, and
  /// after it completed.
  void before(Range range) const;
  void after(Range range) const;
  /// The seconds `reader` (a residency::Holder: the host, null, or a
  /// device) would spend now getting what range `range` reads
  /// (residency::readSeconds()); 0 for a loop that did not say.
  double readSeconds(Range range, const void *reader) const;

private:
  struct Section {
    const void *data = nullptr;
    std::size_t size = 0;
    ArgSection section;
    bool reads = false, writes = false;
  };
  std::vector<Section> sections_;
  bool active_ = false;
  bool whole_ = false; ///< the loop did not say what it touches
};

/// `feed` for a CPU driver, with `access.before()` of each range it gives.
class HostAccessFeed final : public WorkFeed {
public:
  HostAccessFeed(WorkFeed &feed, const HostAccess &access)
      : feed_(feed), access_(access) {}
  std::optional<Range> next() override {
    std::optional<Range> range = feed_.next();
    if (range)
      access_.before(*range);
    return range;
  }
  void done(Range range, double seconds) override {
    access_.after(range);
    feed_.done(range, seconds);
  }
  std::int64_t fail(std::span<const Range> unfinished,
                    std::string_view why) override {
    return feed_.fail(unfinished, why);
  }
  bool stopped() const override { return feed_.stopped(); }

private:
  WorkFeed &feed_;
  const HostAccess &access_;
};

} // namespace fpm
