//===- DataRegionChecks.h - Where #pragma fpm data and update stand -*- C++
//-*-=//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The data pragmas' check. `#pragma fpm data` takes the block or the loop
// (`for`, `while`, `do`) after it, as OpenMP's `target data` takes a
// structured block: its arrays keep their device copies from loop call to
// loop call while that statement runs (the runtime's fpm_data_begin and
// fpm_data_end, docs/pragma.md). In C the region's end is a call after the
// statement, so nothing may leave it any other way (a return, a goto out,
// a break or continue of an enclosing loop): an error at the exit. In C++
// an fpm::DataRegion object ends it on every exit. A partitioned loop is
// not a region's statement: one call moves what it would alone. `#pragma fpm
// update host(...)` or `device(...)` becomes the call in its place, which must
// be where a statement may stand. Neither may stand in a partitioned loop. What
// it accepts, Emit/DataRegions.h rewrites.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_DATAREGIONCHECKS_H
#define FPM_LIB_DATAREGIONCHECKS_H

#include "Analysis/PragmaPlacement.h"
#include "Record/PragmaParser.h"
#include "Record/SourceRecord.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace clang {
class ASTContext;
class Stmt;
} // namespace clang

namespace fpm {

/// A data pragma the check accepted: a region with its statement (a block
/// or a loop) and where that statement's text ends, or an update (no
/// statement), which stands where a statement may.
struct PlacedDataPragma {
  const DataPragma *Pragma = nullptr;
  const clang::Stmt *Region = nullptr;
  clang::SourceLocation RegionEnd;
};

/// Checks Pragmas (in source order), in the file of Statements.
/// Partitioned: the partitioned loops, in which no data pragma may stand
/// and which none may take. Reports every problem as an error; returns the
/// pragmas it accepts, in source order.
std::vector<PlacedDataPragma>
checkDataPragmas(clang::ASTContext &Ctx, const SourceRecord &Record,
                 llvm::ArrayRef<DataPragma> Pragmas,
                 const FileStatements &Statements,
                 llvm::ArrayRef<clang::SourceRange> Partitioned);

} // namespace fpm

#endif // FPM_LIB_DATAREGIONCHECKS_H
