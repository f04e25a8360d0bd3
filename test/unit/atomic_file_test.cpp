//===- atomic_file_test.cpp - Whole files, written and read ---------------===//

#include "support/atomic_file.hpp"

#include <gtest/gtest.h>

#include "support/scoped.hpp"
#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace fpm;

namespace {

using fpm::test::TempDir;
namespace fs = std::filesystem;

std::string contentOf(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The names in `dir`, sorted: what a write left behind.
std::vector<std::string> namesIn(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The message writeUserFile throws, or "" when it wrote.
std::string writeErrorOf(const fs::path &path, std::string_view bytes) {
  try {
    writeUserFile(path, bytes);
  } catch (const std::runtime_error &error) {
    return error.what();
  }
  return "";
}

bool isCharacterDevice(const char *path) {
  struct stat status{};
  return ::lstat(path, &status) == 0 && S_ISCHR(status.st_mode);
}

} // namespace

TEST(WriteUserFile, ARegularFileIsReplacedWhole) {
  TempDir dir;
  const fs::path file = dir.path() / "out.svg";
  writeUserFile(file, "first");
  writeUserFile(file, "second");
  EXPECT_EQ(contentOf(file), "second");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"out.svg"});
}

TEST(WriteUserFile, ALinkIsFollowedAndKept) {
  // The atomic rename replaced a symbolic link instead of writing its
  // target.
  TempDir dir;
  fs::create_directory(dir.path() / "real");
  const fs::path target = dir.path() / "real" / "trace.json";
  writeUserFile(target, "old");
  // A relative link to a relative link.
  fs::create_symlink("real/trace.json", dir.path() / "first");
  fs::create_symlink("first", dir.path() / "second");
  writeUserFile(dir.path() / "second", "new");
  EXPECT_EQ(contentOf(target), "new");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "first"));
  EXPECT_TRUE(fs::is_symlink(dir.path() / "second"));
  EXPECT_EQ(namesIn(dir.path() / "real"),
            std::vector<std::string>{"trace.json"});

  // A link to a file not there yet creates it.
  fs::create_symlink(dir.path() / "real" / "new.json", dir.path() / "dangling");
  writeUserFile(dir.path() / "dangling", "made");
  EXPECT_EQ(contentOf(dir.path() / "real" / "new.json"), "made");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "dangling"));

  // A failure names the link and where it led.
  fs::create_symlink(dir.path() / "missing" / "x.json", dir.path() / "broken");
  EXPECT_EQ(writeErrorOf(dir.path() / "broken", "x")
                .rfind((dir.path() / "broken").string() + " (a link to " +
                           (dir.path() / "missing" / "x.json").string() +
                           "): cannot ",
                       0),
            0u);
}

TEST(WriteUserFile, AFifoIsWrittenInPlace) {
  TempDir dir;
  const fs::path fifo = dir.path() / "trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::future<std::string> read =
      std::async(std::launch::async, [&] { return contentOf(fifo); });
  writeUserFile(fifo, "through the pipe");
  EXPECT_EQ(read.get(), "through the pipe");
  struct stat status{};
  ASSERT_EQ(::lstat(fifo.c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode));
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"trace.fifo"});
}

TEST(WriteUserFile, DevicesAreWrittenNotReplaced) {
  // As root, FPM_TRACE=/dev/null put a regular file in place of the device.
  ASSERT_TRUE(isCharacterDevice("/dev/null"));
  EXPECT_EQ(writeErrorOf("/dev/null", "discarded"), "");
  EXPECT_TRUE(isCharacterDevice("/dev/null"));

  // /dev/full is always full: an error naming it, not a silent success.
  ASSERT_TRUE(isCharacterDevice("/dev/full"));
  EXPECT_EQ(writeErrorOf("/dev/full", "lost"),
            "/dev/full: cannot write: No space left on device");
  EXPECT_TRUE(isCharacterDevice("/dev/full"));
}

TEST(WriteUserFile, AFolderIsAnError) {
  TempDir dir;
  EXPECT_EQ(writeErrorOf(dir.path(), "x"),
            dir.path().string() + ": is a directory");
}
