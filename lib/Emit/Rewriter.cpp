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
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// Where the text of Body ends: after its last token, and after the `;`
/// that ends it when the statement's range leaves that out.
std::optional<SourceLocation> bodyEnd(const Stmt *Body, const SourceManager &SM,
                                      const LangOptions &LO) {
  const Stmt *Last = Body;
  while (true) {
    if (const auto *F = dyn_cast<ForStmt>(Last))
      Last = F->getBody();
    else if (const auto *W = dyn_cast<WhileStmt>(Last))
      Last = W->getBody();
    else if (const auto *R = dyn_cast<CXXForRangeStmt>(Last))
      Last = R->getBody();
    else if (const auto *I = dyn_cast<IfStmt>(Last))
      Last = I->getElse() ? I->getElse() : I->getThen();
    else if (const auto *S = dyn_cast<SwitchStmt>(Last))
      Last = S->getBody();
    else if (const auto *L = dyn_cast<LabelStmt>(Last))
      Last = L->getSubStmt();
    else if (const auto *A = dyn_cast<AttributedStmt>(Last))
      Last = A->getSubStmt();
    else
      break;
  }
  SourceLocation LastToken = SM.getExpansionRange(Body->getEndLoc()).getEnd();
  if (isa<CompoundStmt, NullStmt, DeclStmt, CXXTryStmt>(Last))
    return Lexer::getLocForEndOfToken(LastToken, 0, SM, LO);
  std::optional<Token> Semi = Lexer::findNextToken(LastToken, SM, LO);
  if (!Semi || Semi->isNot(tok::semi))
    return std::nullopt;
  return Semi->getEndLoc();
}

} // namespace

LoopRewriter::LoopRewriter(ASTContext &Ctx, Preprocessor &PP,
                           clang::Rewriter &Rewrite)
    : Ctx(Ctx), PP(PP), Rewrite(Rewrite) {}

bool LoopRewriter::rewrite(const LoopModel &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  const CanonicalLoop &Loop = L.Loop;
  const ForStmt *For = Loop.For;
  bool Cxx = Ctx.getLangOpts().CPlusPlus;
  Text T(Ctx);

  if (For->getForLoc().isMacroID() ||
      !SM.isWrittenInMainFile(For->getForLoc())) {
    report(Diags, SM.getExpansionLoc(For->getForLoc()), Level::Error,
           "cannot rewrite a loop that comes from a macro expansion");
    return false;
  }
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
  LT.BodyBegin = L.BodyBegin.isValid()
                     ? L.BodyBegin
                     : SM.getExpansionLoc(For->getBody()->getBeginLoc());
  std::optional<SourceLocation> End =
      bodyEnd(For->getBody(), SM, Ctx.getLangOpts());
  if (!End) {
    report(Diags, SM.getExpansionLoc(For->getBody()->getBeginLoc()),
           Level::Error, "cannot find where the body of this loop ends");
    return false;
  }
  LT.BodyEnd = *End;
  LT.ReplaceBegin =
      L.PragmaApart ? SM.getExpansionLoc(For->getForLoc()) : L.Pragma->HashLoc;
  LT.BodyLine = T.lineMarker(LT.BodyBegin);
  LT.AfterLine = T.lineMarker(LT.BodyEnd);
  PresumedLoc ForLoc = SM.getPresumedLoc(For->getForLoc());
  LT.File = ForLoc.getFilename();
  LT.Line = ForLoc.getLine();
  bool Ok = Cxx ? emitCxx(Ctx, Rewrite, L, LT) : emitC(Ctx, PP, Rewrite, L, LT);
  // The lines between the pragma and the loop stay; the pragma's text goes
  // (its line splices stay, so that the lines keep their numbers).
  if (Ok && L.PragmaApart) {
    CharSourceRange Pragma =
        CharSourceRange::getCharRange(L.Pragma->HashLoc, L.Pragma->EndLoc);
    StringRef Text = Lexer::getSourceText(Pragma, SM, Ctx.getLangOpts());
    Rewrite.ReplaceText(Pragma.getBegin(), Text.size(),
                        std::string(Text.count('\n'), '\n'));
  }
  Rewritten |= Ok;
  return Ok;
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
