//===- SharingChecks.cpp - What the iterations of a loop share ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Over 600 lines because every check here reads the same record of the one
// walk of the body (LoopCheck.h) and shares its helpers for subscripts.
//
// The checks of LoopCheck (LoopCheck.h) on what one iteration may write that
// another reads or writes (docs/pragma.md, "What the rewriter refuses"):
//
//  - a write to a scalar declared outside the loop that is not private
//    (error); where the write has a reduction's shape (`s += x`,
//    `s = fmax(s, x)`, `s = s < x ? x : s`), the error suggests
//    `reduction(op: s)`, never `private`; where the body only assigns it a
//    flag's constant or the loop variable, the reduction that leaves the
//    serial loop's value; `private` only where the code after the loop does
//    not read it;
//  - a write to an array declared outside the loop at subscripts that use
//    neither the loop variable nor a value computed from it in the
//    iteration, unless the array is private (error: every iteration writes
//    the same elements);
//  - an update (`+=`, `++`) of such an array at subscripts computed from
//    memory the iteration reads, none of them affine in the loop variable
//    (error: an array reduction, such as a histogram).
//
// The same writes in the functions the body calls: CallWrites.cpp. An
// array read at an element another iteration writes: DependenceChecks.cpp.
//
//
// About 960 lines: each check reads the same record of the body's values
// (which vary with the iteration, walkValues) and the same suggestion of
// what to write (a reduction's shape, a flag's, private), so they stay
// beside them rather than each carrying its own copy.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopCheck.h"

#include "llvm/ADT/StringSwitch.h"

#include <functional>

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
std::optional<int64_t> LoopCheck::valueBeforeLoop(const VarDecl *VD) const {
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
bool LoopCheck::readsCarriedValue(const VarDecl *Except) const {
  return llvm::any_of(Accesses, [&](const Access &A) {
    if (!A.Reads || A.Writes || A.Var == Except || A.Var == Var ||
        !isOutsideLoop(A.Var) || PrivateVars.count(A.Var))
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
std::optional<LoopCheck::FinalReduction>
LoopCheck::finalValueReduction(const VarDecl *VD) const {
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

/// The error for a write to VD, a scalar declared outside the loop that is
/// neither private nor a reduction variable, that has no reduction's shape
/// (At: its first write). It suggests what gives the serial loop's result:
/// a reduction for a flag or the last iteration's loop variable; never
/// `private` where the code after the loop reads VD (each iteration's copy
/// is lost there).
void LoopCheck::reportSharedWrite(const VarDecl *VD, const Expr *At) {
  if (std::optional<FinalReduction> R = finalValueReduction(VD)) {
    report(Diags, At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop and set to %1 in "
           "it: a race; list it in 'reduction(%2: %0)', which leaves in it "
           "what the serial loop leaves%3")
        << VD->getName() << R->Assigned << R->Op
        << (R->Condition.empty() ? ""
                                 : " if " + R->Condition + " before the loop");
    return;
  }
  ReadAfter After = readAfterLoop(VD);
  if (After.Kind == ReadAfter::Yes) {
    report(Diags, At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop, written in it and "
           "read after it: a race; after the serial loop it holds its last "
           "write, which a partitioned loop does not define, and a private "
           "copy is lost (fpm has no 'lastprivate'); compute that value "
           "after the loop")
        << VD->getName();
    report(Diags, After.At->getLocation(), Level::Note,
           "'%0' is read after the loop here")
        << VD->getName();
    return;
  }
  report(Diags, At->getExprLoc(), Level::Error,
         "'%0' is declared outside the partitioned loop and written in it: a "
         "loop-carried dependence or a race (list it in 'private(...)' if "
         "each iteration assigns it before reading it%1)")
      << VD->getName()
      << (After.Kind == ReadAfter::Maybe ? " and nothing reads it after the "
                                           "loop"
                                         : "");
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
      noteCallWrite(A.Var);
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
    if (AssignedFirst || !Update)
      reportSharedWrite(A.Var, A.At);
    else if (OneOp)
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
    noteCallWrite(A.Var);
    noteThreadPrivate(A.Var);
  }
  return WritesOk;
}

//===----------------------------------------------------------------------===//
// Arrays the iterations race on
//===----------------------------------------------------------------------===//

/// Whether E reads memory the iteration may see change: an element of an
/// array, `*p` or `p->m` (not one whose address it only takes, `&a[k]`), or
/// a variable computed from such a read (Loaded).
bool LoopCheck::IterationValues::loads(const Stmt *E) const {
  if (!E || isa<LambdaExpr, BlockExpr, UnaryExprOrTypeTraitExpr>(E))
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    return VD && Loaded.count(VD);
  }
  // The address of an lvalue: what its subscripts and pointers read.
  std::function<bool(const Expr *)> Address = [&](const Expr *L) {
    L = L->IgnoreParens();
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(L)) {
      const Expr *Base = ASE->getBase()->IgnoreParens();
      const auto *Decay = dyn_cast<ImplicitCastExpr>(Base);
      return loads(ASE->getIdx()) ||
             (Decay && Decay->getCastKind() == CK_ArrayToPointerDecay
                  ? Address(Decay->getSubExpr())
                  : loads(Base));
    }
    if (const auto *ME = dyn_cast<MemberExpr>(L))
      return ME->isArrow() ? loads(ME->getBase()) : Address(ME->getBase());
    if (const auto *UO = dyn_cast<UnaryOperator>(L);
        UO && UO->getOpcode() == UO_Deref)
      return loads(UO->getSubExpr());
    return isa<DeclRefExpr>(L) ? false : loads(L);
  };
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() == UO_AddrOf)
      return Address(UO->getSubExpr());
    if (UO->getOpcode() == UO_Deref)
      return true;
  }
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(E);
      Cast && Cast->getCastKind() == CK_ArrayToPointerDecay)
    return Address(Cast->getSubExpr());
  if (isa<ArraySubscriptExpr>(E) ||
      (isa<MemberExpr>(E) && cast<MemberExpr>(E)->isArrow()))
    return true;
  return llvm::any_of(E->children(), [&](const Stmt *C) { return loads(C); });
}

