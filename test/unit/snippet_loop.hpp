//===- snippet_loop.hpp - The loop of a small C file, parsed ----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the analysis tests of one loop share: a small C99 file parsed with
// fpm's pragma handler, and its first partition pragma with the outermost
// `for` of the function `f`, handed to the test while the AST lives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Record/PragmaParser.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fpm::test {

/// The loop a test looks at.
struct SnippetLoop {
  clang::ASTContext &Ctx;
  const PartitionPragma &Pragma;
  const clang::FunctionDecl &Fn;
  const clang::ForStmt &For;
};

/// Parses Code (input.c, C99) and calls Use on its loop. Returns why it
/// could not ("no pragma", "no loop in f"), or "" once Use ran.
inline std::string
withSnippetLoop(const std::string &Code,
                const std::function<void(const SnippetLoop &)> &Use) {
  using namespace clang;
  using namespace clang::ast_matchers;
  class Action : public ASTFrontendAction {
  public:
    Action(const std::function<void(const SnippetLoop &)> &Use,
           std::string &Error)
        : Use(Use), Error(Error) {}
    bool BeginSourceFileAction(CompilerInstance &CI) override {
      CI.getPreprocessor().AddPragmaHandler(new FpmPragmaHandler(Pragmas));
      return true;
    }
    std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                   StringRef) override {
      struct Consumer : ASTConsumer {
        Action &Self;
        explicit Consumer(Action &Self) : Self(Self) {}
        void HandleTranslationUnit(ASTContext &Ctx) override { Self.run(Ctx); }
      };
      return std::make_unique<Consumer>(*this);
    }

  private:
    void run(ASTContext &Ctx) {
      if (Pragmas.empty()) {
        Error = "no pragma";
        return;
      }
      auto Matches =
          match(forStmt(hasAncestor(functionDecl(hasName("f")).bind("f")),
                        unless(hasAncestor(forStmt())))
                    .bind("for"),
                Ctx);
      if (Matches.empty()) {
        Error = "no loop in f";
        return;
      }
      Use({Ctx, Pragmas.front(), *Matches.front().getNodeAs<FunctionDecl>("f"),
           *Matches.front().getNodeAs<ForStmt>("for")});
    }
    const std::function<void(const SnippetLoop &)> &Use;
    std::string &Error;
    std::vector<PartitionPragma> Pragmas;
  };
  std::string Error;
  EXPECT_TRUE(tooling::runToolOnCodeWithArgs(
      std::make_unique<Action>(Use, Error), Code,
      {"-std=c99", "-resource-dir=" FPM_CLANG_RESOURCE_DIR}, "input.c"))
      << Code;
  return Error;
}

} // namespace fpm::test
