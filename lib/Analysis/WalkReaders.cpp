//===- WalkReaders.cpp - What the walk's record says of the body ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The readers of LoopWalk's record of the body (LoopWalk.h) that the
// checks (LoopChecks.h), the walk's own analyses (CallWrites.cpp,
// IterationValues.cpp) and the proofs (OutCover.cpp's that an iteration
// writes each out section whole, DeriveSections.cpp) share: each
// statement's parent, what
// runs on every iteration, the inner loops' ranges, which names are
// invariant, which calls the checks follow, and subscripts and sections as
// integer polynomials (IntPoly.h).
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopWalk.h"

using namespace clang;

namespace fpm::detail {

/// The statement S is a child of, in the function's body as children()
/// sees it (the tree walk() walks: a declaration's initializer and a VLA's
/// size are children of its DeclStmt, an initializer list is its semantic
/// form), or in the body of a function coverOut follows (addParents); null
/// outside them, and for a body itself.
const Stmt *LoopWalk::parentOf(const Stmt *S) const {
  addParents(Fn.getBody());
  return Parents.lookup(S);
}

/// Makes parentOf know the statements under Root, a function's body.
void LoopWalk::addParents(const Stmt *Root) const {
  if (!Root || !ParentRoots.insert(Root).second)
    return;
  llvm::SmallVector<const Stmt *, 64> Work{Root};
  while (!Work.empty()) {
    const Stmt *P = Work.pop_back_val();
    for (const Stmt *Child : P->children())
      if (Child && Parents.try_emplace(Child, P).second)
        Work.push_back(Child);
  }
}

/// The value of E, an lvalue, is read where E stands, and nothing else is
/// done with it: an lvalue-to-rvalue conversion, or an argument of a
/// numeric call (std::min binds a reference to const).
bool LoopWalk::readsValue(const Expr *E) const {
  const Stmt *Cur = E;
  const Stmt *P = parentOf(Cur);
  auto IsNoOp = [](const Stmt *S) {
    const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(S);
    return Cast && Cast->getCastKind() == CK_NoOp;
  };
  for (; isa_and_nonnull<ParenExpr>(P) || IsNoOp(P); Cur = P, P = parentOf(P))
    ;
  if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P))
    return Cast->getCastKind() == CK_LValueToRValue;
  if (const auto *Call = dyn_cast_or_null<CallExpr>(P))
    return Cur != Call->getCallee() && isNumericCall(Call);
  return false;
}

/// Every use of VD in Root reads its value.
bool LoopWalk::onlyRead(const Stmt *Root, const VarDecl *VD) const {
  llvm::SmallVector<const Stmt *, 32> Work{Root};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl() == VD && !readsValue(DRE))
      return false;
    llvm::append_range(Work, S->children());
  }
  return true;
}

std::optional<int64_t> LoopWalk::constantValue(const VarDecl *VD) const {
  if (!isPlainInteger(VD) || !VD->getType().isConstQualified())
    return std::nullopt;
  const Expr *Init = VD->getAnyInitializer();
  Expr::EvalResult R;
  if (!Init || Init->isInstantiationDependent() ||
      !Init->EvaluateAsInt(R, Ctx) || !R.Val.getInt().isRepresentableByInt64())
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

/// Nothing in Root but Skip can change VD behind its back: every use of VD
/// there reads it or assigns it (`=`, `+=`, `++`) by name; its address is
/// never taken, no reference is bound to it, no lambda assigns it.
bool LoopWalk::onlyReadOrAssigned(const Stmt *Root, const VarDecl *VD,
                                  const Stmt *Skip) const {
  llvm::SmallVector<const Stmt *, 64> Work{Root};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S || S == Skip)
      continue;
    llvm::append_range(Work, S->children());
    const auto *DRE = dyn_cast<DeclRefExpr>(S);
    if (!DRE || DRE->getDecl() != VD || readsValue(DRE))
      continue;
    if (DRE->refersToEnclosingVariableOrCapture())
      return false;
    const Stmt *P = parentOf(DRE);
    while (isa_and_nonnull<ParenExpr>(P))
      P = parentOf(P);
    if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
        BO && BO->isAssignmentOp() && BO->getLHS()->IgnoreParens() == DRE)
      continue;
    if (const auto *UO = dyn_cast_or_null<UnaryOperator>(P);
        UO && UO->isIncrementDecrementOp())
      continue;
    return false;
  }
  return true;
}

