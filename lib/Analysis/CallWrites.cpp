//===- CallWrites.cpp - What the functions a loop calls write -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What an iteration writes in the functions it calls, of the variables
// declared outside the loop: the walk's following of calls (LoopWalk.h,
// collectCallWrites, markCallWrites, firstUseOfParameter), and array-races'
// part that reads it (checkCallWrites, LoopChecks.h), with the notes the
// shared-writes and array-races checks add (noteCallWrite,
// noteThreadPrivate):
//
//  - The calls into functions with visible bodies are followed as coverOut
//    follows them (followableCallee), each pointer parameter the callee never
//    assigns, and each non-const reference, bound to the variable its
//    argument points into or names (`x`, `x - 1`, `&x[k]`, `&t`, `y` a
//    pointer declared outside the loop). A write through one to a scalar is
//    a write to it in the body (markCallWrites: shared-writes' error,
//    with a note at the write); a write to an array at elements that are the
//    same in every iteration is array-races' error, at the call, with a
//    note at the write: the callee's values (walkValues) with its parameters
//    varying where their arguments do, under conditions that do not vary,
//    through calls that each iteration makes alike.
//  - A global variable a callee names itself, which private(...) and
//    reduction(...) cannot reach: an error where the loop lists it there,
//    where a callee writes it (a scalar), or writes it at the same elements
//    in every iteration (an array).
//  - A call fpm does not follow (no visible body, a member, a call through a
//    pointer, ...) that receives a pointer to non-const into a shared array,
//    or to a shared number, the same in every iteration: a warning (it may
//    write through it).
//
// And, for the private-reads check, whether a callee's first use of a parameter
// writes the elements it points to (firstUseOfParameter). A little over 600
// lines: the following of calls (binding parameters, frames, the callee's
// values) is one mechanism that each of these checks reads.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm::detail {
namespace {

/// A variable and how an expression reaches it: its own storage (`t`, `&t`,
/// `a` decayed, `&a[k]`), or the memory a pointer variable points to (`p`,
/// `p + 1`).
struct Reached {
  const VarDecl *Var = nullptr;
  bool Storage = true;
};

Reached pointeeOf(const Expr *E);

/// The variable the lvalue E is part of: `t`, `t.m`, `a[k][j]` (a's
/// storage), `p[k]`, `*p`, `*(p + k)`, `p->m` (what p points to).
Reached lvalueOf(const Expr *E) {
  E = E->IgnoreParens();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return {dyn_cast<VarDecl>(DRE->getDecl()), true};
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return ME->isArrow() ? pointeeOf(ME->getBase()) : lvalueOf(ME->getBase());
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return pointeeOf(ASE->getBase());
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_Deref)
    return pointeeOf(UO->getSubExpr());
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(E);
      Cast && Cast->getCastKind() == CK_NoOp)
    return lvalueOf(Cast->getSubExpr());
  return {};
}

/// The variable the pointer E points into: `a` decayed, `&lvalue`, `p`, and
/// `q + k`, `k + q`, `q - k` of such a q, through conversions between
/// pointer types.
Reached pointeeOf(const Expr *E) {
  E = E->IgnoreParens();
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    switch (Cast->getCastKind()) {
    case CK_ArrayToPointerDecay:
      return lvalueOf(Cast->getSubExpr());
    case CK_LValueToRValue:
      if (const auto *DRE =
              dyn_cast<DeclRefExpr>(Cast->getSubExpr()->IgnoreParens()))
        if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
            VD && VD->getType().getNonReferenceType()->isPointerType())
          return {VD, false};
      return {};
    case CK_NoOp:
    case CK_BitCast:
      return pointeeOf(Cast->getSubExpr());
    default:
      return {};
    }
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_AddrOf)
    return lvalueOf(UO->getSubExpr());
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub)) {
    if (BO->getLHS()->getType()->isPointerType())
      return pointeeOf(BO->getLHS());
    if (BO->getOpcode() == BO_Add && BO->getRHS()->getType()->isPointerType())
      return pointeeOf(BO->getRHS());
  }
  return {};
}

