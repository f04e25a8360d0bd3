//===- Rewriter.h - Turning a partitioned loop into runtime calls -*- C++ -*-=//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Rewrites one checked loop into a call of libfpmrt (include/fpm/fpm.h):
// the loop becomes a block that evaluates lower, bound and step once,
// computes the trip count with fpm_trip_count, fills an fpm_loop and runs
// the body over chunks of logical iterations [begin, end). The fpm_loop
// carries the sections of the in, out and inout clauses as fpm_args in
// `data` (fpm_data_<k>): each is evaluated at iterations 0, 1 and T-1 with
// the loop variable computed as the body computes it, and
// fpm_describe_sections passes them when every section is affine in the
// iteration (else none; fpm_affine_<k> says which; see lib/README.md):
//
//  - C++: fpm::parallelFor with a [&] lambda around the body, left in place;
//  - C: an outlined `static int fpm_body_<k>(begin, end, ctx)` defined right
//    after the enclosing function (where the macros it defines are defined),
//    with a context struct carrying the values and addresses of the
//    enclosing function's variables the body uses, declared with the body's
//    prototype before the function. A partitioned loop nested in the body is
//    rewritten first; its call moves into the outer loop's outlined body,
//    which declares the names the call reads again.
//
// The body's text is kept as written (macros, comments), behind `#line`
// directives that point compiler messages and debuggers at the original
// lines. The pragma is left behind as a marker comment, so that the output
// holds no pragma and rewriting it again changes nothing.
//
// The CPU body is one of the loop's implementations; the OpenCL C kernel
// generated from the same body (KernelEmitter.h) is the other, passed to
// fpm_parallel_for_kernel as a string with its arguments when the loop's
// data clauses describe every array it touches.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_REWRITER_H
#define FPM_LIB_REWRITER_H

#include "KernelEmitter.h"
#include "LoopChecker.h"
#include "PragmaParser.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace clang {
class ASTContext;
class FunctionDecl;
class Rewriter;
} // namespace clang

namespace fpm {

/// A checked loop and what the rewriter needs to know about it.
struct LoopRewrite {
  const PartitionPragma *Pragma = nullptr;
  /// The function the loop is in (the outermost, not a lambda).
  const clang::FunctionDecl *Fn = nullptr;
  CanonicalLoop Loop;
  LoopVariables Vars;
  /// The loop's name: the name clause's, or `<file stem>.<function>.<k>`.
  std::string Name;
  /// The loop's ordinal in the file: the suffix of the names generated for
  /// it.
  unsigned Index = 0;
  /// Where the body's text starts: the body, or the pragma of a partitioned
  /// loop that is the body.
  clang::SourceLocation BodyBegin;
};

/// Rewrites the loops of one main file through a clang::Rewriter.
class LoopRewriter {
public:
  /// With Remarks, says of each loop whether it is offloaded and why not
  /// (`fpm-rewrite -Rfpm`).
  LoopRewriter(clang::ASTContext &Ctx, clang::Rewriter &Rewrite,
               bool Remarks = false);

  /// Generates the OpenCL C kernel of a loop, or says why it has none: a
  /// remark, or an error with devices(gpu) (then returns false). Called for
  /// every loop, in source order, before rewrite().
  bool offload(const LoopRewrite &Loop);

  /// Rewrites one loop. Loops must come innermost and last first. Returns
  /// false, with an error reported, if the loop cannot be rewritten.
  bool rewrite(const LoopRewrite &Loop);

  /// Adds the runtime's header at the top of the file, if a loop was
  /// rewritten.
  void finish();

private:
  struct LoopText;
  bool rewriteCxx(const LoopRewrite &Loop, const LoopText &Text);
  bool rewriteC(const LoopRewrite &Loop, const LoopText &Text);

  clang::ASTContext &Ctx;
  clang::Rewriter &Rewrite;
  bool Remarks;
  bool Rewritten = false;
  /// The kernels offload() generated, by loop index.
  llvm::DenseMap<unsigned, GeneratedKernel> Kernels;
};

} // namespace fpm

#endif // FPM_LIB_REWRITER_H
