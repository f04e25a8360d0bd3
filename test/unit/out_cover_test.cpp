//===- out_cover_test.cpp - Out sections an iteration writes whole --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// checkOutCover (lib/LoopChecker.h) on small C files: whether each iteration
// of a partitioned loop provably writes every element of its `out` section,
// which lets the generated kernel take the array as OUT (not copied to the
// device); anything it cannot prove says why, and the kernel takes the
// array as INOUT.
//
//===----------------------------------------------------------------------===//

#include "LoopChecker.h"
#include "PragmaParser.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace clang;
using namespace clang::ast_matchers;

namespace {

/// What checkOutCover says of the out sections of the loop in `f` (the
/// first partitioned loop of the file, the outermost `for` of f), or Error
/// when the loop does not get that far.
struct Outcome {
  std::vector<fpm::OutCover> Covers;
  std::string Error;
};

class CoverAction : public ASTFrontendAction {
public:
  explicit CoverAction(Outcome &Out) : Out(Out) {}

  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().AddPragmaHandler(new fpm::FpmPragmaHandler(Pragmas));
    return true;
  }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    struct Consumer : ASTConsumer {
      CoverAction &Action;
      explicit Consumer(CoverAction &Action) : Action(Action) {}
      void HandleTranslationUnit(ASTContext &Ctx) override {
        Action.cover(Ctx);
      }
    };
    return std::make_unique<Consumer>(*this);
  }

  void cover(ASTContext &Ctx) {
    if (Pragmas.empty()) {
      Out.Error = "no pragma";
      return;
    }
    auto Matches =
        match(forStmt(hasAncestor(functionDecl(hasName("f")).bind("f")),
                      unless(hasAncestor(forStmt())))
                  .bind("for"),
              Ctx);
    if (Matches.empty()) {
      Out.Error = "no loop in f";
      return;
    }
    const auto *For = Matches.front().getNodeAs<ForStmt>("for");
    const auto *Fn = Matches.front().getNodeAs<FunctionDecl>("f");
    fpm::CanonicalLoop Loop;
    fpm::LoopVariables Vars;
    if (!fpm::checkLoop(Ctx, Pragmas.front(), *Fn, *For, Loop, Vars)) {
      Out.Error = "checkLoop failed";
      return;
    }
    for (const fpm::OutCover &Cover :
         fpm::checkOutCover(Ctx, Pragmas.front(), *Fn, *For, *Loop.Var))
      Out.Covers.push_back(Cover);
  }

private:
  std::vector<fpm::PartitionPragma> Pragmas;
  Outcome &Out;
};

/// The out sections of Code's loop in f, one OutCover each.
Outcome cover(const std::string &Code) {
  Outcome Out;
  EXPECT_TRUE(tooling::runToolOnCodeWithArgs(
      std::make_unique<CoverAction>(Out), Code,
      {"-std=c99", "-resource-dir=" FPM_CLANG_RESOURCE_DIR}, "input.c"))
      << Code;
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
  // A plane of m rows of w: row-major, j*w + k.
  EXPECT_TRUE(whole("void f(int n, int m, int w, float *V) {\n"
                    "#pragma fpm partition out(V[i*m*w:m*w])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int j = 0; j < m; ++j)\n"
                    "      for (int k = 0; k < w; ++k)\n"
                    "        V[i*m*w + j*w + k] = i + j + k;\n"
                    "}\n"));
  // Column-major order is just as whole.
  EXPECT_TRUE(whole("void f(int n, int m, int w, float *V) {\n"
                    "#pragma fpm partition out(V[i*m*w:m*w])\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    for (int k = 0; k < w; ++k)\n"
                    "      for (int j = 0; j < m; ++j)\n"
                    "        V[i*m*w + j*w + k] = i + j + k;\n"
                    "}\n"));
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
  std::string Why;
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
