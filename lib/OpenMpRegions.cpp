//===- OpenMpRegions.cpp - OpenMP regions around a pragma -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "OpenMpRegions.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

using namespace clang;

namespace fpm {
namespace {

/// The name of the OpenMP directive whose words follow `omp` in Words, if
/// it starts a region every thread of a team runs: its words before the
/// first clause, one of them `parallel` or `teams` (not `cancel parallel`,
/// `cancellation point parallel`).
std::optional<std::string> regionDirective(ArrayRef<Token> Words) {
  std::string Directive;
  bool Region = false;
  for (size_t I = 0;
       I < Words.size() && Words[I].is(tok::raw_identifier) &&
       (I + 1 == Words.size() || Words[I + 1].isNot(tok::l_paren));
       ++I) {
    StringRef Word = Words[I].getRawIdentifier();
    if (I == 0 && (Word == "cancel" || Word == "cancellation"))
      break;
    Region |= Word == "parallel" || Word == "teams";
    Directive += (Directive.empty() ? "" : " ") + Word.str();
  }
  if (!Region)
    return std::nullopt;
  return Directive;
}

/// The text `_Pragma("...")` hands the preprocessor (C99 6.10.9): the
/// string literal without its prefix and quotes, `\"` and `\\` unescaped.
std::string destringize(StringRef Literal) {
  Literal = Literal.drop_until([](char C) { return C == '"'; });
  Literal = Literal.drop_front().drop_back();
  std::string Text;
  for (size_t I = 0; I < Literal.size(); ++I) {
    if (Literal[I] == '\\' && I + 1 < Literal.size() &&
        (Literal[I + 1] == '"' || Literal[I + 1] == '\\'))
      ++I;
    Text += Literal[I];
  }
  return Text;
}

/// The regions of the OpenMP directives among Locs (`#pragma omp ...` lines
/// and `_Pragma("omp ...")` operators, in macros too), their statements not
/// yet found.
std::vector<OmpRegion> ompRegions(const SourceRecord &Record,
                                  const SourceManager &SM,
                                  const LangOptions &LO) {
  std::vector<OmpRegion> Regions;
  for (SourceLocation Loc : Record.PragmaLocs) {
    // The directive's tokens after `omp` (pointing into the file or into
    // Text), and where its text ends.
    std::string Text;
    llvm::SmallVector<Token, 16> Words;
    SourceLocation After;
    Token Tok;
    if (Loc.isFileID() && *SM.getCharacterData(Loc) == '#') {
      // `#`, `pragma`, `omp`, the directive's words and clauses.
      Lexer Lex = rawLexerAt(Loc, SM, LO);
      llvm::SmallVector<Token, 16> Line;
      Lex.LexFromRawLexer(Tok);
      do {
        Line.push_back(Tok);
        Lex.LexFromRawLexer(Tok);
      } while (Tok.isNot(tok::eof) && !Tok.isAtStartOfLine());
      if (Line.size() < 4 || Line[2].isNot(tok::raw_identifier) ||
          Line[2].getRawIdentifier() != "omp")
        continue;
      Words.append(Line.begin() + 3, Line.end());
      After = Tok.getLocation();
    } else {
      // `_Pragma` `(` string `)`, where it is spelled.
      Lexer Lex = rawLexerAt(SM.getSpellingLoc(Loc), SM, LO);
      Token Operator[4];
      for (Token &T : Operator)
        Lex.LexFromRawLexer(T);
      if (Operator[1].isNot(tok::l_paren) ||
          !tok::isStringLiteral(Operator[2].getKind()) ||
          Operator[3].isNot(tok::r_paren))
        continue;
      Text = destringize(
          StringRef(Operator[2].getLiteralData(), Operator[2].getLength()));
      Lexer DirectiveLexer(SourceLocation(), LO, Text.data(), Text.data(),
                           Text.data() + Text.size());
      DirectiveLexer.LexFromRawLexer(Tok);
      if (Tok.isNot(tok::raw_identifier) || Tok.getRawIdentifier() != "omp")
        continue;
      for (DirectiveLexer.LexFromRawLexer(Tok); Tok.isNot(tok::eof);
           DirectiveLexer.LexFromRawLexer(Tok))
        Words.push_back(Tok);
      // The directive's text ends after the `)`, or after the macro
      // invocation that holds the operator.
      SourceLocation End = Loc.isFileID() ? Operator[3].getLocation()
                                          : SM.getExpansionRange(Loc).getEnd();
      Lexer Next = rawLexerAt(End, SM, LO);
      Next.LexFromRawLexer(Tok);
      Next.LexFromRawLexer(Tok);
      After = Tok.getLocation();
    }
    std::optional<std::string> Directive = regionDirective(Words);
    if (!Directive)
      continue;
    // The statement: the first token after the directive that is code.
    std::optional<Token> Stmt = codeTokenAfter(After, Record, SM, LO);
    if (!Stmt)
      continue;
    Regions.push_back(
        {SM.getExpansionLoc(Loc), *Directive, Stmt->getLocation(), {}});
  }
  return Regions;
}

/// Finds the statement of each region: the outermost that starts where it
/// does.
class RegionStatements : public RecursiveASTVisitor<RegionStatements> {
public:
  RegionStatements(const SourceManager &SM, std::vector<OmpRegion> &Regions)
      : SM(SM), Regions(Regions) {}

  bool VisitStmt(Stmt *S) {
    SourceLocation Begin = S->getBeginLoc();
    if (Begin.isInvalid() || !Begin.isFileID())
      return true;
    for (OmpRegion &R : Regions)
      if (R.Stmt.isInvalid() && R.StmtBegin == Begin)
        R.Stmt =
            SourceRange(Begin, SM.getExpansionRange(S->getEndLoc()).getEnd());
    return true;
  }

private:
  const SourceManager &SM;
  std::vector<OmpRegion> &Regions;
};

} // namespace

std::vector<OmpRegion> findOmpRegions(const SourceRecord &Record,
                                      ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  std::vector<OmpRegion> Regions = ompRegions(Record, SM, Ctx.getLangOpts());
  if (!Regions.empty())
    RegionStatements(SM, Regions).TraverseDecl(Ctx.getTranslationUnitDecl());
  return Regions;
}

const OmpRegion *enclosingOmpRegion(ArrayRef<OmpRegion> Regions,
                                    SourceLocation Loc,
                                    const SourceManager &SM) {
  for (const OmpRegion &R : Regions)
    if (R.Stmt.isValid() &&
        !SM.isBeforeInTranslationUnit(Loc, R.Stmt.getBegin()) &&
        !SM.isBeforeInTranslationUnit(R.Stmt.getEnd(), Loc))
      return &R;
  return nullptr;
}

} // namespace fpm
