//===- Emitters.h - The C and C++ emitters -------------------- -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The emitters write one loop's rewrite from its LoopModel, through a
// clang::Rewriter; they only read the model, and report nothing: every
// refusal is the analysis' (Analysis/OutlineChecks.h for what the rewrite
// itself needs), and so are the places they edit (LoopModel::ReplaceBegin,
// BodyBegin, BodyEnd; in C, LoopModel::Outline).
//
//  - C++ (CxxEmitter.cpp): fpm::parallelFor with a [&] lambda around the
//    body, left in place;
//  - C (CEmitter.cpp): an outlined `static int fpm_body_<k>(begin, end, ctx)`
//    defined right after the enclosing function, with the macros its text
//    sees set as they are at the loop, the function's types it uses
//    declared again, and a context struct carrying the values and
//    addresses of the enclosing function's variables the body uses (the
//    body's text reaches those it writes into through a macro), declared
//    with the body's prototype before the function. A partitioned
//    loop nested in the body is rewritten first; its call moves into the
//    outer loop's outlined body, which declares the names the call reads
//    again.
//
// Both start the loop's block the same way (EmitCommon.cpp): lower, bound
// and step evaluated once, the trip count, an fpm_loop with the data
// clauses' sections (fpm_describe_sections, lib/README.md) and, when the
// loop has a kernel (the OpenCL C one KernelEmitter printed, or the
// user's), its source as a string and its arguments for
// fpm_parallel_for_kernel.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_EMITTERS_H
#define FPM_LIB_EMITTERS_H

#include "LoopModel.h"

#include "clang/AST/PrettyPrinter.h"
#include "clang/AST/Type.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace clang {
class ASTContext;
class Expr;
class Preprocessor;
class Rewriter;
class SourceManager;
} // namespace clang

namespace fpm {

/// S as the inside of a C string literal.
std::string escapeString(llvm::StringRef S);

/// S with no end of a block comment in it.
std::string commentSafe(llvm::StringRef S);

/// Helpers over one file's text.
class Text {
public:
  explicit Text(clang::ASTContext &Ctx);

  std::string of(clang::SourceRange Range) const;
  std::string of(const clang::Expr *E) const;
  std::string type(clang::QualType T, llvm::StringRef Name = "") const;
  /// `#line` for Loc's line.
  std::string lineDirective(clang::SourceLocation Loc) const;
  /// `#line` for Loc, then spaces up to Loc's column.
  std::string lineMarker(clang::SourceLocation Loc) const;

private:
  clang::ASTContext &Ctx;
  const clang::SourceManager &SM;
  clang::PrintingPolicy Policy;
};

/// The pieces of text the two emitters share.
struct LoopText {
  std::string Suffix;  // "_<k>": the suffix of the block's names
  std::string VarName; // the loop variable
  std::string Lower, Bound, Step, Compare;
  /// The type the test compares in, where it is not the variable's.
  std::string CompareType;
  std::string I64, U64;  // int64_t, spelled for the language
  std::string BodyLine;  // #line (and indentation) before the body's text
  std::string AfterLine; // #line (and indentation) before the text after
  std::string File;
  unsigned Line = 0;
};

/// The start of the loop's block: the loop's parameters evaluated once, its
/// trip count, its fpm_loop with the sections of its data clauses, and the
/// kernel's declarations and arguments when it has one. Type is the loop
/// variable's type; Zero the initialiser of a zeroed struct; ExtraDecls the
/// emitter's own declarations.
void emitSetup(llvm::raw_ostream &OS, const LoopModel &L, const LoopText &LT,
               const std::string &Type, const std::string &Zero,
               const std::string &ExtraDecls, const Text &T);

/// Fills the kernel's arguments, after the loop's sections are described,
/// and sets `fpm_offload<S>`: whether this call may run it (its sections
/// suit a device). After the emitter's own statements, before the call.
void emitKernel(llvm::raw_ostream &OS, const LoopModel &L, const std::string &S,
                bool Cxx);

/// Rewrites L, planned (planRewrite), as C++ or as C.
void emitCxx(clang::ASTContext &Ctx, clang::Rewriter &Rewrite,
             const LoopModel &L, const LoopText &LT);
/// PP's macro history gives the outlined C body the macros it sees at the
/// loop.
void emitC(clang::ASTContext &Ctx, clang::Preprocessor &PP,
           clang::Rewriter &Rewrite, const LoopModel &L, const LoopText &LT);

} // namespace fpm

#endif // FPM_LIB_EMITTERS_H
