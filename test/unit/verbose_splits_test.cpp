//===- verbose_splits_test.cpp - FPM_VERBOSE's lines about splits ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A loop whose trip count changes from call to call (a triangular solver)
// prints its first few splits under FPM_VERBOSE, then one line, and at exit
// how many splits it had; not one line per call.
//
//===----------------------------------------------------------------------===//

#include "exec/verbose_splits.hpp"
#include "fpm/fpm.h"

#include <gtest/gtest.h>

#include "support/loops.hpp"
#include "support/scoped.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace {

using fpm::test::ScopedEnv;
using fpm::test::ScopedThreads;

int body(std::int64_t, std::int64_t, void *) { return 0; }

std::size_t lines(const std::string &text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(VerboseSplitsTest, ATriangularLoopPrintsItsFirstSplitsThenACount) {
  fpm::resetVerboseSplits();
  ScopedThreads team(2);
  ScopedEnv verbose("FPM_VERBOSE", "1");
  ScopedEnv devices("FPM_DEVICES", "cpu");
  fpm_loop loop = fpm::test::namedLoop("tri.solve", "equal");
  loop.file = "tri.c";
  loop.line = 7;
  testing::internal::CaptureStderr();
  for (std::int64_t n = 1; n <= 200; ++n)
    ASSERT_EQ(fpm_parallel_for(&loop, n, body, nullptr), FPM_OK)
        << fpm_last_error();
  // The same splits again print nothing.
  for (std::int64_t n = 1; n <= 10; ++n)
    ASSERT_EQ(fpm_parallel_for(&loop, n, body, nullptr), FPM_OK);
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines(printed), fpm::VerboseSplitsPrinted + 1u) << printed;
  EXPECT_NE(printed.find("fpm: loop 'tri.solve' (tri.c:7): 5 iterations"),
            std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("6 iterations"), std::string::npos) << printed;
  EXPECT_NE(printed.find("fpm: loop 'tri.solve' (tri.c:7): further splits of "
                         "this loop are not printed"),
            std::string::npos)
      << printed;
  EXPECT_EQ(fpm::verboseSplitSummary(),
            "fpm: loop 'tri.solve' (tri.c:7): 200 splits, 5 printed\n");
}

TEST(VerboseSplitsTest, EachLoopHasItsOwnCount) {
  fpm::resetVerboseSplits();
  testing::internal::CaptureStderr();
  for (int k = 0; k < 3; ++k)
    fpm::printSplit("a", "loop 'a'", std::to_string(k), "a\n");
  for (int k = 0; k < 8; ++k)
    fpm::printSplit("b", "loop 'b'", std::to_string(k), "b\n");
  fpm::printSplit("a", "loop 'a'", "0", "a\n");
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, "a\na\na\nb\nb\nb\nb\nb\nfpm: loop 'b': further splits "
                     "of this loop are not printed; their count comes at "
                     "exit\n");
  EXPECT_EQ(fpm::verboseSplitSummary(), "fpm: loop 'b': 8 splits, 5 printed\n");
  fpm::resetVerboseSplits();
}

} // namespace
