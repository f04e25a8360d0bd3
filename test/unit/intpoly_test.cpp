//===- intpoly_test.cpp - Integer polynomials over variables --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-rewrite's IntPoly (lib/Analysis/IntPoly.h): the arithmetic, its limits,
// and the two ways in, from the AST of a small C file and from a section's
// text.
//
//===----------------------------------------------------------------------===//

#include "Analysis/IntPoly.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringMap.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

using namespace clang;
using fpm::IntPoly;

namespace {

/// The globals and functions of a small C file: its int variables are the
/// polynomials' variables; each function returns an expression to read.
class IntPolyTest : public ::testing::Test {
protected:
  void SetUp() override {
    AST = tooling::buildASTFromCodeWithArgs(R"c(
      int i, n, j, m;
      char c;
      long l;
      const int K = 4;
      enum { E = 3 };
      int *p;
      int sum(void) { return (i + 1) * (i - 1) + n * 2 - n - n; }
      unsigned long folded(void) { return sizeof(int) * i + K * n + (3 - 1) * 2; }
      int negate(void) { return -(i - n) + +j; }
      int enumerator(void) { return i * E + E; }
      long widen(void) { return (long)i * n + l + c; }
      int narrow(void) { return (char)n; }
      int divide(void) { return i / 2; }
      int shift(void) { return i << 1; }
      int call(void) { return sum() + i; }
      int deref(void) { return *p + i; }
      int unknown(void) { return i + m; }
    )c",
                                            {"-std=c11"}, "input.c");
    ASSERT_TRUE(AST);
    for (const Decl *D : AST->getASTContext().getTranslationUnitDecl()->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D))
        Vars[VD->getName()] = VD;
  }

  IntPoly var(llvm::StringRef Name) { return IntPoly::variable(Vars[Name]); }
  IntPoly num(int64_t C) { return *IntPoly::constant(C); }

  /// What function Fn returns, as a polynomial over i, n, j, l and c (m and
  /// p are unknown).
  std::optional<IntPoly> fromFunction(llvm::StringRef Fn) {
    ASTContext &Ctx = AST->getASTContext();
    for (const Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
      const auto *FD = dyn_cast<FunctionDecl>(D);
      if (!FD || FD->getName() != Fn || !FD->hasBody())
        continue;
      const auto *Body = cast<CompoundStmt>(FD->getBody());
      const auto *Return = cast<ReturnStmt>(Body->body_front());
      return fpm::intPolyFromExpr(
          Return->getRetValue(), Ctx,
          [&](const VarDecl *VD) -> std::optional<IntPoly> {
            if (VD->getName() == "m" || VD->getName() == "p")
              return std::nullopt;
            return IntPoly::variable(VD);
          });
    }
    ADD_FAILURE() << "no function " << Fn.str();
    return std::nullopt;
  }

  /// Text as a polynomial over i, n and j (any other name is unknown).
  std::optional<IntPoly> parse(llvm::StringRef Text) {
    return fpm::parseIntPoly(
        Text, [&](llvm::StringRef Name) -> std::optional<IntPoly> {
          if (Name != "i" && Name != "n" && Name != "j")
            return std::nullopt;
          return IntPoly::variable(Vars[Name]);
        });
  }

  std::unique_ptr<ASTUnit> AST;
  llvm::StringMap<const VarDecl *> Vars;
};

TEST_F(IntPolyTest, Arithmetic) {
  IntPoly I = var("i"), N = var("n");
  EXPECT_EQ(IntPoly().str(), "0");
  EXPECT_EQ(IntPoly().getConstant(), 0);
  EXPECT_EQ(num(-7).getConstant(), -7);
  EXPECT_EQ(I.getConstant(), std::nullopt);

  // (i + 1) * n - n = i*n
  std::optional<IntPoly> P = I.plus(num(1))->times(N)->minus(N);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->str(), "i*n");
  EXPECT_EQ(*P, N.times(I));
  // (i*n + n) - (i*n) is n; minus n again, 0.
  std::optional<IntPoly> D = P->plus(N)->minus(*P);
  ASSERT_TRUE(D);
  EXPECT_EQ(*D, N);
  EXPECT_EQ(D->minus(N)->getConstant(), 0);

  // (n - i)^2 = i*i - 2*i*n + n*n, printed by degree, then by name.
  std::optional<IntPoly> Diff = N.minus(I);
  std::optional<IntPoly> Square = Diff->times(*Diff);
  ASSERT_TRUE(Square);
  EXPECT_EQ(Square->str(), "i*i - 2*i*n + n*n");
  EXPECT_EQ(Square->negated()->str(), "-i*i + 2*i*n - n*n");
  EXPECT_EQ(I.minus(num(3))->str(), "i - 3");
  EXPECT_EQ(num(3).minus(I)->str(), "-i + 3");

  // No negative coefficient: >= 0 wherever the variables are.
  EXPECT_TRUE(IntPoly().hasNoNegativeCoefficient());
  EXPECT_TRUE(P->plus(num(2))->hasNoNegativeCoefficient());
  EXPECT_FALSE(num(-1).hasNoNegativeCoefficient());
  EXPECT_FALSE(N.minus(I)->hasNoNegativeCoefficient());
  EXPECT_FALSE(Square->hasNoNegativeCoefficient());
}