/// VD, a local or a parameter declared outside the loop, keeps its value
/// through the loop: the loop only reads it, and nothing may write it behind
/// the function's back (onlyReadOrAssigned).
bool LoopWalk::isInvariant(const VarDecl *VD) {
  if (auto It = Invariant.find(VD); It != Invariant.end())
    return It->second;
  bool Result = VD != Var && isPlainInteger(VD) &&
                (isa<ParmVarDecl>(VD) || VD->hasLocalStorage()) &&
                isOutsideLoop(VD) && Fn.getBody() && onlyRead(&For, VD) &&
                onlyReadOrAssigned(Fn.getBody(), VD, &For);
  Invariant[VD] = Result;
  return Result;
}

/// The innermost `for` of the body whose init sets VD and whose body holds
/// Context.
const ForStmt *LoopWalk::inductionLoop(const VarDecl *VD,
                                       const Stmt *Context) const {
  const Stmt *Cur = Context;
  for (const Stmt *P = parentOf(Cur); P && P != &For; Cur = P, P = parentOf(P))
    if (const auto *L = dyn_cast<ForStmt>(P);
        L && L->getBody() == Cur && initVar(L).first == VD)
      return L;
  return nullptr;
}

/// What VD stands for in an index evaluated at Context: the loop variable
/// and the invariant variables themselves, a constant its value, an
/// induction variable of an inner loop holding Context itself (recorded in
/// Inner; none where Inner is null), a local of the body assigned only by
/// its initializer what it was initialized to.
std::optional<IntPoly> LoopWalk::bodyLeaf(const VarDecl *VD,
                                          const Stmt *Context,
                                          InnerLoops *Inner, unsigned Depth) {
  if (VD == Var)
    return IntPoly::variable(VD);
  if (std::optional<int64_t> C = constantValue(VD))
    return IntPoly::constant(*C);
  if (isInvariant(VD))
    return IntPoly::variable(VD);
  if (Inner)
    if (const ForStmt *L = inductionLoop(VD, Context)) {
      Inner->insert({VD, L});
      return IntPoly::variable(VD);
    }
  if (Depth >= 8 || !isPlainInteger(VD) || isa<ParmVarDecl>(VD) ||
      !VD->hasLocalStorage() || !VD->getInit() ||
      !isInside(VD->getLocation(), For.getBody()->getSourceRange()) ||
      !onlyRead(For.getBody(), VD))
    return std::nullopt;
  return intPolyFromExpr(VD->getInit(), Ctx, [&](const VarDecl *W) {
    return bodyLeaf(W, Context, /*Inner=*/nullptr, Depth + 1);
  });
}

/// A bound of a section, `i*n`, as a polynomial: the names are the variables
/// the loop sees by them, each of which must be the loop variable, a constant
/// or invariant. Read from the clause's text, or, where that has a macro or
/// an enumerator, as ClauseSema read it, with the same rule for each
/// variable.
std::optional<IntPoly> LoopWalk::sectionPoly(const DataSection &Section,
                                             bool Length) {
  auto Leaf = [&](const VarDecl *VD) -> std::optional<IntPoly> {
    if (VD == Var)
      return IntPoly::variable(Var);
    if (std::optional<int64_t> C = constantValue(VD))
      return IntPoly::constant(*C);
    if (isInvariant(VD))
      return IntPoly::variable(VD);
    return std::nullopt;
  };
  std::optional<IntPoly> Poly =
      parseIntPoly(Length ? Section.Length : Section.Lower,
                   [&](StringRef Name) -> std::optional<IntPoly> {
                     if (Ctx.Idents.get(Name).hadMacroDefinition())
                       return std::nullopt;
                     std::optional<const ValueDecl *> D = visibleDecl(Name);
                     const auto *VD =
                         D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
                     return Name == Var->getName() ? IntPoly::variable(Var)
                            : VD                   ? Leaf(VD)
                                                   : std::nullopt;
                   });
  if (Poly || !Shapes)
    return Poly;
  // The section's shape: its index among in's, out's and inout's.
  size_t Index = 0;
  const SectionShape *Shape = nullptr;
  for (const auto *Sections : {&Pragma.In, &Pragma.Out, &Pragma.InOut})
    for (const DataSection &S : *Sections) {
      if (&S == &Section && Index < Shapes->size())
        Shape = &(*Shapes)[Index];
      ++Index;
    }
  const std::optional<IntPoly> *Read =
      Shape ? &(Length ? Shape->Length : Shape->Lower) : nullptr;
  if (!Read || !*Read)
    return std::nullopt;
  Poly = **Read;
  for (const VarDecl *VD : (*Read)->vars()) {
    std::optional<IntPoly> Value = Leaf(VD);
    Poly = Value ? Poly->substitute(VD, *Value) : std::nullopt;
    if (!Poly)
      return std::nullopt;
  }
  return Poly;
}

/// The loops of the body around S (not the partitioned loop), innermost
/// first.
llvm::SmallVector<const Stmt *, 4>
LoopWalk::enclosingLoops(const Stmt *S) const {
  llvm::SmallVector<const Stmt *, 4> Loops;
  for (const Stmt *P = parentOf(S); P && P != &For; P = parentOf(P))
    if (loopBody(P))
      Loops.push_back(P);
  return Loops;
}

