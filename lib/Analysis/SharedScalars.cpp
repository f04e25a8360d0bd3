//===- SharedScalars.cpp - What the body does with a shared scalar --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Readers of the walk (LoopWalk.h) about a scalar declared outside the loop
// that the body writes, which the shared-writes and private-after-loop
// checks share: whether a write has a reduction's shape (`s += x`,
// `s = fmax(s, x)`, `s = s < x ? x : s`, `if (x > s) s = x;`), and the
// reduction that leaves in a variable the body writes but never reads what
// the serial loop leaves (a flag's constant, the last iteration's loop
// variable), with what it holds before the loop.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopWalk.h"

#include "llvm/ADT/StringSwitch.h"

using namespace clang;

namespace fpm::detail {

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
std::optional<StringRef> LoopWalk::reductionShape(const Expr *Target,
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

/// Whether S holds a label or a case a jump could reach.
static bool hasLabel(const Stmt *S) {
  if (!S)
    return false;
  if (isa<LabelStmt, SwitchCase>(S))
    return true;
  return llvm::any_of(S->children(), hasLabel);
}

static std::optional<int64_t> constantOf(const Expr *E, const ASTContext &Ctx) {
  Expr::EvalResult R;
  if (!E || E->isValueDependent() || !E->EvaluateAsInt(R, Ctx) ||
      !R.Val.getInt().isRepresentableByInt64())
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

/// The value VD, an integer local of the function, holds when the loop
/// starts, where the statements before the loop in its blocks show it: its
/// initializer or the assignment of a constant, with nothing between there
/// and the loop that may change it (no other use of it, no label a jump
/// could reach, no loop around the partitioned one, nothing that takes its
/// address in the function). nullopt where fpm cannot tell.
std::optional<int64_t> LoopWalk::valueBeforeLoop(const VarDecl *VD) const {
  QualType T = VD->getType();
  if (isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || T->isDependentType() ||
      !T->isIntegerType() || T->isReferenceType() || T.isVolatileQualified() ||
      !Fn.getBody() || !onlyReadOrAssigned(Fn.getBody(), VD))
    return std::nullopt;
  const Stmt *Cur = &For;
  for (const Stmt *P = parentOf(Cur); P; Cur = P, P = parentOf(P)) {
    if (const auto *If = dyn_cast<IfStmt>(P)) {
      if (mentions(If->getInit(), VD) ||
          mentions(If->getConditionVariableDeclStmt(), VD) ||
          mentions(If->getCond(), VD))
        return std::nullopt;
      continue;
    }
    const auto *CS = dyn_cast<CompoundStmt>(P);
    if (!CS)
      return std::nullopt;
    auto Before = llvm::reverse(
        llvm::make_range(CS->body_begin(), llvm::find(CS->body(), Cur)));
    for (const Stmt *S : Before) {
      if (const auto *DS = dyn_cast<DeclStmt>(S);
          DS && llvm::is_contained(DS->decls(), VD))
        return constantOf(VD->getInit(), Ctx);
      if (auto Bin = asBinary(dyn_cast<Expr>(S));
          Bin && Bin->Op == BO_Assign && referencedVar(Bin->LHS) == VD &&
          !mentions(Bin->RHS, VD))
        return constantOf(Bin->RHS, Ctx);
      if (mentions(S, VD) || hasLabel(S))
        return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Whether the body reads a variable declared outside the loop that it
/// also writes, other than Except and the private ones, elsewhere than in
/// an update of a reduction's shape (`if (a[i] > best) ...`, with best
/// written in the body): an iteration's condition may then depend on what
/// other iterations did.
bool LoopWalk::readsCarriedValue(const VarDecl *Except) const {
  return llvm::any_of(Accesses, [&](const Access &A) {
    if (!A.Reads || A.Writes || A.Var == Except || A.Var == Var ||
        !isOutsideLoop(A.Var) || Private.count(A.Var))
      return false;
    return llvm::any_of(Accesses, [&](const Access &W) {
      if (W.Var != A.Var || !W.Writes)
        return false;
      // `s = s + x`: the read is the update's own.
      const Stmt *Update = parentOf(W.At);
      while (isa_and_nonnull<ParenExpr>(Update))
        Update = parentOf(Update);
      return !Update || !reductionShape(W.At, W.Var) ||
             !isInside(A.At->getExprLoc(), Update->getSourceRange());
    });
  });
}

/// For VD, a scalar the body writes and never reads, a reduction that
/// leaves in it what the serial loop leaves: where every write assigns one
/// constant c (a flag, `if (a[i] > t) found = 1;`), `||` (c = 1) or `&&`
/// (c = 0) if VD is 0 or 1 before the loop, `max` if it is at most c, `min`
/// if at least; where every write assigns the loop variable (`if (a[i] > t)
/// last = i;`: the last such iteration's), `max` in a loop that counts up
/// and `min` in one that counts down, if VD starts at most (at least) at
/// the loop's first value. The condition on the value before the loop is
/// in the result unless valueBeforeLoop proves it. Only where no condition
/// may depend on other iterations (readsCarriedValue): `if (a[i] > best) {
/// best = a[i]; where = i; }` is no reduction of where. nullopt for any
/// other write.
std::optional<LoopWalk::FinalReduction>
LoopWalk::finalValueReduction(const VarDecl *VD) const {
  QualType T = VD->getType().getNonReferenceType();
  // (The loop's header may not read it: a bound written in the body is an
  // error of its own.)
  if (T->isDependentType() || !scalarTypeEnumerator(Ctx, T) ||
      T.isVolatileQualified() || mentions(For.getInit(), VD) ||
      mentions(For.getCond(), VD) || mentions(For.getInc(), VD))
    return std::nullopt;
  llvm::SmallVector<const Expr *, 4> Values;
  for (const Access &A : Accesses) {
    if (A.Var != VD)
      continue;
    if (A.Reads || !A.Writes)
      return std::nullopt;
    const Stmt *P = parentOf(A.At);
    while (isa_and_nonnull<ParenExpr>(P))
      P = parentOf(P);
    const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
    if (!BO || BO->getOpcode() != BO_Assign ||
        BO->getLHS()->IgnoreParens() != A.At)
      return std::nullopt;
    Values.push_back(BO->getRHS());
  }
  if (Values.empty() || readsCarriedValue(VD))
    return std::nullopt;
  std::string Name = VD->getName().str();
  std::optional<int64_t> Before = valueBeforeLoop(VD);

  // A constant, the same in every write (converted to VD's type).
  std::optional<int64_t> C = constantOf(Values[0], Ctx);
  if (C && llvm::all_of(Values, [&](const Expr *E) {
        return constantOf(E, Ctx) == C;
      })) {
    FinalReduction R;
    if (T->isBooleanType() && Ctx.getLangOpts().Bool)
      R.Assigned = *C ? "true" : "false";
    else
      R.Assigned = std::to_string(*C);
    bool Flag = *C == 0 || *C == 1;
    if (T->isBooleanType() ||
        (Flag && (!Before || *Before == 0 || *Before == 1))) {
      R.Op = *C ? "||" : "&&";
      if (!T->isBooleanType() && !Before)
        R.Condition = "'" + Name + "' is 0 or 1";
      return R;
    }
    R.Op = !Before || *Before <= *C ? "max" : "min";
    if (!Before)
      R.Condition = "'" + Name + "' is at most " + R.Assigned;
    return R;
  }

  // The loop variable, in a type that holds all its values.
  QualType VarT = Var->getType();
  if (!Increasing || !T->isIntegerType() || T->isBooleanType() ||
      VarT->isDependentType() ||
      Ctx.getIntWidth(T) <
          Ctx.getIntWidth(VarT) +
              (VarT->isUnsignedIntegerType() && T->isSignedIntegerType()) ||
      (VarT->isSignedIntegerType() && T->isUnsignedIntegerType()) ||
      !llvm::all_of(Values,
                    [&](const Expr *E) { return referencedVar(E) == Var; }))
    return std::nullopt;
  FinalReduction R;
  R.Op = *Increasing ? "max" : "min";
  R.Assigned = "'" + Var->getName().str() + "'";
  std::optional<int64_t> First = constantOf(Lower, Ctx);
  if (!Before || !First || (*Increasing ? *Before > *First : *Before < *First))
    R.Condition = "'" + Name + "' is at " + (*Increasing ? "most" : "least") +
                  " the first value of " + R.Assigned;
  return R;
}

} // namespace fpm::detail