void LoopCheck::IterationValues::settle() {
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const Def &D : Defs) {
      if (!Varying.count(D.Target) &&
          (varies(D.Value) || llvm::any_of(D.Conditions, [&](const Stmt *S) {
             return varies(S);
           }))) {
        Varying.insert(D.Target);
        Changed = true;
      }
      if (!Loaded.count(D.Target) && loads(D.Value)) {
        Loaded.insert(D.Target);
        Changed = true;
      }
    }
  }
}

void LoopCheck::findIterationValues(
    IterationValues &Values,
    const llvm::SmallSetVector<const VarDecl *, 4> &Priv) {
  Values.Varying.insert(Var);
  walkValues(Values, For.getBody(), &For);

  // What fpm cannot follow: a shared variable written in the body (an error
  // of its own) and any variable of the iteration's own that is not a plain
  // scalar.
  for (const Access &A : Accesses)
    if ((A.Writes && isOutsideLoop(A.Var) && !Priv.count(A.Var)) ||
        (!A.Var->getType()->isScalarType() &&
         (!isOutsideLoop(A.Var) || Priv.count(A.Var))))
      Values.Varying.insert(A.Var);

  // Then what is computed from what varies, to a fixed point.
  Values.settle();
}

/// Records in Values what Root, the loop's body or a callee's (Whole: the
/// loop, or the callee's body), assigns and under which conditions, its
/// jumps, and the variables fpm cannot follow there (their address taken,
/// not a plain scalar, static).
void LoopCheck::walkValues(IterationValues &Values, const Stmt *Root,
                           const Stmt *Whole) {
  llvm::DenseSet<const VarDecl *> &Varying = Values.Varying;
  llvm::SmallVector<const Expr *, 8> Conds;
  // In a `for` loop's header: its variable sweeps a range (not Loaded).
  bool InHeader = false;

  // The variable an lvalue is part of: `a[k].x` is a's.
  auto RootOf = [](const Expr *E) -> const VarDecl * {
    while (true) {
      E = E->IgnoreParenImpCasts();
      if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
        E = ASE->getBase();
      else if (const auto *ME = dyn_cast<MemberExpr>(E); ME && !ME->isArrow())
        E = ME->getBase();
      else
        return referencedVar(E);
    }
  };
  auto Define = [&](const VarDecl *VD, const Stmt *Value) {
    if (!VD)
      return;
    Values.Defs.push_back(
        {VD, InHeader ? nullptr : Value, {Conds.begin(), Conds.end()}});
    // `for (j = k; ...)` varies with k.
    if (InHeader && Value)
      Values.Defs.back().Conditions.push_back(Value);
  };
  auto Jump = [&](const Stmt *S, const Stmt *Loop) {
    Values.Jumps.push_back({S, {Conds.begin(), Conds.end()}, Loop});
  };

  // Loop: the innermost loop of the body around S (null: none); InSwitch:
  // a break leaves a switch, not a loop.
  std::function<void(const Stmt *, const Stmt *, bool)> Walk =
      [&](const Stmt *S, const Stmt *Loop, bool InSwitch) {
        if (!S)
          return;
        auto Under = [&](const Expr *Cond, auto &&Body) {
          if (Cond)
            Conds.push_back(Cond);
          Body();
          if (Cond)
            Conds.pop_back();
        };
        auto Children = [&] {
          for (const Stmt *C : S->children())
            Walk(C, Loop, InSwitch);
        };
        if (isa<LambdaExpr, BlockExpr>(S)) {
          // Runs at any time, or never: whatever it names is not followed.
          std::function<void(const Stmt *)> Mark = [&](const Stmt *T) {
            if (!T)
              return;
            if (const auto *DRE = dyn_cast<DeclRefExpr>(T))
              if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
                Varying.insert(VD);
            for (const Stmt *C : T->children())
              Mark(C);
          };
          Mark(S);
          if (const auto *Lambda = dyn_cast<LambdaExpr>(S))
            for (const Expr *Capture : Lambda->capture_inits())
              Walk(Capture, Loop, InSwitch);
          return;
        }
        if (const auto *E = dyn_cast<Expr>(S)) {
          if (auto Bin = asBinary(E);
              Bin && BinaryOperator::isAssignmentOp(Bin->Op)) {
            Walk(Bin->RHS, Loop, InSwitch);
            if (const VarDecl *VD = referencedVar(Bin->LHS)) {
              Define(VD, Bin->RHS);
              return;
            }
            Walk(Bin->LHS, Loop, InSwitch);
            return;
          }
          if (auto IncDec = asIncDec(E)) {
            if (const VarDecl *VD = referencedVar(IncDec->second)) {
              Define(VD, nullptr);
              return;
            }
            Walk(IncDec->second, Loop, InSwitch);
            return;
          }
          if (const auto *UO = dyn_cast<UnaryOperator>(E);
              UO && UO->getOpcode() == UO_AddrOf)
            if (const VarDecl *VD = RootOf(UO->getSubExpr()))
              Varying.insert(VD);
          if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
            // Anything but reading its value (a reference bound to it, a
            // non-const reference argument) may change it out of sight.
            if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
                VD && VD->getType()->isScalarType() && !readsValue(DRE))
              Varying.insert(VD);
            return;
          }
          if (const auto *UO = dyn_cast<UnaryOperator>(E);
              isa<ArraySubscriptExpr, CallExpr>(E) ||
              (UO && UO->getOpcode() == UO_Deref) ||
              (isa<MemberExpr>(E) && cast<MemberExpr>(E)->isArrow()))
            Values.Conditions[E].assign(Conds.begin(), Conds.end());
          if (const auto *CO = dyn_cast<AbstractConditionalOperator>(E)) {
            Walk(CO->getCond(), Loop, InSwitch);
            Under(CO->getCond(), [&] {
              Walk(CO->getTrueExpr(), Loop, InSwitch);
              Walk(CO->getFalseExpr(), Loop, InSwitch);
            });
            return;
          }
          if (const auto *BO = dyn_cast<BinaryOperator>(E);
              BO && BO->isLogicalOp()) {
            Walk(BO->getLHS(), Loop, InSwitch);
            Under(BO->getLHS(), [&] { Walk(BO->getRHS(), Loop, InSwitch); });
            return;
          }
          return Children();
        }
        if (const auto *DS = dyn_cast<DeclStmt>(S)) {
          for (const Decl *D : DS->decls())
            if (const auto *VD = dyn_cast<VarDecl>(D)) {
              if (!VD->getType()->isScalarType() ||
                  VD->getType()->isReferenceType() || VD->isStaticLocal())
                Varying.insert(VD);
              if (VD->getInit()) {
                Walk(VD->getInit(), Loop, InSwitch);
                Define(VD, VD->getInit());
              }
            }
          return;
        }
        if (const auto *If = dyn_cast<IfStmt>(S)) {
          Walk(If->getInit(), Loop, InSwitch);
          Walk(If->getConditionVariableDeclStmt(), Loop, InSwitch);
          Walk(If->getCond(), Loop, InSwitch);
          Under(If->getCond(), [&] {
            Walk(If->getThen(), Loop, InSwitch);
            Walk(If->getElse(), Loop, InSwitch);
          });
          return;
        }
        if (const auto *F = dyn_cast<ForStmt>(S)) {
          InHeader = true;
          Walk(F->getInit(), Loop, InSwitch);
          InHeader = false;
          Walk(F->getConditionVariableDeclStmt(), Loop, InSwitch);
          Walk(F->getCond(), Loop, InSwitch);
          Under(F->getCond(), [&] {
            Walk(F->getBody(), F, false);
            InHeader = true;
            Walk(F->getInc(), F, false);
            InHeader = false;
          });
          return;
        }
        if (const auto *W = dyn_cast<WhileStmt>(S)) {
          Walk(W->getConditionVariableDeclStmt(), Loop, InSwitch);
          Walk(W->getCond(), Loop, InSwitch);
          Under(W->getCond(), [&] { Walk(W->getBody(), W, false); });
          return;
        }
        if (const auto *Do = dyn_cast<DoStmt>(S)) {
          Under(Do->getCond(), [&] {
            Walk(Do->getBody(), Do, false);
            Walk(Do->getCond(), Do, false);
          });
          return;
        }
        if (const auto *R = dyn_cast<CXXForRangeStmt>(S)) {
          Walk(R->getInit(), Loop, InSwitch);
          Walk(R->getRangeStmt(), Loop, InSwitch);
          Walk(R->getBeginStmt(), Loop, InSwitch);
          Walk(R->getEndStmt(), Loop, InSwitch);
          Under(R->getRangeInit(), [&] {
            Under(R->getCond(), [&] {
              Walk(R->getInc(), R, false);
              Walk(R->getLoopVarStmt(), R, false);
              Walk(R->getBody(), R, false);
            });
          });
          return;
        }
        if (const auto *Switch = dyn_cast<SwitchStmt>(S)) {
          Walk(Switch->getInit(), Loop, InSwitch);
          Walk(Switch->getConditionVariableDeclStmt(), Loop, InSwitch);
          Walk(Switch->getCond(), Loop, InSwitch);
          Under(Switch->getCond(),
                [&] { Walk(Switch->getBody(), Loop, true); });
          return;
        }
        if (isa<ContinueStmt>(S) || (isa<BreakStmt>(S) && !InSwitch)) {
          Jump(S, Loop);
          return;
        }
        if (isa<GotoStmt, IndirectGotoStmt>(S)) {
          // Anywhere: what follows in the body may run in some iterations
          // only.
          Jump(S, Whole);
          return;
        }
        if (const auto *Return = dyn_cast<ReturnStmt>(S)) {
          // A callee's (the body's is an error): what follows it.
          Walk(Return->getRetValue(), Loop, InSwitch);
          Jump(S, nullptr);
          return;
        }
        Children();
      };
  Walk(Root, nullptr, false);
}

