//===- IntPoly.cpp - Integer polynomials over variables -------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Analysis/IntPoly.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/CharInfo.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace clang;

namespace fpm {

bool IntPoly::MonomialLess::operator()(const Monomial &A,
                                       const Monomial &B) const {
  return std::lexicographical_compare(A.begin(), A.end(), B.begin(), B.end(),
                                      std::less<Var>());
}

std::optional<IntPoly> IntPoly::constant(int64_t C) {
  IntPoly P;
  if (!P.addTerm({}, C))
    return std::nullopt;
  return P;
}

IntPoly IntPoly::variable(Var V) {
  IntPoly P;
  P.Terms[{V}] = 1;
  return P;
}

bool IntPoly::addTerm(const Monomial &M, int64_t C) {
  if (C <= -Limit || C >= Limit)
    return false;
  if (C == 0)
    return true;
  auto [It, New] = Terms.try_emplace(M, C);
  if (New)
    return Terms.size() <= MaxTerms;
  // Both within +-2^31: the sum cannot overflow.
  It->second += C;
  if (It->second <= -Limit || It->second >= Limit)
    return false;
  if (It->second == 0)
    Terms.erase(It);
  return true;
}

std::optional<IntPoly> IntPoly::plus(const IntPoly &O) const {
  IntPoly P = *this;
  for (const auto &[M, C] : O.Terms)
    if (!P.addTerm(M, C))
      return std::nullopt;
  return P;
}

std::optional<IntPoly> IntPoly::negated() const {
  IntPoly P;
  for (const auto &[M, C] : Terms)
    P.Terms[M] = -C;
  return P;
}

std::optional<IntPoly> IntPoly::minus(const IntPoly &O) const {
  std::optional<IntPoly> N = O.negated();
  if (!N)
    return std::nullopt;
  return plus(*N);
}

std::optional<IntPoly> IntPoly::times(const IntPoly &O) const {
  IntPoly P;
  for (const auto &[MA, CA] : Terms)
    for (const auto &[MB, CB] : O.Terms) {
      std::optional<int64_t> C = llvm::checkedMul(CA, CB);
      if (!C)
        return std::nullopt;
      Monomial M(MA);
      M.append(MB.begin(), MB.end());
      llvm::sort(M, std::less<Var>());
      if (!P.addTerm(M, *C))
        return std::nullopt;
    }
  return P;
}

std::optional<int64_t> IntPoly::getConstant() const {
  if (Terms.empty())
    return 0;
  if (Terms.size() == 1 && Terms.begin()->first.empty())
    return Terms.begin()->second;
  return std::nullopt;
}

bool IntPoly::hasNoNegativeCoefficient() const {
  return llvm::all_of(Terms, [](const auto &Term) { return Term.second > 0; });
}

bool IntPoly::uses(Var V) const {
  return llvm::any_of(Terms, [&](const auto &Term) {
    return llvm::is_contained(Term.first, V);
  });
}

llvm::SmallVector<IntPoly::Var, 4> IntPoly::vars() const {
  llvm::SmallVector<Var, 4> Vars;
  for (const auto &Term : Terms)
    for (Var V : Term.first)
      if (!llvm::is_contained(Vars, V))
        Vars.push_back(V);
  return Vars;
}

std::optional<std::pair<IntPoly, int64_t>> IntPoly::splitLinear(Var V) const {
  IntPoly Rest;
  int64_t K = 0;
  for (const auto &[M, C] : Terms) {
    size_t Count = llvm::count(M, V);
    if (Count == 0)
      Rest.Terms[M] = C;
    else if (Count == 1 && M.size() == 1)
      K = C;
    else
      return std::nullopt;
  }
  return std::make_pair(std::move(Rest), K);
}

std::optional<IntPoly> IntPoly::substitute(Var V, const IntPoly &P) const {
  IntPoly Result;
  for (const auto &[M, C] : Terms) {
    std::optional<IntPoly> Term = constant(C);
    for (Var W : M) {
      if (!Term)
        return std::nullopt;
      Term = Term->times(W == V ? P : variable(W));
    }
    if (!Term)
      return std::nullopt;
    std::optional<IntPoly> Sum = Result.plus(*Term);
    if (!Sum)
      return std::nullopt;
    Result = std::move(*Sum);
  }
  return Result;
}

std::string IntPoly::str() const {
  struct Term {
    llvm::SmallVector<std::string, 2> Names;
    int64_t C;
  };
  llvm::SmallVector<Term, 8> Sorted;
  for (const auto &[M, C] : Terms) {
    Term T{{}, C};
    for (Var V : M)
      T.Names.push_back(V->getName().str());
    llvm::sort(T.Names);
    Sorted.push_back(std::move(T));
  }
  llvm::sort(Sorted, [](const Term &A, const Term &B) {
    if (A.Names.size() != B.Names.size())
      return A.Names.size() > B.Names.size();
    return A.Names < B.Names;
  });
  if (Sorted.empty())
    return "0";
  std::string S;
  for (const Term &T : Sorted) {
    int64_t Abs = T.C < 0 ? -T.C : T.C;
    if (S.empty())
      S += T.C < 0 ? "-" : "";
    else
      S += T.C < 0 ? " - " : " + ";
    std::string Product = llvm::join(T.Names, "*");
    if (Product.empty())
      S += std::to_string(Abs);
    else if (Abs == 1)
      S += Product;
    else
      S += std::to_string(Abs) + "*" + Product;
  }
  return S;
}

namespace {

/// An integer conversion that keeps every value of its operand's type
/// (widening, or a change of signedness at the same width, which keeps the
/// value modulo 2^width: an index off by 2^width is off all the same).
bool keepsValue(const ASTContext &Ctx, const CastExpr *Cast) {
  switch (Cast->getCastKind()) {
  case CK_LValueToRValue:
  case CK_NoOp:
    return true;
  case CK_IntegralCast: {
    QualType From = Cast->getSubExpr()->getType();
    QualType To = Cast->getType();
    return From->isIntegerType() && !From->isBooleanType() &&
           Ctx.getIntWidth(To) >= Ctx.getIntWidth(From);
  }
  default:
    return false;
  }
}

std::optional<IntPoly> combine(BinaryOperatorKind Op, const IntPoly &L,
                               const IntPoly &R) {
  switch (Op) {
  case BO_Add:
    return L.plus(R);
  case BO_Sub:
    return L.minus(R);
  case BO_Mul:
    return L.times(R);
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<IntPoly> intPolyFromExpr(const Expr *E, const ASTContext &Ctx,
                                       VarLeaf Leaf) {
  if (!E || E->isInstantiationDependent())
    return std::nullopt;
  QualType T = E->getType();
  if (!T->isIntegerType() || T->isBooleanType())
    return std::nullopt;
  if (E->isPRValue() && !isa<DeclRefExpr>(E)) {
    Expr::EvalResult R;
    if (E->EvaluateAsInt(R, Ctx)) {
      const llvm::APSInt &V = R.Val.getInt();
      if (!V.isRepresentableByInt64())
        return std::nullopt;
      return IntPoly::constant(V.getExtValue());
    }
  }
  if (const auto *Paren = dyn_cast<ParenExpr>(E))
    return intPolyFromExpr(Paren->getSubExpr(), Ctx, Leaf);
  if (const auto *Full = dyn_cast<FullExpr>(E))
    return intPolyFromExpr(Full->getSubExpr(), Ctx, Leaf);
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    if (!keepsValue(Ctx, Cast))
      return std::nullopt;
    return intPolyFromExpr(Cast->getSubExpr(), Ctx, Leaf);
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    std::optional<IntPoly> L = intPolyFromExpr(BO->getLHS(), Ctx, Leaf);
    if (!L)
      return std::nullopt;
    std::optional<IntPoly> R = intPolyFromExpr(BO->getRHS(), Ctx, Leaf);
    if (!R)
      return std::nullopt;
    return combine(BO->getOpcode(), *L, *R);
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() != UO_Minus && UO->getOpcode() != UO_Plus)
      return std::nullopt;
    std::optional<IntPoly> Sub = intPolyFromExpr(UO->getSubExpr(), Ctx, Leaf);
    if (!Sub || UO->getOpcode() == UO_Plus)
      return Sub;
    return Sub->negated();
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      return Leaf(VD);
    if (const auto *EC = dyn_cast<EnumConstantDecl>(DRE->getDecl());
        EC && EC->getInitVal().isRepresentableByInt64())
      return IntPoly::constant(EC->getInitVal().getExtValue());
  }
  return std::nullopt;
}

namespace {

/// A recursive-descent parser of + - * ( ) over identifiers and integers.
class TextParser {
public:
  TextParser(StringRef Text, NameLeaf Leaf) : Text(Text), Leaf(Leaf) {}

