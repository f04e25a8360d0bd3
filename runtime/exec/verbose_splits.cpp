//===- exec/verbose_splits.cpp - FPM_VERBOSE's lines about splits ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/verbose_splits.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

namespace fpm {
namespace {

struct LoopSplits {
  std::string label;
  std::set<std::string, std::less<>> seen;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, LoopSplits, std::less<>> loops;
  bool summaryAtExit = false;
};

Registry &registry() {
  // Never destroyed: the exit hook reads it.
  static Registry *r = new Registry;
  return *r;
}

std::string summaryLocked(const Registry &r) {
  std::string text;
  for (const auto &[key, loop] : r.loops)
    if (loop.seen.size() > static_cast<std::size_t>(VerboseSplitsPrinted))
      text += "fpm: " + loop.label + ": " + std::to_string(loop.seen.size()) +
              " splits, " + std::to_string(VerboseSplitsPrinted) + " printed\n";
  return text;
}

void printSummary() {
  Registry &r = registry();
  std::string text;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    text = summaryLocked(r);
  }
  std::fputs(text.c_str(), stderr);
}

} // namespace

void printSplit(const std::string &key, const std::string &label,
                const std::string &split, const std::string &line) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  LoopSplits &loop = r.loops[key];
  loop.label = label;
  if (!loop.seen.insert(split).second)
    return;
  const std::size_t n = loop.seen.size();
  if (n <= static_cast<std::size_t>(VerboseSplitsPrinted)) {
    std::fputs(line.c_str(), stderr);
    return;
  }
  if (n == static_cast<std::size_t>(VerboseSplitsPrinted) + 1) {
    std::fprintf(stderr,
                 "fpm: %s: further splits of this loop are not printed; "
                 "their count comes at exit\n",
                 label.c_str());
    if (!r.summaryAtExit) {
      r.summaryAtExit = true;
      std::atexit(printSummary);
    }
  }
}

std::string verboseSplitSummary() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return summaryLocked(r);
}

void resetVerboseSplits() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.loops.clear();
}

} // namespace fpm