/// The element lvalue a write's target names, for its conditions
/// (IterationValues::Conditions: a subscript, `*p`, `p->m`), and its
/// subscripts: `p[j][k]` (j, k), `*(p + k)` (k), `*p`, `p->m` (none).
const Expr *elementOf(const Expr *Target,
                      llvm::SmallVectorImpl<const Expr *> &Indices) {
  const Expr *E = Target->IgnoreParens();
  while (const auto *ME = dyn_cast<MemberExpr>(E)) {
    if (ME->isArrow())
      return ME;
    E = ME->getBase()->IgnoreParens();
  }
  const Expr *At = E;
  while (true) {
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
      Indices.insert(Indices.begin(), ASE->getIdx());
      E = ASE->getBase()->IgnoreParenImpCasts();
    } else if (const auto *UO = dyn_cast<UnaryOperator>(E);
               UO && UO->getOpcode() == UO_Deref) {
      if (const auto *BO =
              dyn_cast<BinaryOperator>(UO->getSubExpr()->IgnoreParenImpCasts());
          BO && (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub))
        Indices.insert(Indices.begin(), BO->getLHS()->getType()->isPointerType()
                                            ? BO->getRHS()
                                            : BO->getLHS());
      return At;
    } else {
      return At;
    }
  }
}

/// Whether the lvalue E is an element of an array member, or part of one:
/// `p->v[k]`, `s.v[k].x`.
bool subscriptsMember(const Expr *E) {
  while (true) {
    E = E->IgnoreParenImpCasts();
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
      if (isa<MemberExpr>(ASE->getBase()->IgnoreParenImpCasts()))
        return true;
      E = ASE->getBase();
    } else if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      E = ME->getBase();
    } else {
      return false;
    }
  }
}

/// A variable of file scope (a global, a namespace's, extern or static).
bool isGlobal(const VarDecl *VD) { return VD && VD->isFileVarDecl(); }

/// Whether writes to VD through W are to elements of an array (its own, or
/// what a pointer points to), not to the variable itself.
bool writesElements(const VarDecl *VD, bool Storage) {
  return !Storage || VD->getType().getNonReferenceType()->isArrayType();
}

/// The callee's name for a message: `'fill'`, or `the function it calls`.
std::string calleeName(const FunctionDecl *Callee) {
  return Callee && Callee->getIdentifier()
             ? "'" + Callee->getNameAsString() + "'"
             : std::string("the function it calls");
}

} // namespace

/// The binding of a parameter to Arg, an argument of a call that Caller's
/// function makes (the body where Caller is null), the parameter a pointer
/// (or, Reference, a reference): the variable declared outside the loop
/// that Arg points into or names, or that a parameter of Caller's function
/// Arg passes on is bound to, or a global; nullopt for anything else.
std::optional<LoopWalk::SharedFrame::Binding>
LoopWalk::boundTarget(const Expr *Arg, const SharedFrame *Caller,
                      bool Reference) const {
  Reached R = Reference ? lvalueOf(Arg) : pointeeOf(Arg);
  if (!R.Var)
    return std::nullopt;
  if (!Caller) {
    if (!isOutsideLoop(R.Var))
      return std::nullopt;
    return SharedFrame::Binding{R.Var, Arg, R.Storage};
  }
  if (auto It = Caller->Bound.find(R.Var); It != Caller->Bound.end()) {
    // A pointer parameter passes on what it points to; a reference, what it
    // names.
    bool IsReference = R.Var->getType()->isReferenceType();
    if (R.Storage == IsReference)
      return It->second;
    return std::nullopt;
  }
  if (isGlobal(R.Var))
    return SharedFrame::Binding{R.Var, nullptr, R.Storage};
  return std::nullopt;
}

