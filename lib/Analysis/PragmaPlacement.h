//===- PragmaPlacement.h - The loop a partition pragma takes ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Where a `#pragma fpm partition` stands and what it applies to: the `for`
// statement of a function body right after it (past any preprocessor lines
// between them, SourceRecord.h), outside OpenMP's parallel regions
// (OpenMpRegions.h: each thread of the team would run the whole loop), with
// no preprocessor line in its header (the call prints the header's text
// again). Anything else is an error at the pragma or at what follows it.
// The statements come from one walk of the main file's functions, which
// also finds the blocks a `#pragma fpm data` may take (DataRegionChecks.h).
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_PRAGMAPLACEMENT_H
#define FPM_LIB_PRAGMAPLACEMENT_H

#include "Analysis/OpenMpRegions.h"
#include "Record/PragmaParser.h"
#include "Record/SourceRecord.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <utility>

namespace clang {
class ASTContext;
class CompoundStmt;
class ForStmt;
class FunctionDecl;
class LangOptions;
class SourceManager;
class Stmt;
} // namespace clang

namespace fpm {

/// The blocks of the main file's functions, by their '{'.
using BlockMap =
    llvm::DenseMap<clang::SourceLocation, const clang::CompoundStmt *>;

/// The statements of the main file's function bodies a pragma may take.
struct FileStatements {
  /// Every `for` statement, by its `for`, with the outermost function it is
  /// in (a lambda is no function of its own here).
  llvm::DenseMap<clang::SourceLocation,
                 std::pair<const clang::ForStmt *, const clang::FunctionDecl *>>
      Loops;
  BlockMap Blocks;
  /// Every `for`, range `for`, `while` and `do`, by its keyword: what a
  /// data region may take besides a block.
  llvm::DenseMap<clang::SourceLocation, const clang::Stmt *> LoopStatements;
};

/// The `for` statements and blocks of Ctx's main file's functions.
FileStatements collectStatements(clang::ASTContext &Ctx);

/// Where the text of S ends: after its last token, and after the `;` that
/// ends it when the statement's range leaves that out (`x = 1;`, a `do`
/// loop, a loop whose body is such a statement). None when no `;` follows
/// where one must.
std::optional<clang::SourceLocation>
statementEnd(const clang::Stmt *S, const clang::SourceManager &SM,
             const clang::LangOptions &LO);

/// The loop a partition pragma applies to.
struct PlacedLoop {
  const clang::ForStmt *For = nullptr;
  /// The outermost function it is in.
  const clang::FunctionDecl *Fn = nullptr;
  /// Whether preprocessor lines stand between the pragma and the `for`.
  bool PragmaApart = false;
};

/// The loop Pragma applies to, or none, with an error reported. Regions:
/// the file's OpenMP parallel regions (findOmpRegions).
std::optional<PlacedLoop> placePartition(const PartitionPragma &Pragma,
                                         const FileStatements &Statements,
                                         llvm::ArrayRef<OmpRegion> Regions,
                                         const SourceRecord &Record,
                                         clang::ASTContext &Ctx);

} // namespace fpm

#endif // FPM_LIB_PRAGMAPLACEMENT_H
