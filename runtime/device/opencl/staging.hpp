//===- device/opencl/staging.hpp - Staged copies' memory --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Where a device's staged copies pass through on the host: downloads of
// read-and-written sections, and the rows of an array of row pointers,
// gathered for an upload and scattered after a download. Areas go back to
// a pool when released and are handed out again, from range to range and
// call to call: a fresh area of tens of megabytes pays its page faults at
// every range (13-16 ms per 32 MB on the 2-core VM, against 2 ms for the
// copy into it). The pool keeps at most StagingArea::RetainedBytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <memory>

namespace fpm {

/// At least `bytes` bytes of host memory, not zero-filled (a staged copy
/// writes every byte before it is read), back to the pool when destroyed.
class StagingArea {
public:
  static constexpr std::size_t RetainedBytes = std::size_t{256} << 20;

  explicit StagingArea(std::size_t bytes);
  StagingArea(StagingArea &&) noexcept = default;
  StagingArea &operator=(StagingArea &&) noexcept = default;
  ~StagingArea();

  std::byte *get() const { return bytes_.get(); }

private:
  std::unique_ptr<std::byte[]> bytes_;
  std::size_t size_ = 0;
};

} // namespace fpm
