//===- LoopChecker.cpp - Is a partitioned loop a DOALL loop? --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoopCheck::run (LoopCheck.h) and the checks it makes itself: the loop's
// header in canonical form, the walk that records the body (and its exits),
// gotos, the local names of a C body, invariant bounds and the clauses'
// arrays; the other checks are in the files LoopCheck.h names. One file of
// under 800 lines, as these are run()'s own steps, in its order.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopCheck.h"

#include <functional>

using namespace clang;

namespace fpm::detail {

bool LoopCheck::isInside(SourceLocation Loc, SourceRange Range) const {
  Loc = SM.getExpansionLoc(Loc);
  SourceLocation B = SM.getExpansionLoc(Range.getBegin());
  SourceLocation E = SM.getExpansionRange(Range.getEnd()).getEnd();
  if (SM.getFileID(Loc) != SM.getFileID(B))
    return false;
  return !SM.isBeforeInTranslationUnit(Loc, B) &&
         !SM.isBeforeInTranslationUnit(E, Loc);
}

bool LoopCheck::checkHeader(CanonicalLoop &Loop) {
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
    report(Diags, Init ? Init->getBeginLoc() : For.getLParenLoc(), Level::Error,
           "loop not in canonical form: its init must declare or assign one "
           "integer loop variable");
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
    report(Diags, Cond ? Cond->getBeginLoc() : For.getLParenLoc(), Level::Error,
           "loop not in canonical form: its test must compare the loop "
           "variable '%0' with '<', '<=', '>', '>=' or '!='")
        << Var->getName();
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
    report(Diags, Inc ? Inc->getBeginLoc() : For.getRParenLoc(), Level::Error,
           "loop not in canonical form: its increment must be '++', '--', "
           "'+= c', '-= c' or '%0 = %0 + c'")
        << Var->getName();
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
        report(Diags, Loop.Step->getBeginLoc(), Level::Error,
               "loop not in canonical form: its step must not be zero");
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
    report(Diags, Loop.Step ? Loop.Step->getBeginLoc() : Inc->getBeginLoc(),
           Level::Error,
           "loop not in canonical form: its increment must make '%0' %1 on "
           "each iteration")
        << Var->getName() << (WantsUp ? "increase" : "decrease");
    report(Diags, Cond->IgnoreParenImpCasts()->getExprLoc(), Level::Note,
           "the step must be %0 because of this test")
        << (WantsUp ? "positive" : "negative");
    return false;
  }
  Lower = Loop.Lower;
  Increasing = WantsUp     ? std::optional(true)
               : WantsDown ? std::optional(false)
                           : StepUp;
  return true;
}

void LoopCheck::access(const Expr *At, const VarDecl *VD, bool Reads,
                       bool Writes) {
  Accesses.push_back({VD, At, Reads, Writes});
}