  std::optional<IntPoly> parse() {
    std::optional<IntPoly> P = parseSum();
    skipSpace();
    if (!P || Pos != Text.size())
      return std::nullopt;
    return P;
  }

private:
  void skipSpace() {
    while (Pos < Text.size() && isWhitespace(Text[Pos]))
      ++Pos;
  }
  bool consume(char C) {
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == C) {
      ++Pos;
      return true;
    }
    return false;
  }
  bool peekIs(char C) {
    skipSpace();
    return Pos < Text.size() && Text[Pos] == C;
  }

  std::optional<IntPoly> parseSum() {
    std::optional<IntPoly> P = parseProduct();
    while (P) {
      if (peekIs('+') && !nextIs("++") && !nextIs("+=")) {
        ++Pos;
        std::optional<IntPoly> R = parseProduct();
        P = R ? P->plus(*R) : std::nullopt;
      } else if (peekIs('-') && !nextIs("--") && !nextIs("-=") &&
                 !nextIs("->")) {
        ++Pos;
        std::optional<IntPoly> R = parseProduct();
        P = R ? P->minus(*R) : std::nullopt;
      } else {
        break;
      }
    }
    return P;
  }

  std::optional<IntPoly> parseProduct() {
    std::optional<IntPoly> P = parseUnary();
    while (P && peekIs('*') && !nextIs("*=")) {
      ++Pos;
      std::optional<IntPoly> R = parseUnary();
      P = R ? P->times(*R) : std::nullopt;
    }
    return P;
  }

