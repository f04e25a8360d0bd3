//===- support/hash.hpp - A stable hash of bytes ---------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: fnv1a(), a 64-bit hash of bytes that is the same
// on every run and machine (std::hash is not), for names and checksums that
// outlive the process: cache files, shortened profile file names.
//
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <string_view>

namespace fpm {

/// FNV-1a, 64 bits.
inline std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes)
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

} // namespace fpm
