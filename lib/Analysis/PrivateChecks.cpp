//===- PrivateChecks.cpp - What a private variable holds ------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Over 600 lines because the must-be-assigned dataflow, its struct members
// and its arrays are one analysis that every warning here reads.
//
// The checks private-reads and private-after-loop (LoopChecks.h), and the
// walk's readers they read (LoopWalk.h: useOf; readAfterLoop, which
// shared-writes reads too), on the variables each iteration has a copy of
// (docs/pragma.md, "Variables"): the copy holds nothing when an iteration
// starts (it is the chunk's, and holds what the chunk's previous
// iteration left: a value that depends on the split), and is lost when the
// loop ends, where the variable keeps its value from before the loop.
//
//  - A private variable read where some path from the iteration's start
//    has not assigned it (a warning, once per variable): a forward
//    must-be-assigned dataflow over the CFG of the loop (Clang's), each
//    iteration starting with nothing assigned. A struct counts member by
//    member (`d.x = 1;` assigns d.x, reading d.x then is fine, reading d
//    is not); taking an address, or binding a non-const reference, counts
//    as assigning, as in Clang's -Wuninitialized. A private array keeps
//    the rule of the order of the source: its first use an element's read,
//    or the array passed to a function whose own first use of it reads one
//    (checkPrivateArrayRead).
//  - A private variable of the clause that the body writes and the code
//    after the loop reads before it writes it (a warning): that code sees
//    the value from before the loop, not the serial loop's; with a flag's
//    shape (SharedScalars.cpp, finalValueReduction) a reduction gives it.
//    readAfterLoop, a search of the function's CFG from the loop's exit,
//    also tells shared-writes not to suggest `private` for a shared
//    scalar the code after the loop reads.
//
// Both read one CFG of the loop and its dataflow, which is why they share a
// file of some 700 lines.
//
// Why not Clang's own uninitialized-values analysis
// (runUninitializedVariablesAnalysis) over the loop's CFG: it would start
// every local of the function unassigned, the shared ones too, and count a
// loop with constant bounds as one that may run no iteration (its
// -Wconditional-uninitialized does). This one follows the private
// variables only, structs member by member.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

#include "clang/Analysis/CFG.h"
#include "llvm/ADT/BitVector.h"

using namespace clang;

