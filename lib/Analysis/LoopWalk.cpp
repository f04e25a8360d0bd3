//===- LoopWalk.cpp - The one walk of a partitioned loop ------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoopWalk's record (LoopWalk.h): the loop's header in canonical form, the
// walk of the body (each use of a variable, each subscript, the exits, the
// gotos, the nested loops' induction variables), what the functions it
// calls write (CallWrites.cpp), and what the private and reduction clauses
// name at the loop. Nothing here reports: the checks (LoopChecks.h) say
// what is wrong with what it records.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopWalk.h"

using namespace clang;

namespace fpm::detail {

bool LoopWalk::isInside(SourceLocation Loc, SourceRange Range) const {
  Loc = SM.getExpansionLoc(Loc);
  SourceLocation B = SM.getExpansionLoc(Range.getBegin());
  SourceLocation E = SM.getExpansionRange(Range.getEnd()).getEnd();
  if (SM.getFileID(Loc) != SM.getFileID(B))
    return false;
  return !SM.isBeforeInTranslationUnit(Loc, B) &&
         !SM.isBeforeInTranslationUnit(E, Loc);
}

bool LoopWalk::readHeader(CanonicalLoop &Loop) {
  Loop.For = &For;
  // init: `T v = lower` or `v = lower`.
  const Stmt *Init = For.getInit();
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(Init)) {
    if (DS->isSingleDecl())
      if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl()))
        if (VD->getInit() && isIntegerVar(VD)) {
          Var = VD;
          Loop.DeclaredInInit = true;
          Loop.Lower = VD->getInit();
        }
  } else if (const auto *E = dyn_cast_or_null<Expr>(Init)) {
    if (auto Bin = asBinary(E); Bin && Bin->Op == BO_Assign)
      if (const VarDecl *VD = referencedVar(Bin->LHS); VD && isIntegerVar(VD)) {
        Var = VD;
        Loop.Lower = Bin->RHS;
      }
  }
  if (!Var) {
    Fault = {HeaderFault::Init,
             Init ? Init->getBeginLoc() : For.getLParenLoc()};
    return false;
  }
  Loop.Var = Var;

  // test: `v < bound` (or the other comparisons, either way round).
  const Expr *Cond = For.getCond();
  auto Bin = asBinary(Cond);
  std::optional<LoopCompare> Compare;
  if (Bin) {
    bool Left = referencedVar(Bin->LHS) == Var;
    bool Right = !Left && referencedVar(Bin->RHS) == Var;
    switch (Bin->Op) {
    case BO_LT:
      Compare = Left ? LoopCompare::LT : LoopCompare::GT;
      break;
    case BO_LE:
      Compare = Left ? LoopCompare::LE : LoopCompare::GE;
      break;
    case BO_GT:
      Compare = Left ? LoopCompare::GT : LoopCompare::LT;
      break;
    case BO_GE:
      Compare = Left ? LoopCompare::GE : LoopCompare::LE;
      break;
    case BO_NE:
      Compare = LoopCompare::NE;
      break;
    default:
      break;
    }
    if (!Left && !Right)
      Compare.reset();
    else
      Loop.Bound = Left ? Bin->RHS : Bin->LHS;
  }
  if (!Compare) {
    Fault = {HeaderFault::Test,
             Cond ? Cond->getBeginLoc() : For.getLParenLoc()};
    return false;
  }
  Loop.Compare = *Compare;
  if (QualType Type = Bin->LHS->getType();
      !Type->isDependentType() && Type->isIntegerType())
    Loop.CompareType = Type.getCanonicalType().getUnqualifiedType();

  // incr: `v++`, `++v`, `v--`, `--v`, `v += c`, `v -= c`, `v = v + c`.
  const Expr *Inc = For.getInc();
  bool IncOk = false;
  if (auto IncDec = asIncDec(Inc);
      IncDec && referencedVar(IncDec->second) == Var) {
    IncOk = true;
    Loop.StepNegated =
        IncDec->first == UO_PreDec || IncDec->first == UO_PostDec;
  } else if (auto Step = asBinary(Inc);
             Step && referencedVar(Step->LHS) == Var) {
    if (Step->Op == BO_AddAssign || Step->Op == BO_SubAssign) {
      IncOk = true;
      Loop.Step = Step->RHS;
      Loop.StepNegated = Step->Op == BO_SubAssign;
    } else if (Step->Op == BO_Assign) {
      if (auto Sum = asBinary(Step->RHS);
          Sum && Sum->Op == BO_Add && referencedVar(Sum->LHS) == Var) {
        IncOk = true;
        Loop.Step = Sum->RHS;
      }
    }
  }
  if (!IncOk) {
    Fault = {HeaderFault::Increment,
             Inc ? Inc->getBeginLoc() : For.getRParenLoc()};
    return false;
  }
  // The step's sign, when it is known at compile time.
  std::optional<bool> StepUp;
  if (!Loop.Step) {
    StepUp = !Loop.StepNegated;
  } else if (!Loop.Step->isValueDependent()) {
    // The step as written, as the rewritten loop uses it: in `u += -1` on
    // an unsigned u, Clang converts the -1 to UINT_MAX, but the step is -1.
    Expr::EvalResult R;
    if (Loop.Step->IgnoreImpCasts()->EvaluateAsInt(R, Ctx)) {
      const llvm::APSInt &Value = R.Val.getInt();
      if (Value.isZero()) {
        Fault = {HeaderFault::ZeroStep, Loop.Step->getBeginLoc()};
        return false;
      }
      StepUp = Value.isNegative() == Loop.StepNegated;
    }
  }
  // A step away from the bound: the loop runs no iteration, or never ends,
  // or (an unsigned variable) wraps around past zero and stops there, as
  // `for (unsigned u = 20; u < 1000u; --u)` does after 21. None of these is
  // a split the runtime can make; refused as OpenMP compilers refuse it.
  bool WantsUp =
      Loop.Compare == LoopCompare::LT || Loop.Compare == LoopCompare::LE;
  bool WantsDown =
      Loop.Compare == LoopCompare::GT || Loop.Compare == LoopCompare::GE;
  if (StepUp && ((WantsUp && !*StepUp) || (WantsDown && *StepUp))) {
    Fault = {HeaderFault::Direction,
             Loop.Step ? Loop.Step->getBeginLoc() : Inc->getBeginLoc(),
             Cond->IgnoreParenImpCasts()->getExprLoc(), WantsUp};
    return false;
  }
  Lower = Loop.Lower;
  Increasing = WantsUp     ? std::optional(true)
               : WantsDown ? std::optional(false)
                           : StepUp;
  return true;
}
void LoopWalk::access(const Expr *At, const VarDecl *VD, bool Reads,
                      bool Writes) {
  Accesses.push_back({VD, At, Reads, Writes});
}

