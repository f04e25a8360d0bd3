//===- device/opencl/opencl_program.hpp - Building programs -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What opencl.cpp's Device builds programs with: from source (errors with
// the build log), from a cached binary, and the format of the on-disk
// cache of binaries (FPM_CACHE_DIR), keyed by KeyHash.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "device/opencl/opencl.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace fpm::opencl {

// Drivers return C strings with their terminating NUL counted, and some pad
// device names with spaces.
std::string trimmed(std::string text);

// Two unrelated 64-bit hashes (FNV-1a and a multiply-rotate hash with a
// SplitMix64 finish) make a 128-bit cache key: stable across runs, builds
// and machines, which std::hash is not, and wide enough that two programs
// never share a file by accident. Not cryptographic: the cache trusts its
// folder.
class KeyHash {
public:
  void add(std::string_view bytes) {
    // The length first, so that ("ab", "c") and ("a", "bc") differ.
    std::uint64_t length = bytes.size();
    for (int i = 0; i < 8; ++i)
      addByte(static_cast<unsigned char>(length >> (8 * i)));
    for (char c : bytes)
      addByte(static_cast<unsigned char>(c));
  }
  /// Both hashes folded into one word, for a table in memory.
  std::uint64_t word() const { return fnv_ ^ finish(other_); }
  std::string hex() const {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::uint64_t word : {finish(fnv_), finish(other_)})
      for (int shift = 60; shift >= 0; shift -= 4)
        out += digits[(word >> shift) & 15];
    return out;
  }

private:
  void addByte(unsigned char byte) {
    fnv_ = (fnv_ ^ byte) * 0x100000001b3ULL;
    other_ = rotate((other_ ^ byte) * 0x9e3779b97f4a7c15ULL, 29) +
             0x632be59bd9b4e019ULL;
  }
  static std::uint64_t rotate(std::uint64_t x, int bits) {
    return (x << bits) | (x >> (64 - bits));
  }
  static std::uint64_t finish(std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  std::uint64_t fnv_ = 0xcbf29ce484222325ULL;
  std::uint64_t other_ = 0x243f6a8885a308d3ULL;
};

/// The largest cache file read: a driver's binary is a few MiB; a file far
/// larger is not one of ours, and reading it would cost seconds and memory.
inline constexpr std::uintmax_t MaxCacheFileBytes = std::uintmax_t{256} << 20;

/// A cache file: a header that holds `key` (KeyHash::hex() of everything
/// the binary depends on) and catches a truncated or damaged file, then
/// `binary`.
std::string encodeCacheFile(std::string_view key, std::string_view binary);
/// The binary in a cache file; empty when the file is not a whole one, or
/// is another key's (copied or renamed onto this key's name).
std::string_view decodeCacheFile(std::string_view key, std::string_view file);

/// Builds `source` for `device`. Throws Error naming `who`, with the build
/// log, when it does not build.
ProgramRef buildFromSource(cl_context context, cl_device_id device,
                           const std::string &source,
                           const std::string &options, const std::string &who);
/// The program built from a cached binary; null when the driver refuses it
/// (another driver version wrote it, say), which sends the caller back to
/// the source.
ProgramRef buildFromBinary(cl_context context, cl_device_id device,
                           std::string_view binary, const std::string &options);
/// The binary of a program built for one device; empty when the driver
/// has none to give.
std::string programBinary(cl_program program);

} // namespace fpm::opencl