/// Follows Call, made by Caller's function (the body where Caller is null),
/// for what it writes of the variables declared outside the loop: into its
/// callee's body where fpm follows it (with the callee's values from
/// Values, the caller's, where given), or, where it does not, the pointers
/// to non-const it receives. BodyCall: the body's call that leads here.
void LoopWalk::followShared(const CallExpr *Call, const SharedFrame *Caller,
                            const IterationValues *Values,
                            const CallExpr *BodyCall,
                            std::deque<SharedFrame> &Frames,
                            llvm::SmallVectorImpl<CallWrite> &Writes) {
  if (isNumericCall(Call) || isa<CXXOperatorCallExpr>(Call))
    return;
  unsigned Depth = Caller ? Caller->Depth + 1 : 1;
  bool Each = (!Caller || Caller->Each) && Values &&
              sameInEachIteration(*Values, Call, {});
  const FunctionDecl *Def = followableCallee(Call, Depth);
  // Whether the memory Arg, a pointer (Reference: an lvalue), reaches is
  // another in each iteration: its subscripts or offsets vary, or the
  // pointer it passes on does (not the values of a variable whose storage
  // it reaches).
  auto AddressVaries = [&](const Expr *Arg, bool Reference) {
    Reached R = Reference ? lvalueOf(Arg) : pointeeOf(Arg);
    return Values->varies(Arg, R.Storage ? R.Var : nullptr);
  };
  auto MayWrite = [&](const Expr *Arg, QualType Param) {
    bool Reference = Param->isLValueReferenceType() &&
                     !Param.getNonReferenceType().isConstQualified();
    bool Pointer = Param->isPointerType() &&
                   !Param->getPointeeType().isConstQualified() &&
                   !Param->getPointeeType()->isFunctionType();
    if (!Reference && !Pointer)
      return;
    if (std::optional<SharedFrame::Binding> B =
            boundTarget(Arg, Caller, Reference))
      Writes.push_back({B->Var, BodyCall, B->Arg, nullptr,
                        Call->getDirectCallee(), B->Storage, false,
                        Each && !AddressVaries(Arg, Reference)});
  };
  if (!Def) {
    // What it may write: its prototype's pointers to non-const.
    const FunctionProtoType *Proto = nullptr;
    if (const FunctionDecl *FD = Call->getDirectCallee())
      Proto = FD->getType()->getAs<FunctionProtoType>();
    else if (const auto *PT =
                 Call->getCallee()->getType()->getAs<PointerType>())
      Proto = PT->getPointeeType()->getAs<FunctionProtoType>();
    if (!Proto || (Depth > MaxCallDepth && Call->getDirectCallee() &&
                   Call->getDirectCallee()->hasBody()))
      return;
    for (unsigned I = 0; I < Call->getNumArgs() && I < Proto->getNumParams();
         ++I)
      MayWrite(Call->getArg(I), Proto->getParamType(I));
    return;
  }
  if (Frames.size() >= MaxFrames)
    return;
  SharedFrame &F = Frames.emplace_back();
  F.Caller = Caller;
  F.Depth = Depth;
  F.Each = Each;
  const Stmt *Body = Def->getBody();
  for (unsigned I = 0; I < Def->getNumParams(); ++I) {
    const ParmVarDecl *P = Def->getParamDecl(I);
    const Expr *Arg = Call->getArg(I);
    QualType T = P->getType();
    if (T->isLValueReferenceType() &&
        !T.getNonReferenceType().isConstQualified()) {
      if (std::optional<SharedFrame::Binding> B =
              boundTarget(Arg, Caller, true))
        F.Bound[P] = *B;
    } else if (T->isPointerType() && !T->getPointeeType().isConstQualified()) {
      // A pointer the callee moves writes where fpm cannot follow it.
      if (!onlyRead(Body, P))
        MayWrite(Arg, T);
      else if (std::optional<SharedFrame::Binding> B =
                   boundTarget(Arg, Caller, false))
        F.Bound[P] = *B;
    }
    if (Values && (T->isPointerType() || T->isReferenceType()
                       ? AddressVaries(Arg, T->isReferenceType())
                       : Values->varies(Arg)))
      F.Values.Varying.insert(P);
  }
  if (Values) {
    walkValues(F.Values, Body, Body);
    F.Values.settle();
  }

  // What the callee writes through its parameters, or names of the globals,
  // in the order of its text; then its calls, followed in turn.
  auto Record = [&](const Expr *Target, const Expr *Use, bool OnlyReads) {
    Reached R = lvalueOf(Target);
    if (!R.Var)
      return;
    SharedFrame::Binding B;
    if (auto It = F.Bound.find(R.Var); It != F.Bound.end()) {
      if (R.Storage != R.Var->getType()->isReferenceType())
        return; // the callee's own pointer, not what it points to
      B = It->second;
    } else if (isGlobal(R.Var)) {
      B = {R.Var, nullptr, R.Storage};
    } else {
      return;
    }
    // An element of an array member, `p->v[k] = x`, as `s.v[k] = x` in the
    // body: no write of the struct the checks follow.
    if (!OnlyReads && !writesElements(B.Var, B.Storage) &&
        subscriptsMember(Target))
      return;
    CallWrite W{B.Var, BodyCall, B.Arg, Use, Def, B.Storage, OnlyReads};
    if (Values && !OnlyReads && writesElements(B.Var, B.Storage)) {
      llvm::SmallVector<const Expr *, 2> Indices;
      const Expr *Element = elementOf(Target, Indices);
      W.Same = F.Each && !F.Values.Varying.count(R.Var) &&
               sameInEachIteration(F.Values, Element, Indices);
    }
    Writes.push_back(W);
  };
  llvm::SmallVector<const CallExpr *, 4> Calls;
  llvm::SmallVector<const Stmt *, 64> Work{Body};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S || isa<LambdaExpr, BlockExpr>(S))
      continue;
    if (const auto *E = dyn_cast<Expr>(S)) {
      if (auto Bin = asBinary(E);
          Bin && BinaryOperator::isAssignmentOp(Bin->Op))
        Record(Bin->LHS, Bin->LHS, false);
      else if (auto IncDec = asIncDec(E))
        Record(IncDec->second, IncDec->second, false);
      else if (const auto *DRE = dyn_cast<DeclRefExpr>(E);
               DRE && isGlobal(dyn_cast<VarDecl>(DRE->getDecl())))
        Record(DRE, DRE, true);
      if (const auto *C = dyn_cast<CallExpr>(E))
        Calls.push_back(C);
    }
    size_t Mark = Work.size();
    llvm::append_range(Work, S->children());
    std::reverse(Work.begin() + Mark, Work.end());
  }
  for (const CallExpr *C : Calls)
    followShared(C, &F, Values ? &F.Values : nullptr, BodyCall, Frames, Writes);
}

