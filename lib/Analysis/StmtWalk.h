//===- StmtWalk.h - Every statement under one -------------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The walk the checks (LoopWalk.h) and the offload plan (Offload.cpp)
// share: every statement under a root, depth first, without the recursion
// of a RecursiveASTVisitor (a body's expressions nest deep in generated
// code).
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_STMTWALK_H
#define FPM_LIB_STMTWALK_H

#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace fpm {

/// Calls Visit on Root and on every statement under it, depth first, until
/// Visit returns false; returns false then.
template <typename Callable>
bool forEachStmt(const clang::Stmt *Root, Callable &&Visit) {
  llvm::SmallVector<const clang::Stmt *, 64> Work{Root};
  while (!Work.empty()) {
    const clang::Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (!Visit(S))
      return false;
    llvm::append_range(Work, S->children());
  }
  return true;
}

} // namespace fpm

#endif // FPM_LIB_STMTWALK_H
