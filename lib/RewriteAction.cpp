//===- RewriteAction.cpp - The fpm-rewrite frontend action ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "RewriteAction.h"

#include "LoopChecker.h"
#include "PragmaParser.h"
#include "Rewriter.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// Every `for` statement of the main file, with the outermost function it
/// is in (lambdas are no function of their own here).
class ForCollector : public RecursiveASTVisitor<ForCollector> {
public:
  explicit ForCollector(const SourceManager &SM) : SM(SM) {}

  bool TraverseDecl(Decl *D) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(D);
    bool Push =
        FD && FD->doesThisDeclarationHaveABody() && !isLambdaCallOperator(FD);
    if (Push)
      Functions.push_back(FD);
    bool Result = RecursiveASTVisitor::TraverseDecl(D);
    if (Push)
      Functions.pop_back();
    return Result;
  }

  bool VisitForStmt(ForStmt *For) {
    SourceLocation Loc = For->getForLoc();
    if (!Functions.empty() && Loc.isFileID() && SM.isWrittenInMainFile(Loc))
      Loops.try_emplace(Loc, For, Functions.front());
    return true;
  }

  llvm::DenseMap<SourceLocation,
                 std::pair<const ForStmt *, const FunctionDecl *>>
      Loops;

private:
  const SourceManager &SM;
  llvm::SmallVector<const FunctionDecl *, 4> Functions;
};

/// The first token after Loc in its file, raw (comments skipped).
std::optional<Token> tokenAfter(SourceLocation Loc, const SourceManager &SM,
                                const LangOptions &LO) {
  FileID File = SM.getFileID(Loc);
  bool Invalid = false;
  StringRef Buffer = SM.getBufferData(File, &Invalid);
  if (Invalid)
    return std::nullopt;
  Lexer Lex(SM.getLocForStartOfFile(File), LO, Buffer.begin(),
            Buffer.begin() + SM.getFileOffset(Loc), Buffer.end());
  Token Tok;
  Lex.LexFromRawLexer(Tok);
  if (Tok.is(tok::eof))
    return std::nullopt;
  return Tok;
}

class RewriteConsumer : public ASTConsumer {
public:
  RewriteConsumer(const std::vector<PartitionPragma> &Pragmas,
                  clang::Rewriter &Rewrite, bool Remarks)
      : Pragmas(Pragmas), Rewrite(Rewrite), Remarks(Remarks) {}

  void HandleTranslationUnit(ASTContext &Ctx) override;

private:
  const std::vector<PartitionPragma> &Pragmas;
  clang::Rewriter &Rewrite;
  bool Remarks;
};