/// What the calls of the body (outside lambdas and blocks) write, in the
/// order of the text: each write in a callee of a variable declared outside
/// the loop through the call's arguments, each use of a global a callee
/// names itself, and each pointer to non-const into such a variable a call
/// fpm does not follow receives. With BodyValues, an array's write says
/// whether it is the same in every iteration.
void LoopWalk::collectCallWrites(const IterationValues *BodyValues,
                                 std::deque<SharedFrame> &Frames,
                                 llvm::SmallVectorImpl<CallWrite> &Writes) {
  llvm::SmallVector<const Stmt *, 64> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S || isa<LambdaExpr, BlockExpr>(S))
      continue;
    if (const auto *Call = dyn_cast<CallExpr>(S))
      followShared(Call, nullptr, BodyValues, Call, Frames, Writes);
    size_t Mark = Work.size();
    llvm::append_range(Work, S->children());
    std::reverse(Work.begin() + Mark, Work.end());
  }
}

/// A variable that is not an array, declared outside the loop, that a
/// callee writes through the body's argument (`put(&t, v)`): the body's
/// use of it in the argument becomes a write, which shared-writes
/// reports (noteCallWrite adds where the callee writes it).
void LoopWalk::markCallWrites() {
  std::deque<SharedFrame> Frames;
  collectCallWrites(nullptr, Frames, CallWrites);
  for (const CallWrite &W : CallWrites) {
    if (!W.At || !W.Arg || W.OnlyReads || writesElements(W.Var, W.Storage))
      continue;
    SourceRange Arg = W.Arg->getSourceRange();
    for (Access &A : Accesses)
      if (A.Var == W.Var && isInside(A.At->getExprLoc(), Arg))
        A.Writes = true;
  }
}

/// After an error about VD, a scalar a callee writes through the body's
/// argument: where it does.
void noteCallWrite(const LoopWalk &Walk, const VarDecl *VD) {
  for (const LoopWalk::CallWrite &W : Walk.CallWrites)
    if (W.Var == VD && W.At && W.Arg && !W.OnlyReads &&
        !writesElements(W.Var, W.Storage)) {
      report(Walk.Diags, W.At->getExprLoc(), Level::Note,
             "'%0' is written here, in %1, through the argument '%2'")
          << VD->getName() << calleeName(W.Callee) << Walk.text(W.Arg);
      return;
    }
}

