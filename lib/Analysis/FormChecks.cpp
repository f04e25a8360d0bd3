//===- FormChecks.cpp - The checks of the loop's form ---------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks (LoopChecks.h) of what makes a loop one fpm can split at all
// (docs/pragma.md, "The loop"): canonical-form (its header), loop-exits
// and gotos (no way out of the body, nor into it), invariant-bounds (the
// bound and the step are the same for every iteration).
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm::detail {

/// The header as OpenMP's canonical loop form has it: an integer variable
/// set by the init, compared by the test, stepped by the increment towards
/// the test's bound (LoopWalk::readHeader says what is wrong).
CheckResult CanonicalFormCheck::run(CheckContext &Context) {
  const LoopWalk &W = Context.Walk;
  if (!W.Fault)
    return CheckResult::Pass;
  const HeaderFault &F = *W.Fault;
  switch (F.What) {
  case HeaderFault::Init:
    report(W.Diags, F.Loc, Level::Error,
           "loop not in canonical form: its init must declare or assign one "
           "integer loop variable");
    break;
  case HeaderFault::Test:
    report(W.Diags, F.Loc, Level::Error,
           "loop not in canonical form: its test must compare the loop "
           "variable '%0' with '<', '<=', '>', '>=' or '!='")
        << W.Var->getName();
    break;
  case HeaderFault::Increment:
    report(W.Diags, F.Loc, Level::Error,
           "loop not in canonical form: its increment must be '++', '--', "
           "'+= c', '-= c' or '%0 = %0 + c'")
        << W.Var->getName();
    break;
  case HeaderFault::ZeroStep:
    report(W.Diags, F.Loc, Level::Error,
           "loop not in canonical form: its step must not be zero");
    break;
  case HeaderFault::Direction:
    report(W.Diags, F.Loc, Level::Error,
           "loop not in canonical form: its increment must make '%0' %1 on "
           "each iteration")
        << W.Var->getName() << (F.WantsUp ? "increase" : "decrease");
    report(W.Diags, F.NoteLoc, Level::Note,
           "the step must be %0 because of this test")
        << (F.WantsUp ? "positive" : "negative");
    break;
  }
  return CheckResult::Stop;
}

/// A `break` of the loop itself, a `return` or a computed `goto` in the
/// body (outside lambdas), each where the walk found it.
CheckResult LoopExitsCheck::run(CheckContext &Context) {
  const LoopWalk &W = Context.Walk;
  for (const Stmt *S : W.Exits) {
    if (const auto *Break = dyn_cast<BreakStmt>(S))
      report(W.Diags, Break->getBreakLoc(), Level::Error,
             "'break' leaves the partitioned loop");
    else if (const auto *Return = dyn_cast<ReturnStmt>(S))
      report(W.Diags, Return->getReturnLoc(), Level::Error,
             "'return' leaves the partitioned loop");
    else
      report(W.Diags, cast<IndirectGotoStmt>(S)->getGotoLoc(), Level::Error,
             "'goto' leaves the partitioned loop");
  }
  return W.Exits.empty() ? CheckResult::Pass : CheckResult::Errors;
}

CheckResult GotosCheck::run(CheckContext &Context) {
  LoopWalk &W = Context.Walk;
  bool GotosOk = true;
  SourceRange Body = W.For.getBody()->getSourceRange();
  // A goto in the body to a label outside it.
  for (const GotoStmt *Goto : W.Gotos) {
    const LabelStmt *Target = Goto->getLabel()->getStmt();
    if (!Target || !W.isInside(Target->getBeginLoc(), Body)) {
      report(W.Diags, Goto->getGotoLoc(), Level::Error,
             "'goto' leaves the partitioned loop");
      GotosOk = false;
    }
  }
  // A goto outside the body to a label in it.
  forEachStmt(W.Fn.getBody(), [&](const Stmt *S) {
    if (const auto *Goto = dyn_cast<GotoStmt>(S)) {
      const LabelStmt *Target = Goto->getLabel()->getStmt();
      if (Target && W.isInside(Target->getBeginLoc(), Body) &&
          !W.isInside(Goto->getGotoLoc(), Body)) {
        report(W.Diags, Target->getIdentLoc(), Level::Error,
               "label '%0' in the partitioned loop is the target of a 'goto' "
               "outside it")
            << Target->getName();
        report(W.Diags, Goto->getGotoLoc(), Level::Note, "the 'goto' is here");
        GotosOk = false;
      }
    }
    return true;
  });
  return GotosOk ? CheckResult::Pass : CheckResult::Errors;
}

static bool checkInvariant(LoopWalk &W, const Expr *E, StringRef What) {
  if (!E)
    return true;
  llvm::SmallVector<const Stmt *, 16> Work{E};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (VD == W.Var) {
        report(W.Diags, DRE->getLocation(), Level::Error,
               "loop not in canonical form: its %0 depends on the loop "
               "variable '%1'")
            << What << VD->getName();
        return false;
      }
      auto Write = llvm::find_if(
          W.Accesses, [&](const Access &A) { return A.Var == VD && A.Writes; });
      if (VD && Write != W.Accesses.end()) {
        report(W.Diags, DRE->getLocation(), Level::Error,
               "loop not in canonical form: its %0 is not loop-invariant: "
               "'%1' is written in the body")
            << What << VD->getName();
        report(W.Diags, Write->At->getExprLoc(), Level::Note,
               "'%0' is written here")
            << VD->getName();
        return false;
      }
    }
    llvm::append_range(Work, S->children());
  }
  return true;
}

/// The bound and the step: neither the loop variable nor a variable the
/// body writes.
CheckResult InvariantBoundsCheck::run(CheckContext &Context) {
  bool BoundOk = checkInvariant(Context.Walk, Context.Loop.Bound, "bound");
  bool StepOk = checkInvariant(Context.Walk, Context.Loop.Step, "step");
  return BoundOk && StepOk ? CheckResult::Pass : CheckResult::Errors;
}

} // namespace fpm::detail