namespace fpm::detail {

namespace {

using FieldPath = llvm::SmallVector<const FieldDecl *, 2>;

std::unique_ptr<CFG> buildCfg(const Decl *D, const Stmt *Root,
                              ASTContext &Ctx) {
  CFG::BuildOptions Options;
  // Every subexpression an element, in the order it is evaluated: each
  // use of a variable is seen where it happens.
  Options.setAllAlwaysAdd();
  return CFG::buildCFG(D, const_cast<Stmt *>(Root), &Ctx, Options);
}

/// A `for` loop whose test holds when it is first evaluated: its init gives
/// its variable a constant that the test compares with a constant
/// (`for (k = 0; k < 8; k++)`).
bool runsAtLeastOnce(const ForStmt *L, const ASTContext &Ctx) {
  auto [V, Start] = initVar(L);
  auto Test = asBinary(L->getCond());
  if (!V || !Test)
    return false;
  bool VarLeft = referencedVar(Test->LHS) == V;
  if (!VarLeft && referencedVar(Test->RHS) != V)
    return false;
  auto Value = [&](const Expr *E) -> std::optional<llvm::APSInt> {
    Expr::EvalResult R;
    if (E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
      return std::nullopt;
    return R.Val.getInt();
  };
  std::optional<llvm::APSInt> A = Value(Start),
                              B = Value(VarLeft ? Test->RHS : Test->LHS);
  // A comparison in an unsigned type sees a negative start as a huge value.
  if (!A || !B ||
      (Test->LHS->getType()->isUnsignedIntegerType() &&
       (A->isNegative() || B->isNegative())))
    return false;
  int C = llvm::APSInt::compareValues(*A, *B);
  if (!VarLeft)
    C = -C;
  switch (Test->Op) {
  case BO_LT:
    return C < 0;
  case BO_LE:
    return C <= 0;
  case BO_GT:
    return C > 0;
  case BO_GE:
    return C >= 0;
  case BO_NE:
    return C != 0;
  default:
    return false;
  }
}

/// The parameter of Callee a call binds its argument I to (I counted in the
/// call's arguments); null for a variadic one, or the object of a member
/// operator call.
const ParmVarDecl *parameterOf(const Expr *Call, const FunctionDecl *Callee,
                               unsigned I) {
  if (!Callee)
    return nullptr;
  if (isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Callee)) {
    if (I == 0)
      return nullptr;
    --I;
  }
  return I < Callee->getNumParams() ? Callee->getParamDecl(I) : nullptr;
}

bool bindsConstReference(const ParmVarDecl *P) {
  if (!P)
    return false;
  const auto *Ref = P->getType()->getAs<ReferenceType>();
  return Ref && Ref->getPointeeType().isConstQualified();
}

} // namespace

/// What the expression around DRE, a use of a variable, does with it where
/// it is evaluated: reads its value (`x + 1`, `x += 1`, `x++`, a copy, a
/// const reference bound to it), assigns it (`x = 1`), lets it escape, which
/// counts as assigning it (`&x`, a non-const reference bound to it, a
/// method called on it, a lambda capturing it by reference that does not
/// read it first), or neither (`(void)x`). Path gets the members selected,
/// outermost first: `d.a.b = 1` assigns the path (a, b) of d; an element of
/// an array member, `d.v[k]`, counts as the member (v).
LoopWalk::VarUse
LoopWalk::useOf(const DeclRefExpr *DRE,
                llvm::SmallVectorImpl<const FieldDecl *> &Path) const {
  const Stmt *Cur = DRE;
  const Stmt *P = parentOf(Cur);
  auto Up = [&] {
    Cur = P;
    P = parentOf(P);
  };
  bool Element = false;
  while (P) {
    const auto *Cast = dyn_cast<ImplicitCastExpr>(P);
    if (isa<ParenExpr>(P) || (Cast && Cast->getCastKind() == CK_NoOp)) {
      Up();
    } else if (const auto *ME = dyn_cast<MemberExpr>(P); ME && !ME->isArrow()) {
      const auto *FD = dyn_cast<FieldDecl>(ME->getMemberDecl());
      if (!FD)
        return VarUse::Escape;
      if (!Element)
        Path.push_back(FD);
      Up();
    } else if (Cast && Cast->getCastKind() == CK_ArrayToPointerDecay) {
      const auto *ASE = dyn_cast_or_null<ArraySubscriptExpr>(parentOf(Cast));
      if (!ASE || ASE->getBase() != Cast)
        return VarUse::Escape;
      Element = true;
      Cur = ASE;
      P = parentOf(ASE);
    } else {
      break;
    }
  }
  if (!P)
    return VarUse::Escape;
  if (const auto *Cast = dyn_cast<CastExpr>(P)) {
    // `(void)x` (in C, of x converted to its value) is no use.
    const auto *Outer = dyn_cast_or_null<CastExpr>(parentOf(Cast));
    if (Cast->getCastKind() == CK_ToVoid ||
        (Outer && Outer->getCastKind() == CK_ToVoid))
      return VarUse::Ignore;
    return Cast->getCastKind() == CK_LValueToRValue ? VarUse::Read
                                                    : VarUse::Escape;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
    if (BO->getLHS() != Cur)
      return VarUse::Escape;
    if (BO->isAssignmentOp())
      return BO->getOpcode() == BO_Assign ? VarUse::Write : VarUse::Read;
    return BO->getOpcode() == BO_Comma ? VarUse::Ignore : VarUse::Escape;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(P))
    return UO->isIncrementDecrementOp() ? VarUse::Read : VarUse::Escape;
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(P);
      Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 &&
      Op->getArg(0) == Cur)
    return VarUse::Write;
  if (const auto *Call = dyn_cast<CallExpr>(P)) {
    for (unsigned I = 0; I != Call->getNumArgs(); ++I)
      if (Call->getArg(I) == Cur)
        return bindsConstReference(
                   parameterOf(Call, Call->getDirectCallee(), I))
                   ? VarUse::Read
                   : VarUse::Escape;
    return VarUse::Escape;
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(P)) {
    for (unsigned I = 0; I != Construct->getNumArgs(); ++I)
      if (Construct->getArg(I) == Cur)
        return bindsConstReference(
                   parameterOf(Construct, Construct->getConstructor(), I))
                   ? VarUse::Read
                   : VarUse::Escape;
    return VarUse::Escape;
  }
  if (const auto *DS = dyn_cast<DeclStmt>(P)) {
    // A reference bound to it: `const int &r = x;` reads it.
    for (const Decl *D : DS->decls())
      if (const auto *Ref = dyn_cast<VarDecl>(D);
          Ref && Ref->getInit() == Cur && Ref->getType()->isReferenceType())
        return Ref->getType().getNonReferenceType().isConstQualified()
                   ? VarUse::Read
                   : VarUse::Escape;
    return VarUse::Escape;
  }
  if (const auto *Lambda = dyn_cast<LambdaExpr>(P)) {
    // Captured by reference: the lambda may run at once; a read there if
    // the body's first use of it reads it.
    llvm::SmallVector<const FieldDecl *, 2> Inner;
    const DeclRefExpr *Use = useInLambda(Lambda, DRE);
    return Use && useOf(Use, Inner) == VarUse::Read ? VarUse::Read
                                                    : VarUse::Escape;
  }
  return VarUse::Escape;
}

