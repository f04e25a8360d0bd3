//===- DependenceChecks.cpp - Loop-carried dependences --------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The dependences check (LoopChecks.h): an array written at one element
// and read at another that a later or an earlier iteration writes (warning,
// once per array and loop), from the subscripts' relation to the loop
// variable (IntPoly.h; the walk's iterationLeaf, IterationValues.cpp).
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm::detail {

/// An index as a polynomial over the loop variable, invariant variables,
/// the induction variables of the inner loops around At (each iteration's
/// own: they stay symbols) and the variables computed from these once in
/// the iteration (iterationLeaf); else `i +/- c` as written.
static std::optional<IntPoly> dependencePoly(LoopWalk &Walk, const Expr *Index,
                                             const Stmt *At) {
  LoopWalk::InnerLoops Inner;
  std::optional<IntPoly> P =
      intPolyFromExpr(Index, Walk.Ctx, [&](const VarDecl *VD) {
        return Walk.iterationLeaf(VD, At, &Inner, 0);
      });
  if (!P)
    if (std::optional<int64_t> Offset = loopOffset(Walk.Ctx, Index, Walk.Var))
      if (std::optional<IntPoly> C = IntPoly::constant(*Offset))
        P = IntPoly::variable(Walk.Var).plus(*C);
  if (!P)
    return std::nullopt;
  // An inner loop's variable takes other values in the other access.
  if (llvm::any_of(Inner, [&](const auto &L) { return P->uses(L.first); }))
    return std::nullopt;
  return P;
}

/// Warns where an array is written at an element that another iteration
/// reads: for each pair of a write and a read of the same array, each
/// dimension's subscripts `a*i + w` and `a*i + r` (i the loop variable, w
/// and r the same but for a constant) say that iteration i1 writes what
/// iteration i2 reads only if i1 - i2 = (r - w) / a, which must be an
/// integer and a multiple of the step; a dimension whose subscripts say
/// nothing (an inner loop's variable, another coefficient) leaves the
/// others to decide. Dimensions that ask for different distances, or for
/// the same iteration, mean no dependence. Once per array.
CheckResult DependencesCheck::run(CheckContext &Context) {
  LoopWalk &Walk = Context.Walk;
  std::optional<int64_t> Step = 1;
  if (const Expr *Inc = Walk.For.getInc())
    if (auto Bin = asBinary(Inc)) {
      const Expr *S = Bin->RHS;
      if (Bin->Op == BO_Assign)
        if (auto Sum = asBinary(Bin->RHS))
          S = Sum->RHS;
      Expr::EvalResult R;
      Step.reset();
      if (!S->isValueDependent() && S->EvaluateAsInt(R, Walk.Ctx) &&
          R.Val.getInt().isRepresentableByInt64() &&
          R.Val.getInt().getExtValue() != 0)
        Step = R.Val.getInt().getExtValue();
    }
  // The distance i1 - i2 between the iteration writing W and the one
  // reading R at the same element: a number (0: the same iteration), none
  // (never the same element), or nullopt (anything: no dimension said).
  auto Distance = [&](const Subscript &W,
                      const Subscript &R) -> std::optional<int64_t> {
    constexpr int64_t Never = INT64_MIN;
    std::optional<int64_t> D;
    for (size_t P = 0; P < W.Indices.size(); ++P) {
      std::optional<IntPoly> PW = dependencePoly(Walk, W.Indices[P], W.At);
      std::optional<IntPoly> PR = dependencePoly(Walk, R.Indices[P], R.At);
      if (!PW || !PR)
        continue;
      auto SW = PW->splitLinear(Walk.Var), SR = PR->splitLinear(Walk.Var);
      if (!SW || !SR || SW->second != SR->second)
        continue;
      std::optional<IntPoly> Diff = SR->first.minus(SW->first);
      std::optional<int64_t> C = Diff ? Diff->getConstant() : std::nullopt;
      if (!C)
        continue;
      int64_t A = SW->second;
      if (A == 0) {
        if (*C != 0)
          return Never; // two invariant elements, never the same
        continue;       // the same element in every iteration
      }
      if (*C % A != 0 || (Step && (*C / A) % *Step != 0))
        return Never;
      if (D && *D != *C / A)
        return Never;
      D = *C / A;
    }
    return D;
  };
  llvm::DenseSet<const VarDecl *> Warned;
  for (const Subscript &R : Walk.Subscripts) {
    if ((R.IsWrite && !R.AlsoReads) || Warned.count(R.Root))
      continue;
    for (const Subscript &W : Walk.Subscripts) {
      if (!W.IsWrite || &W == &R || W.Root != R.Root ||
          W.Indices.size() != R.Indices.size())
        continue;
      std::optional<int64_t> D = Distance(W, R);
      if (!D || *D == 0 || *D == INT64_MIN)
        continue;
      report(Walk.Diags, R.At->getExprLoc(), Level::Warning,
             "'%0' is written at '%1' and read at '%2' in the partitioned "
             "loop: likely a loop-carried dependence")
          << W.Root->getName() << Walk.text(W.At) << Walk.text(R.At);
      report(Walk.Diags, W.At->getExprLoc(), Level::Note,
             "'%0' is written here")
          << Walk.text(W.At);
      Warned.insert(R.Root);
      break;
    }
  }
  return CheckResult::Pass;
}

} // namespace fpm::detail
