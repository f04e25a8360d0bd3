//===- DataRegionChecks.cpp - Where #pragma fpm data and update stand -----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Analysis/DataRegionChecks.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// The statements that leave a C block other than at its end: a return, a
/// goto to a label outside it, a break or continue of a loop or switch
/// around it.
class ExitFinder : public RecursiveASTVisitor<ExitFinder> {
public:
  ExitFinder(const SourceManager &SM, SourceRange Block)
      : SM(SM), Block(Block) {}

  bool TraverseForStmt(ForStmt *S) {
    ++Loops;
    bool Result = RecursiveASTVisitor::TraverseForStmt(S);
    --Loops;
    return Result;
  }
  bool TraverseWhileStmt(WhileStmt *S) {
    ++Loops;
    bool Result = RecursiveASTVisitor::TraverseWhileStmt(S);
    --Loops;
    return Result;
  }
  bool TraverseDoStmt(DoStmt *S) {
    ++Loops;
    bool Result = RecursiveASTVisitor::TraverseDoStmt(S);
    --Loops;
    return Result;
  }
  bool TraverseSwitchStmt(SwitchStmt *S) {
    ++Switches;
    bool Result = RecursiveASTVisitor::TraverseSwitchStmt(S);
    --Switches;
    return Result;
  }

  bool VisitReturnStmt(ReturnStmt *S) {
    Exits.push_back({S->getReturnLoc(), "return"});
    return true;
  }
  bool VisitGotoStmt(GotoStmt *S) {
    SourceLocation Label = S->getLabel()->getLocation();
    if (SM.isBeforeInTranslationUnit(Label, Block.getBegin()) ||
        SM.isBeforeInTranslationUnit(Block.getEnd(), Label))
      Exits.push_back({S->getGotoLoc(), "goto"});
    return true;
  }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *S) {
    Exits.push_back({S->getGotoLoc(), "goto"});
    return true;
  }
  bool VisitBreakStmt(BreakStmt *S) {
    if (Loops == 0 && Switches == 0)
      Exits.push_back({S->getBreakLoc(), "break"});
    return true;
  }
  bool VisitContinueStmt(ContinueStmt *S) {
    if (Loops == 0)
      Exits.push_back({S->getContinueLoc(), "continue"});
    return true;
  }

  std::vector<std::pair<SourceLocation, const char *>> Exits;

private:
  const SourceManager &SM;
  SourceRange Block;
  int Loops = 0, Switches = 0;
};

/// The innermost block of `Blocks` whose braces enclose `Loc`.
const CompoundStmt *enclosingBlock(const BlockMap &Blocks, SourceLocation Loc,
                                   const SourceManager &SM) {
  const CompoundStmt *Best = nullptr;
  for (const auto &[Brace, Block] : Blocks) {
    SourceLocation End = Block->getRBracLoc();
    if (!SM.isBeforeInTranslationUnit(Brace, Loc) ||
        !SM.isBeforeInTranslationUnit(Loc, End))
      continue;
    if (!Best || SM.isBeforeInTranslationUnit(Best->getLBracLoc(), Brace))
      Best = Block;
  }
  return Best;
}

} // namespace