/// After a diagnostic about VD: where the file declares it `#pragma omp
/// threadprivate`, which a loop converted from OpenMP no longer honours.
void noteThreadPrivate(const LoopWalk &Walk, const VarDecl *VD) {
  for (const OmpThreadPrivate &T : Walk.ThreadPrivates)
    if (T.Var == VD->getCanonicalDecl()) {
      report(Walk.Diags, T.Pragma, Level::Note,
             "'%0' is declared 'threadprivate' here: OpenMP gave each thread "
             "a copy of its own, but fpm shares one '%0' between all the "
             "iterations of a partitioned loop unless it is listed in "
             "'private(...)'")
          << VD->getName();
      return;
    }
}

/// The races through calls (collectCallWrites, with the body's Values):
/// a global a callee names itself that the loop lists in private(...) or
/// reduction(...) (errors), or that a callee writes, a scalar (error) or an
/// array at the same elements in every iteration (error); an array declared
/// outside the loop, not private, that a callee writes at the same elements
/// in every iteration through the call's argument (error, at the argument,
/// unless Reported already); a pointer to non-const into a shared array or
/// number, the same in every iteration, that a call fpm does not follow
/// receives (warning). Once per variable.
bool checkCallWrites(LoopWalk &Walk, const LoopWalk::IterationValues &Values,
                     llvm::DenseSet<const VarDecl *> &Reported) {
  const llvm::SmallSetVector<const VarDecl *, 4> &Priv = Walk.Private;
  std::deque<LoopWalk::SharedFrame> Frames;
  llvm::SmallVector<LoopWalk::CallWrite, 8> Writes;
  Walk.collectCallWrites(&Values, Frames, Writes);
  bool CallsOk = true;
  llvm::DenseSet<const VarDecl *> Done;
  for (const LoopWalk::CallWrite &W : Writes) {
    const VarDecl *VD = W.Var;
    if (VD == Walk.Var || Done.count(VD) || Reported.count(VD))
      continue;
    bool Elements = writesElements(VD, W.Storage);
    bool Own = Priv.count(VD) || Walk.Reduced.count(VD);
    std::string Callee = calleeName(W.Callee);
    auto Declared = [&] {
      report(Walk.Diags, VD->getLocation(), Level::Note,
             "'%0' is declared here")
          << VD->getName();
      noteThreadPrivate(Walk, VD);
    };
    auto WrittenHere = [&] {
      report(Walk.Diags, W.At->getExprLoc(), Level::Note, "%0 writes '%1' here")
          << Callee << Walk.text(W.At);
    };
    if (!W.Arg) {
      // A global a callee names itself (not one it passes to a function
      // fpm does not follow: `fputs(s, stdout)`).
      if (!W.At)
        continue;
      if (Own) {
        report(Walk.Diags, W.Call->getExprLoc(), Level::Error,
               "'%0' is %select{private|a reduction variable}1 in the "
               "partitioned loop, but %2, which the loop calls, names the "
               "global '%0' itself and so %select{reads|writes}3 the one "
               "every iteration shares, not the %select{iteration's copy|"
               "chunk's accumulator}1; pass '%0' to %2 as an argument")
            << VD->getName() << !Priv.count(VD) << Callee << !W.OnlyReads;
        report(Walk.Diags, W.At->getExprLoc(), Level::Note,
               "%0 names '%1' here")
            << Callee << VD->getName();
        noteThreadPrivate(Walk, VD);
      } else if (W.OnlyReads || Own ||
                 llvm::any_of(Walk.Accesses, [&](const Access &A) {
                   return A.Var == VD && A.Writes;
                 })) {
        continue; // read, or reported with the body's own writes
      } else if (!Elements) {
        report(Walk.Diags, W.Call->getExprLoc(), Level::Error,
               "'%0' is declared outside the partitioned loop and written by "
               "%1, which the loop calls: a loop-carried dependence or a "
               "race; neither 'private(...)' nor 'reduction(...)' reaches a "
               "global that a called function names itself: pass its "
               "address to %1 instead, or assign it in the loop's body")
            << VD->getName() << Callee;
        WrittenHere();
        Declared();
      } else if (W.Same) {
        report(Walk.Diags, W.Call->getExprLoc(), Level::Error,
               "'%0' is declared outside the partitioned loop and every "
               "iteration writes the same elements of it in %1, which the "
               "loop calls: the subscripts of '%2' use neither the loop "
               "variable '%3' nor a value computed from it; a race "
               "('private(...)' does not reach a global that a called "
               "function names itself: pass each iteration's own scratch "
               "array to %1 as an argument)")
            << VD->getName() << Callee << Walk.text(W.At)
            << Walk.Var->getName();
        WrittenHere();
        Declared();
        Reported.insert(VD);
      } else {
        continue;
      }
      Done.insert(VD);
      CallsOk = false;
      continue;
    }
    // Through the body's argument W.Arg: a private array's or number's
    // copy, or a reduction's accumulator, is the iteration's own; what a
    // private pointer points to is not.
    if (!W.Same || (Own && W.Storage) || W.OnlyReads ||
        (!W.Storage && Values.Varying.count(VD)))
      continue;
    if (W.At && Elements) {
      if (W.Storage)
        report(Walk.Diags, W.Arg->getBeginLoc(), Level::Error,
               "'%0' is declared outside the partitioned loop and every "
               "iteration writes the same elements of it in %1, which the "
               "loop passes it to: the subscripts of '%2' there use neither "
               "the loop variable '%3' nor a value computed from it; a race "
               "(list '%0' in 'private(...)' if each iteration uses it as its "
               "own scratch)")
            << VD->getName() << Callee << Walk.text(W.At)
            << Walk.Var->getName();
      else
        report(Walk.Diags, W.Arg->getBeginLoc(), Level::Error,
               "every iteration writes the same elements through '%0', "
               "declared outside the partitioned loop, in %1, which the loop "
               "passes it to: the subscripts of '%2' there use neither the "
               "loop variable '%3' nor a value computed from it; a race "
               "(give each iteration elements of its own, or a scratch array "
               "declared in the loop)")
            << VD->getName() << Callee << Walk.text(W.At)
            << Walk.Var->getName();
      WrittenHere();
      Declared();
      Reported.insert(VD);
      Done.insert(VD);
      CallsOk = false;
      continue;
    }
    // A call fpm does not follow, given the address of an array declared
    // outside the loop or of a number (not a struct, a lock, nor an atomic).
    // Not what a pointer declared there points to: a function's inputs
    // often come so, without const.
    if (W.At || !W.Storage)
      continue;
    QualType T = VD->getType().getNonReferenceType();
    while (const ArrayType *AT = Walk.Ctx.getAsArrayType(T))
      T = AT->getElementType();
    if (!(T->isArithmeticType() || (Elements && T->isPointerType())) ||
        T->isAtomicType())
      continue;
    if (Elements)
      report(Walk.Diags, W.Arg->getBeginLoc(), Level::Warning,
             "'%0' is declared outside the partitioned loop and passed to "
             "%1, which fpm does not follow, as a pointer to elements it may "
             "write: if it does, every iteration writes the same elements of "
             "'%0' (the argument '%2' does not depend on the iteration), a "
             "race; list '%0' in 'private(...)' if each iteration uses it as "
             "its own scratch")
          << VD->getName() << Callee << Walk.text(W.Arg);
    else
      report(Walk.Diags, W.Arg->getBeginLoc(), Level::Warning,
             "'%0' is declared outside the partitioned loop and its address "
             "goes to %1, which fpm does not follow: if it writes '%0', the "
             "iterations race on it; list '%0' in 'private(...)' if each "
             "iteration uses it as its own scratch")
          << VD->getName() << Callee;
    Declared();
    Done.insert(VD);
  }
  return CallsOk;
}