/// The first use, in the walk's order, in the body of Lambda of the
/// variable Capture (one of its captures) names; null if none.
const DeclRefExpr *LoopWalk::useInLambda(const LambdaExpr *Lambda,
                                         const DeclRefExpr *Capture) const {
  SourceRange Body = Lambda->getBody()->getSourceRange();
  for (const Access &A : Accesses)
    if (A.Var == Capture->getDecl() && A.At != Capture &&
        isInside(A.At->getExprLoc(), Body))
      return dyn_cast<DeclRefExpr>(A.At);
  return nullptr;
}

/// For VD, a private array, the first use in the body (in the order of the
/// walk) that says something of its elements: a write of one (nothing to
/// report), a read of one (Warn there), or the array passed to a function
/// (`fill(i, t)`, `f(&t[k])`) whose own first use of it (firstUseOfParameter)
/// reads one (Warn at the argument, with a note where the function reads).
/// A function fpm does not follow, or any other use of the array's address,
/// ends the search without a warning: it may write the elements; `sizeof`,
/// and a function that never names its parameter, are no use.
static void checkPrivateArrayRead(
    LoopWalk &W, const VarDecl *VD,
    llvm::function_ref<void(const VarDecl *, const Expr *)> Warn) {
  for (const Access &A : W.Accesses) {
    const auto *DRE = dyn_cast<DeclRefExpr>(A.At);
    if (A.Var != VD || !DRE)
      continue;
    // Up from the name, through the subscripts of an element and its
    // address or an offset (`&t[k]`, `t + k`).
    const Stmt *Cur = DRE;
    const Subscript *Sub = nullptr;
    bool Address = false;
    while (const Stmt *Up = W.parentOf(Cur)) {
      const auto *Cast = dyn_cast<ImplicitCastExpr>(Up);
      const auto *ASE = dyn_cast<ArraySubscriptExpr>(Up);
      const auto *UO = dyn_cast<UnaryOperator>(Up);
      const auto *BO = dyn_cast<BinaryOperator>(Up);
      if (isa<ParenExpr>(Up) ||
          (Cast && (Cast->getCastKind() == CK_NoOp ||
                    Cast->getCastKind() == CK_ArrayToPointerDecay))) {
        Cur = Up;
      } else if (ASE && ASE->getBase() == Cur && !Address) {
        Cur = Up;
        if (const Subscript *S = llvm::find_if(
                W.Subscripts, [&](const Subscript &S) { return S.At == ASE; });
            S != W.Subscripts.end())
          Sub = S;
      } else if (UO && UO->getOpcode() == UO_AddrOf && Sub) {
        Address = true;
        Cur = Up;
      } else if (BO &&
                 (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub) &&
                 cast<Expr>(Cur)->getType()->isPointerType()) {
        Address = true;
        Cur = Up;
      } else {
        break;
      }
    }
    const Stmt *Parent = W.parentOf(Cur);
    if (isa_and_nonnull<UnaryExprOrTypeTraitExpr>(Parent))
      continue; // sizeof
    if (Sub && !Address) {
      if (!Sub->IsWrite || Sub->AlsoReads)
        Warn(VD, Sub->At);
      return;
    }
    // The array, or an element's address: what the callee does with it.
    const auto *Call = dyn_cast_or_null<CallExpr>(Parent);
    if (!Call)
      return;
    const FunctionDecl *Callee = W.followableCallee(Call, 1);
    auto Arg = llvm::find(Call->arguments(), Cur);
    if (!Callee || Arg == Call->arg_end())
      return;
    const Expr *ReadAt = nullptr;
    switch (W.firstUseOfParameter(
        Callee, Callee->getParamDecl(Arg - Call->arg_begin()), 1, ReadAt)) {
    case LoopWalk::FirstUse::Reads:
      Warn(VD, cast<Expr>(Cur));
      report(W.Diags, ReadAt->getExprLoc(), Level::Note,
             "'%0' reads '%1' here before it writes it")
          << Callee->getName() << W.text(ReadAt);
      return;
    case LoopWalk::FirstUse::Unused:
      continue;
    case LoopWalk::FirstUse::Writes:
    case LoopWalk::FirstUse::Unknown:
      return;
    }
  }
}

