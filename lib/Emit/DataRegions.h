//===- DataRegions.h - #pragma fpm data and update --------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The data pragmas' check and rewrite. `#pragma fpm data` takes the block
// after it: its arrays keep their device copies from loop call to loop
// call while the block runs (the runtime's fpm_data_begin/fpm_data_end,
// docs/pragma.md). In C the region's end is a call before the block's '}',
// so nothing may leave the block any other way (a return, a goto out, a
// break or continue of an enclosing loop): an error at the exit. In C++ an
// fpm::DataRegion object ends it on every exit. `#pragma fpm update
// host(...)` or `device(...)` becomes the call in its place, which must be
// where a statement may stand.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_DATAREGIONS_H
#define FPM_LIB_DATAREGIONS_H

#include "Record/PragmaParser.h"
#include "Record/SourceRecord.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

namespace clang {
class ASTContext;
class CompoundStmt;
class Rewriter;
} // namespace clang

namespace fpm {

/// The blocks of the main file's functions, by their '{'.
using BlockMap =
    llvm::DenseMap<clang::SourceLocation, const clang::CompoundStmt *>;

/// Checks and rewrites `Pragmas` (in source order), in the file whose
/// function blocks are `Blocks`. `Partitioned`: the partitioned loops, in
/// which no region may open. Reports every problem as an error; returns
/// whether anything was rewritten.
bool rewriteDataPragmas(clang::ASTContext &Ctx, const SourceRecord &Record,
                        clang::Rewriter &Rewrite,
                        llvm::ArrayRef<DataPragma> Pragmas,
                        const BlockMap &Blocks,
                        llvm::ArrayRef<clang::SourceRange> Partitioned);

} // namespace fpm

#endif // FPM_LIB_DATAREGIONS_H
