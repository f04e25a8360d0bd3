//===- OpenMpRegions.cpp - OpenMP regions around a pragma -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Analysis/OpenMpRegions.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

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

/// Calls Each with every OpenMP directive among Record's pragmas (`#pragma
/// omp ...` lines and `_Pragma("omp ...")` operators, in macros too): where
/// it is, its tokens after `omp` (raw, valid during the call), and where its
/// text ends.
void forEachOmpDirective(
    const SourceRecord &Record, const SourceManager &SM, const LangOptions &LO,
    llvm::function_ref<void(SourceLocation, ArrayRef<Token>, SourceLocation)>
        Each) {
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
    Each(Loc, Words, After);
  }
}

/// The regions of the OpenMP directives among Record's pragmas, their
/// statements not yet found.
std::vector<OmpRegion> ompRegions(const SourceRecord &Record,
                                  const SourceManager &SM,
                                  const LangOptions &LO) {
  std::vector<OmpRegion> Regions;
  forEachOmpDirective(
      Record, SM, LO,
      [&](SourceLocation Loc, ArrayRef<Token> Words, SourceLocation After) {
        std::optional<std::string> Directive = regionDirective(Words);
        if (!Directive)
          return;
        // The statement: the first token after the directive that is code.
        std::optional<Token> Stmt = codeTokenAfter(After, Record, SM, LO);
        if (!Stmt)
          return;
        Regions.push_back(
            {SM.getExpansionLoc(Loc), *Directive, Stmt->getLocation(), {}});
      });
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

namespace {

/// The variables with static storage whose names are in Names.
class NamedStatics : public RecursiveASTVisitor<NamedStatics> {
public:
  explicit NamedStatics(const llvm::StringSet<> &Names) : Names(Names) {}

  bool VisitVarDecl(VarDecl *VD) {
    if (VD->hasGlobalStorage() && VD->getIdentifier() &&
        Names.contains(VD->getName()))
      Found.push_back(VD);
    return true;
  }

  std::vector<const VarDecl *> Found;

private:
  const llvm::StringSet<> &Names;
};

} // namespace

std::vector<OmpThreadPrivate> findOmpThreadPrivates(const SourceRecord &Record,
                                                    ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  // `threadprivate` `(` name `,` ... `)`.
  std::vector<std::pair<SourceLocation, std::string>> Named;
  forEachOmpDirective(
      Record, SM, Ctx.getLangOpts(),
      [&](SourceLocation Loc, ArrayRef<Token> Words, SourceLocation) {
        if (Words.size() < 3 || Words[0].isNot(tok::raw_identifier) ||
            Words[0].getRawIdentifier() != "threadprivate" ||
            Words[1].isNot(tok::l_paren))
          return;
        for (const Token &T : Words.drop_front(2)) {
          if (T.is(tok::r_paren))
            break;
          if (T.is(tok::raw_identifier))
            Named.push_back(
                {SM.getExpansionLoc(Loc), T.getRawIdentifier().str()});
        }
      });
  std::vector<OmpThreadPrivate> Result;
  if (Named.empty())
    return Result;
  llvm::StringSet<> Names;
  for (const auto &N : Named)
    Names.insert(N.second);
  NamedStatics Statics(Names);
  Statics.TraverseDecl(Ctx.getTranslationUnitDecl());
  for (const auto &[Loc, Name] : Named) {
    const VarDecl *Local = nullptr, *Global = nullptr;
    for (const VarDecl *VD : Statics.Found) {
      if (VD->getName() != Name ||
          !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(VD->getLocation()),
                                        Loc))
        continue;
      if (VD->isStaticLocal()) {
        const auto *Fn =
            dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
        const Stmt *Body = Fn ? Fn->getBody() : nullptr;
        if (Body &&
            !SM.isBeforeInTranslationUnit(
                Loc, SM.getExpansionLoc(Body->getBeginLoc())) &&
            !SM.isBeforeInTranslationUnit(
                SM.getExpansionRange(Body->getEndLoc()).getEnd(), Loc))
          Local = VD;
      } else if (VD->isFileVarDecl()) {
        Global = VD;
      }
    }
    if (const VarDecl *VD = Local ? Local : Global)
      Result.push_back({VD->getCanonicalDecl(), Loc});
  }
  return Result;
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
