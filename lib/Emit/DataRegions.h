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
// object in C++; an update becomes its call in the pragma's place.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_DATAREGIONS_H
#define FPM_LIB_DATAREGIONS_H

#include "Analysis/DataRegionChecks.h"

#include "llvm/ADT/ArrayRef.h"

namespace clang {
class Rewriter;
} // namespace clang

namespace fpm {

/// Rewrites Pragmas, the data pragmas checkDataPragmas accepted; returns
/// whether there were any.
bool emitDataRegions(clang::Rewriter &Rewrite,
                     llvm::ArrayRef<PlacedDataPragma> Pragmas);

} // namespace fpm

#endif // FPM_LIB_DATAREGIONS_H
