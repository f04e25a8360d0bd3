//===- LoopModel.h - One partitioned loop, analysed ----------- -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the analysis of one `#pragma fpm partition` loop leaves for the
// emitters (Emit/Emitters.h): the pragma and its clauses, the checked loop
// (LoopChecker.h), how the body shares each variable, the loop's name and
// ordinal, and the OpenCL kernel that runs it on devices when it has one
// (Offload.h). The emitters only read it.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_LOOPMODEL_H
#define FPM_LIB_LOOPMODEL_H

#include "Analysis/ClauseSema.h"
#include "Analysis/LoopChecker.h"
#include "Analysis/OutlineChecks.h"
#include "Offload/Offload.h"
#include "Record/PragmaParser.h"

#include "clang/Basic/SourceLocation.h"

#include <optional>
#include <string>

namespace clang {
class FunctionDecl;
} // namespace clang

namespace fpm {

/// A checked loop and what the emitters need to know about it.
struct LoopModel {
  const PartitionPragma *Pragma = nullptr;
  /// The function the loop is in (the outermost, not a lambda).
  const clang::FunctionDecl *Fn = nullptr;
  CanonicalLoop Loop;
  LoopVariables Vars;
  /// Its sections' first dimensions against the loop variable (ClauseSema),
  /// in the order of the loop's fpm_args; empty when they were not read.
  SectionShapes Shapes;
  /// The loop's name: the name clause's, or `<file stem>.<function>.<k>`.
  std::string Name;
  /// The loop's ordinal in the file: the suffix of the names generated for
  /// it.
  unsigned Index = 0;
  /// Whether preprocessor lines stand between the pragma and the `for`
  /// (`#ifdef USE_FPM` / pragma / `#endif` / `for`): they stay, and only the
  /// pragma's own text goes with the loop's.
  bool PragmaApart = false;
  /// C: the variables that the outlined bodies of the partitioned loops
  /// around this one reach through their address (LoopVariables::Addressed),
  /// where this loop's call stands.
  llvm::SmallVector<const clang::VarDecl *, 2> EnclosingAddressed;
  /// Inside the body of another partitioned loop: in C, the outer one's
  /// outlined body declares the arrays it passes as pointers.
  bool Nested = false;
  /// Where the body's text starts: the body, or the pragma of a partitioned
  /// loop that is the body (linkNestedLoops); and where it ends: after its
  /// last token and the `;` that ends it (planRewrite).
  clang::SourceLocation BodyBegin, BodyEnd;
  /// Where the text the call replaces starts: the pragma's `#`, or the `for`
  /// when preprocessor lines stand between them (planRewrite).
  clang::SourceLocation ReplaceBegin;
  /// C: how the outlined body reaches the function's variables, and where it
  /// and its context go (planRewrite); none in C++.
  std::optional<OutlinePlan> Outline;
  /// The kernel that runs the loop on OpenCL devices: generated from the
  /// body or the user's (kernel(...)); none keeps the loop on CPU PEs.
  std::optional<GeneratedKernel> Kernel;
  /// Where the pragma has no data clause: the ones fpm worked out, as the
  /// pragma would take them (Pragma is then a copy that holds them; empty
  /// where the body indexes no array), or why it could not.
  std::optional<std::string> Derived;
  std::optional<OffloadRefusal> NotDerived;
};

} // namespace fpm

#endif // FPM_LIB_LOOPMODEL_H