/// E runs each time Body runs (to its end): nothing between them is
/// conditional (if, ?:, &&, ||, the body of a loop, a lambda).
bool LoopWalk::evaluatedEachTime(const Stmt *Body, const Stmt *E) const {
  for (const Stmt *Cur = E; Cur != Body;) {
    const Stmt *P = parentOf(Cur);
    if (!P || P == &For)
      return false;
    bool Each = false;
    if (const auto *CO = dyn_cast<ConditionalOperator>(P))
      Each = Cur == CO->getCond();
    else if (const auto *BO = dyn_cast<BinaryOperator>(P))
      Each = !BO->isLogicalOp() || Cur == BO->getLHS();
    else if (isa<AbstractConditionalOperator, ChooseExpr, GenericSelectionExpr,
                 LambdaExpr, BlockExpr, StmtExpr, UnaryExprOrTypeTraitExpr,
                 CXXTypeidExpr, CXXNoexceptExpr, OpaqueValueExpr>(P))
      Each = false;
    else if (isa<Expr, CompoundStmt, DeclStmt, AttributedStmt>(P))
      Each = true;
    else if (const auto *If = dyn_cast<IfStmt>(P))
      Each = Cur == If->getCond() || Cur == If->getInit();
    else if (const auto *Switch = dyn_cast<SwitchStmt>(P))
      Each = Cur == Switch->getCond() || Cur == Switch->getInit();
    else if (const auto *While = dyn_cast<WhileStmt>(P))
      Each = Cur == While->getCond();
    else if (const auto *F = dyn_cast<ForStmt>(P))
      Each = Cur == F->getInit() || Cur == F->getCond();
    else if (const auto *Do = dyn_cast<DoStmt>(P))
      Each = Cur == Do->getBody();
    if (!Each)
      return false;
    Cur = P;
  }
  return true;
}

/// Each run of Body, a loop's body, goes from its start to its end: no
/// break or continue of that loop, no goto, label, case or return, no throw,
/// no call of a noreturn function or through a pointer.
bool LoopWalk::runsThrough(const Stmt *Body) const {
  struct Item {
    const Stmt *S;
    unsigned Loops, Switches;
  };
  llvm::SmallVector<Item, 32> Work{{Body, 0, 0}};
  while (!Work.empty()) {
    auto [S, Loops, Switches] = Work.pop_back_val();
    if (!S || isa<LambdaExpr, BlockExpr>(S))
      continue;
    if (isa<GotoStmt, IndirectGotoStmt, LabelStmt, ReturnStmt, CoreturnStmt,
            CXXThrowExpr, CXXTryStmt, AsmStmt>(S) ||
        (isa<BreakStmt>(S) && Loops == 0 && Switches == 0) ||
        (isa<ContinueStmt>(S) && Loops == 0) ||
        (isa<SwitchCase>(S) && Switches == 0))
      return false;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *FD = Call->getDirectCallee();
      if (!FD || FD->isNoReturn())
        return false;
    }
    unsigned InLoop = loopBody(S) ? 1 : 0;
    unsigned InSwitch = isa<SwitchStmt>(S) ? 1 : 0;
    for (const Stmt *Child : S->children())
      Work.push_back({Child, Loops + InLoop, Switches + InSwitch});
  }
  return true;
}

/// Def may call itself, or the loop's function, directly or through the
/// functions with visible bodies it calls (each looked at once, MaxFrames
/// at most; more is taken as recursion).
bool LoopWalk::mayRecurse(const FunctionDecl *Def) const {
  llvm::SmallPtrSet<const FunctionDecl *, 8> Seen;
  llvm::SmallVector<const FunctionDecl *, 8> Todo{Def};
  while (!Todo.empty()) {
    const FunctionDecl *G = Todo.pop_back_val();
    llvm::SmallVector<const Stmt *, 64> Work{G->getBody()};
    while (!Work.empty()) {
      const Stmt *S = Work.pop_back_val();
      if (!S)
        continue;
      llvm::append_range(Work, S->children());
      const auto *Call = dyn_cast<CallExpr>(S);
      const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
      const FunctionDecl *Body = nullptr;
      if (!Callee || !Callee->hasBody(Body))
        continue;
      if (Body->getCanonicalDecl() == Def->getCanonicalDecl() ||
          Body->getCanonicalDecl() == Fn.getCanonicalDecl())
        return true;
      if (Seen.insert(Body->getCanonicalDecl()).second) {
        if (Seen.size() > MaxFrames)
          return true;
        Todo.push_back(Body);
      }
    }
  }
  return false;
}

