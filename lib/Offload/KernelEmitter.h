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
// What it returns, the kernel or why there is none, is the kernel's model
// (Offload.h) that Offload keeps in the LoopModel.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_KERNELEMITTER_H
#define FPM_LIB_KERNELEMITTER_H

#include "Offload/Offload.h"
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
