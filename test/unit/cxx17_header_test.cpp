//===- cxx17_header_test.cpp - fpm.h and fpm.hpp as C++17 -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Built with CMAKE_CXX_STANDARD 17 (the runtime is C++20): the public
// headers must stay usable from C++17 programs. Exits non-zero on failure.
//
//===----------------------------------------------------------------------===//

#include "fpm/fpm.h"
#include "fpm/fpm.hpp"

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <vector>

static_assert(__cplusplus == 201703L, "this test must be built as C++17");

int main() {
  int failures = 0;
  std::vector<std::atomic<int>> seen(1000);
  fpm::parallelFor(0, 1000, [&](int i) { ++seen[i]; }, {"cxx17", "gss"});
  for (const std::atomic<int> &count : seen)
    failures += count.load() == 1 ? 0 : 1;
  try {
    fpm::parallelFor(0, 10, [](int) {}, {"cxx17", "nonsense"});
    ++failures;
  } catch (const std::invalid_argument &) {
  }
  if (fpm_trip_count(0, 10, 1, FPM_LT, 0) != 10)
    ++failures;
  std::printf("cxx17_header_test: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