void LoopWalk::recordSubscript(const ArraySubscriptExpr *ASE, bool IsWrite,
                               bool AlsoReads) {
  Subscript Sub{nullptr, {}, ASE, IsWrite};
  Sub.AlsoReads = IsWrite && AlsoReads;
  Sub.InLambda = LambdaDepth > 0;
  const Expr *Base = ASE;
  while (const auto *A =
             dyn_cast<ArraySubscriptExpr>(Base->IgnoreParenImpCasts())) {
    Sub.Indices.insert(Sub.Indices.begin(), A->getIdx());
    Base = A->getBase();
  }
  Sub.Root = referencedVar(Base);
  Sub.RootRef = dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts());
  if (Sub.Root)
    Subscripts.push_back(Sub);
  walk(Base);
  for (const Expr *Index : Sub.Indices)
    walk(Index);
}

void LoopWalk::walkTarget(const Expr *E, bool Reads) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      return access(DRE, VD, Reads, /*Writes=*/true);
    return;
  }
  // A member store writes its struct in part (the other members keep their
  // values): a variable counts as read too, an array's element (`y[m].re =
  // 0`) only where the assignment reads (`y[m].re += 1`).
  if (const auto *ME = dyn_cast<MemberExpr>(E); ME && !ME->isArrow())
    return walkTarget(ME->getBase(),
                      /*Reads=*/Reads ||
                          !isa<ArraySubscriptExpr, MemberExpr>(
                              ME->getBase()->IgnoreParenImpCasts()));
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return recordSubscript(ASE, /*IsWrite=*/true, /*AlsoReads=*/Reads);
  walk(E);
}