void LoopCheck::recordSubscript(const ArraySubscriptExpr *ASE, bool IsWrite,
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

void LoopCheck::walkTarget(const Expr *E, bool Reads) {
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

void LoopCheck::walk(const Stmt *S) {
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
    if (const auto *Break = dyn_cast<BreakStmt>(S)) {
      if (LoopDepth == 0 && SwitchDepth == 0) {
        if (!Quiet)
          report(Diags, Break->getBreakLoc(), Level::Error,
                 "'break' leaves the partitioned loop");
        Ok = false;
      }
      return;
    }
    if (const auto *Return = dyn_cast<ReturnStmt>(S)) {
      if (!Quiet)
        report(Diags, Return->getReturnLoc(), Level::Error,
               "'return' leaves the partitioned loop");
      Ok = false;
      return;
    }
    if (const auto *Goto = dyn_cast<IndirectGotoStmt>(S)) {
      if (!Quiet)
        report(Diags, Goto->getGotoLoc(), Level::Error,
               "'goto' leaves the partitioned loop");
      Ok = false;
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

bool LoopCheck::checkGotos() {
  bool GotosOk = true;
  SourceRange Body = For.getBody()->getSourceRange();
  // A goto in the body to a label outside it.
  for (const GotoStmt *Goto : Gotos) {
    const LabelStmt *Target = Goto->getLabel()->getStmt();
    if (!Target || !isInside(Target->getBeginLoc(), Body)) {
      report(Diags, Goto->getGotoLoc(), Level::Error,
             "'goto' leaves the partitioned loop");
      GotosOk = false;
    }
  }
  // A goto outside the body to a label in it.
  llvm::SmallVector<const Stmt *, 64> Work{Fn.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *Goto = dyn_cast<GotoStmt>(S)) {
      const LabelStmt *Target = Goto->getLabel()->getStmt();
      if (Target && isInside(Target->getBeginLoc(), Body) &&
          !isInside(Goto->getGotoLoc(), Body)) {
        report(Diags, Target->getIdentLoc(), Level::Error,
               "label '%0' in the partitioned loop is the target of a 'goto' "
               "outside it")
            << Target->getName();
        report(Diags, Goto->getGotoLoc(), Level::Note, "the 'goto' is here");
        GotosOk = false;
      }
    }
    llvm::append_range(Work, S->children());
  }
  return GotosOk;
}

/// Every use of VD in Root loads its value, a member's (`s.x`) or an
/// element's of an array member (`s.v[k]`), or measures it (`sizeof`):
/// nothing writes into VD or takes its address.
bool LoopCheck::onlyLoaded(const Stmt *Root, const VarDecl *VD) const {
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

/// C only: the body moves into a function of its own (CEmitter), where a
/// type, typedef or enumerator the enclosing function declares before the
/// loop is not visible. Collects those declarations (LocalTypes), which the
/// outlined function declares again, and is an error at what cannot be
/// declared again there: a type of variable size, an enumerator or a member
/// computed from a variable, an unnamed type without a typedef. C++ bodies
/// become lambdas in place and see them all.
bool LoopCheck::checkLocalNames() {
  if (Ctx.getLangOpts().CPlusPlus)
    return true;
  SourceRange Body = For.getBody()->getSourceRange();
  llvm::SmallPtrSet<const Decl *, 4> Seen;
  bool LocalOk = true;
  auto refuse = [&](const NamedDecl *Named, SourceLocation Use, StringRef Why) {
    if (Named->getName().empty()) // an unnamed struct or union
      report(Diags, Use, Level::Error,
             "an unnamed %0 declared in function '%1' is used in the body "
             "of a partitioned loop, which moves into a function of its own "
             "in C, where declaring it again would make another type; give "
             "it a tag or a typedef, or declare it at file scope")
          << cast<TagDecl>(Named)->getKindName() << Fn.getName();
    else
      report(Diags, Use, Level::Error,
             "'%0' is declared in function '%1' and %2: the body of a "
             "partitioned loop moves into a function of its own in C, which "
             "cannot declare it again; declare it at file scope")
          << Named->getName() << Fn.getName() << Why;
    report(Diags, Named->getLocation(), Level::Note, "it is declared here");
    LocalOk = false;
  };
  std::function<void(QualType, SourceLocation)> checkType;
  std::function<void(const Stmt *, SourceLocation, const NamedDecl *)>
      checkExpr;
  // D, a declaration the body uses at Use, and what it uses in turn.
  auto need = [&](const NamedDecl *D, SourceLocation Use) {
    if (!D || !D->getDeclContext()->isFunctionOrMethod() ||
        isInside(D->getLocation(), Body) || !Seen.insert(D).second)
      return;
    if (const auto *TD = dyn_cast<TypedefNameDecl>(D)) {
      QualType Under = TD->getUnderlyingType();
      if (Under->isVariablyModifiedType())
        return refuse(TD, Use, "has a variable size");
      checkType(Under, Use);
    } else if (const auto *Tag = dyn_cast<TagDecl>(D)) {
      // An unnamed struct declared again would be another type; an
      // unnamed enum only brings its enumerators.
      if (!Tag->getIdentifier() && !Tag->getTypedefNameForAnonDecl() &&
          !isa<EnumDecl>(Tag))
        return refuse(Tag, Use, "has no name");
      if (const auto *Record = dyn_cast<RecordDecl>(Tag)) {
        for (const FieldDecl *Field : Record->fields()) {
          if (Field->getType()->isVariablyModifiedType())
            return refuse(Tag, Use, "has a member of variable size");
          checkType(Field->getType(), Use);
          checkExpr(Field->getBitWidth(), Use, Tag);
        }
      } else if (const auto *Enum = dyn_cast<EnumDecl>(Tag)) {
        for (const EnumConstantDecl *EC : Enum->enumerators())
          checkExpr(EC->getInitExpr(), Use, EC);
      }
    }
    LocalTypes.push_back(D);
  };
  // The local types T names, through pointers, arrays and typedefs.
  checkType = [&](QualType T, SourceLocation Use) {
    for (int Depth = 0; !T.isNull() && Depth < 16; ++Depth) {
      if (const auto *TT = T->getAs<TypedefType>())
        need(TT->getDecl(), Use);
      if (const TagDecl *Tag = T->getAsTagDecl())
        need(Tag->getDefinition() ? Tag->getDefinition() : Tag, Use);
      if (T->isPointerType())
        T = T->getPointeeType();
      else if (const ArrayType *AT = Ctx.getAsArrayType(T))
        T = AT->getElementType();
      else
        break;
    }
  };
  // What a declaration's expression E (an enumerator's value, a bit-field's
  // width) names: an enumerator of another local enum is needed too; a
  // variable of the function would not be the same one.
  checkExpr = [&](const Stmt *E, SourceLocation Use, const NamedDecl *Owner) {
    llvm::SmallVector<const Stmt *, 16> Work{E};
    while (!Work.empty()) {
      const Stmt *S = Work.pop_back_val();
      if (!S)
        continue;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
        if (const auto *EC = dyn_cast<EnumConstantDecl>(DRE->getDecl()))
          need(cast<EnumDecl>(EC->getDeclContext()), Use);
        else if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
                 VD && VD->getDeclContext()->isFunctionOrMethod())
          return refuse(Owner, Use, "is computed from a variable");
      } else if (const auto *Cast = dyn_cast<ExplicitCastExpr>(S)) {
        checkType(Cast->getTypeAsWritten(), Use);
      } else if (const auto *U = dyn_cast<UnaryExprOrTypeTraitExpr>(S)) {
        if (U->isArgumentType())
          checkType(U->getArgumentType(), Use);
      }
      llvm::append_range(Work, S->children());
    }
  };
  llvm::SmallVector<const Stmt *, 64> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const ValueDecl *D = DRE->getDecl();
      if (const auto *EC = dyn_cast<EnumConstantDecl>(D))
        need(cast<EnumDecl>(EC->getDeclContext()), DRE->getLocation());
      else if (isa<VarDecl>(D) && !isInside(D->getLocation(), Body))
        checkType(D->getType(), DRE->getLocation());
    } else if (const auto *E = dyn_cast<ExplicitCastExpr>(S)) {
      checkType(E->getTypeAsWritten(), E->getBeginLoc());
    } else if (const auto *E = dyn_cast<UnaryExprOrTypeTraitExpr>(S)) {
      if (E->isArgumentType())
        checkType(E->getArgumentType(), E->getBeginLoc());
    } else if (const auto *E = dyn_cast<CompoundLiteralExpr>(S)) {
      checkType(E->getType(), E->getBeginLoc());
    } else if (const auto *E = dyn_cast<OffsetOfExpr>(S)) {
      checkType(E->getTypeSourceInfo()->getType(), E->getBeginLoc());
    } else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D))
          checkType(VD->getType(), VD->getLocation());
        else if (const auto *TD = dyn_cast<TypedefNameDecl>(D))
          checkType(TD->getUnderlyingType(), TD->getLocation());
    }
    // Children last first, so that the first use in the source is the one
    // reported.
    llvm::SmallVector<const Stmt *, 8> Children(S->children());
    Work.append(Children.rbegin(), Children.rend());
  }
  // The loop variable's type, and those of the variables the clauses
  // name, are written in the outlined body too.
  checkType(Var->getType(), Var->getLocation());
  llvm::sort(LocalTypes, [&](const Decl *A, const Decl *B) {
    return SM.isBeforeInTranslationUnit(A->getBeginLoc(), B->getBeginLoc());
  });
  return LocalOk;
}

