//===- KernelEmitter.h - OpenCL C kernels from loop bodies ------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Generates the OpenCL C kernel that computes what a partitioned loop's body
// computes (docs/pragma.md, "Offloading"), or says why it cannot: the first
// construct outside the subset OpenCL C shares with C, with its location.
//
// The kernel is printed from the body's AST, not copied from its text:
// macros come expanded, types canonical and spelled as OpenCL C spells them
// (`int64_t` becomes `long`), arrays of several dimensions flat with their
// subscripts linearized (extents that are not constants become kernel
// parameters), math functions called with the argument types the C
// prototypes convert to (OpenCL's are overloaded), and the functions the
// body calls emitted before the kernel, transitively, each under a name of
// its own (`fpm_f_...`: an overload, a template's instantiation or a
// function named as an OpenCL built-in is no other function there), each
// taking the globals it reads as parameters after its own, the user's
// names kept away from OpenCL C's (`kernelIdentifier`). Work-item
// get_global_id(0) is logical iteration k, as for hand-written kernels. A
// struct is declared before the kernel with the host's layout, which the
// device's build checks: one that lays it out otherwise does not build it.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_KERNELEMITTER_H
#define FPM_LIB_KERNELEMITTER_H

#include "Record/PragmaParser.h"

#include "clang/AST/Type.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <variant>
#include <vector>

namespace clang {
class ASTContext;
class ForStmt;
class FunctionDecl;
class VarDecl;
} // namespace clang

namespace fpm {

/// An array a data clause names, as the kernel sees it.
struct ClauseArray {
  std::string Name;
  /// Its index in the loop's fpm_args (in, out, inout order).
  unsigned Index = 0;
  /// Whether the loop's clauses let the device write it (out, inout).
  bool Written = false;
  /// Whether its section may reach below its element 0: the kernel then
  /// takes where element 0 is in its buffer (KernelParam::Kind::Origin).
  bool Origin = false;
  /// Whether the runtime counts its section in scalar elements (a section
  /// as runs, SectionShape::Runs); otherwise in whole elements of its first
  /// dimension, which the origin counts too.
  bool ScalarUnits = false;
  /// The variable its name finds at the loop, where known: a helper that
  /// names this variable reaches the clause's buffer.
  const clang::VarDecl *Decl = nullptr;
  /// Its elements are pointers to rows (`double **a`, `in(a[i:1][0:m])`):
  /// the runtime packs the rows into one buffer, a row's length apart, and
  /// the kernel indexes it as a flat matrix with that length
  /// (KernelParam::Kind::RowLength).
  bool RowPointers = false;
  /// A written section the same for every iteration (Offload decides): the
  /// kernel marks each element it writes in a mask (KernelParam::Kind::Mask)
  /// and a device copies back only the marked ones.
  bool Masked = false;
};

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

/// A variable of the loop's reduction clause, as the kernel sees it: each
/// work-item accumulates into a private copy that starts at the operator's
/// identity, and the work-group's copies are combined in work-item order
/// into one partial result per work-group.
struct KernelReduction {
  std::string Name;
  ReductionOp Op = ReductionOp::Add;
  /// Its type, without references, in the concrete loop (a template's
  /// instantiation).
  clang::QualType Type;
  /// Its name in the clause, for a refusal (a long double, say).
  clang::SourceLocation Loc;
};

/// What the emitter needs to know of one loop.
struct KernelRequest {
  /// The loop (in a function template, its one instantiation's).
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Var = nullptr;
  /// The arrays of the loop's data clauses.
  llvm::ArrayRef<ClauseArray> Arrays;
  /// The names of variables declared outside the loop that each iteration
  /// has its own copy of (the private clause's, nested induction variables).
  llvm::ArrayRef<std::string> Private;
  /// The reduction clause's variables, in its order.
  llvm::ArrayRef<KernelReduction> Reductions;
  /// The function the loop is in (found from For when null).
  const clang::FunctionDecl *Fn = nullptr;
  /// The kernel's name, and the suffix of the host's names (`_<k>`).
  std::string Name;
  std::string HostSuffix;
};

/// The name a variable or parameter of the user's gets in a generated kernel:
/// its own, unless it would meet a name OpenCL C reserves or defines (a
/// keyword, a built-in function, a macro) or a name the kernel generates
/// (`fpm_...`). Two names never get the same one.
std::string kernelIdentifier(llvm::StringRef Name);

/// Generates the kernel of Request's loop, or the first reason it cannot.
std::variant<GeneratedKernel, OffloadRefusal>
generateKernel(clang::ASTContext &Ctx, const KernelRequest &Request);

} // namespace fpm

#endif // FPM_LIB_KERNELEMITTER_H