/// A private variable read where some path from the start of the iteration
/// has not assigned it; a private array, its elements read before any is
/// written, in the order of the source (checkPrivateArrayRead).
CheckResult PrivateReadsCheck::run(CheckContext &Context) {
  LoopWalk &W = Context.Walk;
  const llvm::SmallSetVector<const VarDecl *, 4> &Priv = W.Private;
  auto Warn = [&](const VarDecl *VD, const Expr *At) {
    report(W.Diags, At->getExprLoc(), Level::Warning,
           "private %select{variable|array}0 '%1' may be read before it is "
           "written in an iteration: its value here depends on how the loop "
           "is split; assign it on every path from the start of the "
           "iteration to this read")
        << VD->getType()->isArrayType() << VD->getName();
    auto Name = llvm::find_if(W.Pragma.Private, [&](const PrivateName &N) {
      return N.Name == VD->getName();
    });
    if (Name != W.Pragma.Private.end())
      report(W.Diags, Name->Loc, Level::Note,
             "'%0' is private here: each iteration has a copy of its own, "
             "which holds no value of the iteration until it assigns one")
          << VD->getName();
  };
  // Scalars, and structs member by member (a C++ class only if it is a C
  // struct: a constructor makes anything else valid from the start).
  llvm::SmallPtrSet<const VarDecl *, 4> Tracked;
  for (const VarDecl *VD : Priv) {
    QualType T = VD->getType();
    if (T->isArrayType()) {
      checkPrivateArrayRead(W, VD, Warn);
      continue;
    }
    const auto *Class = T->getAsCXXRecordDecl();
    if (!T->isDependentType() &&
        (T->isScalarType() ||
         (T->isRecordType() && (!Class || Class->isCLike()))))
      Tracked.insert(VD);
  }
  if (Tracked.empty())
    return CheckResult::Pass;

  // The places of the tracked variables the body assigns: a variable, or a
  // member of one.
  std::vector<std::pair<const VarDecl *, FieldPath>> Places;
  auto PlaceOf = [&](const VarDecl *VD, ArrayRef<const FieldDecl *> Path) {
    auto It = llvm::find_if(Places, [&](const auto &Place) {
      return Place.first == VD && ArrayRef(Place.second) == Path;
    });
    if (It != Places.end())
      return unsigned(It - Places.begin());
    Places.push_back({VD, FieldPath(Path.begin(), Path.end())});
    return unsigned(Places.size() - 1);
  };
  // Whether State assigns all of Path of VD: a place that holds it, or,
  // for a struct, all its members (one for a union).
  std::function<bool(const VarDecl *, FieldPath &, const llvm::BitVector &)>
      Assigned = [&](const VarDecl *VD, FieldPath &Path,
                     const llvm::BitVector &State) -> bool {
    for (unsigned I = 0; I != Places.size() && I != State.size(); ++I)
      if (State.test(I) && Places[I].first == VD &&
          Places[I].second.size() <= Path.size() &&
          std::equal(Places[I].second.begin(), Places[I].second.end(),
                     Path.begin()))
        return true;
    QualType T = Path.empty() ? VD->getType() : Path.back()->getType();
    const RecordDecl *RD = T->getAsRecordDecl();
    if (!RD || RD->field_empty() ||
        !llvm::any_of(Places, [&](const auto &Place) {
          return Place.first == VD && Place.second.size() > Path.size() &&
                 std::equal(Path.begin(), Path.end(), Place.second.begin());
        }))
      return false;
    auto Member = [&](const FieldDecl *FD) {
      Path.push_back(FD);
      bool Is = Assigned(VD, Path, State);
      Path.pop_back();
      return Is;
    };
    return RD->isUnion() ? llvm::any_of(RD->fields(), Member)
                         : llvm::all_of(RD->fields(), Member);
  };

  std::unique_ptr<CFG> Cfg = buildCfg(&W.Fn, &W.For, W.Ctx);
  const CFGBlock *BodyEntry = nullptr;
  if (Cfg)
    for (const CFGBlock *B : *Cfg)
      if (B->getTerminatorStmt() == &W.For && B->succ_size() == 2)
        BodyEntry = *B->succ_begin();
  if (!BodyEntry) {
    // No CFG: the first use of each variable in the source's order.
    for (const VarDecl *VD : Tracked) {
      auto First = llvm::find_if(W.Accesses,
                                 [&](const Access &A) { return A.Var == VD; });
      FieldPath Path;
      if (First != W.Accesses.end() && isa<DeclRefExpr>(First->At) &&
          W.useOf(cast<DeclRefExpr>(First->At), Path) == LoopWalk::VarUse::Read)
        Warn(VD, First->At);
    }
    return CheckResult::Pass;
  }

  // Visits the uses of the tracked variables in B, in order, from State
  // (what is assigned at B's start); OnRead gets each read of what State
  // does not assign.
  SourceRange Body = W.For.getBody()->getSourceRange();
  auto Visit =
      [&](const CFGBlock &B, llvm::BitVector &State,
          llvm::function_ref<void(const VarDecl *, const Expr *)> OnRead) {
        for (const CFGElement &E : B) {
          std::optional<CFGStmt> CS = E.getAs<CFGStmt>();
          if (!CS)
            continue;
          const Stmt *S = CS->getStmt();
          auto Use = [&](const VarDecl *VD, const Expr *At, LoopWalk::VarUse U,
                         FieldPath &Path) {
            if (U == LoopWalk::VarUse::Write || U == LoopWalk::VarUse::Escape) {
              unsigned I = PlaceOf(VD, Path);
              if (I >= State.size())
                State.resize(I + 1);
              State.set(I);
            } else if (U == LoopWalk::VarUse::Read &&
                       W.isInside(At->getExprLoc(), Body) &&
                       !Assigned(VD, Path, State)) {
              OnRead(VD, At);
            }
          };
          FieldPath Path;
          if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
            const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
            if (!VD || !Tracked.count(VD))
              continue;
            // A lambda's capture reads where its body uses the variable.
            const Expr *At = DRE;
            const Stmt *P = W.parentOf(DRE);
            while (isa_and_nonnull<ImplicitCastExpr>(P))
              P = W.parentOf(P);
            if (const auto *Lambda = dyn_cast_or_null<LambdaExpr>(P))
              if (const DeclRefExpr *Inner = W.useInLambda(Lambda, DRE))
                At = Inner;
            Use(VD, At, W.useOf(DRE, Path), Path);
          } else if (const auto *Block = dyn_cast<BlockExpr>(S)) {
            // A block copies what it captures, unless it is __block.
            for (const BlockDecl::Capture &C :
                 Block->getBlockDecl()->captures())
              if (Tracked.count(C.getVariable()))
                Use(C.getVariable(), Block,
                    C.isByRef() ? LoopWalk::VarUse::Escape
                                : LoopWalk::VarUse::Read,
                    Path);
          }
        }
      };
  auto NoRead = [](const VarDecl *, const Expr *) {};

  // What each block assigns (the places are all known after this).
  unsigned N = Cfg->getNumBlockIDs();
  std::vector<llvm::BitVector> Gen(N);
  for (const CFGBlock *B : *Cfg)
    Visit(*B, Gen[B->getBlockID()], NoRead);
  unsigned Width = Places.size();
  for (llvm::BitVector &G : Gen)
    G.resize(Width);

  // Must-be-assigned, forward: what every path from the iteration's start
  // assigns at each block's end. The body's entry starts with nothing; a
  // block no path reaches assigns everything (nothing to report there).
  std::vector<llvm::BitVector> Out(N, llvm::BitVector(Width, true));
  Out[Cfg->getEntry().getBlockID()].reset();
  auto EdgeState = [&](const CFGBlock *P, const CFGBlock *B) {
    // The exit of an inner `for` that runs at least once comes after an
    // iteration of it: from its loop-back blocks only.
    const auto *L = dyn_cast_or_null<ForStmt>(P->getTerminatorStmt());
    if (L && L != &W.For && P->succ_size() == 2 &&
        *(P->succ_begin() + 1) == B && *P->succ_begin() != B &&
        runsAtLeastOnce(L, W.Ctx)) {
      llvm::BitVector State(Width, true);
      bool Any = false;
      for (const CFGBlock *Q : P->preds())
        if (Q && Q->getLoopTarget() == L) {
          State &= Out[Q->getBlockID()];
          Any = true;
        }
      if (Any) {
        State |= Gen[P->getBlockID()];
        return State;
      }
    }
    return Out[P->getBlockID()];
  };
  auto In = [&](const CFGBlock *B) {
    llvm::BitVector State(Width, B != BodyEntry);
    if (B != BodyEntry)
      for (const CFGBlock *P : B->preds())
        if (P)
          State &= EdgeState(P, B);
    return State;
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const CFGBlock *B : *Cfg) {
      if (B == &Cfg->getEntry())
        continue;
      llvm::BitVector State = In(B);
      State |= Gen[B->getBlockID()];
      if (State != Out[B->getBlockID()]) {
        Out[B->getBlockID()] = std::move(State);
        Changed = true;
      }
    }
  }

  // The first read of each variable in the source where it may not be
  // assigned.
  llvm::MapVector<const VarDecl *, const Expr *> Reads;
  for (const CFGBlock *B : *Cfg) {
    llvm::BitVector State = In(B);
    Visit(*B, State, [&](const VarDecl *VD, const Expr *At) {
      auto [It, New] = Reads.insert({VD, At});
      if (!New && W.SM.isBeforeInTranslationUnit(
                      W.SM.getExpansionLoc(At->getExprLoc()),
                      W.SM.getExpansionLoc(It->second->getExprLoc())))
        It->second = At;
    });
  }
  llvm::SmallVector<std::pair<const VarDecl *, const Expr *>, 4> Sorted(
      Reads.begin(), Reads.end());
  llvm::sort(Sorted, [&](const auto &A, const auto &B) {
    return W.SM.isBeforeInTranslationUnit(
        W.SM.getExpansionLoc(A.second->getExprLoc()),
        W.SM.getExpansionLoc(B.second->getExprLoc()));
  });
  for (auto [VD, At] : Sorted)
    Warn(VD, At);
  return CheckResult::Pass;
}

