//===- RewriteAction.h - The fpm-rewrite frontend action --------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The frontend action fpm-rewrite runs on each input: it records the
// `#pragma fpm partition`s while the file is parsed, matches each to the
// `for` statement that directly follows it, checks and rewrites the loops,
// and writes the rewritten file when there was no error.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_REWRITEACTION_H
#define FPM_LIB_REWRITEACTION_H

#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace fpm {

/// Where the output of Input goes by default: `x.c` -> `x.fpm.c`,
/// `x.cpp` -> `x.fpm.cpp`, beside it.
std::string defaultOutputPath(llvm::StringRef Input);

/// Makes the action for each input. With OutputFile empty, each input's
/// output goes to defaultOutputPath(input); otherwise (one input) there.
class RewriteActionFactory : public clang::tooling::FrontendActionFactory {
public:
  /// With Remarks, each loop gets a remark saying whether it is offloaded
  /// and, if not, why (fpm-rewrite -Rfpm).
  explicit RewriteActionFactory(std::string OutputFile = "",
                                bool Remarks = false)
      : OutputFile(std::move(OutputFile)), Remarks(Remarks) {}

  std::unique_ptr<clang::FrontendAction> create() override;

private:
  std::string OutputFile;
  bool Remarks;
};

} // namespace fpm

#endif // FPM_LIB_REWRITEACTION_H
