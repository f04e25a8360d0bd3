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
// What it decides is the kernel's model, here so that LoopModel.h holds it
// without the emitter: the kernel (GeneratedKernel, its parameters and what
// the host passes for each), or why the loop has none (OffloadRefusal).
// KernelEmitter prints the generated kernel's source; EmitCommon the host's
// side of its call.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_OFFLOAD_H
#define FPM_LIB_OFFLOAD_H

#include "clang/Basic/SourceLocation.h"

#include <string>
#include <vector>

namespace clang {
class ASTContext;
} // namespace clang

namespace fpm {

struct CanonicalLoop;
struct LoopModel;
struct SectionShape;

/// One parameter of a generated kernel and what the host passes for it.
struct KernelParam {
  enum class Kind {
    Lower,     ///< the loop variable's value at iteration 0
    Step,      ///< the step, as int64_t
    Scalar,    ///< a variable of the host, by value: HostExpr names it
    Array,     ///< the fpm_arg of data section Section
    Extent,    ///< an array's variable extent: HostExpr computes it (int64_t)
    Reduction, ///< reduction Reduction's partial results
               ///< (FPM_ARG_REDUCTION): a `__global` pointer to one per
               ///< work-group; HostExpr names the variable
    Origin,    ///< where element 0 of data section Section's array is in its
               ///< buffer (FPM_ARG_ORIGIN), a long
    Whole,     ///< a global array of constant extent that the loop reads and
               ///< no data clause names: HostExpr names it, and the host
               ///< passes all of it as a shared FPM_ARG_IN (copied once per
               ///< call)
    End,       ///< the end of the launch's range (FPM_ARG_END), a ulong: the
               ///< work-items past it pad the last work-group
    RowLength, ///< the row length of data section Section's array of row
               ///< pointers, as the runtime packs its rows (a long)
    Mask       ///< the write mask of data section Section's array
               ///< (FPM_ARG_MASK), a `__global uchar *`; HostExpr is the size
               ///< of the elements the kernel writes, which each byte stands
               ///< for
  };
  Kind K = Kind::Scalar;
  /// Scalar, Whole: the host's variable; Extent, Mask: the expression the
  /// host computes.
  std::string HostExpr;
  /// Array, Origin, RowLength, Mask: the index of its section in the loop's
  /// fpm_args.
  unsigned Section = 0;
  /// Extent: the parameter's name in the kernel. Whole: the clause that
  /// would copy the same (`in(ce[0:5])`), for messages.
  std::string Name;
  /// Scalar of a hand-written kernel: the expression the host evaluates once
  /// before the loop into a variable named HostExpr, and where it is written.
  std::string Init;
  clang::SourceLocation InitLoc;
  /// Array of an out section that the body may write only in part: the
  /// kernel gets it as FPM_ARG_INOUT, copied to the device too, so that the
  /// elements an iteration leaves unwritten come back unchanged (decided by
  /// Offload, not by the emitter).
  bool CopyIn = false;
  /// Reduction: the variable's index in the loop's reduction clause.
  unsigned Reduction = 0;
  /// Whole: where the loop (the body or a function it calls) first reads
  /// it, for the remark.
  clang::SourceLocation UseLoc = {};
};

/// A kernel to run the loop on OpenCL devices: its source, its name, its
/// build options and its parameters in order. Generated from the body, or
/// the user's (`kernel("file.cl", name, args...)`).
struct GeneratedKernel {
  std::string Name;
  std::string Source;
  std::string Options;
  std::vector<KernelParam> Params;
  /// Where it comes from, for the rewritten file's comment.
  std::string Origin = "generated from the loop's body";
};

/// Why a loop's body cannot become a kernel: the construct and the reason.
struct OffloadRefusal {
  clang::SourceLocation Loc;
  std::string Reason;
};

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
