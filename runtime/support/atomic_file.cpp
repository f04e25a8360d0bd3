//===- support/atomic_file.cpp - Whole files, written atomically ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "support/atomic_file.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace fpm {
namespace {

[[noreturn]] void fail(const std::filesystem::path &path,
                       const std::string &what, int error) {
  throw std::runtime_error(path.string() + ": " + what + ": " +
                           std::strerror(error));
}

/// What a file that is not a regular one is, for messages.
std::string kindOf(mode_t mode) {
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a file";
}

/// Throws unless `mode` is a regular file's.
void requireRegular(const std::filesystem::path &path, mode_t mode) {
  if (S_ISDIR(mode))
    throw std::runtime_error(path.string() + ": is a directory");
  if (!S_ISREG(mode))
    throw std::runtime_error(path.string() + ": not a regular file (" +
                             kindOf(mode) + ")");
}

/// Closes a descriptor at scope exit.
class Descriptor {
public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  int get() const { return fd_; }
  /// Gives the descriptor up, to close it and see the error.
  int release() { return std::exchange(fd_, -1); }

private:
  int fd_;
};

/// How long a FIFO may have no reader when it is opened, and a reader may
/// take nothing, before a write in place gives up: a trace written at exit
/// must not keep the program alive for ever.
constexpr std::chrono::milliseconds FifoReaderWait{2000};
constexpr int StalledWriteMs = 10000;

/// Writes all of `bytes` to `fd`, which may be non-blocking; 0, or the
/// errno of the failure (ETIMEDOUT: nothing was taken for StalledWriteMs).
int writeAll(int fd, std::string_view bytes) {
  const char *data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd ready{fd, POLLOUT, 0};
      const int polled = ::poll(&ready, 1, StalledWriteMs);
      if (polled == 0)
        return ETIMEDOUT;
      if (polled < 0 && errno != EINTR)
        return errno;
      continue;
    }
    if (written < 0)
      return errno;
    if (written == 0)
      return EIO;
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  return 0;
}

/// Opens `path` as it is and writes `bytes` over what it holds, never
/// waiting without a bound: a FIFO that no process reads (opening it
/// would wait for one) is given FifoReaderWait to get a reader, and a
/// reader StalledWriteMs to take each part.
void writeInPlace(const std::filesystem::path &path, std::string_view bytes) {
  const auto giveUp = std::chrono::steady_clock::now() + FifoReaderWait;
  int opened = -1;
  for (;;) {
    opened = ::open(path.c_str(),
                    O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat status{};
    if (opened >= 0 || errno != ENXIO || ::stat(path.c_str(), &status) != 0 ||
        !S_ISFIFO(status.st_mode))
      break;
    if (std::chrono::steady_clock::now() >= giveUp)
      throw std::runtime_error(
          path.string() + ": a FIFO that no process reads (waited " +
          std::to_string(FifoReaderWait.count() / 1000) +
          " s); nothing written: start its reader first, or name a file");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Descriptor fd(opened);
  if (fd.get() < 0)
    fail(path, "cannot open", errno);
  if (int error = writeAll(fd.get(), bytes); error == ETIMEDOUT)
    throw std::runtime_error(path.string() + ": its reader took nothing for " +
                             std::to_string(StalledWriteMs / 1000) +
                             " s; the rest is not written");
  else if (error != 0)
    fail(path, "cannot write", error);
  if (::close(fd.release()) != 0)
    fail(path, "cannot write", errno);
}

/// Where the chain of symbolic links from `path` ends (the path of a file
/// that may not exist yet), or nullopt when it passes through /proc, whose
/// links stand for open files rather than name them (/dev/stdout is
/// /proc/self/fd/1).
std::optional<std::filesystem::path>
linkTarget(const std::filesystem::path &path) {
  std::filesystem::path at = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (at.lexically_normal().string().starts_with("/proc/"))
      return std::nullopt;
    struct stat status{};
    if (::lstat(at.c_str(), &status) != 0 || !S_ISLNK(status.st_mode))
      return at;
    std::error_code error;
    std::filesystem::path next = std::filesystem::read_symlink(at, error);
    if (error)
      fail(path, "cannot follow the link", error.value());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  fail(path, "cannot follow the link", ELOOP);
}

} // namespace

void writeUserFile(const std::filesystem::path &path, std::string_view bytes) {
  struct stat status{};
  if (::stat(path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode))
      throw std::runtime_error(path.string() + ": is a directory");
    // A device or a FIFO is the user's to write to, not ours to replace
    // (as root, a rename would put a regular file in place of /dev/null).
    if (!S_ISREG(status.st_mode))
      return writeInPlace(path, bytes);
  }
  std::optional<std::filesystem::path> target = linkTarget(path);
  if (!target)
    return writeInPlace(path, bytes);
  try {
    writeFileAtomically(*target, bytes);
  } catch (const std::runtime_error &error) {
    // Name the file as the user did, and where the link led.
    std::string message = error.what();
    if (*target != path && message.starts_with(target->string() + ": "))
      message = path.string() + " (a link to " + target->string() + ")" +
                message.substr(target->string().size());
    throw std::runtime_error(message);
  }
}

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

std::string readRegularFile(const std::filesystem::path &path,
                            std::uintmax_t maxBytes) {
  // Opening a device can do something (a tape rewinds); look first.
  struct stat status{};
  if (::stat(path.c_str(), &status) != 0)
    fail(path, "cannot open", errno);
  requireRegular(path, status.st_mode);
  // Without blocking, in case a FIFO took the file's place since: opening
  // one for reading would wait for a writer.
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0)
    fail(path, "cannot open", errno);
  if (::fstat(fd.get(), &status) != 0)
    fail(path, "cannot read", errno);
  requireRegular(path, status.st_mode);
  auto tooLarge = [&] {
    throw std::runtime_error(path.string() + ": larger than " +
                             std::to_string(maxBytes) + " bytes");
  };
  if (static_cast<std::uintmax_t>(status.st_size) > maxBytes)
    tooLarge();

  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      fail(path, "cannot read", errno);
    if (got == 0)
      return bytes;
    // It may have grown since fstat.
    if (bytes.size() + static_cast<std::size_t>(got) > maxBytes)
      tooLarge();
    bytes.append(buffer, static_cast<std::size_t>(got));
  }
}

} // namespace fpm
