//===- residency/copy_cost.hpp - What moving bytes costs -------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The cost of one copy between the host and a device, learned from the
// copies a process made: seconds = latency + bytes * secondsPerByte, a
// least-squares line through the recent copies (older ones weigh less, so
// that it follows a link whose load changes). Inside a data region a row
// that changes PE moves its data, and this is what the split and the steals
// weigh that move by (exec/): on PoCL, whose device shares the host's cores,
// a read waits for the kernel that runs; over PCIe, bytes cost more than
// the call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace fpm::residency {

class CopyCost {
public:
  /// A copy of `bytes` took `seconds`.
  void add(std::size_t bytes, double seconds);
  /// Copies seen, and whether any was.
  double weight() const { return weight_; }
  bool known() const { return weight_ > 0; }
  /// What a copy of `bytes` takes, by the line (never below 0); 0 while
  /// nothing is known.
  double seconds(std::size_t bytes) const;
  /// The line's two terms (0 while nothing is known).
  double latency() const;
  double secondsPerByte() const;

  /// Each copy weighs this much less than the next: about the last 30
  /// copies count.
  static constexpr double Decay = 0.97;

private:
  // Weighted sums of x = bytes and y = seconds.
  double weight_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;
};

} // namespace fpm::residency
