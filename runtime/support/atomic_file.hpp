//===- support/atomic_file.hpp - Whole files, written atomically -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: small pieces several folders share. Here: a file
// replaced as a whole or not at all (profiles, cached program binaries), so
// that a crash or a second process never sees half of one, and a file read
// whole.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace fpm {

/// Writes `bytes` to `path` through a temporary file in the same folder
/// that is flushed to disk, made 0644 and renamed over `path`: a reader
/// sees the old file or the new one, never part of one, and a failure
/// leaves no temporary behind. The folder must exist. Throws
/// std::runtime_error("PATH: cannot ...: <strerror>").
void writeFileAtomically(const std::filesystem::path &path,
                         std::string_view bytes);

/// Writes `bytes` to `path`, a file the user named (a trace, a figure), as
/// a shell's `>` would treat it, but never leaving half a file: a path that
/// is not a regular file (/dev/null, /dev/stdout, a FIFO) is opened and
/// written in place, never replaced; a symbolic link is followed and its
/// target written, atomically as writeFileAtomically does when the target
/// is a regular file or does not exist yet, the link kept; a regular file
/// is replaced atomically. Never waits without a bound: a FIFO that no
/// process reads within 2 s, or whose reader takes nothing for 10 s, is an
/// error. Throws std::runtime_error("PATH: is a directory"), ("PATH: a
/// FIFO that no process reads ...") or ("PATH: cannot ...: <strerror>"),
/// such as /dev/full's "PATH: cannot write: No space left on device".
void writeUserFile(const std::filesystem::path &path, std::string_view bytes);

/// The whole content of `path`. Throws
/// std::runtime_error("PATH: cannot ...: <strerror>").
std::string readFile(const std::filesystem::path &path);

/// The whole content of `path`, which must be a regular file (a symbolic
/// link to one is followed) of at most `maxBytes`: for files a program
/// reads because of their name, such as profiles. A FIFO, a device or a
/// directory in its place is an error, never a hang: the file is looked at
/// before it is opened, opened without blocking and looked at again.
/// Throws std::runtime_error("PATH: is a directory"), ("PATH: not a regular
/// file (a FIFO)"), ("PATH: larger than N bytes") or ("PATH: cannot ...:
/// <strerror>").
std::string readRegularFile(const std::filesystem::path &path,
                            std::uintmax_t maxBytes);

} // namespace fpm