std::vector<PlacedDataPragma>
checkDataPragmas(ASTContext &Ctx, const SourceRecord &Record,
                 ArrayRef<DataPragma> Pragmas, const FileStatements &Statements,
                 ArrayRef<SourceRange> Partitioned) {
  const BlockMap &Blocks = Statements.Blocks;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  const bool Cxx = LO.CPlusPlus;
  std::vector<PlacedDataPragma> Placed;
  for (const DataPragma &Pragma : Pragmas) {
    const bool Update = Pragma.K == DataPragma::Kind::Update;
    const char *Directive = Update ? "update" : "data";
    bool InLoop = llvm::any_of(Partitioned, [&](SourceRange R) {
      return SM.isBeforeInTranslationUnit(R.getBegin(), Pragma.HashLoc) &&
             SM.isBeforeInTranslationUnit(Pragma.HashLoc, R.getEnd());
    });
    if (InLoop) {
      report(Diags, Pragma.KeywordLoc, Level::Error,
             "'#pragma fpm %0' inside a partitioned loop: each iteration "
             "would run it; put it around the loop")
          << Directive;
      continue;
    }
    if (Update) {
      // Where a statement may stand: between the statements of a block,
      // not as the body of an if, a loop or a label.
      const CompoundStmt *Block = enclosingBlock(Blocks, Pragma.HashLoc, SM);
      bool InStatement =
          Block && llvm::any_of(Block->body(), [&](const Stmt *S) {
            SourceRange R = S->getSourceRange();
            return SM.isBeforeInTranslationUnit(
                       SM.getExpansionLoc(R.getBegin()), Pragma.HashLoc) &&
                   SM.isBeforeInTranslationUnit(Pragma.HashLoc,
                                                SM.getExpansionLoc(R.getEnd()));
          });
      if (!Block || InStatement) {
        report(Diags, Pragma.KeywordLoc, Level::Error,
               "'#pragma fpm update' must stand between the statements of a "
               "function's block; as the body of an 'if', a loop or a label, "
               "put it in braces");
        continue;
      }
      Placed.push_back({&Pragma, nullptr, {}});
      continue;
    }
    std::optional<Token> Next = codeTokenAfter(Pragma.EndLoc, Record, SM, LO);
    // The region's statement: the block or the loop that starts there.
    const Stmt *Region = nullptr;
    if (Next && Next->is(tok::l_brace)) {
      if (auto Found = Blocks.find(Next->getLocation()); Found != Blocks.end())
        Region = Found->second;
    } else if (Next) {
      if (auto Found = Statements.LoopStatements.find(Next->getLocation());
          Found != Statements.LoopStatements.end())
        Region = Found->second;
    }
    std::optional<SourceLocation> End =
        Region ? statementEnd(Region, SM, LO) : std::nullopt;
    // An error at Loc, with a note at the pragma.
    auto refuse = [&]<unsigned N>(SourceLocation Loc, const char(&Message)[N]) {
      report(Diags, Loc, Level::Error, Message);
      report(Diags, Pragma.KeywordLoc, Level::Note, "the pragma is here");
    };
    if (!Region || !End) {
      refuse(Next ? Next->getLocation() : Pragma.EndLoc,
             "'#pragma fpm data' must be followed by a block '{ ... }' or a "
             "loop of a function: the region is that statement");
      continue;
    }
    const SourceLocation Begin = SM.getExpansionLoc(Region->getBeginLoc());
    if (llvm::any_of(Partitioned, [&](SourceRange R) {
          return !SM.isBeforeInTranslationUnit(Begin, R.getBegin()) &&
                 !SM.isBeforeInTranslationUnit(R.getEnd(), Begin);
        })) {
      refuse(Begin,
             "'#pragma fpm data' takes a partitioned loop: a region of one "
             "call moves what the call alone would; put the region around "
             "the code that calls the loop again");
      continue;
    }
    // A loop whose body is a partitioned loop, with no braces between,
    // ends where that loop's rewrite does: the region's end would have no
    // place of its own.
    const SourceLocation LastToken =
        SM.getExpansionRange(Region->getEndLoc()).getEnd();
    if (!isa<CompoundStmt>(Region) &&
        llvm::any_of(Partitioned,
                     [&](SourceRange R) { return R.getEnd() == LastToken; })) {
      refuse(Begin,
             "the body of this loop ends where the partitioned loop in it "
             "does, and the data region's end must follow it: put the body "
             "in braces '{ ... }'");
      continue;
    }
    if (!Cxx) {
      ExitFinder Exits(SM, {Begin, *End});
      if (const auto *Block = dyn_cast<CompoundStmt>(Region))
        for (Stmt *S : Block->body())
          Exits.TraverseStmt(S);
      else // a loop's own break and continue stay in it
        Exits.TraverseStmt(const_cast<Stmt *>(Region));
      for (const auto &[Loc, What] : Exits.Exits) {
        report(Diags, Loc, Level::Error,
               "this '%0' leaves the data region without its end, which "
               "follows the region's statement: the devices' copies would "
               "stay and the host's would be stale; leave the statement at "
               "its end")
            << What;
        report(Diags, Pragma.KeywordLoc, Level::Note,
               "the data region starts here");
      }
      if (!Exits.Exits.empty())
        continue;
    }
    Placed.push_back({&Pragma, Region, *End});
  }
  return Placed;
}

} // namespace fpm
