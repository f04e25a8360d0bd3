//===- support/atomic_file.cpp - Whole files, written atomically ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "support/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace fpm {
namespace {

[[noreturn]] void fail(const std::filesystem::path &path,
                       const std::string &what, int error) {
  throw std::runtime_error(path.string() + ": " + what + ": " +
                           std::strerror(error));
}

} // namespace

void writeFileAtomically(const std::filesystem::path &path,
                         std::string_view bytes) {
  // The temporary lives beside the target so that rename() stays within
  // one file system, which is what makes it atomic.
  std::filesystem::path folder = path.parent_path();
  if (folder.empty())
    folder = ".";
  std::string temporary =
      (folder / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    fail(path, "cannot create a temporary file in '" + folder.string() + "'",
         errno);

  const char *data = bytes.data();
  std::size_t left = bytes.size();
  int error = 0;
  while (left > 0 && error == 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno != EINTR)
      error = errno;
    else if (written > 0) {
      data += written;
      left -= static_cast<std::size_t>(written);
    }
  }
  // Without fsync a crash soon after the rename can leave an empty file
  // under the final name on some file systems.
  if (error == 0 && ::fsync(fd) != 0)
    error = errno;
  // mkstemp creates the file 0600; these are ordinary files.
  if (error == 0 && ::fchmod(fd, 0644) != 0)
    error = errno;
  if (::close(fd) != 0 && error == 0)
    error = errno;
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0)
    error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    fail(path, "cannot write", error);
  }
}

std::string readFile(const std::filesystem::path &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, "cannot open", errno);
  std::string bytes;
  char buffer[1 << 16];
  int error = 0;
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      error = errno;
    if (got <= 0)
      break;
    bytes.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  if (error != 0)
    fail(path, "cannot read", error);
  return bytes;
}

} // namespace fpm
