//===- Rewriter.h - Turning a partitioned loop into runtime calls -*- C++ -*-=//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Rewrites the checked loops of one main file into calls of libfpmrt
// (include/fpm/fpm.h): each loop becomes a block that evaluates lower,
// bound and step once, computes the trip count with fpm_trip_count, fills
// an fpm_loop and runs the body over chunks of logical iterations
// [begin, end), through the C or the C++ emitter (Emitters.h), with the
// loop's kernel when it has one.
//
// The body's text is kept as written (macros, comments), behind `#line`
// directives that point compiler messages and debuggers at the original
// lines. The pragma is left behind as a marker comment, so that the output
// holds no pragma and rewriting it again changes nothing.
//
// It reports nothing: what it could not rewrite, the analysis refused
// (Analysis/OutlineChecks.h), and the places it edits the analysis found.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_REWRITER_H
#define FPM_LIB_REWRITER_H

#include "LoopModel.h"

namespace clang {
class ASTContext;
class Preprocessor;
class Rewriter;
} // namespace clang

namespace fpm {

/// Rewrites the loops of one main file through a clang::Rewriter.
class LoopRewriter {
public:
  /// PP: the file's preprocessor, done, with its macros' history.
  LoopRewriter(clang::ASTContext &Ctx, clang::Preprocessor &PP,
               clang::Rewriter &Rewrite);

  /// Rewrites one loop, planned (planRewrite, Analysis/OutlineChecks.h).
  /// Loops must come innermost and last first.
  void rewrite(const LoopModel &Loop);

  /// Adds the runtime's header at the top of the file, if a loop was
  /// rewritten or `Other` edits (data regions) need it.
  void finish(bool Other = false);

private:
  clang::ASTContext &Ctx;
  clang::Preprocessor &PP;
  clang::Rewriter &Rewrite;
  bool Rewritten = false;
};

} // namespace fpm

#endif // FPM_LIB_REWRITER_H
