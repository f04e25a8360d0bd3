//===- LoopChecker.cpp - Is a partitioned loop a DOALL loop? --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// checkLoop: one walk of the loop (LoopWalk.h), then the checks of
// Checks.def over it, in its order (LoopChecks.h), then what they leave
// for the rewriter (LoopVariables); and checkOutCover, which reads a walk
// of the loop too.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm::detail {

llvm::ArrayRef<LoopCheckInfo> loopChecks() {
  static const LoopCheckInfo Checks[] = {
#define FPM_LOOP_CHECK(Name, Class, Gate, Description)                         \
  {Name, CheckGate::Gate, Description,                                         \
   []() -> std::unique_ptr<LoopCheckUnit> {                                    \
     return std::make_unique<Class>();                                         \
   }},
#include "Analysis/Checks.def"
  };
  return Checks;
}

const LoopCheckInfo *findLoopCheck(llvm::StringRef Name) {
  llvm::ArrayRef<LoopCheckInfo> Checks = loopChecks();
  const LoopCheckInfo *It = llvm::find_if(
      Checks, [&](const LoopCheckInfo &C) { return Name == C.Name; });
  return It == Checks.end() ? nullptr : It;
}

bool runLoopChecks(CheckContext &Context) {
  bool Errors = false;
  for (const LoopCheckInfo &Info : loopChecks()) {
    if (Info.Gate == CheckGate::NoErrors && Errors)
      continue;
    CheckResult Result = Info.Create()->run(Context);
    if (Result == CheckResult::Stop)
      return false;
    Errors |= Result == CheckResult::Errors;
  }
  return !Errors;
}

} // namespace fpm::detail

namespace fpm {
using namespace detail;

bool checkLoop(ASTContext &Ctx, const PartitionPragma &Pragma,
               const FunctionDecl &Fn, const ForStmt &For, CanonicalLoop &Loop,
               LoopVariables &Vars,
               llvm::ArrayRef<OmpThreadPrivate> ThreadPrivates,
               const SectionShapes *Shapes) {
  LoopWalk Walk(Ctx, Pragma, Fn, For, ThreadPrivates, Shapes);
  if (Walk.readHeader(Loop))
    Walk.recordBody();
  CheckContext Context{Walk, Loop, {}};
  if (!runLoopChecks(Context))
    return false;

  // What the rewriter needs: how the body shares each variable.
  const VarDecl *Var = Walk.Var;
  Vars.Private.assign(Walk.Private.begin(), Walk.Private.end());
  llvm::SmallSetVector<const VarDecl *, 8> Shared;
  for (const Access &A : Walk.Accesses)
    if (A.Var != Var && !Walk.Private.count(A.Var) &&
        !Walk.Reduced.count(A.Var) && Walk.isOutsideLoop(A.Var) &&
        A.Var->isLocalVarDeclOrParm() && !A.Var->isLocalExternDecl())
      Shared.insert(A.Var);
  Vars.Shared.assign(Shared.begin(), Shared.end());
  for (const VarDecl *VD : Shared)
    if (!VD->getType()->isArrayType() && !Walk.onlyLoaded(For.getBody(), VD))
      Vars.Addressed.push_back(VD);

  llvm::SmallSetVector<const VarDecl *, 4> ClauseVars;
  for (const auto *Sections : {&Pragma.In, &Pragma.Out, &Pragma.InOut})
    for (const DataSection &Section : *Sections)
      for (StringRef Name : Section.Names)
        if (std::optional<const ValueDecl *> D = Walk.visibleDecl(Name);
            D && *D)
          if (const auto *VD = dyn_cast<VarDecl>(*D);
              VD && VD != Var && VD->isLocalVarDeclOrParm() &&
              !VD->isLocalExternDecl())
            ClauseVars.insert(VD);
  Vars.ClauseVars.assign(ClauseVars.begin(), ClauseVars.end());
  Vars.Reductions.assign(Walk.Reductions.begin(), Walk.Reductions.end());
  Vars.LocalTypes.assign(Context.LocalTypes.begin(), Context.LocalTypes.end());
  return true;
}

llvm::SmallVector<OutCover, 2>
checkOutCover(ASTContext &Ctx, const PartitionPragma &Pragma,
              const FunctionDecl &Fn, const ForStmt &For, const VarDecl &Var,
              const SectionShapes *Shapes) {
  LoopWalk Walk(Ctx, Pragma, Fn, For, {}, Shapes);
  Walk.Var = &Var;
  Walk.recordBody();
  return Walk.coverOut();
}

} // namespace fpm
