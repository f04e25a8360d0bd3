//===- support/scoped.hpp - Test state restored at scope exit --*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the unit tests change for one scope and put back: an environment
// variable, the OpenMP team size, a temporary directory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <omp.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace fpm::test {

/// Sets (or, with nullopt, unsets) an environment variable for its scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::optional<std::string> old_;
};

/// Sets the OpenMP team size for its scope.
class ScopedThreads {
public:
  explicit ScopedThreads(int threads) : old_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~ScopedThreads() { omp_set_num_threads(old_); }
  ScopedThreads(const ScopedThreads &) = delete;
  ScopedThreads &operator=(const ScopedThreads &) = delete;

private:
  int old_;
};

/// A fresh temporary directory, removed with its contents.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "fpm-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()))
      path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace fpm::test
