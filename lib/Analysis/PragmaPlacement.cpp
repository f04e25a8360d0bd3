//===- PragmaPlacement.cpp - The loop a partition pragma takes ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Analysis/PragmaPlacement.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// Fills a FileStatements from the main file's function bodies.
class StatementCollector : public RecursiveASTVisitor<StatementCollector> {
public:
  StatementCollector(const SourceManager &SM, FileStatements &Out)
      : SM(SM), Out(Out) {}

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
    if (inMainFunction(Loc)) {
      Out.Loops.try_emplace(Loc, For, Functions.front());
      Out.LoopStatements.try_emplace(Loc, For);
    }
    return true;
  }
  bool VisitWhileStmt(WhileStmt *While) {
    if (inMainFunction(While->getWhileLoc()))
      Out.LoopStatements.try_emplace(While->getWhileLoc(), While);
    return true;
  }
  bool VisitDoStmt(DoStmt *Do) {
    if (inMainFunction(Do->getDoLoc()))
      Out.LoopStatements.try_emplace(Do->getDoLoc(), Do);
    return true;
  }
  bool VisitCXXForRangeStmt(CXXForRangeStmt *For) {
    if (inMainFunction(For->getForLoc()))
      Out.LoopStatements.try_emplace(For->getForLoc(), For);
    return true;
  }

  bool VisitCompoundStmt(CompoundStmt *Block) {
    SourceLocation Loc = Block->getLBracLoc();
    if (inMainFunction(Loc))
      Out.Blocks.try_emplace(Loc, Block);
    return true;
  }

private:
  bool inMainFunction(SourceLocation Loc) const {
    return !Functions.empty() && Loc.isFileID() && SM.isWrittenInMainFile(Loc);
  }

  const SourceManager &SM;
  FileStatements &Out;
  llvm::SmallVector<const FunctionDecl *, 4> Functions;
};

} // namespace

std::optional<SourceLocation>
statementEnd(const Stmt *Body, const SourceManager &SM, const LangOptions &LO) {
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

FileStatements collectStatements(ASTContext &Ctx) {
  FileStatements Statements;
  StatementCollector(Ctx.getSourceManager(), Statements)
      .TraverseDecl(Ctx.getTranslationUnitDecl());
  return Statements;
}

std::optional<PlacedLoop> placePartition(const PartitionPragma &Pragma,
                                         const FileStatements &Statements,
                                         ArrayRef<OmpRegion> Regions,
                                         const SourceRecord &Record,
                                         ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  // Preprocessor lines may stand between the pragma and its loop.
  bool PastDirectives = false;
  std::optional<Token> Next =
      codeTokenAfter(Pragma.EndLoc, Record, SM, LO, &PastDirectives);
  if (!Next || Next->isNot(tok::raw_identifier) ||
      Next->getRawIdentifier() != "for") {
    report(Diags, Next ? Next->getLocation() : Pragma.EndLoc, Level::Error,
           "'#pragma fpm partition' must be followed by a 'for' loop");
    report(Diags, Pragma.KeywordLoc, Level::Note, "the pragma is here");
    return std::nullopt;
  }
  if (const OmpRegion *R =
          enclosingOmpRegion(Regions, Next->getLocation(), SM)) {
    report(Diags, Pragma.KeywordLoc, Level::Error,
           "'#pragma fpm partition' inside an OpenMP '%0' region: each "
           "thread of the team that reaches it would run the whole loop; "
           "move the loop out of the region")
        << R->Directive;
    report(Diags, R->Pragma, Level::Note, "the OpenMP region starts here");
    return std::nullopt;
  }
  auto It = Statements.Loops.find(Next->getLocation());
  if (It == Statements.Loops.end()) {
    report(Diags, Next->getLocation(), Level::Error,
           "cannot rewrite this loop: it is not a 'for' statement of a "
           "function body");
    return std::nullopt;
  }
  auto [For, Fn] = It->second;
  // The header's text is printed again in the call: a directive in it
  // would break the lines around it.
  if (directiveBetween(Next->getLocation(),
                       SM.getExpansionLoc(For->getRParenLoc()), Record, SM,
                       LO)) {
    report(Diags, Next->getLocation(), Level::Error,
           "cannot rewrite a loop whose header holds preprocessor lines; "
           "compute its bounds before the loop");
    return std::nullopt;
  }
  return PlacedLoop{For, Fn, PastDirectives};
}

} // namespace fpm
