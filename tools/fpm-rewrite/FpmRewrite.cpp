//===- FpmRewrite.cpp - fpm-rewrite: #pragma fpm partition to runtime calls ==//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm-rewrite FILE... [-o OUT] [--dependency-file=DEPS] [-p BUILD_DIR]
//             [-- COMPILER FLAGS]
//
// Rewrites each `#pragma fpm partition` loop of each FILE into calls of the
// fpm runtime and writes the result to OUT (one FILE) or beside FILE
// (`x.c` -> `x.fpm.c`), and with one FILE what the result depends on to
// DEPS (Make's syntax: FILE, its headers, the kernel files it names). Compiler
// flags come from after `--` or from the compile_commands.json found from
// BUILD_DIR or FILE, as for clang-tidy. Errors are reported as the compiler
// does; a file with an error gets no output, and the exit status is non-zero.
//
//===----------------------------------------------------------------------===//

#include "RewriteAction.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include "fpm/version.h"

using namespace clang::tooling;

static llvm::cl::OptionCategory FpmRewriteCategory("fpm-rewrite options");

static llvm::cl::opt<std::string>
    OutputFile("o",
               llvm::cl::desc("Write the rewritten file here (one input "
                              "only); default: x.c -> x.fpm.c beside it"),
               llvm::cl::value_desc("file"), llvm::cl::cat(FpmRewriteCategory));

static llvm::cl::opt<std::string> DependencyFile(
    "dependency-file",
    llvm::cl::desc("After a successful rewrite (one input only), write here "
                   "in Make's syntax what the output depends on: the input, "
                   "the headers it includes and the kernel files its "
                   "pragmas name (for a build system: CMake's DEPFILE)"),
    llvm::cl::value_desc("file"), llvm::cl::cat(FpmRewriteCategory));

static llvm::cl::opt<bool> Remarks(
    "Rfpm",
    llvm::cl::desc("Say of each loop whether it runs on OpenCL devices too "
                   "and, if not, why (like clang's -Rpass-missed)"),
    llvm::cl::cat(FpmRewriteCategory));

static llvm::cl::extrahelp CommonHelp(CommonOptionsParser::HelpMessage);

static const char Overview[] =
    "Rewrites the loops marked '#pragma fpm partition' into calls of the fpm "
    "runtime (libfpmrt)\n";

int main(int Argc, const char **Argv) {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &OS) {
    OS << "fpm-rewrite " << FPM_VERSION_STRING << "\n";
  });
  auto Parser = CommonOptionsParser::create(Argc, Argv, FpmRewriteCategory,
                                            llvm::cl::OneOrMore, Overview);
  if (!Parser) {
    llvm::errs() << "fpm-rewrite: error: " << llvm::toString(Parser.takeError())
                 << "\n";
    return 2;
  }
  if (!OutputFile.empty() && Parser->getSourcePathList().size() != 1) {
    llvm::errs() << "fpm-rewrite: error: -o needs exactly one input file\n";
    return 2;
  }
  if (!DependencyFile.empty() && Parser->getSourcePathList().size() != 1) {
    llvm::errs() << "fpm-rewrite: error: --dependency-file needs exactly one "
                    "input file\n";
    return 2;
  }
  ClangTool Tool(Parser->getCompilations(), Parser->getSourcePathList());
  // Clang's own headers (stddef.h, ...) from the Clang the tool is built
  // against, unless the command line names a resource directory.
  Tool.appendArgumentsAdjuster(
      [](const CommandLineArguments &Args, llvm::StringRef) {
        for (const std::string &Arg : Args)
          if (llvm::StringRef(Arg).starts_with("-resource-dir"))
            return Args;
        CommandLineArguments Adjusted = Args;
        Adjusted.insert(Adjusted.begin() + (Adjusted.empty() ? 0 : 1),
                        "-resource-dir=" FPM_CLANG_RESOURCE_DIR);
        return Adjusted;
      });
  fpm::RewriteActionFactory Factory(OutputFile, Remarks, DependencyFile);
  return Tool.run(&Factory) ? 1 : 0;
}