/// Whether the code after the loop may read VD before it writes it: a
/// search of the CFG of the function (or of the lambda or block the loop
/// is in) from the loop's exit, which never enters the loop's body again
/// (its private copies are the iteration's). Maybe where fpm cannot follow
/// VD: not a local, a reference, its address taken, a reference bound to it
/// or a lambda using it anywhere in the function, no CFG.
LoopWalk::ReadAfter LoopWalk::readAfterLoop(const VarDecl *VD) const {
  ReadAfter Result;
  if (!VD->hasLocalStorage() || VD->getType()->isReferenceType() ||
      !Fn.getBody())
    return Result;
  // Nothing in the function may reach VD but by its name.
  llvm::SmallVector<const Stmt *, 64> Uses{Fn.getBody()};
  while (!Uses.empty()) {
    const Stmt *S = Uses.pop_back_val();
    if (!S)
      continue;
    llvm::append_range(Uses, S->children());
    const auto *DRE = dyn_cast<DeclRefExpr>(S);
    FieldPath Path;
    if (DRE && DRE->getDecl() == VD &&
        (DRE->refersToEnclosingVariableOrCapture() ||
         isa_and_nonnull<LambdaExpr>(parentOf(DRE)) ||
         useOf(DRE, Path) == VarUse::Escape))
      return Result;
  }
  const Stmt *Root = Fn.getBody();
  const Decl *D = &Fn;
  for (const Stmt *P = parentOf(&For); P; P = parentOf(P)) {
    if (const auto *Lambda = dyn_cast<LambdaExpr>(P)) {
      Root = Lambda->getBody();
      D = Lambda->getCallOperator();
      break;
    }
    if (const auto *Block = dyn_cast<BlockExpr>(P)) {
      Root = Block->getBody();
      D = Block->getBlockDecl();
      break;
    }
  }
  std::unique_ptr<CFG> Cfg = buildCfg(D, Root, Ctx);
  if (!Cfg)
    return Result;
  auto Loop = llvm::find_if(*Cfg, [&](const CFGBlock *B) {
    return B->getTerminatorStmt() == &For && B->succ_size() == 2;
  });
  if (Loop == Cfg->end())
    return Result;
  llvm::BitVector Seen(Cfg->getNumBlockIDs());
  llvm::SmallVector<const CFGBlock *, 16> Work;
  auto Push = [&](const CFGBlock *B) {
    if (B && !Seen.test(B->getBlockID())) {
      Seen.set(B->getBlockID());
      Work.push_back(B);
    }
  };
  Push(*((*Loop)->succ_begin() + 1));
  while (!Work.empty()) {
    const CFGBlock *B = Work.pop_back_val();
    bool Assigned = false;
    for (const CFGElement &E : *B) {
      std::optional<CFGStmt> CS = E.getAs<CFGStmt>();
      if (!CS)
        continue;
      const Stmt *S = CS->getStmt();
      if (const auto *DS = dyn_cast<DeclStmt>(S);
          DS && llvm::is_contained(DS->decls(), VD)) {
        Assigned = true;
        break;
      }
      const auto *DRE = dyn_cast<DeclRefExpr>(S);
      if (!DRE || DRE->getDecl() != VD)
        continue;
      FieldPath Path;
      VarUse U = useOf(DRE, Path);
      if (U == VarUse::Read)
        return {ReadAfter::Yes, DRE};
      if (U != VarUse::Ignore && Path.empty()) {
        Assigned = true;
        break;
      }
    }
    if (Assigned)
      continue;
    if (B->getTerminatorStmt() == &For) {
      Push(*(B->succ_begin() + 1));
      continue;
    }
    for (const CFGBlock *Succ : B->succs())
      Push(Succ);
  }
  Result.Kind = ReadAfter::No;
  return Result;
}

