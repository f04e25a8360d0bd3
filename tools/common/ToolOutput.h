//===- tools/common/ToolOutput.h - How the tools report ---------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What every fpm tool prints the same way: `TOOL: error: MESSAGE` and
// `TOOL: warning: MESSAGE` on one line each on stderr, and its output on
// stdout, checked for a failed write.
//
//===----------------------------------------------------------------------===//
#ifndef FPM_TOOLS_COMMON_TOOLOUTPUT_H
#define FPM_TOOLS_COMMON_TOOLOUTPUT_H

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fpm::tools {

/// One line: messages from libraries may hold newlines.
inline std::string oneLine(std::string message) {
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\r', ' ');
  return message;
}

/// Prints `tool: error: message` and returns `status`, for `return`.
inline int reportError(std::string_view tool, const std::string &message,
                       int status) {
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(tool.size()),
               tool.data(), oneLine(message).c_str());
  return status;
}

inline void reportWarnings(std::string_view tool,
                           const std::vector<std::string> &warnings) {
  for (const std::string &warning : warnings)
    std::fprintf(stderr, "%.*s: warning: %s\n", static_cast<int>(tool.size()),
                 tool.data(), oneLine(warning).c_str());
}

/// Writes `output` to stdout and flushes it; false when that failed (a
/// closed pipe, a full disk).
inline bool writeOutput(std::string_view output) {
  return std::fwrite(output.data(), 1, output.size(), stdout) ==
             output.size() &&
         std::fflush(stdout) == 0;
}

} // namespace fpm::tools

#endif // FPM_TOOLS_COMMON_TOOLOUTPUT_H
