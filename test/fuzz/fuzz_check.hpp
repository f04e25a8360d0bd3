//===- fuzz_check.hpp - What a fuzz target checks besides crashes -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FUZZ_CHECK(condition, message): a property of the code under test that
// the input broke. It prints the message and aborts, so that libFuzzer
// reports the input as a crash and keeps it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(condition, message)                                         \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__,     \
                   __LINE__, #condition, std::string(message).c_str());        \
      std::abort();                                                            \
    }                                                                          \
  } while (false)

namespace fpm::fuzz {

/// The longest error message a bad input may get: a file name, a field and
/// an excerpt of the value (support/text.hpp), never the whole input.
inline constexpr std::size_t MaxMessageBytes = 1024;

} // namespace fpm::fuzz
