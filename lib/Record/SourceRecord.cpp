//===- SourceRecord.cpp - What the preprocessor saw of the main file ------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Record/SourceRecord.h"

#include "Record/PragmaParser.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

bool inSkipped(SourceLocation Loc, const SourceRecord &Record,
               const SourceManager &SM) {
  return llvm::any_of(Record.Skipped, [&](SourceRange R) {
    return !SM.isBeforeInTranslationUnit(Loc, R.getBegin()) &&
           !SM.isBeforeInTranslationUnit(R.getEnd(), Loc);
  });
}

class SourceRecorder : public PPCallbacks {
public:
  SourceRecorder(const SourceManager &SM, DiagnosticsEngine &Diags,
                 SourceRecord &Record)
      : SM(SM), Diags(Diags), Record(Record) {}

  void PragmaDirective(SourceLocation Loc,
                       PragmaIntroducerKind Introducer) override {
    if ((Introducer == PIK_HashPragma && Loc.isFileID() &&
         SM.isWrittenInMainFile(Loc)) ||
        (Introducer == PIK__Pragma &&
         SM.isWrittenInMainFile(SM.getExpansionLoc(Loc))))
      Record.PragmaLocs.push_back(Loc);
  }

  void SourceRangeSkipped(SourceRange Range, SourceLocation) override {
    if (SM.isWrittenInMainFile(Range.getBegin()))
      Record.Skipped.push_back(Range);
  }

  void InclusionDirective(SourceLocation HashLoc, const Token &, StringRef,
                          bool, CharSourceRange, OptionalFileEntryRef File,
                          StringRef, StringRef, const Module *, bool,
                          SrcMgr::CharacteristicKind) override {
    // Right after Clang's error (a note still prints after a fatal one),
    // once.
    if (File || Noted || !Diags.hasErrorOccurred())
      return;
    Noted = true;
    report(Diags, HashLoc, Level::Note,
           "fpm-rewrite parses the file as the compiler does and needs its "
           "-I and -D flags: give it the build folder that holds "
           "compile_commands.json ('-p build'), or the flags after '--' "
           "('fpm-rewrite x.c -- -Iinclude -DN=8')");
  }

private:
  const SourceManager &SM;
  DiagnosticsEngine &Diags;
  SourceRecord &Record;
  bool Noted = false;
};

} // namespace

Lexer rawLexerAt(SourceLocation Loc, const SourceManager &SM,
                 const LangOptions &LO) {
  FileID File = SM.getFileID(Loc);
  StringRef Buffer = SM.getBufferData(File);
  return Lexer(SM.getLocForStartOfFile(File), LO, Buffer.begin(),
               Buffer.begin() + SM.getFileOffset(Loc), Buffer.end());
}

std::optional<Token> codeTokenAfter(SourceLocation Loc,
                                    const SourceRecord &Record,
                                    const SourceManager &SM,
                                    const LangOptions &LO,
                                    bool *PastDirectives) {
  Lexer Lex = rawLexerAt(Loc, SM, LO);
  Token Tok;
  Lex.LexFromRawLexer(Tok);
  while (Tok.isNot(tok::eof)) {
    if (Tok.is(tok::hash) && Tok.isAtStartOfLine()) {
      // A directive runs to the end of its line (splices joined).
      do
        Lex.LexFromRawLexer(Tok);
      while (Tok.isNot(tok::eof) && !Tok.isAtStartOfLine());
    } else if (inSkipped(Tok.getLocation(), Record, SM)) {
      Lex.LexFromRawLexer(Tok);
    } else {
      return Tok;
    }
    if (PastDirectives)
      *PastDirectives = true;
  }
  return std::nullopt;
}

bool directiveBetween(SourceLocation Begin, SourceLocation End,
                      const SourceRecord &Record, const SourceManager &SM,
                      const LangOptions &LO) {
  Lexer Lex = rawLexerAt(Begin, SM, LO);
  Token Tok;
  for (Lex.LexFromRawLexer(Tok);
       Tok.isNot(tok::eof) &&
       SM.isBeforeInTranslationUnit(Tok.getLocation(), End);
       Lex.LexFromRawLexer(Tok))
    if ((Tok.is(tok::hash) && Tok.isAtStartOfLine()) ||
        inSkipped(Tok.getLocation(), Record, SM))
      return true;
  return false;
}

std::unique_ptr<PPCallbacks> makeSourceRecorder(const SourceManager &SM,
                                                DiagnosticsEngine &Diags,
                                                SourceRecord &Record) {
  return std::make_unique<SourceRecorder>(SM, Diags, Record);
}

} // namespace fpm
