//===- SectionChecks.cpp - What a device would lose of the data clauses ---===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks of LoopCheck (LoopCheck.h) that read the data clauses against
// the body: a subscript provably outside its section and an out array read
// before it is written (warnings). Each proves with integer polynomials
// (IntPoly.h) or stays silent. Here too are the readers of the walk's record
// they share with OutCover.cpp (whether an iteration writes each out section
// whole): what runs on every iteration, the inner loops' ranges, which names
// are invariant.
//
//===----------------------------------------------------------------------===//

#include "LoopCheck.h"

using namespace clang;

namespace fpm::detail {
/// The statement S is a child of, in the function's body as children()
/// sees it (the tree walk() walks: a declaration's initializer and a VLA's
/// size are children of its DeclStmt, an initializer list is its semantic
/// form), or in the body of a function coverOut follows (addParents); null
/// outside them, and for a body itself.
const Stmt *LoopCheck::parentOf(const Stmt *S) const {
  addParents(Fn.getBody());
  return Parents.lookup(S);
}

/// Makes parentOf know the statements under Root, a function's body.
void LoopCheck::addParents(const Stmt *Root) const {
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

UseKind LoopCheck::useKind(const Subscript &S) const {
  if (S.InLambda || !S.RootRef || S.Indices.empty() ||
      S.At->isInstantiationDependent() || !S.At->getType()->isScalarType())
    return UseKind::Other;
  if (S.IsWrite)
    return S.AlsoReads ? UseKind::ReadWrite : UseKind::Write;
  return readsValue(S.At) ? UseKind::Read : UseKind::Other;
}

/// The value of E, an lvalue, is read where E stands, and nothing else is
/// done with it: an lvalue-to-rvalue conversion, or an argument of a
/// numeric call (std::min binds a reference to const).
bool LoopCheck::readsValue(const Expr *E) const {
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
bool LoopCheck::onlyRead(const Stmt *Root, const VarDecl *VD) const {
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

std::optional<int64_t> LoopCheck::constantValue(const VarDecl *VD) const {
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
bool LoopCheck::onlyReadOrAssigned(const Stmt *Root, const VarDecl *VD,
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
bool LoopCheck::isInvariant(const VarDecl *VD) {
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
const ForStmt *LoopCheck::inductionLoop(const VarDecl *VD,
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
std::optional<IntPoly> LoopCheck::bodyLeaf(const VarDecl *VD,
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
/// or invariant; a macro is unknown.
std::optional<IntPoly> LoopCheck::sectionPoly(StringRef Text) {
  return parseIntPoly(Text, [&](StringRef Name) -> std::optional<IntPoly> {
    if (Ctx.Idents.get(Name).hadMacroDefinition())
      return std::nullopt;
    if (Name == Var->getName())
      return IntPoly::variable(Var);
    std::optional<const ValueDecl *> D = visibleDecl(Name);
    const auto *VD = D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
    if (!VD)
      return std::nullopt;
    if (std::optional<int64_t> C = constantValue(VD))
      return IntPoly::constant(*C);
    if (isInvariant(VD))
      return IntPoly::variable(VD);
    return std::nullopt;
  });
}

/// The loops of the body around S (not the partitioned loop), innermost
/// first.
llvm::SmallVector<const Stmt *, 4>
LoopCheck::enclosingLoops(const Stmt *S) const {
  llvm::SmallVector<const Stmt *, 4> Loops;
  for (const Stmt *P = parentOf(S); P && P != &For; P = parentOf(P))
    if (loopBody(P))
      Loops.push_back(P);
  return Loops;
}

/// E runs each time Body runs (to its end): nothing between them is
/// conditional (if, ?:, &&, ||, the body of a loop, a lambda).
bool LoopCheck::evaluatedEachTime(const Stmt *Body, const Stmt *E) const {
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
bool LoopCheck::runsThrough(const Stmt *Body) const {
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

/// Every write of the body is to a variable, an element of a clause's array
/// or of an array of the body's own, and no call can write through a
/// pointer: a write to a clause's array is one of the body's subscripts.
bool LoopCheck::writesAreVisible(
    const llvm::DenseSet<const VarDecl *> &ClauseArrays) const {
  auto KnownTarget = [&](const Expr *E) {
    E = E->IgnoreParens();
    while (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (ME->isArrow())
        return false;
      E = ME->getBase()->IgnoreParens();
    }
    bool Element = false, ThroughPointer = false;
    while (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
      Element = true;
      E = ASE->getBase()->IgnoreParenImpCasts();
      ThroughPointer |= E->getType()->isPointerType();
    }
    const VarDecl *VD = referencedVar(E);
    if (!VD || VD->getType()->isReferenceType())
      return false;
    // An array of the body's own, not a pointer it holds.
    return !Element || ClauseArrays.count(VD) ||
           (!ThroughPointer &&
            isInside(VD->getLocation(), For.getBody()->getSourceRange()));
  };
  llvm::SmallVector<const Stmt *, 64> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    llvm::append_range(Work, S->children());
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      if (!isNumericCall(Call))
        return false;
    } else if (const auto *Construct = dyn_cast<CXXConstructExpr>(S)) {
      if (!Construct->getConstructor()->isTrivial())
        return false;
    } else if (isa<CXXNewExpr, CXXDeleteExpr, AsmStmt>(S)) {
      return false;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(S);
               BO && BO->isAssignmentOp()) {
      if (!KnownTarget(BO->getLHS()))
        return false;
    } else if (const auto *UO = dyn_cast<UnaryOperator>(S);
               UO && UO->isIncrementDecrementOp()) {
      if (!KnownTarget(UO->getSubExpr()))
        return false;
    }
  }
  return true;
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
std::optional<LoopCheck::UnitRange>
LoopCheck::unitRange(const ForStmt *L, const VarDecl *V, const CallFrame *F) {
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

/// S's first index minus a section's lower bound, with the inner loops
/// whose variables it uses in Inner; nullopt if it is no integer
/// polynomial.
std::optional<IntPoly> LoopCheck::offsetInSection(const Subscript &S,
                                                  const IntPoly &Lower,
                                                  InnerLoops &Inner) {
  std::optional<IntPoly> Index =
      intPolyFromExpr(S.Indices[0], Ctx, [&](const VarDecl *VD) {
        return bodyLeaf(VD, S.At, &Inner, 0);
      });
  return Index ? Index->minus(Lower) : std::nullopt;
}

/// S's first index, against the first dimension of a section
/// `[Lower:Length]`, is outside it each time S runs (constant offset), or
/// at the first or the last iteration of an inner loop `for (v = a; v < b;
/// ++v)` that runs S at each.
bool LoopCheck::provenOutside(const Subscript &S, const IntPoly &Lower,
                              const IntPoly &Length) {
  InnerLoops Inner;
  std::optional<IntPoly> Offset = offsetInSection(S, Lower, Inner);
  if (!Offset)
    return false;
  // An offset of the runs from Min to Max (a constant: Min = Max) is below
  // 0 or at Length or past it, provably.
  auto Outside = [&](const std::optional<IntPoly> &Min,
                     const std::optional<IntPoly> &Max) {
    if (!Min || !Max)
      return false;
    for (const IntPoly *Offset : {&*Min, &*Max}) {
      if (std::optional<int64_t> Low = Offset->getConstant(); Low && *Low < 0)
        return true;
      std::optional<IntPoly> Past = Offset->minus(Length);
      if (std::optional<int64_t> High =
              Past ? Past->getConstant() : std::nullopt;
          High && *High >= 0)
        return true;
    }
    return false;
  };

  const VarDecl *V = nullptr;
  const ForStmt *L = nullptr;
  for (const auto &[W, Loop] : Inner) {
    if (!Offset->uses(W))
      continue;
    if (V)
      return false;
    V = W;
    L = Loop;
  }
  if (!V)
    return Outside(Offset, Offset);

  // Offset = C + K*v, v running from First to Last by 1 in a loop that
  // leaves only through its test and runs S at each iteration.
  auto Split = Offset->splitLinear(V);
  if (!Split || Split->second == 0 || !evaluatedEachTime(L->getBody(), S.At) ||
      !runsThrough(L->getBody()))
    return false;
  std::optional<UnitRange> Range = unitRange(L, V);
  if (!Range)
    return false;
  const IntPoly &First = Range->First;
  std::optional<IntPoly> Last = First.plus(Range->Count);
  if (Last)
    Last = Last->minus(*IntPoly::constant(1));
  if (!Last)
    return false;
  const auto &[C, K] = *Split;
  std::optional<IntPoly> KP = IntPoly::constant(K);
  auto At = [&](const IntPoly &Value) -> std::optional<IntPoly> {
    std::optional<IntPoly> Scaled = KP ? KP->times(Value) : std::nullopt;
    return Scaled ? C.plus(*Scaled) : std::nullopt;
  };
  return K > 0 ? Outside(At(First), At(*Last)) : Outside(At(*Last), At(First));
}

void LoopCheck::reportOutsideSection(const VarDecl *Array,
                                     const ClauseSection &CS) {
  const DataSection &Section = *CS.Section;
  std::optional<IntPoly> Lower = sectionPoly(Section.Lower);
  std::optional<IntPoly> Length = sectionPoly(Section.Length);
  if (!Lower || !Length)
    return;
  bool Reads = CS.Clause != "out", Writes = CS.Clause != "in";
  for (const Subscript &S : Subscripts) {
    if (S.Root != Array)
      continue;
    UseKind Kind = useKind(S);
    bool Read = (Kind == UseKind::Read || Kind == UseKind::ReadWrite) && Reads;
    bool Write =
        (Kind == UseKind::Write || Kind == UseKind::ReadWrite) && Writes;
    if ((!Read && !Write) || !provenOutside(S, *Lower, *Length))
      continue;
    std::string At = text(S.At);
    report(Diags, S.At->getExprLoc(), Level::Warning,
           "'%0' is outside the section '%1' of '%2(...)': on an OpenCL "
           "device this element would %select{not be copied to the "
           "device|not be copied back|be neither copied to the device nor "
           "back}3")
        << (At.empty() ? Array->getName().str() + "[...]" : At) << Section.Text
        << CS.Clause
        << (Read && Write ? 2
            : Write       ? 1
                          : 0);
    report(Diags, Section.Loc, Level::Note, "the section is declared here");
    return;
  }
}

void LoopCheck::reportOutReadBeforeWrite(const VarDecl *Array,
                                         ArrayRef<ClauseSection> Sections) {
  // Every use of the array in the body reads or writes one of its elements.
  llvm::DenseMap<const DeclRefExpr *, const Subscript *> Uses;
  for (const Subscript &S : Subscripts)
    if (S.Root == Array) {
      if (useKind(S) == UseKind::Other)
        return;
      Uses[S.RootRef] = &S;
    }
  llvm::SmallVector<const Stmt *, 64> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl() == Array && !Uses.count(DRE))
      return;
    llvm::append_range(Work, S->children());
  }

  auto FullExpr = [&](const Stmt *E) {
    for (const Stmt *P = parentOf(E); isa_and_nonnull<Expr>(P); P = parentOf(P))
      E = P;
    return E;
  };
  // W, a subscript evaluated after R, may write before R's first read: in
  // the same full expression, unless R is on the right of W's assignment;
  // in a loop around both, unless R reads at each iteration of the
  // outermost such loop, from the first.
  auto MayPrecede = [&](const Subscript &W, const Subscript &R) {
    if (FullExpr(W.At) == FullExpr(R.At)) {
      const Stmt *Assign = parentOf(W.At);
      while (isa_and_nonnull<ParenExpr>(Assign))
        Assign = parentOf(Assign);
      const auto *BO = dyn_cast_or_null<BinaryOperator>(Assign);
      if (!BO || !BO->isAssignmentOp())
        return true;
      const Stmt *Cur = R.At;
      const Stmt *P = parentOf(Cur);
      for (; P && P != BO; Cur = P, P = parentOf(P))
        ;
      if (P != BO || Cur != BO->getRHS())
        return true;
    }
    llvm::SmallVector<const Stmt *, 4> AroundR = enclosingLoops(R.At);
    llvm::SmallVector<const Stmt *, 4> AroundW = enclosingLoops(W.At);
    for (const Stmt *Loop : llvm::reverse(AroundR))
      if (llvm::is_contained(AroundW, Loop))
        return !evaluatedEachTime(loopBody(Loop), R.At) ||
               !runsThrough(loopBody(Loop));
    return false;
  };

  for (size_t RI = 0; RI < Subscripts.size(); ++RI) {
    const Subscript &R = Subscripts[RI];
    if (R.Root != Array)
      continue;
    UseKind RK = useKind(R);
    if (RK == UseKind::Write)
      return; // Every later read comes after a write.
    if (RK != UseKind::Read && RK != UseKind::ReadWrite)
      continue;
    bool First = true;
    for (size_t WI = RI + 1; WI < Subscripts.size() && First; ++WI) {
      const Subscript &W = Subscripts[WI];
      UseKind WK = W.Root == Array ? useKind(W) : UseKind::Other;
      if ((WK == UseKind::Write || WK == UseKind::ReadWrite) &&
          MayPrecede(W, R))
        First = false;
    }
    if (First) {
      report(Diags, R.At->getExprLoc(), Level::Warning,
             "'%0' is declared 'out(...)' but read here before it is "
             "written: on an OpenCL device the read sees uninitialized "
             "memory; declare it 'inout(...)'")
          << Array->getName();
      report(Diags, Sections.front().Section->Loc, Level::Note,
             "the section is declared here");
      return;
    }
    if (RK == UseKind::ReadWrite)
      return; // It writes too.
  }
}

void LoopCheck::checkDataUses() {
  llvm::MapVector<const VarDecl *, llvm::SmallVector<ClauseSection, 2>> Arrays;
  for (auto [Clause, Sections] :
       {std::pair<StringRef, const llvm::SmallVector<DataSection, 2> *>{
            "in", &Pragma.In},
        {"out", &Pragma.Out},
        {"inout", &Pragma.InOut}})
    for (const DataSection &Section : *Sections) {
      // A macro may name any of the arrays: no array's clauses are known.
      if (Section.ArrayIsMacro)
        return;
      std::optional<const ValueDecl *> D = visibleDecl(Section.Array);
      const auto *VD = D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
      if (VD && !VD->getType()->isDependentType())
        Arrays[VD].push_back({Clause, &Section});
    }
  llvm::DenseSet<const VarDecl *> ClauseArrays;
  for (const auto &Entry : Arrays)
    ClauseArrays.insert(Entry.first);
  bool Visible = Gotos.empty() && writesAreVisible(ClauseArrays);
  for (const auto &[Array, Sections] : Arrays) {
    if (Sections.size() == 1)
      reportOutsideSection(Array, Sections.front());
    if (Visible && llvm::all_of(Sections, [](const ClauseSection &CS) {
          return CS.Clause == "out" && CS.Section->Dims == 1;
        }))
      reportOutReadBeforeWrite(Array, Sections);
  }
}

} // namespace fpm::detail
