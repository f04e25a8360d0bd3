//===- IntPoly.h - Integer polynomials over variables -----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A small symbolic form of integer expressions, for the checks that compare a
// subscript in a loop's body with the section a data clause declares:
// polynomials with integer coefficients over variables (VarDecls). They are
// built from the AST (+, -, *, unary -, constants, parentheses, casts that
// keep the value) or parsed from the text of a section's bounds; anything
// else is unknown. Every coefficient stays within +-2^31, so that what the
// polynomial says is what the C expression computes for any sane program.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_INTPOLY_H
#define FPM_LIB_INTPOLY_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace clang {
class ASTContext;
class Expr;
class VarDecl;
} // namespace clang

namespace fpm {

/// A polynomial with integer coefficients over variables. Every operation
/// returns nullopt where a coefficient would leave +-Limit or the polynomial
/// would grow past MaxTerms terms.
class IntPoly {
public:
  using Var = const clang::VarDecl *;
  static constexpr int64_t Limit = int64_t(1) << 31;
  static constexpr size_t MaxTerms = 64;

  /// Zero.
  IntPoly() = default;
  static std::optional<IntPoly> constant(int64_t C);
  static IntPoly variable(Var V);

  std::optional<IntPoly> plus(const IntPoly &O) const;
  std::optional<IntPoly> minus(const IntPoly &O) const;
  std::optional<IntPoly> times(const IntPoly &O) const;
  std::optional<IntPoly> negated() const;

  /// The value if this is a constant.
  std::optional<int64_t> getConstant() const;
  /// Whether no coefficient (the constant's included) is negative: then
  /// the value is >= 0 wherever every variable is.
  bool hasNoNegativeCoefficient() const;
  bool uses(Var V) const;
  /// The variables this uses, each once.
  llvm::SmallVector<Var, 4> vars() const;
  /// This as C + K * V with C free of V (K may be 0); nullopt if V appears
  /// in a product.
  std::optional<std::pair<IntPoly, int64_t>> splitLinear(Var V) const;
  /// This with V replaced by P.
  std::optional<IntPoly> substitute(Var V, const IntPoly &P) const;

  /// `2*i*n + n - 1`: terms by decreasing degree, then by variable names.
  std::string str() const;

  bool operator==(const IntPoly &O) const { return Terms == O.Terms; }

private:
  /// A product of variables, sorted; empty for the constant term.
  using Monomial = llvm::SmallVector<Var, 2>;
  struct MonomialLess {
    bool operator()(const Monomial &A, const Monomial &B) const;
  };
  /// Adds C * M to Terms; false on overflow.
  bool addTerm(const Monomial &M, int64_t C);

  std::map<Monomial, int64_t, MonomialLess> Terms;
};

/// What a variable an expression names stands for: the variable itself, a
/// constant, another polynomial; nullopt if it is unknown.
using VarLeaf =
    llvm::function_ref<std::optional<IntPoly>(const clang::VarDecl *)>;

/// E as a polynomial: integer literals, enumerators and whatever Clang
/// folds to an integer constant, variables through Leaf, +, - and * of integer
/// type, unary - and +, parentheses, and integer conversions that do not
/// narrow. nullopt for anything else, and for a dependent expression.
std::optional<IntPoly> intPolyFromExpr(const clang::Expr *E,
                                       const clang::ASTContext &Ctx,
                                       VarLeaf Leaf);

/// What an identifier of a text stands for (as VarLeaf).
using NameLeaf = llvm::function_ref<std::optional<IntPoly>(llvm::StringRef)>;

/// Text, an integer expression as written in a pragma (`i*n + 1`,
/// `(n - 1) - i`), as a polynomial: identifiers through Leaf, integer
/// literals (decimal, octal, hexadecimal, with u/l suffixes), + - * and
/// parentheses. nullopt for anything else.
std::optional<IntPoly> parseIntPoly(llvm::StringRef Text, NameLeaf Leaf);

} // namespace fpm

#endif // FPM_LIB_INTPOLY_H
