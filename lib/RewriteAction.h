//===- RewriteAction.h - The fpm-rewrite frontend action --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The frontend action fpm-rewrite runs on each input. It drives the stages
// (README.md), with typed data between them: it records the
// `#pragma fpm`s while the file is parsed (Record/), analyses each loop
// into a LoopModel and the data pragmas into their places (Analysis/,
// Offload/: every diagnostic about the source is theirs), emits the
// rewritten text from those models when there was no error (Emit/), and
// writes the rewritten file; the errors of its own are about the files it
// writes.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_REWRITEACTION_H
#define FPM_LIB_REWRITEACTION_H

#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace fpm {

/// Where the output of Input goes by default: `x.c` -> `x.fpm.c`,
/// `x.cpp` -> `x.fpm.cpp`, beside it.
std::string defaultOutputPath(llvm::StringRef Input);

/// Makes the action for each input. With OutputFile empty, each input's
/// output goes to defaultOutputPath(input); otherwise (one input) there.
/// With DependencyFile set (one input), a successful rewrite also writes
/// there, in Make's syntax, what the output depends on: the input, every
/// file the preprocessor entered for it, and the kernel files its pragmas
/// name (writeOutputFile). The output never replaces the input.
class RewriteActionFactory : public clang::tooling::FrontendActionFactory {
public:
  /// With Remarks, each loop gets a remark saying whether it is offloaded
  /// and, if not, why (fpm-rewrite -Rfpm).
  explicit RewriteActionFactory(std::string OutputFile = "",
                                bool Remarks = false,
                                std::string DependencyFile = "")
      : OutputFile(std::move(OutputFile)), Remarks(Remarks),
        DependencyFile(std::move(DependencyFile)) {}

  std::unique_ptr<clang::FrontendAction> create() override;

private:
  std::string OutputFile;
  bool Remarks;
  std::string DependencyFile;
};

/// `Target: Deps...` in Make's syntax (spaces, '#' and '$' escaped as GCC
/// and Clang do), one dependency a line.
std::string makeDependencies(llvm::StringRef Target,
                             llvm::ArrayRef<std::string> Deps);

/// An error if Path names something an output of fpm-rewrite (What: "the
/// output file", "the dependency file") must not replace: anything that
/// exists and is not a regular file (a directory, a device, a FIFO, a
/// symbolic link). "" and "-" (standard output) are fine.
llvm::Error checkOutputFile(llvm::StringRef Path, llvm::StringRef What);

/// Writes what Write prints to Path ("-": standard output) through a
/// temporary file in the same folder renamed over it, so that nobody ever
/// sees half a file and a failed write leaves Path as it was, if
/// checkOutputFile(Path, What) allows it; returns an error otherwise, and
/// on any failure to write.
llvm::Error
writeOutputFile(llvm::StringRef Path, llvm::StringRef What,
                llvm::function_ref<void(llvm::raw_ostream &)> Write);

} // namespace fpm

#endif // FPM_LIB_REWRITEACTION_H