/// The definition Call runs, where the checks follow calls (OutCover.cpp,
/// CallWrites.cpp), Depth calls from the body: a plain function with a
/// visible body (not a member, not variadic, not a template's pattern, not
/// in a system header, not recursive), called with one argument per
/// parameter, at most MaxCallDepth deep; null otherwise. parentOf knows its
/// body.
const FunctionDecl *LoopWalk::followableCallee(const CallExpr *Call,
                                               unsigned Depth) const {
  const FunctionDecl *Callee = Call->getDirectCallee();
  const FunctionDecl *Def = nullptr;
  if (isa<CXXOperatorCallExpr>(Call) || !Callee || !Callee->hasBody(Def) ||
      !Def->getBody() || isa<CXXMethodDecl>(Def) || Def->isVariadic() ||
      Def->isDependentContext() ||
      SM.isInSystemHeader(SM.getExpansionLoc(Def->getLocation())) ||
      Call->getNumArgs() != Def->getNumParams() || Depth > MaxCallDepth ||
      mayRecurse(Def))
    return nullptr;
  addParents(Def->getBody());
  return Def;
}

/// L as `for (V = a; V < b; ++V)` (or `V <= b`, `b > V`, `b >= V`, `V += 1`,
/// `V = V + 1`, `1 + V`), in the loop's function or in the one F follows, V
/// a plain integer its body only reads and nothing in the function changes
/// behind its back (a C89 `int j` declared before the loop may have its
/// address taken there), a and b polynomials of values that do not change
/// during an iteration of the partitioned loop: a, and the number of runs,
/// b - a (b - a + 1 with `<=`) where that is not negative; nullopt for
/// anything else. A test compared in an unsigned type needs a constant
/// a >= 0: from a negative a, V would compare as a huge value and the loop
/// would not run at all.
std::optional<LoopWalk::UnitRange>
LoopWalk::unitRange(const ForStmt *L, const VarDecl *V, const CallFrame *F) {
  auto [Init, Start] = initVar(L);
  const Stmt *FnBody = F ? F->Callee->getBody() : Fn.getBody();
  if (Init != V || !isPlainInteger(V) || !onlyRead(L->getBody(), V) ||
      !FnBody || !onlyReadOrAssigned(FnBody, V))
    return std::nullopt;
  const Expr *Bound = nullptr;
  bool Inclusive = false, Unsigned = false;
  if (auto Test = asBinary(L->getCond())) {
    if ((Test->Op == BO_LT || Test->Op == BO_LE) &&
        referencedVar(Test->LHS) == V)
      Bound = Test->RHS;
    else if ((Test->Op == BO_GT || Test->Op == BO_GE) &&
             referencedVar(Test->RHS) == V)
      Bound = Test->LHS;
    Inclusive = Test->Op == BO_LE || Test->Op == BO_GE;
    Unsigned = Test->LHS->getType()->isUnsignedIntegerType() ||
               Test->RHS->getType()->isUnsignedIntegerType();
  }
  bool ByOne = false;
  if (auto IncDec = asIncDec(L->getInc()))
    ByOne = (IncDec->first == UO_PreInc || IncDec->first == UO_PostInc) &&
            referencedVar(IncDec->second) == V;
  else if (auto Step = asBinary(L->getInc());
           Step && referencedVar(Step->LHS) == V) {
    auto IsOne = [&](const Expr *E) {
      Expr::EvalResult R;
      return E && !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) &&
             R.Val.getInt() == 1;
    };
    if (Step->Op == BO_AddAssign)
      ByOne = IsOne(Step->RHS);
    else if (auto Sum = asBinary(Step->RHS);
             Step->Op == BO_Assign && Sum && Sum->Op == BO_Add)
      ByOne = (referencedVar(Sum->LHS) == V && IsOne(Sum->RHS)) ||
              (referencedVar(Sum->RHS) == V && IsOne(Sum->LHS));
  }
  if (!Start || !Bound || !ByOne)
    return std::nullopt;
  auto Leaf = [&](const VarDecl *W) {
    return frameLeaf(W, L, F, /*Inner=*/nullptr, 0);
  };
  std::optional<IntPoly> First = intPolyFromExpr(Start, Ctx, Leaf);
  std::optional<IntPoly> End = intPolyFromExpr(Bound, Ctx, Leaf);
  if (End && Inclusive)
    End = End->plus(*IntPoly::constant(1));
  std::optional<IntPoly> Count =
      First && End ? End->minus(*First) : std::nullopt;
  if (!Count)
    return std::nullopt;
  if (Unsigned) {
    std::optional<int64_t> From = First->getConstant();
    if (!From || *From < 0)
      return std::nullopt;
  }
  return UnitRange{std::move(*First), std::move(*Count)};
}

} // namespace fpm::detail
