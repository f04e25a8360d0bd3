//===- SharingChecks.cpp - What the iterations of a loop share ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks (LoopChecks.h) on what one iteration may write that another
// reads or writes (docs/pragma.md, "What the rewriter refuses"):
//
//  - shared-writes: a write to the loop variable, or to a scalar declared
//    outside the loop that is neither private nor a reduction variable
//    (error); where the write has a reduction's shape (`s += x`,
//    `s = fmax(s, x)`, `s = s < x ? x : s`), the error suggests
//    `reduction(op: s)`, never `private`; where the body only assigns it a
//    flag's constant or the loop variable, the reduction that leaves the
//    serial loop's value; `private` only where the code after the loop does
//    not read it (the walk's readers in SharedScalars.cpp say which);
//  - array-races: a write to an array declared outside the loop at
//    subscripts that use neither the loop variable nor a value computed
//    from it in the iteration (IterationValues.cpp), unless the array is
//    private (error: every iteration writes the same elements); an update
//    (`+=`, `++`) of such an array at subscripts computed from memory the
//    iteration reads, none of them affine in the loop variable (error: an
//    array reduction, such as a histogram); and the same writes in the
//    functions the body calls (CallWrites.cpp).
//
// An array read at an element another iteration writes: DependenceChecks.cpp.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

#include <functional>

using namespace clang;

