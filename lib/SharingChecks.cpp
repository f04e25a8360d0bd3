//===- SharingChecks.cpp - What the iterations of a loop share ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks of LoopCheck (LoopCheck.h) on what one iteration may write that
// another reads or writes (spec/pragma.md, "What the rewriter refuses"):
//
//  - a write to a scalar declared outside the loop that is not private
//    (error); where the write has a reduction's shape (`s += x`,
//    `s = fmax(s, x)`, `s = s < x ? x : s`), the error suggests
//    `reduction(op: s)`, never `private`;
//  - an array written at a[i] and read at a[i +/- c] (warning).
//
//===----------------------------------------------------------------------===//

#include "LoopCheck.h"

#include "llvm/ADT/StringSwitch.h"

using namespace clang;

namespace fpm::detail {

//===----------------------------------------------------------------------===//
// Shared scalars
//===----------------------------------------------------------------------===//

namespace {

/// The operator of a reduction with a compound assignment's or a binary
/// operator's opcode (`s -= x` is a `+` reduction of -x).
std::optional<StringRef> reductionOperator(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_Add:
  case BO_AddAssign:
  case BO_SubAssign:
    return StringRef("+");
  case BO_Mul:
  case BO_MulAssign:
    return StringRef("*");
  case BO_And:
  case BO_AndAssign:
    return StringRef("&");
  case BO_Or:
  case BO_OrAssign:
    return StringRef("|");
  case BO_Xor:
  case BO_XorAssign:
    return StringRef("^");
  case BO_LAnd:
    return StringRef("&&");
  case BO_LOr:
    return StringRef("||");
  default:
    return std::nullopt;
  }
}

/// Whether S names VD.
bool mentions(const Stmt *S, const VarDecl *VD) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    return DRE->getDecl() == VD;
  return llvm::any_of(S->children(),
                      [&](const Stmt *C) { return mentions(C, VD); });
}

/// For a comparison `A op B`: which side is the larger when it holds (0 for
/// A, 1 for B); nullopt for anything else.
std::optional<unsigned> largerSide(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_LT:
  case BO_LE:
    return 1u;
  case BO_GT:
  case BO_GE:
    return 0u;
  default:
    return std::nullopt;
  }
}

} // namespace

/// The operator of the reduction whose update the write to VD at Target
/// (VD's name, the target of an assignment or of ++/--) is: `s += x`,
/// `s = s * x`, `s = x && s`, `s++`, `s = fmax(s, x)`, `s = std::min(s, x)`,
/// `s = s < x ? x : s`, `if (x > s) s = x;` (x not naming s). nullopt for
/// any other write.
std::optional<StringRef> LoopCheck::reductionShape(const Expr *Target,
                                                   const VarDecl *VD) const {
  if (!VD->getType().getNonReferenceType()->isArithmeticType())
    return std::nullopt;
  const Stmt *Cur = Target;
  const Stmt *P = parentOf(Cur);
  while (isa_and_nonnull<ParenExpr>(P)) {
    Cur = P;
    P = parentOf(P);
  }
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(P);
      UO && UO->isIncrementDecrementOp())
    return StringRef("+");
  const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
  if (!BO || BO->getLHS() != Cur)
    return std::nullopt;
  if (BO->isCompoundAssignmentOp())
    return mentions(BO->getRHS(), VD) ? std::nullopt
                                      : reductionOperator(BO->getOpcode());
  if (BO->getOpcode() != BO_Assign)
    return std::nullopt;
  const Expr *RHS = BO->getRHS()->IgnoreParenImpCasts();
  auto Same = [&](const Expr *A, const Expr *B) {
    return text(A->IgnoreParenImpCasts()) == text(B->IgnoreParenImpCasts());
  };
  // s = s op x, s = x op s (not s = x - s).
  if (const auto *Bin = dyn_cast<BinaryOperator>(RHS)) {
    std::optional<StringRef> Op = reductionOperator(Bin->getOpcode());
    if (!Op && Bin->getOpcode() == BO_Sub)
      Op = StringRef("+");
    bool Left =
        referencedVar(Bin->getLHS()) == VD && !mentions(Bin->getRHS(), VD);
    bool Right = Bin->getOpcode() != BO_Sub &&
                 referencedVar(Bin->getRHS()) == VD &&
                 !mentions(Bin->getLHS(), VD);
    if (Op && (Left || Right))
      return Op;
  }
  // s = fmax(s, x), s = std::min(x, s).
  if (const auto *Call = dyn_cast<CallExpr>(RHS)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && Call->getNumArgs() == 2 && FD->getIdentifier()) {
      StringRef Name = FD->getName();
      Name.consume_front("__builtin_");
      std::optional<StringRef> Op =
          llvm::StringSwitch<std::optional<StringRef>>(Name)
              .Cases("fmax", "fmaxf", "fmaxl", "max", StringRef("max"))
              .Cases("fmin", "fminf", "fminl", "min", StringRef("min"))
              .Default(std::nullopt);
      const Expr *A = Call->getArg(0), *B = Call->getArg(1);
      if (Op && ((referencedVar(A) == VD && !mentions(B, VD)) ||
                 (referencedVar(B) == VD && !mentions(A, VD))))
        return Op;
    }
  }
  // s = s < x ? x : s, and the other orders.
  if (const auto *CO = dyn_cast<ConditionalOperator>(RHS)) {
    auto Cmp = asBinary(CO->getCond());
    std::optional<unsigned> Larger = Cmp ? largerSide(Cmp->Op) : std::nullopt;
    if (Larger) {
      const Expr *Sides[2] = {Cmp->LHS, Cmp->RHS};
      unsigned S = referencedVar(Sides[0]) == VD ? 0 : 1;
      const Expr *X = Sides[1 - S];
      const Expr *True = CO->getTrueExpr(), *False = CO->getFalseExpr();
      bool TrueIsS = referencedVar(True) == VD && Same(False, X);
      bool TrueIsX = referencedVar(False) == VD && Same(True, X);
      if (referencedVar(Sides[S]) == VD && !mentions(X, VD) &&
          (TrueIsS || TrueIsX)) {
        // Whether the branch taken when the comparison holds is its larger
        // side.
        bool TakesLarger = (TrueIsS ? S : 1 - S) == *Larger;
        return StringRef(TakesLarger ? "max" : "min");
      }
    }
  }
  // if (x > s) s = x;
  const Stmt *Node = BO;
  const Stmt *Up = parentOf(Node);
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Up);
      CS && CS->size() == 1) {
    Node = CS;
    Up = parentOf(CS);
  }
  const auto *If = dyn_cast_or_null<IfStmt>(Up);
  if (!If || If->getThen() != Node || If->getElse() || mentions(RHS, VD))
    return std::nullopt;
  auto Cmp = asBinary(If->getCond());
  std::optional<unsigned> Larger = Cmp ? largerSide(Cmp->Op) : std::nullopt;
  if (!Larger)
    return std::nullopt;
  const Expr *Sides[2] = {Cmp->LHS, Cmp->RHS};
  unsigned S = referencedVar(Sides[0]) == VD ? 0 : 1;
  if (referencedVar(Sides[S]) != VD || !Same(Sides[1 - S], RHS))
    return std::nullopt;
  // Assigning x when x is the larger keeps the maximum.
  return StringRef(*Larger == 1 - S ? "max" : "min");
}

