//===- DataRegions.cpp - #pragma fpm data and update ----------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Emit/DataRegions.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

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

/// FPM_DATA_IN, ... for a clause of `data`.
const char *mapOf(llvm::StringRef Clause) {
  if (Clause == "in")
    return "FPM_DATA_IN";
  if (Clause == "out")
    return "FPM_DATA_OUT";
  if (Clause == "create")
    return "FPM_DATA_CREATE";
  return "FPM_DATA_INOUT";
}

/// The array as written, as a C string literal, for messages.
std::string nameLiteral(const DataPragma::Array &A) {
  std::string Literal = "\"";
  for (char C : A.Name) {
    if (C == '"' || C == '\\')
      Literal += '\\';
    Literal += C;
  }
  return Literal + "\"";
}

/// `(void *)&(a)[0]` and its bytes, as the rewritten file computes them.
std::string start(const DataPragma::Array &A) {
  return "(void *)&(" + A.Name + ")[0]";
}
std::string bytes(const DataPragma::Array &A, bool Cxx) {
  return std::string(Cxx ? "(std::size_t)(" : "(size_t)(") + A.Length +
         ") * sizeof((" + A.Name + ")[0])";
}

/// What a C program does when a region's call fails: as a loop's.
std::string orAbort(const std::string &Call) {
  return "if (" + Call +
         " != FPM_OK) { fprintf(stderr, \"%s:%d: fpm: %s\\n\", __FILE__, "
         "__LINE__, fpm_last_error()); abort(); }";
}

/// The pragma's text replaced by `Text` and the newlines it had.
void replacePragma(Rewriter &Rewrite, const DataPragma &Pragma,
                   const std::string &Text) {
  const SourceManager &SM = Rewrite.getSourceMgr();
  CharSourceRange Range =
      CharSourceRange::getCharRange(Pragma.HashLoc, Pragma.EndLoc);
  llvm::StringRef Old = Lexer::getSourceText(Range, SM, Rewrite.getLangOpts());
  Rewrite.ReplaceText(Pragma.HashLoc, Old.size(),
                      Text + std::string(Old.count('\n'), '\n'));
}

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

bool rewriteDataPragmas(ASTContext &Ctx, const SourceRecord &Record,
                        Rewriter &Rewrite, llvm::ArrayRef<DataPragma> Pragmas,
                        const BlockMap &Blocks,
                        llvm::ArrayRef<SourceRange> Partitioned) {
  if (Pragmas.empty())
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  const bool Cxx = LO.CPlusPlus;

  struct Edit {
    const DataPragma *Pragma;
    const CompoundStmt *Block; ///< a region's
  };
  std::vector<Edit> Edits;
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
      Edits.push_back({&Pragma, nullptr});
      continue;
    }
    std::optional<Token> Next = codeTokenAfter(Pragma.EndLoc, Record, SM, LO);
    auto Found = Next && Next->is(tok::l_brace)
                     ? Blocks.find(Next->getLocation())
                     : Blocks.end();
    if (Found == Blocks.end()) {
      report(Diags, Next ? Next->getLocation() : Pragma.EndLoc, Level::Error,
             "'#pragma fpm data' must be followed by a block '{ ... }' of a "
             "function: the region is that block");
      report(Diags, Pragma.KeywordLoc, Level::Note, "the pragma is here");
      continue;
    }
    const CompoundStmt *Block = Found->second;
    if (!Cxx) {
      ExitFinder Exits(SM, Block->getSourceRange());
      for (Stmt *S : Block->body())
        Exits.TraverseStmt(S);
      for (const auto &[Loc, What] : Exits.Exits) {
        report(Diags, Loc, Level::Error,
               "this '%0' leaves the data region without its end, which the "
               "block's '}' holds: the devices' copies would stay and the "
               "host's would be stale; leave the block at its end")
            << What;
        report(Diags, Pragma.KeywordLoc, Level::Note,
               "the data region starts here");
      }
      if (!Exits.Exits.empty())
        continue;
    }
    Edits.push_back({&Pragma, Block});
  }
  if (Diags.hasErrorOccurred())
    return false;

  unsigned K = 0;
  for (const Edit &E : Edits) {
    const DataPragma &Pragma = *E.Pragma;
    if (!E.Block) { // update
      std::string Calls;
      for (const DataPragma::Array &A : Pragma.Arrays) {
        const bool Host = A.Clause == "host";
        if (Cxx)
          Calls += std::string("::fpm::DataRegion::") +
                   (Host ? "updateHost" : "updateDevice") + "(&(" + A.Name +
                   ")[0], (std::size_t)(" + A.Length + ")); ";
        else
          Calls += orAbort(std::string(Host ? "fpm_update_host("
                                            : "fpm_update_device(") +
                           "&(" + A.Name + ")[0], " + bytes(A, false) + ")") +
                   " ";
      }
      replacePragma(Rewrite, Pragma, "{ " + Calls + "}");
      continue;
    }
    const std::string Name = "fpm_region_" + std::to_string(K++);
    const std::string Count = std::to_string(Pragma.Arrays.size());
    std::string Begin, End;
    if (Cxx) {
      Begin = " ::fpm::DataRegion " + Name + "{";
      for (const DataPragma::Array &A : Pragma.Arrays)
        Begin += std::string(&A == &Pragma.Arrays.front() ? "" : ", ") + "{" +
                 mapOf(A.Clause) + ", " + start(A) + ", " + bytes(A, true) +
                 ", " + nameLiteral(A) + "}";
      Begin += "};";
    } else {
      // The user's block nests in one that opens and closes the region, so
      // that its declarations still come first in a block (C89).
      Begin = " fpm_data " + Name + "[" + Count + "]; ";
      for (size_t I = 0; I < Pragma.Arrays.size(); ++I) {
        const DataPragma::Array &A = Pragma.Arrays[I];
        std::string At = Name + "[" + std::to_string(I) + "].";
        Begin += At + "map = " + mapOf(A.Clause) + "; " + At +
                 "data = " + start(A) + "; " + At +
                 "bytes = " + bytes(A, false) + "; " + At +
                 "name = " + nameLiteral(A) + "; ";
      }
      Begin += orAbort("fpm_data_begin(" + Name + ", " + Count + ")") + " {";
      End = "} " + orAbort("fpm_data_end(" + Name + ", " + Count + ")") + " ";
    }
    Rewrite.InsertTextAfter(E.Block->getLBracLoc().getLocWithOffset(1), Begin);
    if (!End.empty())
      Rewrite.InsertTextBefore(E.Block->getRBracLoc(), End);
    replacePragma(Rewrite, Pragma, "");
  }
  return !Edits.empty();
}

} // namespace fpm