/// How Def's first use of its parameter P (in the order the checks walk a
/// body: an assignment's right side before its left) treats the elements P
/// points to: writes one (`p[k] = ...`, `p[k].m = ...`, `*p = ...`), reads
/// one (ReadAt: `p[k]`, `p[k] += ...`), passes P to a function whose first
/// use writes or reads; Unused if it never names P; Unknown for anything
/// else (P escapes, a function fpm does not follow).
LoopWalk::FirstUse LoopWalk::firstUseOfParameter(const FunctionDecl *Def,
                                                 const VarDecl *P,
                                                 unsigned Depth,
                                                 const Expr *&ReadAt) {
  std::function<const DeclRefExpr *(const Stmt *)> First =
      [&](const Stmt *S) -> const DeclRefExpr * {
    if (!S || isa<LambdaExpr, BlockExpr, UnaryExprOrTypeTraitExpr>(S))
      return nullptr;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      return DRE->getDecl() == P ? DRE : nullptr;
    if (auto Bin = asBinary(dyn_cast<Expr>(S));
        Bin && BinaryOperator::isAssignmentOp(Bin->Op)) {
      if (const DeclRefExpr *D = First(Bin->RHS))
        return D;
      return First(Bin->LHS);
    }
    for (const Stmt *C : S->children())
      if (const DeclRefExpr *D = First(C))
        return D;
    return nullptr;
  };
  const DeclRefExpr *Use = First(Def->getBody());
  if (!Use)
    return FirstUse::Unused;
  // Up from the name: its value, an offset from it, then an element and
  // members of it.
  const Stmt *Cur = Use;
  bool Element = false;
  while (const Stmt *Up = parentOf(Cur)) {
    const auto *Cast = dyn_cast<ImplicitCastExpr>(Up);
    const auto *ASE = dyn_cast<ArraySubscriptExpr>(Up);
    const auto *UO = dyn_cast<UnaryOperator>(Up);
    const auto *ME = dyn_cast<MemberExpr>(Up);
    const auto *BO = dyn_cast<BinaryOperator>(Up);
    if (isa<ParenExpr>(Up) ||
        (Cast && (Cast->getCastKind() == CK_NoOp ||
                  Cast->getCastKind() == CK_ArrayToPointerDecay ||
                  (!Element && Cast->getCastKind() == CK_LValueToRValue))) ||
        (!Element && BO &&
         (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub) &&
         cast<Expr>(Cur)->getType()->isPointerType())) {
      Cur = Up;
    } else if ((ASE && ASE->getBase() == Cur) ||
               (UO && UO->getOpcode() == UO_Deref) ||
               (ME && ME->getBase() == Cur && ME->isArrow() == !Element)) {
      Element = true;
      Cur = Up;
    } else {
      break;
    }
  }
  const Stmt *Parent = parentOf(Cur);
  if (!Parent)
    return FirstUse::Unknown;
  if (!Element) {
    // P itself, passed on to a function (which, if it never names it,
    // leaves the rest of Def to decide: unknown here).
    const auto *Call = dyn_cast<CallExpr>(Parent);
    const FunctionDecl *Callee =
        Call ? followableCallee(Call, Depth + 1) : nullptr;
    auto Arg = Call ? llvm::find(Call->arguments(), Cur) : nullptr;
    if (!Callee || Arg == Call->arg_end())
      return FirstUse::Unknown;
    FirstUse Use = firstUseOfParameter(
        Callee, Callee->getParamDecl(Arg - Call->arg_begin()), Depth + 1,
        ReadAt);
    return Use == FirstUse::Unused ? FirstUse::Unknown : Use;
  }
  if (auto Bin = asBinary(dyn_cast<Expr>(Parent));
      Bin && BinaryOperator::isAssignmentOp(Bin->Op) && Bin->LHS == Cur) {
    if (Bin->Op == BO_Assign)
      return FirstUse::Writes;
    ReadAt = cast<Expr>(Cur);
    return FirstUse::Reads;
  }
  const auto *Cast = dyn_cast<ImplicitCastExpr>(Parent);
  if ((Cast && Cast->getCastKind() == CK_LValueToRValue) ||
      asIncDec(dyn_cast<Expr>(Parent))) {
    ReadAt = cast<Expr>(Cur);
    return FirstUse::Reads;
  }
  return FirstUse::Unknown;
}

} // namespace fpm::detail
