//===- ReductionChecks.cpp - The variables of reduction(op: list) ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The reduction-clause check (LoopChecks.h): what the rewriter accepts as a
// reduction variable (docs/pragma.md, the `reduction(op: list)` row), as
// OpenMP does: a scalar of an arithmetic type declared outside the loop,
// visible there; the bitwise operators on integer types only
// (LoopWalk::findReductions sorts the names); and fpm.h's enumerator of a
// scalar type (scalarTypeEnumerator). The body may write it (that is what it is
// for) and read it: as in OpenMP, a read other than in its accumulation sees an
// unspecified value (the accumulator of the chunk, or of the work-item).
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm {

const char *scalarTypeEnumerator(const ASTContext &Ctx, QualType T) {
  QualType C = T.getCanonicalType();
  const auto *BT = dyn_cast<BuiltinType>(C.getTypePtr());
  if (!BT)
    return nullptr;
  switch (BT->getKind()) {
  case BuiltinType::Bool:
    return "FPM_TYPE_BOOL";
  case BuiltinType::Float:
    return "FPM_TYPE_FLOAT";
  case BuiltinType::Double:
    return "FPM_TYPE_DOUBLE";
  case BuiltinType::LongDouble:
    return "FPM_TYPE_LONG_DOUBLE";
  default:
    break;
  }
  if (!BT->isInteger())
    return nullptr;
  bool Signed = C->isSignedIntegerType();
  switch (Ctx.getTypeSize(C)) {
  case 8:
    return Signed ? "FPM_TYPE_INT8" : "FPM_TYPE_UINT8";
  case 16:
    return Signed ? "FPM_TYPE_INT16" : "FPM_TYPE_UINT16";
  case 32:
    return Signed ? "FPM_TYPE_INT32" : "FPM_TYPE_UINT32";
  case 64:
    return Signed ? "FPM_TYPE_INT64" : "FPM_TYPE_UINT64";
  default:
    return nullptr;
  }
}

namespace detail {

/// Each name of the reduction clause (LoopWalk::findReductions): an error
/// for one fpm cannot reduce into, with a note at its declaration where its
/// type is wrong; a warning for a variable the body does not use.
CheckResult ReductionClauseCheck::run(CheckContext &Context) {
  const LoopWalk &W = Context.Walk;
  DiagnosticsEngine &Diags = W.Diags;
  bool Good = true;
  for (const ReductionUse &Use : W.ReductionUses) {
    const ReductionName &R = *Use.Name;
    const VarDecl *VD = Use.Var;
    auto DeclaredHere = [&] {
      report(Diags, VD->getLocation(), Level::Note, "'%0' is declared here")
          << R.Name;
    };
    QualType T = VD ? VD->getType().getNonReferenceType() : QualType();
    switch (Use.What) {
    case ReductionUse::Valid:
      if (Use.Unused)
        report(Diags, R.Loc, Level::Warning,
               "reduction variable '%0' is not used in the loop")
            << R.Name;
      continue;
    case ReductionUse::Unknown:
      report(Diags, R.Loc, Level::Error,
             "'%0' in 'reduction(...)' names no variable visible at the loop")
          << R.Name;
      break;
    case ReductionUse::NotVariable:
      report(Diags, R.Loc, Level::Error,
             "'%0' in 'reduction(...)' is not a variable fpm can reduce into "
             "(a member of a class): reduce into a local variable and use it "
             "after the loop")
          << R.Name;
      break;
    case ReductionUse::LoopVariable:
      report(Diags, R.Loc, Level::Error,
             "the loop variable '%0' cannot be a reduction variable")
          << R.Name;
      break;
    case ReductionUse::NotArithmetic:
      report(Diags, R.Loc, Level::Error,
             "'%0' in 'reduction(...)' must be a scalar of an arithmetic type "
             "(an integer, bool or floating type); its type is %1")
          << R.Name << VD->getType();
      DeclaredHere();
      break;
    case ReductionUse::ConstOrVolatile:
      report(Diags, R.Loc, Level::Error,
             "'%0' in 'reduction(...)' is %select{const|volatile}1: the loop "
             "stores its result there")
          << R.Name << (T.isConstQualified() ? 0 : 1);
      DeclaredHere();
      break;
    case ReductionUse::Register:
      report(Diags, R.Loc, Level::Error,
             "'%0' in 'reduction(...)' is declared 'register': the runtime "
             "needs its address")
          << R.Name;
      DeclaredHere();
      break;
    case ReductionUse::BitwiseOnFloat:
      report(Diags, R.OpLoc, Level::Error,
             "reduction operator '%0' needs a variable of an integer type: "
             "'%1' is %2")
          << reductionOpSpelling(R.Op) << R.Name << VD->getType();
      DeclaredHere();
      break;
    }
    Good = false;
  }
  return Good ? CheckResult::Pass : CheckResult::Errors;
}

} // namespace detail
} // namespace fpm