bool LoopCheck::checkInvariant(const Expr *E, StringRef What) {
  if (!E)
    return true;
  llvm::SmallVector<const Stmt *, 16> Work{E};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (VD == Var) {
        report(Diags, DRE->getLocation(), Level::Error,
               "loop not in canonical form: its %0 depends on the loop "
               "variable '%1'")
            << What << VD->getName();
        return false;
      }
      auto Write = llvm::find_if(
          Accesses, [&](const Access &A) { return A.Var == VD && A.Writes; });
      if (VD && Write != Accesses.end()) {
        report(Diags, DRE->getLocation(), Level::Error,
               "loop not in canonical form: its %0 is not loop-invariant: "
               "'%1' is written in the body")
            << What << VD->getName();
        report(Diags, Write->At->getExprLoc(), Level::Note,
               "'%0' is written here")
            << VD->getName();
        return false;
      }
    }
    llvm::append_range(Work, S->children());
  }
  return true;
}

/// What Name means at the loop, found as the compiler would: the variable
/// the body uses by that name; else a declaration of an enclosing block
/// before the loop, a parameter, a member or a global. nullptr if it might
/// be a member fpm cannot see (of a base class); nullopt if it names
/// nothing.
std::optional<const ValueDecl *> LoopCheck::visibleDecl(StringRef Name) const {
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

/// The in, out and inout clauses name arrays or pointers the loop can see
/// (their bounds are ClauseSema's to check, with the compiler's Sema).
bool LoopCheck::checkSections(StringRef Clause,
                              ArrayRef<DataSection> Sections) {
  bool SectionsOk = true;
  for (const DataSection &Section : Sections) {
    if (Section.ArrayIsMacro)
      continue;
    std::optional<const ValueDecl *> D = visibleDecl(Section.Array);
    if (!D) {
      report(Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' names no variable visible at the loop")
          << Section.Array << Clause;
      SectionsOk = false;
      continue;
    }
    if (!*D)
      continue;
    QualType T = (*D)->getType().getNonReferenceType();
    if (T->isPointerType() || T->isArrayType() || T->isDependentType())
      continue;
    if (T->isRecordType())
      report(Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' is not an array or a pointer: its type is %2; "
             "name a pointer to its elements instead")
          << Section.Array << Clause << T;
    else
      report(Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' is not an array or a pointer: its type is %2")
          << Section.Array << Clause << T;
    report(Diags, (*D)->getLocation(), Level::Note, "'%0' is declared here")
        << Section.Array;
    SectionsOk = false;
  }
  return SectionsOk;
}

//===----------------------------------------------------------------------===//
// The data clauses against the body's subscripts
//===----------------------------------------------------------------------===//
//
// On an OpenCL device only the sections of the in, out and inout clauses are
// copied to and from the device. Two warnings, each only where the AST proves
// it: a subscript outside its array's section, and an array declared only
// `out` whose elements the body reads before it writes any.

bool LoopCheck::run(CanonicalLoop &Loop, LoopVariables &Vars) {
  if (!checkHeader(Loop))
    return false;
  walk(For.getBody());
  // A shared scalar a called function writes through its address.
  markCallWrites();
  Ok &= checkGotos();
  Ok &= checkLocalNames();
  Ok &= checkInvariant(Loop.Bound, "bound");
  Ok &= checkInvariant(Loop.Step, "step");

  // The private clause names variables declared outside the loop.
  llvm::SmallSetVector<const VarDecl *, 4> Private;
  for (const PrivateName &Name : Pragma.Private) {
    auto Use = llvm::find_if(Accesses, [&](const Access &A) {
      return A.Var->getName() == Name.Name && isOutsideLoop(A.Var);
    });
    if (Use == Accesses.end()) {
      if (!visibleDecl(Name.Name)) {
        report(Diags, Name.Loc, Level::Error,
               "unknown variable '%0' in 'private(...)': it names no variable "
               "visible at the loop")
            << Name.Name;
        Ok = false;
        continue;
      }
      report(Diags, Name.Loc, Level::Warning,
             "private variable '%0' is not used in the loop")
          << Name.Name;
      continue;
    }
    if (Use->Var == Var) {
      report(Diags, Name.Loc, Level::Error,
             "the loop variable '%0' cannot be private")
          << Name.Name;
      Ok = false;
      continue;
    }
    Private.insert(Use->Var);
  }
  for (const VarDecl *VD : NestedInductionVars)
    Private.insert(VD);
  Ok &= checkSections("in", Pragma.In);
  Ok &= checkSections("out", Pragma.Out);
  Ok &= checkSections("inout", Pragma.InOut);
  // Reduction variables: written by the body, each chunk into its own
  // accumulator; neither shared nor private (not even as a nested loop's
  // induction variable).
  llvm::SmallVector<ReductionVar, 2> Reductions;
  llvm::SmallPtrSet<const VarDecl *, 2> Reduced;
  Ok &= checkReductions(Reductions, Reduced);
  for (const ReductionVar &R : Reductions)
    Private.remove(R.Var);

  // Writes: never to the loop variable, to an outside scalar only if
  // private, to an outside array at elements of the iteration's own.
  // A reduction variable may be written (the clause names it, valid or
  // not: an error at the clause is enough).
  PrivateVars.insert(Private.begin(), Private.end());
  ReductionVars.insert(Reduced.begin(), Reduced.end());
  llvm::SmallSetVector<const VarDecl *, 4> Writable = Private;
  for (const VarDecl *VD : Reduced)
    Writable.insert(VD);
  Ok &= checkSharedWrites(Writable);
  Ok &= checkArrayRaces(Private);

  // What the private variables hold: read before they are written in an
  // iteration, read after the loop.
  checkPrivateReads(Private);
  checkPrivatesAfterLoop(Private);
  reportDependences();
  if (!Ok)
    return false;
  checkDataUses();

  Vars.Private.assign(Private.begin(), Private.end());
  llvm::SmallSetVector<const VarDecl *, 8> Shared;
  for (const Access &A : Accesses)
    if (A.Var != Var && !Private.count(A.Var) && !Reduced.count(A.Var) &&
        isOutsideLoop(A.Var) && A.Var->isLocalVarDeclOrParm() &&
        !A.Var->isLocalExternDecl())
      Shared.insert(A.Var);
  Vars.Shared.assign(Shared.begin(), Shared.end());
  for (const VarDecl *VD : Shared)
    if (!VD->getType()->isArrayType() && !onlyLoaded(For.getBody(), VD))
      Vars.Addressed.push_back(VD);

  llvm::SmallSetVector<const VarDecl *, 4> ClauseVars;
  for (const auto *Sections : {&Pragma.In, &Pragma.Out, &Pragma.InOut})
    for (const DataSection &Section : *Sections)
      for (StringRef Name : Section.Names)
        if (std::optional<const ValueDecl *> D = visibleDecl(Name); D && *D)
          if (const auto *VD = dyn_cast<VarDecl>(*D);
              VD && VD != Var && VD->isLocalVarDeclOrParm() &&
              !VD->isLocalExternDecl())
            ClauseVars.insert(VD);
  Vars.ClauseVars.assign(ClauseVars.begin(), ClauseVars.end());
  Vars.Reductions.assign(Reductions.begin(), Reductions.end());
  Vars.LocalTypes.assign(LocalTypes.begin(), LocalTypes.end());
  return true;
}

} // namespace fpm::detail

namespace fpm {
using detail::LoopCheck;

bool checkLoop(ASTContext &Ctx, const PartitionPragma &Pragma,
               const FunctionDecl &Fn, const ForStmt &For, CanonicalLoop &Loop,
               LoopVariables &Vars,
               llvm::ArrayRef<OmpThreadPrivate> ThreadPrivates,
               const SectionShapes *Shapes) {
  return LoopCheck(Ctx, Pragma, Fn, For, ThreadPrivates, Shapes)
      .run(Loop, Vars);
}

llvm::SmallVector<OutCover, 2>
checkOutCover(ASTContext &Ctx, const PartitionPragma &Pragma,
              const FunctionDecl &Fn, const ForStmt &For, const VarDecl &Var,
              const SectionShapes *Shapes) {
  return LoopCheck(Ctx, Pragma, Fn, For, {}, Shapes).coverOut(Var);
}

} // namespace fpm
