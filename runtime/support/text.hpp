//===- support/text.hpp - Text for messages --------------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: excerpt(), the start of a value that an error
// message echoes, so that a bad value of a megabyte is not a message of a
// megabyte.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fpm {

/// The most bytes of a value an error message echoes.
inline constexpr std::size_t EchoedBytes = 40;

/// `text` when it has at most `limit` bytes, else its first bytes (never
/// part of a UTF-8 sequence) followed by "...".
inline std::string excerpt(std::string_view text,
                           std::size_t limit = EchoedBytes) {
  if (text.size() <= limit)
    return std::string(text);
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return std::string(text.substr(0, cut)) + "...";
}

} // namespace fpm