  std::optional<IntPoly> parseUnary() {
    if (++Depth > 64)
      return std::nullopt;
    std::optional<IntPoly> P;
    if (peekIs('-') && !nextIs("--")) {
      ++Pos;
      P = parseUnary();
      P = P ? P->negated() : std::nullopt;
    } else if (peekIs('+') && !nextIs("++")) {
      ++Pos;
      P = parseUnary();
    } else {
      P = parsePrimary();
    }
    --Depth;
    return P;
  }

  std::optional<IntPoly> parsePrimary() {
    skipSpace();
    if (Pos == Text.size())
      return std::nullopt;
    if (consume('(')) {
      std::optional<IntPoly> P = parseSum();
      if (!P || !consume(')'))
        return std::nullopt;
      return P;
    }
    char C = Text[Pos];
    if (isAsciiIdentifierStart(C)) {
      size_t Begin = Pos;
      while (Pos < Text.size() && isAsciiIdentifierContinue(Text[Pos]))
        ++Pos;
      StringRef Name = Text.slice(Begin, Pos);
      // A call, a subscript or a member is none of ours.
      if (peekIs('(') || peekIs('[') || peekIs('.') || nextIs("->") ||
          peekIs(':'))
        return std::nullopt;
      return Leaf(Name);
    }
    if (isDigit(C))
      return parseInteger();
    return std::nullopt;
  }

  std::optional<IntPoly> parseInteger() {
    size_t Begin = Pos;
    while (Pos < Text.size() && isAsciiIdentifierContinue(Text[Pos]))
      ++Pos;
    StringRef Literal = Text.slice(Begin, Pos);
    // Suffixes change the type, not the value.
    StringRef Digits = Literal.rtrim("uUlL");
    if (Digits.empty() || (Pos < Text.size() && Text[Pos] == '.'))
      return std::nullopt;
    unsigned Radix = 10;
    if (Digits.starts_with_insensitive("0x")) {
      Radix = 16;
      Digits = Digits.drop_front(2);
    } else if (Digits.starts_with_insensitive("0b")) {
      Radix = 2;
      Digits = Digits.drop_front(2);
    } else if (Digits.size() > 1 && Digits[0] == '0') {
      Radix = 8;
    }
    uint64_t Value;
    if (Digits.empty() || Digits.getAsInteger(Radix, Value) ||
        Value >= uint64_t(IntPoly::Limit))
      return std::nullopt;
    return IntPoly::constant(int64_t(Value));
  }

  bool nextIs(StringRef S) {
    skipSpace();
    return Text.substr(Pos).starts_with(S);
  }

  StringRef Text;
  NameLeaf Leaf;
  size_t Pos = 0;
  unsigned Depth = 0;
};

} // namespace

std::optional<IntPoly> parseIntPoly(StringRef Text, NameLeaf Leaf) {
  return TextParser(Text, Leaf).parse();
}

} // namespace fpm