void LoopWalk::walk(const Stmt *S) {
  if (!S)
    return;
  if (const auto *E = dyn_cast<Expr>(S)) {
    if (auto Bin = asBinary(E);
        Bin && BinaryOperator::isAssignmentOp(Bin->Op)) {
      walk(Bin->RHS);
      walkTarget(Bin->LHS, /*Reads=*/Bin->Op != BO_Assign);
      return;
    }
    if (auto IncDec = asIncDec(E))
      return walkTarget(IncDec->second, /*Reads=*/true);
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      access(DRE, VD, /*Reads=*/true, /*Writes=*/false);
    return;
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S))
    return recordSubscript(ASE, /*IsWrite=*/false);
  if (const auto *Lambda = dyn_cast<LambdaExpr>(S)) {
    for (const Expr *Capture : Lambda->capture_inits())
      walk(Capture);
    ++LambdaDepth;
    walk(Lambda->getBody());
    --LambdaDepth;
    return;
  }
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D)) {
        // The sizes of a VLA declared in the body are uses too.
        for (QualType T = VD->getType(); const auto *AT = Ctx.getAsArrayType(T);
             T = AT->getElementType())
          if (const auto *VAT = dyn_cast<VariableArrayType>(AT))
            walk(VAT->getSizeExpr());
        walk(VD->getInit());
      }
    return;
  }
  if (LambdaDepth == 0) {
    if (isa<BreakStmt>(S)) {
      if (LoopDepth == 0 && SwitchDepth == 0)
        Exits.push_back(S);
      return;
    }
    if (isa<ReturnStmt, IndirectGotoStmt>(S)) {
      Exits.push_back(S);
      return;
    }
  }
  if (const auto *Goto = dyn_cast<GotoStmt>(S)) {
    if (LambdaDepth == 0)
      Gotos.push_back(Goto);
    return;
  }
  if (const auto *Nested = dyn_cast<ForStmt>(S)) {
    if (auto Bin = asBinary(dyn_cast_or_null<Expr>(Nested->getInit()));
        Bin && Bin->Op == BO_Assign)
      if (const VarDecl *VD = referencedVar(Bin->LHS);
          VD && VD != Var && isOutsideLoop(VD))
        NestedInductionVars.insert(VD);
  }
  bool IsLoop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
  bool IsSwitch = isa<SwitchStmt>(S);
  LoopDepth += IsLoop;
  SwitchDepth += IsSwitch;
  for (const Stmt *Child : S->children())
    walk(Child);
  LoopDepth -= IsLoop;
  SwitchDepth -= IsSwitch;
}

void LoopWalk::recordBody() {
  walk(For.getBody());
  // A shared scalar a called function writes through its address.
  markCallWrites();
  findPrivates();
  findReductions();
  // A reduction variable is neither shared nor private (not even as a
  // nested loop's induction variable): each chunk writes its own
  // accumulator.
  for (const ReductionVar &R : Reductions)
    Private.remove(R.Var);
}
/// Every use of VD in Root loads its value, a member's (`s.x`) or an
/// element's of an array member (`s.v[k]`), or measures it (`sizeof`):
/// nothing writes into VD or takes its address.
bool LoopWalk::onlyLoaded(const Stmt *Root, const VarDecl *VD) const {
  llvm::SmallVector<const Stmt *, 32> Work{Root};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    llvm::append_range(Work, S->children());
    const auto *DRE = dyn_cast<DeclRefExpr>(S);
    if (!DRE || DRE->getDecl() != VD)
      continue;
    const Stmt *Cur = DRE;
    const Stmt *P = parentOf(Cur);
    while (P) {
      const auto *Cast = dyn_cast<ImplicitCastExpr>(P);
      if (isa<ParenExpr>(P) || (Cast && Cast->getCastKind() == CK_NoOp) ||
          (isa<MemberExpr>(P) && !cast<MemberExpr>(P)->isArrow())) {
        Cur = P;
      } else if (const auto *ASE =
                     dyn_cast_or_null<ArraySubscriptExpr>(parentOf(P));
                 Cast && Cast->getCastKind() == CK_ArrayToPointerDecay && ASE &&
                 ASE->getBase() == P) {
        Cur = ASE; // an element of an array member: `s.v[k]`
      } else {
        break;
      }
      P = parentOf(Cur);
    }
    const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P);
    if (!(Cast && Cast->getCastKind() == CK_LValueToRValue) &&
        !isa_and_nonnull<UnaryExprOrTypeTraitExpr>(P))
      return false;
  }
  return true;
}

