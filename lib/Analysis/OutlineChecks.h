//===- OutlineChecks.h - What a loop's rewrite needs and refuses -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The last analysis before the emitters (Emit/Emitters.h), which report
// nothing: where the text the call replaces starts and where the body's
// text ends, and, in C, how the body moves into a function of its own: how
// the outlined body reaches each variable of the enclosing function it uses
// (a copy in the context struct, its address, an array's extents measured
// where the call stands), and where the context and the outlined body go.
// What cannot be rewritten is an error here: a body whose end cannot be
// found; in C a `sizeof` of an array declared outside the loop (the
// outlined body sees a pointer), a variable whose type cannot travel, a
// name the body uses for another thing than a variable it reaches through
// its address, a function whose end is not in the main file, a loop whose
// text is not in one file.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_OUTLINECHECKS_H
#define FPM_LIB_OUTLINECHECKS_H

#include "clang/AST/Type.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace clang {
class ASTContext;
class VarDecl;
} // namespace clang

namespace fpm {

struct LoopModel;

/// One extent of an array type the outlined body declares again: a
/// constant, or a variable one measured with sizeof where the call stands
/// (`fpm_<name>_d<Dim>`, Dim counting the array's dimensions from 0).
struct OutlineExtent {
  bool Variable = false;
  /// A constant extent's size.
  uint64_t Size = 0;
  unsigned Dim = 0;
};

/// How the outlined C body reaches one variable of the enclosing function.
struct OutlinedVar {
  enum class Kind {
    /// Shared: a copy in the context (an array: its element 0's address).
    Value,
    /// Shared, of a type local to the function: its address travels as
    /// `void *` (the context before the function cannot name the type), and
    /// the outlined body copies the value.
    LocalValue,
    /// Shared array written into, whose address is taken or of a local type:
    /// its element 0's address as `void *`.
    ArrayAddress,
    /// Shared and written into or its address taken: its address as
    /// `void *`, which the body's text reaches through a macro that means
    /// the variable itself, `#define r (*fpm_ref_r)`.
    Reference,
    /// Shared array of variable size or pointer to one: its address as
    /// `void *`, with its extents (Extents, from dimension 1 of the pointee)
    /// measured at the call.
    VariableArray,
    /// Private: declared again.
    Private,
    /// Private array of variable size: declared again with its extents
    /// (from dimension 0) measured at the call.
    PrivateVariableArray,
  };
  const clang::VarDecl *Var = nullptr;
  Kind K = Kind::Value;
  /// VariableArray, PrivateVariableArray: every extent, outermost first,
  /// and the element type below them.
  llvm::SmallVector<OutlineExtent, 2> Extents;
  clang::QualType Elem;
};

/// Where a C loop's body is outlined to, and what it carries.
struct OutlinePlan {
  /// The loop's shared variables (LoopVariables::Shared), then its private
  /// ones, in that order.
  llvm::SmallVector<OutlinedVar, 8> Vars;
  /// The start of the enclosing function's first line (the context struct
  /// goes before it), and the end of its last token (the outlined body goes
  /// after it).
  clang::SourceLocation FnBegin, FnEnd;
};

/// Whether T names a type declared inside a function, or an unnamed one: a
/// type the context struct before the function and the outlined body after
/// it cannot name.
bool usesLocalType(clang::QualType T);

/// Sets L.BodyBegin (where linkNestedLoops left none), L.BodyEnd and
/// L.ReplaceBegin, and in C L.Outline; reports an error and returns false
/// if the loop cannot be rewritten.
bool planRewrite(clang::ASTContext &Ctx, LoopModel &L);

} // namespace fpm

#endif // FPM_LIB_OUTLINECHECKS_H
