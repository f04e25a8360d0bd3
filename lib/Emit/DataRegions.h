//===- DataRegions.h - #pragma fpm data and update --------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The data pragmas' rewrite, of those the analysis accepted
// (Analysis/DataRegionChecks.h). A region's block gets fpm_data_begin after
// its '{' and fpm_data_end before its '}' in C (the user's block nested in
// one of its own, so that C89 declarations stay first), an fpm::DataRegion
// object in C++; a region's loop gets the block it would have had around
// it, opened in the pragma's place; an update becomes its call there.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_DATAREGIONS_H
#define FPM_LIB_DATAREGIONS_H

#include "Analysis/DataRegionChecks.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace clang {
class Rewriter;
} // namespace clang

namespace fpm {

/// The end of a region on a loop: Text, to insert at Loc.
struct LoopRegionEnd {
  clang::SourceLocation Loc;
  std::string Text;
};

/// Rewrites Pragmas, the data pragmas checkDataPragmas accepted, but the
/// ends of regions on loops, which it returns in LoopEnds: a loop's text may
/// end where a partitioned loop's body does (a `for` whose body is one), and
/// an end inserted there before the loops are rewritten would go with that
/// body into its outlined function. Returns whether there were any pragmas.
bool emitDataRegions(clang::Rewriter &Rewrite,
                     llvm::ArrayRef<PlacedDataPragma> Pragmas,
                     std::vector<LoopRegionEnd> &LoopEnds);
/// After the loops' rewrite: the ends emitDataRegions left.
void closeLoopRegions(clang::Rewriter &Rewrite,
                      llvm::ArrayRef<LoopRegionEnd> LoopEnds);

} // namespace fpm

#endif // FPM_LIB_DATAREGIONS_H