/// Writes to scalars declared outside the loop: never to the loop variable,
/// to another only if it is private.
bool LoopCheck::checkSharedWrites(
    const llvm::SmallSetVector<const VarDecl *, 4> &Priv) {
  bool WritesOk = true;
  llvm::DenseSet<const VarDecl *> Reported;
  for (const Access &A : Accesses) {
    if (!A.Writes || Reported.count(A.Var))
      continue;
    if (A.Var == Var) {
      report(Diags, A.At->getExprLoc(), Level::Error,
             "the loop variable '%0' is written in the body of the "
             "partitioned loop")
          << Var->getName();
      Reported.insert(A.Var);
      WritesOk = false;
      continue;
    }
    if (!isOutsideLoop(A.Var) || Priv.count(A.Var) ||
        A.Var->getType()->isArrayType())
      continue;
    Reported.insert(A.Var);
    WritesOk = false;
    // An update with a reduction's shape, unless the iteration assigns the
    // variable before it reads it (its own scratch: private).
    const Access *First = llvm::find_if(
        Accesses, [&](const Access &B) { return B.Var == A.Var; });
    bool AssignedFirst =
        First->Writes && !First->Reads && !reductionShape(First->At, A.Var);
    const Access *Update = nullptr;
    std::optional<StringRef> Op;
    bool OneOp = true;
    for (const Access &B : Accesses) {
      if (B.Var != A.Var || !B.Writes)
        continue;
      std::optional<StringRef> Shape = reductionShape(B.At, A.Var);
      if (!Shape) {
        OneOp = false;
        continue;
      }
      if (!Update) {
        Update = &B;
        Op = Shape;
      } else if (*Shape != *Op) {
        OneOp = false;
      }
    }
    if (AssignedFirst || !Update) {
      report(Diags, A.At->getExprLoc(), Level::Error,
             "'%0' is declared outside the partitioned loop and written in "
             "it: a loop-carried dependence or a race (list it in "
             "'private(...)' if each iteration assigns it before reading it)")
          << A.Var->getName();
      continue;
    }
    if (OneOp)
      report(Diags, Update->At->getExprLoc(), Level::Error,
             "'%0' is declared outside the partitioned loop and updated in it "
             "as a reduction: list it in 'reduction(%1: %0)', so that each PE "
             "combines its own partial result")
          << A.Var->getName() << *Op;
    else
      report(Diags, Update->At->getExprLoc(), Level::Error,
             "'%0' is declared outside the partitioned loop and updated in it "
             "with more than one operator: a loop-carried dependence or a "
             "race, and not one reduction")
          << A.Var->getName();
  }
  return WritesOk;
}

//===----------------------------------------------------------------------===//
// Loop-carried dependences between an array's write and its reads
//===----------------------------------------------------------------------===//

void LoopCheck::reportDependences() {
  llvm::DenseSet<const Expr *> Warned;
  for (const Subscript &W : Subscripts) {
    if (!W.IsWrite)
      continue;
    for (const Subscript &R : Subscripts) {
      if (R.IsWrite || R.Root != W.Root ||
          R.Indices.size() != W.Indices.size() || Warned.count(R.At))
        continue;
      for (size_t P = 0; P < W.Indices.size(); ++P) {
        auto WO = loopOffset(Ctx, W.Indices[P], Var);
        auto RO = loopOffset(Ctx, R.Indices[P], Var);
        if (WO && RO && *WO == 0 && *RO != 0) {
          report(Diags, R.At->getExprLoc(), Level::Warning,
                 "'%0' is written at '%1' and read at '%2' in the partitioned "
                 "loop: likely a loop-carried dependence")
              << W.Root->getName() << text(W.At) << text(R.At);
          report(Diags, W.At->getExprLoc(), Level::Note, "'%0' is written here")
              << text(W.At);
          Warned.insert(R.At);
          break;
        }
      }
    }
  }
}

} // namespace fpm::detail
