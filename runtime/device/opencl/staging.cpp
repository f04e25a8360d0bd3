//===- device/opencl/staging.cpp - Host memory for staged copies ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "device/opencl/staging.hpp"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace fpm {
namespace {

struct Block {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size = 0;
};

/// The released areas and their bytes, shared by every device's driver.
struct Pool {
  std::mutex mutex;
  std::vector<Block> free;
  std::size_t retained = 0;
};

Pool &pool() {
  // Never destroyed: a loop body that calls exit() runs the static
  // destructors while device threads of the call still stage chunks.
  static Pool &instance = *new Pool;
  return instance;
}

} // namespace

StagingArea::StagingArea(std::size_t bytes) {
  Pool &shared = pool();
  {
    const std::scoped_lock lock(shared.mutex);
    // The smallest released area that holds `bytes`.
    auto fits = shared.free.end();
    for (auto it = shared.free.begin(); it != shared.free.end(); ++it)
      if (it->size >= bytes &&
          (fits == shared.free.end() || it->size < fits->size))
        fits = it;
    if (fits != shared.free.end()) {
      bytes_ = std::move(fits->bytes);
      size_ = fits->size;
      shared.retained -= size_;
      shared.free.erase(fits);
      return;
    }
  }
  bytes_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
  size_ = bytes;
}

StagingArea::~StagingArea() {
  if (!bytes_)
    return;
  Pool &shared = pool();
  const std::scoped_lock lock(shared.mutex);
  if (size_ > RetainedBytes)
    return; // freed
  // Over the limit, the smallest areas go first: they serve fewer
  // requests, and a pool full of them would keep out the ones that fit.
  shared.retained += size_;
  shared.free.push_back({std::move(bytes_), size_});
  while (shared.retained > RetainedBytes) {
    auto smallest = std::ranges::min_element(shared.free, {}, &Block::size);
    shared.retained -= smallest->size;
    shared.free.erase(smallest);
  }
}

} // namespace fpm