namespace fpm::detail {

//===----------------------------------------------------------------------===//
// Shared scalars
//===----------------------------------------------------------------------===//

/// The error for a write to VD, a scalar declared outside the loop that is
/// neither private nor a reduction variable, that has no reduction's shape
/// (At: its first write). It suggests what gives the serial loop's result:
/// a reduction for a flag or the last iteration's loop variable; never
/// `private` where the code after the loop reads VD (each iteration's copy
/// is lost there).
static void reportSharedWrite(LoopWalk &Walk, const VarDecl *VD,
                              const Expr *At) {
  if (std::optional<LoopWalk::FinalReduction> R =
          Walk.finalValueReduction(VD)) {
    report(Walk.Diags, At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop and set to %1 in "
           "it: a race; list it in 'reduction(%2: %0)', which leaves in it "
           "what the serial loop leaves%3")
        << VD->getName() << R->Assigned << R->Op
        << (R->Condition.empty() ? ""
                                 : " if " + R->Condition + " before the loop");
    return;
  }
  LoopWalk::ReadAfter After = Walk.readAfterLoop(VD);
  if (After.Kind == LoopWalk::ReadAfter::Yes) {
    report(Walk.Diags, At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop, written in it and "
           "read after it: a race; after the serial loop it holds its last "
           "write, which a partitioned loop does not define, and a private "
           "copy is lost (fpm has no 'lastprivate'); compute that value "
           "after the loop")
        << VD->getName();
    report(Walk.Diags, After.At->getLocation(), Level::Note,
           "'%0' is read after the loop here")
        << VD->getName();
    return;
  }
  report(Walk.Diags, At->getExprLoc(), Level::Error,
         "'%0' is declared outside the partitioned loop and written in it: a "
         "loop-carried dependence or a race (list it in 'private(...)' if "
         "each iteration assigns it before reading it%1)")
      << VD->getName()
      << (After.Kind == LoopWalk::ReadAfter::Maybe
              ? " and nothing reads it after the "
                "loop"
              : "");
}

/// Writes to scalars declared outside the loop: never to the loop variable,
/// to another only if it is private or a reduction variable (the clause
/// names it, valid or not: an error at the clause is enough).
CheckResult SharedWritesCheck::run(CheckContext &Context) {
  LoopWalk &Walk = Context.Walk;
  bool WritesOk = true;
  llvm::DenseSet<const VarDecl *> Reported;
  for (const Access &A : Walk.Accesses) {
    if (!A.Writes || Reported.count(A.Var))
      continue;
    if (A.Var == Walk.Var) {
      report(Walk.Diags, A.At->getExprLoc(), Level::Error,
             "the loop variable '%0' is written in the body of the "
             "partitioned loop")
          << Walk.Var->getName();
      noteCallWrite(Walk, A.Var);
      Reported.insert(A.Var);
      WritesOk = false;
      continue;
    }
    if (!Walk.isOutsideLoop(A.Var) || Walk.Private.count(A.Var) ||
        Walk.Reduced.count(A.Var) || A.Var->getType()->isArrayType())
      continue;
    Reported.insert(A.Var);
    WritesOk = false;
    // An update with a reduction's shape, unless the iteration assigns the
    // variable before it reads it (its own scratch: private).
    const Access *First = llvm::find_if(
        Walk.Accesses, [&](const Access &B) { return B.Var == A.Var; });
    bool AssignedFirst = First->Writes && !First->Reads &&
                         !Walk.reductionShape(First->At, A.Var);
    const Access *Update = nullptr;
    std::optional<StringRef> Op;
    bool OneOp = true;
    for (const Access &B : Walk.Accesses) {
      if (B.Var != A.Var || !B.Writes)
        continue;
      std::optional<StringRef> Shape = Walk.reductionShape(B.At, A.Var);
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
      reportSharedWrite(Walk, A.Var, A.At);
    else if (OneOp)
      report(Walk.Diags, Update->At->getExprLoc(), Level::Error,
             "'%0' is declared outside the partitioned loop and updated in it "
             "as a reduction: list it in 'reduction(%1: %0)', so that each PE "
             "combines its own partial result")
          << A.Var->getName() << *Op;
    else
      report(Walk.Diags, Update->At->getExprLoc(), Level::Error,
             "'%0' is declared outside the partitioned loop and updated in it "
             "with more than one operator: a loop-carried dependence or a "
             "race, and not one reduction")
          << A.Var->getName();
    noteCallWrite(Walk, A.Var);
    noteThreadPrivate(Walk, A.Var);
  }
  return WritesOk ? CheckResult::Pass : CheckResult::Errors;
}

//===----------------------------------------------------------------------===//
// Arrays the iterations race on
//===----------------------------------------------------------------------===//

/// W, a write, reads the element it writes: a compound assignment, `++`,
/// `--`, or `a[e] = ... a[e] ...` (the same subscripts, as written).
static bool isReadModifyWrite(const LoopWalk &Walk, const Subscript &W) {
  if (W.AlsoReads)
    return true;
  const Stmt *Cur = W.At;
  const Stmt *P = Walk.parentOf(Cur);
  while (isa_and_nonnull<ParenExpr, MemberExpr>(P)) {
    Cur = P;
    P = Walk.parentOf(P);
  }
  auto Bin = asBinary(dyn_cast_or_null<Expr>(P));
  if (!Bin || Bin->Op != BO_Assign || Bin->LHS->IgnoreParens() != Cur)
    return false;
  std::string Element = Walk.text(W.At);
  llvm::SmallVector<const Stmt *, 16> Work{Bin->RHS};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S);
        ASE && Walk.text(ASE) == Element)
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
static bool separatesIterations(LoopWalk &Walk, const Subscript &W,
                                const LoopWalk::IterationValues &Values) {
  auto Leaf = [&](const VarDecl *VD) -> std::optional<IntPoly> {
    if (VD == Walk.Var)
      return IntPoly::variable(VD);
    if (std::optional<int64_t> C = Walk.constantValue(VD))
      return IntPoly::constant(*C);
    if (!Values.Varying.count(VD) && isPlainInteger(VD))
      return IntPoly::variable(VD);
    LoopWalk::InnerLoops Inner;
    return Walk.iterationLeaf(VD, W.At, &Inner, 0);
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
      std::optional<IntPoly> Term = intPolyFromExpr(E, Walk.Ctx, Leaf);
      if (Term && Sum)
        Sum = Negate ? Sum->minus(*Term) : Sum->plus(*Term);
    };
    Add(Index, false);
    if (!Sum || !Sum->uses(Walk.Var))
      continue;
    // Sum at i = 0, 1, 2: linear in i if the differences agree.
    std::optional<IntPoly> At[3];
    for (int K = 0; K < 3; ++K)
      if (std::optional<IntPoly> C = IntPoly::constant(K))
        At[K] = Sum->substitute(Walk.Var, *C);
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
/// or in a function it calls (checkCallWrites, CallWrites.cpp); and an update
/// (`+=`, `++`) at subscripts computed from memory the iteration reads, none of
/// them an affine function of the loop variable (an array reduction: iterations
/// may update the same element).
CheckResult ArrayRacesCheck::run(CheckContext &Context) {
  LoopWalk &Walk = Context.Walk;
  const llvm::SmallSetVector<const VarDecl *, 4> &Priv = Walk.Private;
  LoopWalk::IterationValues Values;
  Walk.findIterationValues(Values, Priv);
  bool RacesOk = true;
  llvm::DenseSet<const VarDecl *> Reported;
  for (const Subscript &W : Walk.Subscripts) {
    if (!W.IsWrite || W.InLambda || !W.Root || W.Root == Walk.Var ||
        !Walk.isOutsideLoop(W.Root) || Reported.count(W.Root))
      continue;
    QualType T = W.Root->getType().getNonReferenceType();
    bool IsArray = T->isArrayType();
    if ((!IsArray && !T->isPointerType()) || (IsArray && Priv.count(W.Root)) ||
        Values.Varying.count(W.Root))
      continue;
    if (Walk.sameInEachIteration(Values, W.At, W.Indices)) {
      Reported.insert(W.Root);
      RacesOk = false;
      if (IsArray)
        report(Walk.Diags, W.At->getExprLoc(), Level::Error,
               "'%0' is declared outside the partitioned loop and every "
               "iteration writes the same elements of it: the subscripts of "
               "'%1' use neither the loop variable '%2' nor a value computed "
               "from it; a race (list '%0' in 'private(...)' if each "
               "iteration uses it as its own scratch)")
            << W.Root->getName() << Walk.text(W.At) << Walk.Var->getName();
      else
        report(Walk.Diags, W.At->getExprLoc(), Level::Error,
               "every iteration writes the same elements through '%0', "
               "declared outside the partitioned loop: the subscripts of '%1' "
               "use neither the loop variable '%2' nor a value computed from "
               "it; a race (give each iteration elements of its own, or a "
               "scratch array declared in the loop)")
            << W.Root->getName() << Walk.text(W.At) << Walk.Var->getName();
      report(Walk.Diags, W.Root->getLocation(), Level::Note,
             "'%0' is declared here")
          << W.Root->getName();
      noteThreadPrivate(Walk, W.Root);
      continue;
    }
    // An array reduction: `hist[key[i]]++`, `l = x[k]; q[l] += 1;`.
    if (!isReadModifyWrite(Walk, W) || !Values.anyVaries(W.Indices) ||
        llvm::none_of(W.Indices,
                      [&](const Expr *E) { return Values.loads(E); }) ||
        separatesIterations(Walk, W, Values))
      continue;
    Reported.insert(W.Root);
    RacesOk = false;
    // What to write instead: `q_rows[k][l]`, the subscripts as written.
    std::string Name = W.Root->getName().str();
    std::string Element = Walk.text(W.At);
    std::string Rows = Name + "_rows[" + Walk.Var->getName().str() + "]";
    Rows += StringRef(Element).starts_with(Name + "[")
                ? Element.substr(Name.size())
                : std::string("[...]");
    report(Walk.Diags, W.At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop and updated at "
           "'%1', whose subscripts are computed from memory the iteration "
           "reads: two iterations may update the same element, a race (an "
           "array reduction, such as a histogram; fpm reduces scalars only); "
           "give each iteration a row of its own, '%2', in an array declared "
           "outside the loop, and add the rows into '%0' after the loop (or "
           "partition a loop over blocks of iterations, a row per block)")
        << Name << Element << Rows;
    report(Walk.Diags, W.Root->getLocation(), Level::Note,
           "'%0' is declared here")
        << W.Root->getName();
    noteThreadPrivate(Walk, W.Root);
  }
  RacesOk &= checkCallWrites(Walk, Values, Reported);
  return RacesOk ? CheckResult::Pass : CheckResult::Errors;
}

} // namespace fpm::detail