/// Whether At (a subscript, `*p`, a call), with Indices, is the same in
/// every iteration where Values were found: no index varies, nor any
/// condition it runs under, and no break, continue, goto or return that
/// only some iterations take can skip it.
bool LoopCheck::sameInEachIteration(const IterationValues &Values,
                                    const Expr *At,
                                    ArrayRef<const Expr *> Indices) const {
  if (Values.anyVaries(Indices))
    return false;
  auto Conds = Values.Conditions.find(At);
  if (Conds != Values.Conditions.end() && Values.anyVaries(Conds->second))
    return false;
  // A jump of an inner loop skips what that loop holds (a goto: the whole
  // body); one of the partitioned loop (or a callee's return), what follows.
  return llvm::none_of(Values.Jumps, [&](const IterationValues::Jump &J) {
    return Values.anyVaries(J.Conditions) &&
           (J.Loop ? isInside(At->getExprLoc(), J.Loop->getSourceRange())
                   : SM.isBeforeInTranslationUnit(
                         SM.getExpansionLoc(J.S->getBeginLoc()),
                         SM.getExpansionLoc(At->getBeginLoc())));
  });
}

/// W, a write, reads the element it writes: a compound assignment, `++`,
/// `--`, or `a[e] = ... a[e] ...` (the same subscripts, as written).
bool LoopCheck::isReadModifyWrite(const Subscript &W) const {
  if (W.AlsoReads)
    return true;
  const Stmt *Cur = W.At;
  const Stmt *P = parentOf(Cur);
  while (isa_and_nonnull<ParenExpr, MemberExpr>(P)) {
    Cur = P;
    P = parentOf(P);
  }
  auto Bin = asBinary(dyn_cast_or_null<Expr>(P));
  if (!Bin || Bin->Op != BO_Assign || Bin->LHS->IgnoreParens() != Cur)
    return false;
  std::string Element = text(W.At);
  llvm::SmallVector<const Stmt *, 16> Work{Bin->RHS};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S);
        ASE && text(ASE) == Element)
      return true;
    llvm::append_range(Work, S->children());
  }
  return false;
}

