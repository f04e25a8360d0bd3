//===- out_cover_test.cpp - Out sections an iteration writes whole --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// checkOutCover (lib/Analysis/LoopChecker.h) on small C files: whether each
// iteration of a partitioned loop provably writes every element of its `out`
// section, which lets the generated kernel take the array as OUT (not copied to
// the device); anything it cannot prove says why, and the kernel takes the
// array as INOUT.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecker.h"
#include "unit/snippet_loop.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace clang;

namespace {

/// What checkOutCover says of the out sections of the loop in `f` (the
/// first partitioned loop of the file, the outermost `for` of f), or Error
/// when the loop does not get that far.
struct Outcome {
  std::vector<fpm::OutCover> Covers;
  std::string Error;
};

/// The out sections of Code's loop in f, one OutCover each.
Outcome cover(const std::string &Code) {
  Outcome Out;
  const std::string Error =
      fpm::test::withSnippetLoop(Code, [&](const fpm::test::SnippetLoop &L) {
        fpm::CanonicalLoop Loop;
        fpm::LoopVariables Vars;
        if (!fpm::checkLoop(L.Ctx, L.Pragma, L.Fn, L.For, Loop, Vars)) {
          Out.Error = "checkLoop failed";
          return;
        }
        for (const fpm::OutCover &Cover :
             fpm::checkOutCover(L.Ctx, L.Pragma, L.Fn, L.For, *Loop.Var))
          Out.Covers.push_back(Cover);
      });
  if (Out.Error.empty())
    Out.Error = Error;
  EXPECT_EQ(Out.Error, "") << Code;
  return Out;
}

/// Whether the loop of Code writes its one out section whole; Why, the
/// reason when not.
bool whole(const std::string &Code, std::string *Why = nullptr) {
  Outcome Out = cover(Code);
  EXPECT_EQ(Out.Covers.size(), 1u) << Code;
  if (Out.Covers.size() != 1)
    return false;
  if (Why)
    *Why = Out.Covers[0].Why;
  return Out.Covers[0].Whole;
}

TEST(OutCoverTest, OneElementPerIteration) {
  EXPECT_TRUE(whole("void f(int n, const float *x, float *y) {\n"
                    "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    y[i] = x[i];\n"
                    "}\n"));
  // Through a local computed from the loop variable, after other work.
  EXPECT_TRUE(whole("void f(int n, const float *x, float *y) {\n"
                    "#pragma fpm partition in(x[0:n]) out(y[n - 1 - i:1])\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    int k = n - 1 - i;\n"
                    "    float s = x[i] * 2;\n"
                    "    if (s < 0) s = -s;\n"
                    "    y[k] = s;\n"
                    "  }\n"
                    "}\n"));
}

TEST(OutCoverTest, RowByAnInnerLoop) {
  EXPECT_TRUE(whole("void f(int n, const float *A, float *C) {\n"
                    "#pragma fpm partition in(A[0:n*n]) out(C[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int j = 0; j < n; ++j) {\n"
                    "      float s = 0;\n"
                    "      for (int k = 0; k < n; ++k) s += A[i*n + k];\n"
                    "      C[i*n + j] = s;\n"
                    "    }\n"
                    "}\n"));
  // C89: the inner variable declared before the loop, `<=` and `j += 1`.
  EXPECT_TRUE(whole("void f(int n, float *C) {\n"
                    "  int i, j;\n"
                    "#pragma fpm partition out(C[i*(n + 1):n + 1])\n"
                    "  for (i = 0; i < n; ++i)\n"
                    "    for (j = 0; j <= n; j += 1)\n"
                    "      C[i*(n + 1) + j] = 1.0f;\n"
                    "}\n"));
  // From 1 to n, written at j - 1.
  EXPECT_TRUE(whole("void f(int n, float *C) {\n"
                    "#pragma fpm partition out(C[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int j = 1; j < n + 1; ++j)\n"
                    "      C[i*n + j - 1] = j;\n"
                    "}\n"));
}

TEST(OutCoverTest, NestedInnerLoops) {
  // A plane of m rows of 8: row-major, j*8 + k.
  EXPECT_TRUE(whole("void f(int n, int m, float *V) {\n"
                    "#pragma fpm partition out(V[i*m*8:m*8])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int j = 0; j < m; ++j)\n"
                    "      for (int k = 0; k < 8; ++k)\n"
                    "        V[i*m*8 + j*8 + k] = i + j + k;\n"
                    "}\n"));
  // Column-major order is just as whole.
  EXPECT_TRUE(whole("void f(int n, int m, float *V) {\n"
                    "#pragma fpm partition out(V[i*m*8:m*8])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int k = 0; k < 8; ++k)\n"
                    "      for (int j = 0; j < m; ++j)\n"
                    "        V[i*m*8 + j*8 + k] = i + j + k;\n"
                    "}\n"));
  // With m rows of w, m = w = -1 is a section of 1 element that neither
  // loop writes.
  std::string Why;
  EXPECT_FALSE(whole("void f(int n, int m, int w, float *V) {\n"
                     "#pragma fpm partition out(V[i*m*w:m*w])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int j = 0; j < m; ++j)\n"
                     "      for (int k = 0; k < w; ++k)\n"
                     "        V[i*m*w + j*w + k] = i + j + k;\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'V[i*m*w + j*w + k]' is in loops of "
                 "which several run a number of times that is not a "
                 "constant: the product of their counts may be positive "
                 "where two of them run no iteration");
  // Rows of w written at j*m: overlapping, the section not covered.
  EXPECT_FALSE(whole("void f(int n, int m, int w, float *V) {\n"
                     "#pragma fpm partition out(V[i*m*w:m*w])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int j = 0; j < m; ++j)\n"
                     "      for (int k = 0; k < w; ++k)\n"
                     "        V[i*m*w + j*m + k] = i + j + k;\n"
                     "}\n"));
  // A loop around the write whose variable the index does not use must run.
  EXPECT_TRUE(whole("void f(int n, float *y) {\n"
                    "#pragma fpm partition out(y[i:1])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int t = 0; t < 3; ++t)\n"
                    "      y[i] = t;\n"
                    "}\n"));
  EXPECT_FALSE(whole("void f(int n, int m, float *y) {\n"
                     "#pragma fpm partition out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int t = 0; t < m; ++t)\n"
                     "      y[i] = t;\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the 'for' loop around the assignment to 'y[i]' may run no "
                 "iteration");
}

TEST(OutCoverTest, ConditionalWrite) {
  std::string Why;
  EXPECT_FALSE(whole("void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    if (x[i] > 0)\n"
                     "      y[i] = x[i];\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'y[i]' is conditional");
  EXPECT_FALSE(whole("void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    x[i] > 0 && (y[i] = x[i]);\n"
                     "}\n"));
  EXPECT_FALSE(whole("void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    switch (i % 2) { case 0: y[i] = x[i]; }\n"
                     "}\n"));
  // Both branches write: still not proven (one write must run each time).
  EXPECT_FALSE(whole("void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    if (x[i] > 0) y[i] = x[i]; else y[i] = 0;\n"
                     "}\n"));
  // A condition before the write decides nothing about it.
  EXPECT_TRUE(whole("void f(int n, const float *x, float *y) {\n"
                    "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    float v = x[i];\n"
                    "    if (v < 0) v = 0;\n"
                    "    y[i] = v;\n"
                    "  }\n"
                    "}\n"));
}

TEST(OutCoverTest, PartialRow) {
  std::string Why;
  EXPECT_FALSE(whole("void f(int n, const float *src, float *dst) {\n"
                     "#pragma fpm partition in(src[0:n*n]) out(dst[i*n:n])\n"
                     "  for (int i = 1; i < n - 1; ++i)\n"
                     "    for (int j = 1; j < n - 1; ++j)\n"
                     "      dst[i*n + j] = src[i*n + j - 1] + src[i*n + j];\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'dst[i*n + j]' writes elements 1 to n - 2 "
                 "of the section, which has elements 0 to n - 1");
  // The part named exactly is whole.
  EXPECT_TRUE(whole("void f(int n, const float *src, float *dst) {\n"
                    "#pragma fpm partition in(src[0:n*n]) "
                    "out(dst[i*n + 1:n - 2])\n"
                    "  for (int i = 1; i < n - 1; ++i)\n"
                    "    for (int j = 1; j < n - 1; ++j)\n"
                    "      dst[i*n + j] = src[i*n + j - 1] + src[i*n + j];\n"
                    "}\n"));
  // One element of a row.
  EXPECT_FALSE(whole("void f(int n, float *dst) {\n"
                     "#pragma fpm partition out(dst[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    dst[i*n] = 1;\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'dst[i*n]' writes element 0 of the "
                 "section, which has elements 0 to n - 1");
  // Every other element.
  EXPECT_FALSE(whole("void f(int n, float *dst) {\n"
                     "#pragma fpm partition out(dst[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int j = 0; j < n / 2; ++j)\n"
                     "      dst[i*n + 2*j] = 1;\n"
                     "}\n"));
}

TEST(OutCoverTest, CompoundAssignmentReads) {
  std::string Why;
  EXPECT_FALSE(whole("void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    y[i] += x[i];\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why,
            "the body has no assignment 'y[...] = ...' that fpm can follow");
  EXPECT_FALSE(whole("void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    y[i]++;\n"
                     "}\n"));
}

TEST(OutCoverTest, StructsAssignedWhole) {
  // A struct assigned whole writes its element; one member does not.
  EXPECT_TRUE(whole("typedef struct { double re, im; } cplx;\n"
                    "void f(int n, const cplx *x, cplx *y) {\n"
                    "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    cplx t = x[i];\n"
                    "    t.im = -t.im;\n"
                    "    y[i] = t;\n"
                    "  }\n"
                    "}\n"));
  std::string Why;
  EXPECT_FALSE(whole("typedef struct { double re, im; } cplx;\n"
                     "void f(int n, const cplx *x, cplx *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    y[i].re = x[i].re;\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why,
            "the body has no assignment 'y[...] = ...' that fpm can follow");
}

TEST(OutCoverTest, WriteInOtherLoops) {
  std::string Why;
  EXPECT_FALSE(whole("void f(int n, float *C) {\n"
                     "#pragma fpm partition out(C[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    int j = 0;\n"
                     "    while (j < n) { C[i*n + j] = 0; ++j; }\n"
                     "  }\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'C[i*n + j]' is in a loop other than "
                 "'for'");
  EXPECT_FALSE(whole("void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    int k = 0;\n"
                     "    do { y[i] = k; } while (++k < 3);\n"
                     "  }\n"
                     "}\n"));
  // A step of 2 writes every other element.
  EXPECT_FALSE(whole("void f(int n, float *C) {\n"
                     "#pragma fpm partition out(C[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int j = 0; j < n; j += 2)\n"
                     "      C[i*n + j] = 0;\n"
                     "}\n"));
  // A bound the inner loop changes.
  EXPECT_FALSE(whole("void f(int n, float *C) {\n"
                     "#pragma fpm partition out(C[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    int m = n;\n"
                     "    for (int j = 0; j < m; ++j) { C[i*n + j] = 0; "
                     "m = m - (j == 2); }\n"
                     "  }\n"
                     "}\n"));
}

TEST(OutCoverTest, InnerLoopsThatMayNotRunAsCounted) {
  // Compared as unsigned, j = -1 is a huge value: the loop does not run.
  EXPECT_FALSE(whole("void f(int n, unsigned m, float *C) {\n"
                     "#pragma fpm partition out(C[i*m:m])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int j = -1; j < m - 1; ++j)\n"
                     "      C[i*m + j + 1] = 0;\n"
                     "}\n"));
  // From 0 it counts as the polynomials do.
  EXPECT_TRUE(whole("void f(int n, unsigned m, float *C) {\n"
                    "#pragma fpm partition out(C[i*m:m])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (unsigned j = 0; j < m; ++j)\n"
                    "      C[i*m + j] = 0;\n"
                    "}\n"));
  // A C89 inner variable whose address the function took may be changed
  // through the pointer: the row would end after its first element.
  EXPECT_FALSE(whole("void f(int n, float *C) {\n"
                     "  int i, j;\n"
                     "  int *pj = &j;\n"
                     "#pragma fpm partition out(C[i*n:n])\n"
                     "  for (i = 0; i < n; ++i)\n"
                     "    for (j = 0; j < n; ++j) {\n"
                     "      C[i*n + j] = 0;\n"
                     "      *pj = n;\n"
                     "    }\n"
                     "}\n"));
}

TEST(OutCoverTest, EarlyExits) {
  std::string Why;
  // A break before the write ends the row early.
  EXPECT_FALSE(whole("void f(int n, const float *A, float *C) {\n"
                     "#pragma fpm partition in(A[i*n:n]) out(C[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    for (int j = 0; j < n; ++j) {\n"
                     "      if (A[i*n + j] < 0) break;\n"
                     "      C[i*n + j] = A[i*n + j];\n"
                     "    }\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "a 'break', 'continue', 'goto' or a call that does not "
                 "return may end the loop around the assignment to "
                 "'C[i*n + j]' early");
  // A continue of the partitioned loop skips the rest of the iteration.
  EXPECT_FALSE(whole("void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    if (x[i] < 0) continue;\n"
                     "    y[i] = x[i];\n"
                     "  }\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "a 'continue', 'goto' or a call that does not return may "
                 "skip the assignment to 'y[i]'");
  // A break of a switch does not leave the loop.
  EXPECT_TRUE(whole("void f(int n, const float *x, float *y) {\n"
                    "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    float v = 0;\n"
                    "    switch (i % 3) { case 0: v = 1; break; default: "
                    "v = x[i]; }\n"
                    "    y[i] = v;\n"
                    "  }\n"
                    "}\n"));
}

TEST(OutCoverTest, UnionOfWriteSites) {
  // A stencil's row: the two border columns and the interior between them.
  // For n = 1 the two borders are one element; for n <= 0 the section is
  // empty.
  EXPECT_TRUE(whole("void f(int n, const float *src, float *dst) {\n"
                    "#pragma fpm partition in(src[0:n*n]) out(dst[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    dst[i*n] = src[i*n];\n"
                    "    for (int j = 1; j < n - 1; ++j)\n"
                    "      dst[i*n + j] = src[i*n + j - 1] + src[i*n + j];\n"
                    "    dst[i*n + n - 1] = src[i*n + n - 1];\n"
                    "  }\n"
                    "}\n"));
  // In any order, overlapping by a constant, one of them backwards.
  EXPECT_TRUE(whole("void f(int n, float *dst) {\n"
                    "#pragma fpm partition out(dst[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    for (int j = 1; j < n; ++j)\n"
                    "      dst[i*n + n - j] = j;\n"
                    "    for (int j = 0; j < 2; ++j)\n"
                    "      dst[i*n + j] = 0;\n"
                    "  }\n"
                    "}\n"));
  // A gap: element 1 is never written.
  std::string Why;
  EXPECT_FALSE(whole("void f(int n, float *dst) {\n"
                     "#pragma fpm partition out(dst[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    dst[i*n] = 0;\n"
                     "    for (int j = 2; j < n; ++j)\n"
                     "      dst[i*n + j] = j;\n"
                     "  }\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignments to 'dst[i*n]' and 'dst[i*n + j]' write "
                 "element 0 and elements 2 to n - 1 of the section, which has "
                 "elements 0 to n - 1");
  // Elements 0 and 1 are the row only when n is 2.
  EXPECT_FALSE(whole("void f(int n, float *dst) {\n"
                     "#pragma fpm partition out(dst[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    dst[i*n] = 0;\n"
                     "    dst[i*n + 1] = 0;\n"
                     "  }\n"
                     "}\n"));
  // The interior ends at n - 2: element n - 2 is missing.
  EXPECT_FALSE(whole("void f(int n, float *dst) {\n"
                     "#pragma fpm partition out(dst[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    dst[i*n] = 0;\n"
                     "    for (int j = 1; j < n - 2; ++j)\n"
                     "      dst[i*n + j] = j;\n"
                     "    dst[i*n + n - 1] = 0;\n"
                     "  }\n"
                     "}\n"));
  // A site that does not run on every iteration fills no gap.
  EXPECT_FALSE(whole("void f(int n, const float *src, float *dst) {\n"
                     "#pragma fpm partition in(src[0:n*n]) out(dst[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    if (src[i*n] > 0) dst[i*n] = 0;\n"
                     "    for (int j = 1; j < n; ++j)\n"
                     "      dst[i*n + j] = j;\n"
                     "  }\n"
                     "}\n"));
}

/// The matmul row of the offload benchmark (test/benchmark/offload_loops.cpp)
/// in C: the row set to 0, then sums into it.
constexpr const char *MatmulRow =
    "static void row(const float *a, const float *b, float *c, int n,\n"
    "                long i) {\n"
    "  for (int j = 0; j < n; ++j)\n"
    "    c[i * n + j] = 0.0f;\n"
    "  for (int k = 0; k < n; ++k) {\n"
    "    const float aik = a[i * n + k];\n"
    "    for (int j = 0; j < n; ++j)\n"
    "      c[i * n + j] += aik * b[(long)k * n + j];\n"
    "  }\n"
    "}\n";

TEST(OutCoverTest, WritesInCalledFunctions) {
  EXPECT_TRUE(whole(std::string(MatmulRow) +
                    "void f(const float *a, const float *b, float *c, int n,\n"
                    "       long first, long last) {\n"
                    "#pragma fpm partition in(a[i*n:n], b[0:n*n]) "
                    "out(c[i * n:n])\n"
                    "  for (long i = first; i < last; ++i)\n"
                    "    row(a, b, c, n, i);\n"
                    "}\n"));
  // The benchmark's stencil row: three sites in the helper, which calls
  // another.
  EXPECT_TRUE(whole(
      "static float flux(float d, float k) { return d / (1.0f + d * d * k); }\n"
      "static void row(const float *in, float *out, int n, float k, long i) {\n"
      "  out[i * n] = in[i * n];\n"
      "  for (int j = 1; j < n - 1; ++j) {\n"
      "    const float c = in[i * n + j];\n"
      "    out[i * n + j] = c + flux(in[(i - 1) * n + j] - c, k);\n"
      "  }\n"
      "  out[i * n + n - 1] = in[i * n + n - 1];\n"
      "}\n"
      "void f(const float *in, float *out, int n, float k, long first,\n"
      "       long last) {\n"
      "#pragma fpm partition in(in[(i - 1) * n:3 * n]) out(out[i * n:n])\n"
      "  for (long i = first; i < last; ++i)\n"
      "    row(in, out, n, k, i);\n"
      "}\n"));
  // A pointer to the row (`y + i*n`, `&y[i*n]`), through two calls, the
  // last a function that returns a value.
  EXPECT_TRUE(whole("static int fill(float *p, int m, float v) {\n"
                    "  for (int j = 0; j < m; ++j) p[j] = v;\n"
                    "  return m;\n"
                    "}\n"
                    "static void row(float *r, int n) { fill(r, n, 1.0f); }\n"
                    "void f(int n, float *y) {\n"
                    "#pragma fpm partition out(y[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    row(y + i*n, n);\n"
                    "}\n"));
  EXPECT_TRUE(whole("static void fill(float *p, int m) {\n"
                    "  for (int j = 0; j < m; ++j) p[j] = 0;\n"
                    "}\n"
                    "void f(int n, float *y) {\n"
                    "#pragma fpm partition out(y[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    fill(&y[i*n], n);\n"
                    "}\n"));
  // One element per call, the call in a loop of the body.
  EXPECT_TRUE(whole("static void set(float *p, int k, float v) { p[k] = v; }\n"
                    "void f(int n, float *y) {\n"
                    "#pragma fpm partition out(y[i*n:n])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int j = 0; j < n; ++j)\n"
                    "      set(y, i*n + j, j);\n"
                    "}\n"));
  // A global array the helper names itself.
  EXPECT_TRUE(whole("static float Y[256];\n"
                    "static void set(int k) { Y[k] = k; }\n"
                    "void f(void) {\n"
                    "#pragma fpm partition out(Y[i:1])\n"
                    "  for (int i = 0; i < 256; ++i)\n"
                    "    set(i);\n"
                    "}\n"));
}

TEST(OutCoverTest, CalledFunctionsThatMayNotWrite) {
  std::string Why;
  // The helper writes only where a condition holds.
  EXPECT_FALSE(whole("static void row(const float *x, float *y, int n, int "
                     "i) {\n"
                     "  for (int j = 0; j < n; ++j)\n"
                     "    if (x[i*n + j] > 0) y[i*n + j] = x[i*n + j];\n"
                     "}\n"
                     "void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i*n:n]) out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(x, y, n, i);\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'y[i*n + j]' in 'row' is conditional");
  // It may return before the write.
  EXPECT_FALSE(whole("static void row(float *y, int n, int i) {\n"
                     "  if (i > 3) return;\n"
                     "  for (int j = 0; j < n; ++j) y[i*n + j] = 0;\n"
                     "}\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(y, n, i);\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "a 'return', 'goto' or a call that does not return may skip "
                 "the assignment to 'y[i*n + j]' in 'row'");
  // Its loop runs a number of times read from memory.
  EXPECT_FALSE(whole("static void row(const int *len, float *y, int n, int "
                     "i) {\n"
                     "  for (int j = 0; j < len[i]; ++j) y[i*n + j] = 0;\n"
                     "}\n"
                     "void f(int n, const int *len, float *y) {\n"
                     "#pragma fpm partition in(len[i:1]) out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(len, y, n, i);\n"
                     "}\n"));
  // The call itself is conditional.
  EXPECT_FALSE(whole("static void row(float *y, int n, int i) {\n"
                     "  for (int j = 0; j < n; ++j) y[i*n + j] = 0;\n"
                     "}\n"
                     "void f(int n, const float *x, float *y) {\n"
                     "#pragma fpm partition in(x[i:1]) out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    if (x[i] > 0) row(y, n, i);\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the call of 'row' is conditional");
  // It writes through another pointer than the out array.
  EXPECT_FALSE(whole("static void row(float *dst, float *tmp, int n, int i) "
                     "{\n"
                     "  for (int j = 0; j < n; ++j) tmp[i*n + j] = 0;\n"
                     "  dst[i*n] = 1;\n"
                     "}\n"
                     "void f(int n, float *y, float *z) {\n"
                     "#pragma fpm partition out(y[i*n:n]) inout(z[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(y, z, n, i);\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "the assignment to 'dst[i*n]' in 'row' writes element 0 of "
                 "the section, which has elements 0 to n - 1");
  // It moves the pointer, or changes the bound, it was given.
  EXPECT_FALSE(whole("static void row(float *p, int n) {\n"
                     "  p = p + 1;\n"
                     "  for (int j = 0; j < n; ++j) p[j] = 0;\n"
                     "}\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(y + i*n, n);\n"
                     "}\n"));
  EXPECT_FALSE(whole("static void row(float *p, int n) {\n"
                     "  n = n + 1;\n"
                     "  for (int j = 0; j < n - 2; ++j) p[j] = 0;\n"
                     "}\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(y + i*n, n);\n"
                     "}\n"));
  // The row as elements of another type: a double is two floats.
  EXPECT_FALSE(whole("static void row(double *p, int n) {\n"
                     "  for (int j = 0; j < n; ++j) p[j] = 0;\n"
                     "}\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row((double *)(y + i*n), n);\n"
                     "}\n"));
  // Its body is not visible.
  EXPECT_FALSE(whole("void row(float *y, int n, int i);\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(y, n, i);\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why,
            "the body has no assignment 'y[...] = ...' that fpm can follow");
  // It is recursive (its first write would cover the row).
  EXPECT_FALSE(whole("static void row(float *y, int n, int i, int depth) {\n"
                     "  for (int j = 0; j < n; ++j) y[i*n + j] = depth;\n"
                     "  if (depth > 0) row(y, n, i, depth - 1);\n"
                     "}\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i*n:n])\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    row(y, n, i, 2);\n"
                     "}\n"));
  // It may move the out array's pointer: a global, or through its address.
  EXPECT_FALSE(whole("float *gy;\n"
                     "void bump(void);\n"
                     "void f(int n) {\n"
                     "#pragma fpm partition out(gy[i:1])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    bump();\n"
                     "    gy[i] = 0;\n"
                     "  }\n"
                     "}\n",
                     &Why));
  EXPECT_EQ(Why, "fpm cannot tell that 'gy' points to the same memory "
                 "throughout the loop");
  EXPECT_FALSE(whole("void bump(float **p);\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    bump(&y);\n"
                     "    y[i] = 0;\n"
                     "  }\n"
                     "}\n"));
  // It may change the loop variable through its address.
  EXPECT_FALSE(whole("void g(int *k);\n"
                     "void f(int n, float *y) {\n"
                     "#pragma fpm partition out(y[i:1])\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    g(&i);\n"
                     "    y[i] = 0;\n"
                     "  }\n"
                     "}\n"));
}

TEST(OutCoverTest, SectionsInOrderAndSeveralDimensions) {
  Outcome Out =
      cover("void f(int n, int m, float *y, float *z, float (*R)[8]) {\n"
            "#pragma fpm partition out(y[i:1], z[i:1], R[i:1][0:8])\n"
            "  for (int i = 0; i < n; ++i) {\n"
            "    y[i] = i;\n"
            "    if (m > 0) z[i] = i;\n"
            "    for (int j = 0; j < 8; ++j) R[i][j] = j;\n"
            "  }\n"
            "}\n");
  ASSERT_EQ(Out.Covers.size(), 3u);
  EXPECT_TRUE(Out.Covers[0].Whole);
  EXPECT_FALSE(Out.Covers[1].Whole);
  // A section of several dimensions is never proven (it is INOUT anyway).
  EXPECT_FALSE(Out.Covers[2].Whole);
}

} // namespace