void RewriteConsumer::HandleTranslationUnit(ASTContext &Ctx) {
  if (Pragmas.empty())
    return;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  ForCollector Collector(SM);
  Collector.TraverseDecl(Ctx.getTranslationUnitDecl());

  std::string Stem;
  if (OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID()))
    Stem = llvm::sys::path::stem(Main->getName()).str();

  // Match each pragma with the `for` right after it, and check the loop.
  std::vector<LoopRewrite> Loops;
  llvm::DenseMap<const FunctionDecl *, unsigned> Ordinals;
  llvm::StringMap<const PartitionPragma *> Names;
  for (const PartitionPragma &Pragma : Pragmas) {
    std::optional<Token> Next = tokenAfter(Pragma.EndLoc, SM, LO);
    if (!Next || Next->isNot(tok::raw_identifier) ||
        Next->getRawIdentifier() != "for") {
      report(Diags, Next ? Next->getLocation() : Pragma.EndLoc, Level::Error,
             "'#pragma fpm partition' must be followed by a 'for' loop");
      report(Diags, Pragma.KeywordLoc, Level::Note, "the pragma is here");
      continue;
    }
    auto It = Collector.Loops.find(Next->getLocation());
    if (It == Collector.Loops.end()) {
      report(Diags, Next->getLocation(), Level::Error,
             "cannot rewrite this loop: it is not a 'for' statement of a "
             "function body");
      continue;
    }
    auto [For, Fn] = It->second;
    LoopRewrite Loop;
    Loop.Pragma = &Pragma;
    Loop.Fn = Fn;
    unsigned K = Ordinals[Fn]++;
    Loop.Name = !Pragma.Name.empty() ? Pragma.Name
                                     : Stem + "." + Fn->getNameAsString() +
                                           "." + std::to_string(K);
    // The name keys the loop's stored profiles: two loops sharing one would
    // mix them.
    auto [Named, First] = Names.try_emplace(Loop.Name, &Pragma);
    if (!First) {
      PresumedLoc At = SM.getPresumedLoc(Named->second->HashLoc);
      report(Diags, Pragma.HashLoc, Level::Warning,
             "loop name '%0' is already used by the loop at %1:%2:%3; their "
             "profiles would mix; give one a distinct name(...)")
          << Loop.Name << At.getFilename() << At.getLine() << At.getColumn();
      report(Diags, Named->second->HashLoc, Level::Note,
             "the loop first named '%0' is here")
          << Loop.Name;
    }
    if (!checkLoop(Ctx, Pragma, *Fn, *For, Loop.Loop, Loop.Vars))
      continue;
    Loop.Index = Loops.size();
    Loops.push_back(std::move(Loop));
  }

  // A partitioned loop inside another: in C++ the lambdas nest; in C the
  // inner one is rewritten first and its call moves with the outer one's
  // outlined body, which must then also declare the names the inner one's
  // data clauses use. The body of the outer one starts at the inner one's
  // pragma when it is the body.
  for (LoopRewrite &Outer : Loops) {
    SourceRange Body = Outer.Loop.For->getBody()->getSourceRange();
    SourceLocation BodyBegin = SM.getExpansionLoc(Body.getBegin());
    SourceLocation BodyEnd = SM.getExpansionRange(Body.getEnd()).getEnd();
    SourceLocation ForBegin = SM.getExpansionLoc(Outer.Loop.For->getForLoc());
    for (const LoopRewrite &Inner : Loops) {
      SourceLocation Hash = Inner.Pragma->HashLoc;
      if (&Inner == &Outer ||
          SM.isBeforeInTranslationUnit(Hash, Outer.Loop.For->getRParenLoc()) ||
          SM.isBeforeInTranslationUnit(BodyEnd, Hash))
        continue;
      if (SM.isBeforeInTranslationUnit(Hash, BodyBegin))
        Outer.BodyBegin = Hash;
      LoopVariables &Vars = Outer.Vars;
      for (const VarDecl *VD : Inner.Vars.ClauseVars) {
        SourceLocation At = SM.getExpansionLoc(VD->getLocation());
        bool Inside = !SM.isBeforeInTranslationUnit(At, ForBegin) &&
                      !SM.isBeforeInTranslationUnit(BodyEnd, At);
        if (!Inside && VD != Outer.Loop.Var &&
            !llvm::is_contained(Vars.Private, VD) &&
            !llvm::is_contained(Vars.Shared, VD))
          Vars.Shared.push_back(VD);
      }
    }
  }
  if (Diags.hasErrorOccurred())
    return;
  // Kernels first, in source order, so that remarks come in that order.
  LoopRewriter Rewriter(Ctx, Rewrite, Remarks);
  for (const LoopRewrite &Loop : Loops)
    Rewriter.offload(Loop);
  if (Diags.hasErrorOccurred())
    return;

  // Rewrite innermost and last first, so that edits at one place nest.
  llvm::sort(Loops, [&](const LoopRewrite &A, const LoopRewrite &B) {
    return SM.isBeforeInTranslationUnit(B.Loop.For->getForLoc(),
                                        A.Loop.For->getForLoc());
  });
  for (const LoopRewrite &Loop : Loops)
    Rewriter.rewrite(Loop);
  Rewriter.finish();
}

class RewriteAction : public ASTFrontendAction {
public:
  RewriteAction(std::string OutputFile, bool Remarks)
      : OutputFile(std::move(OutputFile)), Remarks(Remarks) {}

protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 StringRef) override {
    Rewrite.setSourceMgr(CI.getSourceManager(), CI.getLangOpts());
    CI.getPreprocessor().AddPragmaHandler(new FpmPragmaHandler(Pragmas));
    return std::make_unique<RewriteConsumer>(Pragmas, Rewrite, Remarks);
  }

  void EndSourceFileAction() override;

private:
  std::string OutputFile;
  bool Remarks;
  std::vector<PartitionPragma> Pragmas;
  clang::Rewriter Rewrite;
};

void RewriteAction::EndSourceFileAction() {
  CompilerInstance &CI = getCompilerInstance();
  DiagnosticsEngine &Diags = CI.getDiagnostics();
  // Nothing is written for a file with an error.
  if (Diags.hasErrorOccurred())
    return;
  const SourceManager &SM = CI.getSourceManager();
  FileID Main = SM.getMainFileID();
  std::string Path =
      OutputFile.empty() ? defaultOutputPath(getCurrentFile()) : OutputFile;
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC) {
    report(Diags, SourceLocation(), Level::Error, "cannot write '%0': %1")
        << Path << EC.message();
    return;
  }
  if (const auto *Buffer = Rewrite.getRewriteBufferFor(Main))
    Buffer->write(OS);
  else
    OS << SM.getBufferData(Main);
}

} // namespace

std::string defaultOutputPath(StringRef Input) {
  llvm::SmallString<256> Path(Input);
  std::string Extension = llvm::sys::path::extension(Input).str();
  llvm::sys::path::replace_extension(Path, ".fpm" + Extension);
  return std::string(Path);
}

std::unique_ptr<FrontendAction> RewriteActionFactory::create() {
  return std::make_unique<RewriteAction>(OutputFile, Remarks);
}

} // namespace fpm