/// Whether some subscript of W is an affine function of the loop variable
/// with a coefficient that is not zero, whatever else it adds: `a[i]`,
/// `a[k - 1][l]`, `a[i*n + j]`, `a[i*n + l]` with l loaded from memory. Two
/// iterations then write different elements (for the coefficients and
/// additions a DOALL loop has). Each subscript is read as a sum of terms,
/// each an integer polynomial (iterationLeaf, a variable that does not vary
/// standing for itself) or anything else, which is left out.
bool LoopCheck::separatesIterations(const Subscript &W,
                                    const IterationValues &Values) {
  auto Leaf = [&](const VarDecl *VD) -> std::optional<IntPoly> {
    if (VD == Var)
      return IntPoly::variable(VD);
    if (std::optional<int64_t> C = constantValue(VD))
      return IntPoly::constant(*C);
    if (!Values.Varying.count(VD) && isPlainInteger(VD))
      return IntPoly::variable(VD);
    InnerLoops Inner;
    return iterationLeaf(VD, W.At, &Inner, 0);
  };
  for (const Expr *Index : W.Indices) {
    // Index as a sum of terms: Sum the polynomial ones.
    std::optional<IntPoly> Sum = IntPoly();
    std::function<void(const Expr *, bool)> Add = [&](const Expr *E,
                                                      bool Negate) {
      E = E->IgnoreParenImpCasts();
      if (auto Bin = asBinary(E);
          Bin && (Bin->Op == BO_Add || Bin->Op == BO_Sub)) {
        Add(Bin->LHS, Negate);
        Add(Bin->RHS, Bin->Op == BO_Sub ? !Negate : Negate);
        return;
      }
      std::optional<IntPoly> Term = intPolyFromExpr(E, Ctx, Leaf);
      if (Term && Sum)
        Sum = Negate ? Sum->minus(*Term) : Sum->plus(*Term);
    };
    Add(Index, false);
    if (!Sum || !Sum->uses(Var))
      continue;
    // Sum at i = 0, 1, 2: linear in i if the differences agree.
    std::optional<IntPoly> At[3];
    for (int K = 0; K < 3; ++K)
      if (std::optional<IntPoly> C = IntPoly::constant(K))
        At[K] = Sum->substitute(Var, *C);
    if (!At[0] || !At[1] || !At[2])
      continue;
    std::optional<IntPoly> Slope = At[1]->minus(*At[0]);
    std::optional<IntPoly> Next = At[2]->minus(*At[1]);
    if (Slope && Next && *Slope == *Next && !(*Slope == IntPoly()))
      return true;
  }
  return false;
}

