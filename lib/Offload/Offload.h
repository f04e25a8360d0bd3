//===- Offload.h - Which loops run on OpenCL devices ---------- -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Decides for each loop whether it also runs on OpenCL devices, and with
// which kernel: the user's (`kernel("file.cl", name, args...)`), or one
// KernelEmitter generates from the body (of a function template's one
// instantiation). A loop without data clauses, or whose body the emitter
// refuses, stays on CPU PEs, with a remark that says why when remarks are
// on (`fpm-rewrite -Rfpm`); with devices(gpu) that is an error. A generated
// kernel takes an array of an `out` section as INOUT (copied to the device
// too) unless each iteration provably writes all of its section
// (checkOutCover, LoopChecker.h), and a remark says so.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_OFFLOAD_H
#define FPM_LIB_OFFLOAD_H

#include "LoopModel.h"

namespace clang {
class ASTContext;
} // namespace clang

namespace fpm {

/// Sets Loop.Kernel, or reports why the loop has none. Returns false if
/// that is an error (devices(gpu)).
bool planOffload(clang::ASTContext &Ctx, LoopModel &Loop, bool Remarks);

/// Whether the runtime follows the row pointers of Shape, a section over an
/// array of them (SectionShape::RowsArePointers), at every iteration of
/// Loop: whole rows of one level (SectionShape::takesWholeRows) from row 0
/// up, as far as the rewriter can tell. The loop's data then describes the
/// section in rows (fpm_arg::row_length); otherwise it gives the runtime no
/// data.
bool followsRowPointers(const clang::ASTContext &Ctx, const CanonicalLoop &Loop,
                        const SectionShape &Shape);

} // namespace fpm

#endif // FPM_LIB_OFFLOAD_H
