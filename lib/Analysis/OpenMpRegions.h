//===- OpenMpRegions.h - OpenMP regions around a pragma ---------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The OpenMP regions every thread of a team runs (`parallel`, `teams` and
// the combined directives that start with them) of the main file, found
// from the text of its `#pragma omp` lines and `_Pragma("omp ...")`
// operators (in macros too) and the statement after each: Clang drops
// OpenMP's pragmas without -fopenmp, and a partitioned loop in such a
// region would run once per thread of the team. And the variables its
// `threadprivate` directives name, which a loop converted from OpenMP shares
// between its iterations unless it lists them in private(...).
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_OPENMPREGIONS_H
#define FPM_LIB_OPENMPREGIONS_H

#include "Record/SourceRecord.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace clang {
class ASTContext;
class SourceManager;
class VarDecl;
} // namespace clang

namespace fpm {

/// An OpenMP directive of the main file whose region every thread of a team
/// runs (`parallel`, `teams` and the combined directives that start with
/// them), and the statement it applies to: the one that starts at the first
/// token after it that is not in a directive.
struct OmpRegion {
  clang::SourceLocation Pragma;
  std::string Directive;
  clang::SourceLocation StmtBegin;
  clang::SourceRange Stmt; ///< invalid where no statement starts there
};

/// The regions of the OpenMP directives among Record's pragmas (the main
/// file's `#pragma` lines and `_Pragma` operators, as the preprocessor saw
/// them), with their statements in Ctx's translation unit.
std::vector<OmpRegion> findOmpRegions(const SourceRecord &Record,
                                      clang::ASTContext &Ctx);

/// A variable of the main file's `#pragma omp threadprivate(list)` (or
/// `_Pragma`): OpenMP gives each thread a copy of its own.
struct OmpThreadPrivate {
  const clang::VarDecl *Var;
  clang::SourceLocation Pragma;
};

/// The variables Record's `threadprivate` directives name: each name as the
/// directive sees it, a static local of the function that holds the
/// directive or else the last variable of file scope declared before it.
std::vector<OmpThreadPrivate> findOmpThreadPrivates(const SourceRecord &Record,
                                                    clang::ASTContext &Ctx);

/// The region of Regions whose statement holds Loc, if any.
const OmpRegion *enclosingOmpRegion(llvm::ArrayRef<OmpRegion> Regions,
                                    clang::SourceLocation Loc,
                                    const clang::SourceManager &SM);

} // namespace fpm

#endif // FPM_LIB_OPENMPREGIONS_H
