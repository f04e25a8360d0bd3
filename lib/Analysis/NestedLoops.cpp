//===- NestedLoops.cpp - Partitioned loops inside one another -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Analysis/NestedLoops.h"

#include "LoopModel.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace fpm {

void linkNestedLoops(std::vector<LoopModel> &Loops, const SourceManager &SM) {
  for (LoopModel &Outer : Loops) {
    SourceRange Body = Outer.Loop.For->getBody()->getSourceRange();
    SourceLocation BodyBegin = SM.getExpansionLoc(Body.getBegin());
    SourceLocation BodyEnd = SM.getExpansionRange(Body.getEnd()).getEnd();
    SourceLocation ForBegin = SM.getExpansionLoc(Outer.Loop.For->getForLoc());
    for (LoopModel &Inner : Loops) {
      SourceLocation Hash = Inner.Pragma->HashLoc;
      if (&Inner == &Outer ||
          SM.isBeforeInTranslationUnit(Hash, Outer.Loop.For->getRParenLoc()) ||
          SM.isBeforeInTranslationUnit(BodyEnd, Hash))
        continue;
      if (SM.isBeforeInTranslationUnit(Hash, BodyBegin))
        Outer.BodyBegin = Hash;
      Inner.Nested = true;
      llvm::append_range(Inner.EnclosingAddressed, Outer.Vars.Addressed);
      LoopVariables &Vars = Outer.Vars;
      for (const VarDecl *VD : Inner.Vars.ClauseVars) {
        SourceLocation At = SM.getExpansionLoc(VD->getLocation());
        bool Inside = !SM.isBeforeInTranslationUnit(At, ForBegin) &&
                      !SM.isBeforeInTranslationUnit(BodyEnd, At);
        if (!Inside && VD != Outer.Loop.Var &&
            !llvm::is_contained(Vars.Private, VD) &&
            !llvm::is_contained(Vars.Shared, VD))
          Vars.Shared.push_back(VD);
      }
    }
  }
}

} // namespace fpm
