//===- IterationValues.cpp - What differs between iterations -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Readers of the walk (LoopWalk.h) about which values of the body may
// differ between iterations (IterationValues: the loop variable and what is
// computed from it, what is loaded from memory, the conditions each access
// runs under, the jumps), which array-races reads, and CallWrites.cpp in the
// functions the body calls; and the index of a subscript as a polynomial
// over the iteration's values (iterationLeaf), which array-races and
// dependences read.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopWalk.h"

#include <functional>

using namespace clang;

namespace fpm::detail {

/// Whether E reads memory the iteration may see change: an element of an
/// array, `*p` or `p->m` (not one whose address it only takes, `&a[k]`), or
/// a variable computed from such a read (Loaded).
bool LoopWalk::IterationValues::loads(const Stmt *E) const {
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

void LoopWalk::IterationValues::settle() {
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

void LoopWalk::findIterationValues(
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
void LoopWalk::walkValues(IterationValues &Values, const Stmt *Root,
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
bool LoopWalk::sameInEachIteration(const IterationValues &Values,
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

/// What VD stands for in an index evaluated at At, as bodyLeaf says (the
/// loop variable, constants, invariants, inner loops' variables recorded in
/// Inner, locals of the body initialized once), or a local or private
/// variable computed once in the iteration from these: `j = i + d;` as a
/// statement of the body's top level before At, j written nowhere else.
std::optional<IntPoly> LoopWalk::iterationLeaf(const VarDecl *VD,
                                               const Stmt *At,
                                               InnerLoops *Inner,
                                               unsigned Depth) {
  if (std::optional<IntPoly> P = bodyLeaf(VD, At, Inner, 0))
    return P;
  if (Depth >= 8 || !isPlainInteger(VD))
    return std::nullopt;
  // One plain assignment, a statement of the body's top level before At;
  // every other use of VD in the body reads it.
  const BinaryOperator *Def = nullptr;
  for (const Access &A : Accesses) {
    if (A.Var != VD || !A.Writes)
      continue;
    const auto *BO = dyn_cast_or_null<BinaryOperator>(parentOf(A.At));
    if (Def || A.Reads || !BO || BO->getOpcode() != BO_Assign ||
        BO->getLHS() != A.At || parentOf(BO) != For.getBody() ||
        !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(BO->getEndLoc()),
                                      SM.getExpansionLoc(At->getBeginLoc())))
      return std::nullopt;
    Def = BO;
  }
  if (!Def)
    return std::nullopt;
  llvm::SmallVector<const Stmt *, 32> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl() == VD && DRE != Def->getLHS() && !readsValue(DRE))
      return std::nullopt;
    llvm::append_range(Work, S->children());
  }
  return intPolyFromExpr(Def->getRHS(), Ctx, [&](const VarDecl *W) {
    return iterationLeaf(W, At, Inner, Depth + 1);
  });
}
} // namespace fpm::detail