/// The writes to arrays declared outside the loop (or through pointers
/// declared there) that iterations race on: one whose subscripts, and the
/// conditions it runs under, use neither the loop variable nor anything
/// computed from it (every iteration writes the same elements), in the body
/// or in a function it calls (checkCallWrites); and an update (`+=`, `++`)
/// at subscripts computed from memory the iteration reads, none of them an
/// affine function of the loop variable (an array reduction: iterations may
/// update the same element).
bool LoopCheck::checkArrayRaces(
    const llvm::SmallSetVector<const VarDecl *, 4> &Priv) {
  IterationValues Values;
  findIterationValues(Values, Priv);
  bool RacesOk = true;
  llvm::DenseSet<const VarDecl *> Reported;
  for (const Subscript &W : Subscripts) {
    if (!W.IsWrite || W.InLambda || !W.Root || W.Root == Var ||
        !isOutsideLoop(W.Root) || Reported.count(W.Root))
      continue;
    QualType T = W.Root->getType().getNonReferenceType();
    bool IsArray = T->isArrayType();
    if ((!IsArray && !T->isPointerType()) || (IsArray && Priv.count(W.Root)) ||
        Values.Varying.count(W.Root))
      continue;
    if (sameInEachIteration(Values, W.At, W.Indices)) {
      Reported.insert(W.Root);
      RacesOk = false;
      if (IsArray)
        report(Diags, W.At->getExprLoc(), Level::Error,
               "'%0' is declared outside the partitioned loop and every "
               "iteration writes the same elements of it: the subscripts of "
               "'%1' use neither the loop variable '%2' nor a value computed "
               "from it; a race (list '%0' in 'private(...)' if each "
               "iteration uses it as its own scratch)")
            << W.Root->getName() << text(W.At) << Var->getName();
      else
        report(Diags, W.At->getExprLoc(), Level::Error,
               "every iteration writes the same elements through '%0', "
               "declared outside the partitioned loop: the subscripts of '%1' "
               "use neither the loop variable '%2' nor a value computed from "
               "it; a race (give each iteration elements of its own, or a "
               "scratch array declared in the loop)")
            << W.Root->getName() << text(W.At) << Var->getName();
      report(Diags, W.Root->getLocation(), Level::Note, "'%0' is declared here")
          << W.Root->getName();
      noteThreadPrivate(W.Root);
      continue;
    }
    // An array reduction: `hist[key[i]]++`, `l = x[k]; q[l] += 1;`.
    if (!isReadModifyWrite(W) || !Values.anyVaries(W.Indices) ||
        llvm::none_of(W.Indices,
                      [&](const Expr *E) { return Values.loads(E); }) ||
        separatesIterations(W, Values))
      continue;
    Reported.insert(W.Root);
    RacesOk = false;
    // What to write instead: `q_rows[k][l]`, the subscripts as written.
    std::string Name = W.Root->getName().str();
    std::string Element = text(W.At);
    std::string Rows = Name + "_rows[" + Var->getName().str() + "]";
    Rows += StringRef(Element).starts_with(Name + "[")
                ? Element.substr(Name.size())
                : std::string("[...]");
    report(Diags, W.At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop and updated at "
           "'%1', whose subscripts are computed from memory the iteration "
           "reads: two iterations may update the same element, a race (an "
           "array reduction, such as a histogram; fpm reduces scalars only); "
           "give each iteration a row of its own, '%2', in an array declared "
           "outside the loop, and add the rows into '%0' after the loop (or "
           "partition a loop over blocks of iterations, a row per block)")
        << Name << Element << Rows;
    report(Diags, W.Root->getLocation(), Level::Note, "'%0' is declared here")
        << W.Root->getName();
    noteThreadPrivate(W.Root);
  }
  RacesOk &= checkCallWrites(Values, Priv, Reported);
  return RacesOk;
}

} // namespace fpm::detail