/// A variable of the private clause that the body writes and the code after
/// the loop reads before it writes it: that code reads the value from
/// before the loop.
CheckResult PrivateAfterLoopCheck::run(CheckContext &Context) {
  LoopWalk &W = Context.Walk;
  for (const VarDecl *VD : W.Private) {
    if (VD->getType()->isArrayType() ||
        llvm::none_of(W.Pragma.Private, [&](const PrivateName &N) {
          return N.Name == VD->getName();
        }))
      continue;
    auto Write = llvm::find_if(
        W.Accesses, [&](const Access &A) { return A.Var == VD && A.Writes; });
    if (Write == W.Accesses.end())
      continue;
    LoopWalk::ReadAfter After = W.readAfterLoop(VD);
    if (After.Kind != LoopWalk::ReadAfter::Yes)
      continue;
    std::optional<LoopWalk::FinalReduction> R = W.finalValueReduction(VD);
    std::string Fix =
        R ? "list it in 'reduction(" + R->Op.str() + ": " +
                VD->getName().str() +
                ")' instead, which leaves in it what the serial loop leaves" +
                (R->Condition.empty()
                     ? ""
                     : " if " + R->Condition + " before the loop")
          : "fpm has no 'lastprivate': compute the value the code after the "
            "loop needs there";
    report(W.Diags, Write->At->getExprLoc(), Level::Warning,
           "private variable '%0' is written in the partitioned loop and read "
           "after it, where it still holds its value from before the loop "
           "(each iteration writes a copy of its own); %1")
        << VD->getName() << Fix;
    report(W.Diags, After.At->getLocation(), Level::Note,
           "'%0' is read after the loop here")
        << VD->getName();
  }
  return CheckResult::Pass;
}

} // namespace fpm::detail
