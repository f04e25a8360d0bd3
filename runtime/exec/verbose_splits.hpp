//===- exec/verbose_splits.hpp - FPM_VERBOSE's lines about splits -*- C++ -*-=//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FPM_VERBOSE prints a line when a loop is split in a way it was not
// before (another trip count, schedule or kind of split). A loop whose trip
// count changes from call to call (a triangular solver) would print one per
// call: each loop prints its first few, then one line saying that its
// further splits are not printed, and at exit how many it had.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace fpm {

/// How many distinct splits of one loop FPM_VERBOSE prints.
inline constexpr int VerboseSplitsPrinted = 5;

/// Prints `line` (one line, '\n' included) to stderr the first time `split`
/// is seen for loop `key`, if the loop has printed fewer than
/// VerboseSplitsPrinted; at the first split past them, a line saying that
/// the further splits of the loop (`label`, as loopLabel() writes it) are
/// not printed; at exit, for each such loop, how many splits it had
/// (verboseSplitSummary()). Thread-safe.
void printSplit(const std::string &key, const std::string &label,
                const std::string &split, const std::string &line);

/// The lines printed at exit: "fpm: loop 'x': 200 splits, 5 printed", one
/// per loop that had more splits than it printed.
std::string verboseSplitSummary();

/// For tests: forgets every loop's splits.
void resetVerboseSplits();

} // namespace fpm