TEST_F(IntPolyTest, SplitAndSubstitute) {
  IntPoly I = var("i"), N = var("n"), J = var("j");
  // i*n + 3*j - 2 = (i*n - 2) + 3*j
  std::optional<IntPoly> P = I.times(N)->plus(*num(3).times(J))->minus(num(2));
  ASSERT_TRUE(P);
  EXPECT_TRUE(P->uses(Vars["j"]));
  EXPECT_FALSE(P->uses(Vars["m"]));
  EXPECT_EQ(P->vars().size(), 3u);
  auto Split = P->splitLinear(Vars["j"]);
  ASSERT_TRUE(Split);
  EXPECT_EQ(Split->first.str(), "i*n - 2");
  EXPECT_EQ(Split->second, 3);
  // Not linear in i (it is multiplied by n).
  EXPECT_FALSE(P->splitLinear(Vars["i"]));
  // Free of m: all of it, times 0.
  auto Free = P->splitLinear(Vars["m"]);
  ASSERT_TRUE(Free);
  EXPECT_EQ(Free->first, *P);
  EXPECT_EQ(Free->second, 0);
  // j := n - 1 gives i*n + 3*n - 5.
  std::optional<IntPoly> S = P->substitute(Vars["j"], *N.minus(num(1)));
  ASSERT_TRUE(S);
  EXPECT_EQ(S->str(), "i*n + 3*n - 5");
}

TEST_F(IntPolyTest, Limits) {
  EXPECT_TRUE(IntPoly::constant(IntPoly::Limit - 1));
  EXPECT_FALSE(IntPoly::constant(IntPoly::Limit));
  EXPECT_FALSE(IntPoly::constant(-IntPoly::Limit));
  EXPECT_FALSE(IntPoly::constant(INT64_MIN));
  IntPoly Big = num(1 << 20);
  EXPECT_FALSE(Big.times(Big));
  EXPECT_FALSE(num(IntPoly::Limit - 1).plus(num(1)));
  // Too many terms: (i + n + j + 1)^4 has 35.
  std::optional<IntPoly> Sum =
      var("i").plus(var("n"))->plus(var("j"))->plus(num(1));
  std::optional<IntPoly> Power = Sum;
  for (int K = 1; Power && K < 4; ++K)
    Power = Power->times(*Sum);
  ASSERT_TRUE(Power);
  std::optional<IntPoly> More = Power->times(*Sum)->times(*Sum);
  EXPECT_FALSE(More);
}

TEST_F(IntPolyTest, FromExpr) {
  std::optional<IntPoly> Sum = fromFunction("sum");
  ASSERT_TRUE(Sum);
  EXPECT_EQ(Sum->str(), "i*i - 1");
  std::optional<IntPoly> Folded = fromFunction("folded");
  ASSERT_TRUE(Folded);
  // Clang folds K, a const int with a constant initializer, itself.
  EXPECT_EQ(Folded->str(), "4*i + 4*n + 4");
  std::optional<IntPoly> Negate = fromFunction("negate");
  ASSERT_TRUE(Negate);
  EXPECT_EQ(Negate->str(), "-i + j + n");
  // An enumerator is its value, also where the expression around it is
  // not a constant.
  std::optional<IntPoly> Enumerator = fromFunction("enumerator");
  ASSERT_TRUE(Enumerator);
  EXPECT_EQ(Enumerator->str(), "3*i + 3");
  std::optional<IntPoly> Widen = fromFunction("widen");
  ASSERT_TRUE(Widen);
  EXPECT_EQ(Widen->str(), "i*n + c + l");
  for (const char *Fn :
       {"narrow", "divide", "shift", "call", "deref", "unknown"})
    EXPECT_FALSE(fromFunction(Fn)) << Fn;
}

TEST_F(IntPolyTest, FromText) {
  std::optional<IntPoly> A = parse("i*n + n");
  std::optional<IntPoly> B = parse("n * (i + 1)");
  ASSERT_TRUE(A && B);
  EXPECT_EQ(*A, *B);
  EXPECT_EQ(parse("(n - 1) - i")->str(), "-i + n - 1");
  EXPECT_EQ(parse("n-1-i")->str(), "-i + n - 1");
  EXPECT_EQ(parse("-(i) + +j")->str(), "-i + j");
  EXPECT_EQ(parse("2 * -i")->str(), "-2*i");
  EXPECT_EQ(parse("3*n")->str(), "3*n");
  EXPECT_EQ(parse(" 0x10 ")->getConstant(), 16);
  EXPECT_EQ(parse("010")->getConstant(), 8);
  EXPECT_EQ(parse("0")->getConstant(), 0);
  EXPECT_EQ(parse("0b101")->getConstant(), 5);
  EXPECT_EQ(parse("12uL")->getConstant(), 12);
  EXPECT_EQ(parse("((((i))))")->str(), "i");
  for (const char *Text :
       {"",           " ",     "m",         "i +",     "(i",       "i)",
        "i / 2",      "i % 2", "i << 1",    "f(i)",    "a[i]",     "s.x",
        "p->x",       "1.5",   "1e3",       "08",      "i++",      "-- i",
        "i+=1",       "'a'",   "std::size", "(long)i", "sizeof i", "i ? n : j",
        "4294967296", "i, n"})
    EXPECT_FALSE(parse(Text)) << '"' << Text << '"';
}

} // namespace
