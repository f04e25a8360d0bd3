//===- SourceRecord.h - What the preprocessor saw of the main file -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the rewrite needs to know of the main file's preprocessing that the
// AST does not keep: where each `#pragma` and `_Pragma` is (OpenMP's among
// them, which Clang drops without -fopenmp) and which blocks of conditional
// inclusion were skipped. With them, the statement a pragma applies to is
// found past any preprocessor lines between them (`#ifdef USE_FPM` /
// `#pragma fpm partition` / `#endif` / `for`).
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_SOURCERECORD_H
#define FPM_LIB_SOURCERECORD_H

#include "clang/Basic/SourceLocation.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/Token.h"
#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <optional>
#include <vector>

namespace clang {
class DiagnosticsEngine;
class LangOptions;
class PPCallbacks;
class SourceManager;
} // namespace clang

namespace fpm {

struct SourceRecord {
  /// `#pragma` lines, and `_Pragma(...)` operators written in the main file
  /// or in macros expanded there, in the order the preprocessor saw them.
  std::vector<clang::SourceLocation> PragmaLocs;
  /// The blocks of conditional inclusion the preprocessor skipped, from
  /// their `#if`/`#else` to the end of their `#endif`/`#else` line.
  std::vector<clang::SourceRange> Skipped;
};

/// A raw lexer of Loc's file from Loc on (comments skipped).
clang::Lexer rawLexerAt(clang::SourceLocation Loc,
                        const clang::SourceManager &SM,
                        const clang::LangOptions &LO);

/// The first token after Loc in its file (raw, comments skipped) that the
/// compiler reads as code: past whole preprocessor directive lines and
/// skipped blocks. Sets *PastDirectives when it passed any. None at the end
/// of the file.
std::optional<clang::Token> codeTokenAfter(clang::SourceLocation Loc,
                                           const SourceRecord &Record,
                                           const clang::SourceManager &SM,
                                           const clang::LangOptions &LO,
                                           bool *PastDirectives = nullptr);

/// Whether a preprocessor directive line or a skipped block starts in
/// [Begin, End) (both in one file).
bool directiveBetween(clang::SourceLocation Begin, clang::SourceLocation End,
                      const SourceRecord &Record,
                      const clang::SourceManager &SM,
                      const clang::LangOptions &LO);

/// Callbacks that fill Record while the main file is preprocessed, and add
/// to Clang's error for a header it cannot find a note saying how to give
/// fpm-rewrite the compiler's flags.
std::unique_ptr<clang::PPCallbacks>
makeSourceRecorder(const clang::SourceManager &SM,
                   clang::DiagnosticsEngine &Diags, SourceRecord &Record);

} // namespace fpm

#endif // FPM_LIB_SOURCERECORD_H
