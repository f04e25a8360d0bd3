//===- device/driver.hpp - What a PE driver needs of the executor -*- C++ -*-=//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A PE driver runs ranges of a loop's iterations on one processing element
// and says what became of each: done (and how long the PE was busy), or,
// when the PE fails, which ranges it did not finish. It draws its ranges
// from a WorkFeed, which the executor implements over its work pool: the
// executor decides who runs what (exec/), a driver only runs it. Drivers:
// the CPU's (cpu_driver.hpp) and OpenCL's (opencl/opencl_driver.hpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "data/sections.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace fpm {

/// The executor's side of one PE's driver: every call comes from the one
/// thread that runs the driver.
class WorkFeed {
public:
  /// The next range to run; nothing when the loop has none left for it.
  virtual std::optional<Range> next() = 0;
  /// `range` completed; the PE was busy for `seconds` on it (> 0).
  virtual void done(Range range, double seconds) = 0;
  /// The PE failed (`why`) and will take no more work: the `unfinished`
  /// ranges, handed out but not completed, must run elsewhere. Returns how
  /// many iterations moved.
  virtual std::int64_t fail(std::span<const Range> unfinished,
                            std::string_view why) = 0;
  /// True once the loop stops early (a body asked it to): a driver then
  /// starts nothing new.
  virtual bool stopped() const = 0;

protected:
  ~WorkFeed() = default;
};

/// Where a driver's chunks go in a trace (trace/trace.hpp): the loop's
/// name there and the driver's lane.
struct TraceTarget {
  std::string_view loop;
  int lane = 0;
};

} // namespace fpm