/// What Name means at the loop, found as the compiler would: the variable
/// the body uses by that name; else a declaration of an enclosing block
/// before the loop, a parameter, a member or a global. nullptr if it might
/// be a member fpm cannot see (of a base class); nullopt if it names
/// nothing.
std::optional<const ValueDecl *> LoopWalk::visibleDecl(StringRef Name) const {
  auto Use = llvm::find_if(Accesses, [&](const Access &A) {
    return A.Var->getName() == Name && isOutsideLoop(A.Var);
  });
  if (Use != Accesses.end())
    return Use->Var;
  auto Named = [&](const ParmVarDecl *P) { return P->getName() == Name; };
  SourceLocation ForBegin = SM.getExpansionLoc(For.getBeginLoc());
  DynTypedNode Node = DynTypedNode::create(For);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      break;
    Node = Parents[0];
    if (const auto *P = Node.get<Stmt>()) {
      const VarDecl *Found = nullptr;
      for (const Stmt *Child : P->children()) {
        if (!Child)
          continue;
        if (!SM.isBeforeInTranslationUnit(
                SM.getExpansionLoc(Child->getBeginLoc()), ForBegin))
          break;
        if (const auto *DS = dyn_cast<DeclStmt>(Child))
          for (const Decl *D : DS->decls())
            if (const auto *VD = dyn_cast<VarDecl>(D);
                VD && VD->getName() == Name)
              Found = VD;
      }
      if (Found)
        return Found;
      if (const auto *Lambda = dyn_cast<LambdaExpr>(P))
        if (const ParmVarDecl *const *It =
                llvm::find_if(Lambda->getCallOperator()->parameters(), Named);
            It != Lambda->getCallOperator()->param_end())
          return *It;
    } else if (const auto *FD = Node.get<FunctionDecl>()) {
      if (FD == &Fn)
        break;
      if (auto It = llvm::find_if(FD->parameters(), Named);
          It != FD->param_end())
        return *It;
    }
  }
  if (auto It = llvm::find_if(Fn.parameters(), Named); It != Fn.param_end())
    return *It;
  bool InClass = false;
  for (const DeclContext *DC = Fn.getDeclContext(); DC; DC = DC->getParent()) {
    InClass |= isa<RecordDecl>(DC);
    for (const NamedDecl *ND : DC->lookup(&Ctx.Idents.get(Name)))
      if (isa<VarDecl, FieldDecl>(ND))
        return cast<ValueDecl>(ND);
  }
  if (InClass)
    return nullptr;
  return std::nullopt;
}

/// The private clause's names: the variables declared outside the loop
/// that the body uses by them; and the induction variables of nested loops
/// the body assigns (automatic privatization).
void LoopWalk::findPrivates() {
  for (const PrivateName &Name : Pragma.Private) {
    auto Use = llvm::find_if(Accesses, [&](const Access &A) {
      return A.Var->getName() == Name.Name && isOutsideLoop(A.Var);
    });
    if (Use == Accesses.end()) {
      PrivateUses.push_back({&Name, visibleDecl(Name.Name)
                                        ? PrivateUse::Unused
                                        : PrivateUse::Unknown});
      continue;
    }
    if (Use->Var == Var) {
      PrivateUses.push_back({&Name, PrivateUse::LoopVariable, Var});
      continue;
    }
    PrivateUses.push_back({&Name, PrivateUse::Private, Use->Var});
    Private.insert(Use->Var);
  }
  for (const VarDecl *VD : NestedInductionVars)
    Private.insert(VD);
}

/// What fpm accepts as a reduction variable (docs/pragma.md, the
/// `reduction(op: list)` row), as OpenMP does: a scalar of an arithmetic
/// type declared outside the loop, visible there; the bitwise operators on
/// integer types only.
void LoopWalk::findReductions() {
  for (const ReductionName &R : Pragma.Reductions) {
    std::optional<const ValueDecl *> D = visibleDecl(R.Name);
    if (!D) {
      ReductionUses.push_back({&R, ReductionUse::Unknown});
      continue;
    }
    const auto *VD = dyn_cast_or_null<VarDecl>(*D);
    if (!VD) {
      ReductionUses.push_back({&R, ReductionUse::NotVariable});
      continue;
    }
    Reduced.insert(VD);
    QualType T = VD->getType().getNonReferenceType();
    if (VD != Var && T->isDependentType()) {
      ReductionUses.push_back({&R, ReductionUse::Valid, VD});
      Reductions.push_back({R.Op, VD, R.Loc, ""});
      continue;
    }
    const char *Enumerator = scalarTypeEnumerator(Ctx, T);
    ReductionUse::Kind What = ReductionUse::Valid;
    if (VD == Var)
      What = ReductionUse::LoopVariable;
    else if (!Enumerator)
      What = ReductionUse::NotArithmetic;
    else if (T.isConstQualified() || T.isVolatileQualified())
      What = ReductionUse::ConstOrVolatile;
    else if (VD->getStorageClass() == SC_Register)
      What = ReductionUse::Register;
    else if (T->isRealFloatingType() &&
             (R.Op == ReductionOp::BitAnd || R.Op == ReductionOp::BitOr ||
              R.Op == ReductionOp::BitXor))
      What = ReductionUse::BitwiseOnFloat;
    if (What != ReductionUse::Valid) {
      ReductionUses.push_back({&R, What, VD});
      continue;
    }
    ReductionUses.push_back(
        {&R, What, VD, llvm::none_of(Accesses, [&](const Access &A) {
           return A.Var == VD;
         })});
    Reductions.push_back({R.Op, VD, R.Loc, Enumerator});
  }
}

} // namespace fpm::detail
