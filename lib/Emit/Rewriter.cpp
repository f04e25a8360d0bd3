//===- Rewriter.cpp - Turning a partitioned loop into runtime calls -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Emit/Rewriter.h"

#include "Emit/Emitters.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

using namespace clang;

namespace fpm {

LoopRewriter::LoopRewriter(ASTContext &Ctx, Preprocessor &PP,
                           clang::Rewriter &Rewrite)
    : Ctx(Ctx), PP(PP), Rewrite(Rewrite) {}

void LoopRewriter::rewrite(const LoopModel &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  const CanonicalLoop &Loop = L.Loop;
  const ForStmt *For = Loop.For;
  bool Cxx = Ctx.getLangOpts().CPlusPlus;
  Text T(Ctx);

  LoopText LT;
  LT.Suffix = "_" + std::to_string(L.Index);
  LT.VarName = Loop.Var->getName().str();
  LT.I64 = Cxx ? "std::int64_t" : "int64_t";
  LT.U64 = Cxx ? "std::uint64_t" : "uint64_t";
  LT.Lower = T.of(Loop.Lower);
  LT.Bound = T.of(Loop.Bound);
  if (!Loop.Step)
    LT.Step = Loop.StepNegated ? "-1" : "1";
  else
    LT.Step = std::string(Loop.StepNegated ? "-" : "") + "(" + LT.I64 + ")(" +
              T.of(Loop.Step) + ")";
  LT.Compare = compareEnumerator(Loop.Compare);
  if (Loop.CompareType.isNull())
    LT.CompareType =
        "decltype(fpm_lower" + LT.Suffix + " + (" + LT.Bound + "))";
  else if (!Ctx.hasSameUnqualifiedType(Loop.CompareType, Loop.Var->getType()))
    LT.CompareType = T.type(Loop.CompareType);
  LT.BodyLine = T.lineMarker(L.BodyBegin);
  LT.AfterLine = T.lineMarker(L.BodyEnd);
  PresumedLoc ForLoc = SM.getPresumedLoc(For->getForLoc());
  LT.File = ForLoc.getFilename();
  LT.Line = ForLoc.getLine();
  if (Cxx)
    emitCxx(Ctx, Rewrite, L, LT);
  else
    emitC(Ctx, PP, Rewrite, L, LT);
  // The lines between the pragma and the loop stay; the pragma's text goes
  // (its line splices stay, so that the lines keep their numbers).
  if (L.PragmaApart) {
    CharSourceRange Pragma =
        CharSourceRange::getCharRange(L.Pragma->HashLoc, L.Pragma->EndLoc);
    StringRef Text = Lexer::getSourceText(Pragma, SM, Ctx.getLangOpts());
    Rewrite.ReplaceText(Pragma.getBegin(), Text.size(),
                        std::string(Text.count('\n'), '\n'));
  }
  Rewritten = true;
}

void LoopRewriter::finish(bool Other) {
  if (!Rewritten && !Other)
    return;
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Start = SM.getLocForStartOfFile(SM.getMainFileID());
  Text T(Ctx);
  std::string Includes = Ctx.getLangOpts().CPlusPlus
                             ? "#include <fpm/fpm.hpp>\n"
                             : "#include <fpm/fpm.h>\n#include <stdio.h>\n"
                               "#include <stdlib.h>\n";
  Rewrite.InsertTextBefore(Start, "/* Rewritten by fpm-rewrite. */\n" +
                                      Includes + T.lineMarker(Start));
}

} // namespace fpm
