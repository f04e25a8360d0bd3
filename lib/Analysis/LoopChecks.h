//===- LoopChecks.h - The checks of a partitioned loop ----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks checkLoop runs over a loop's walk (LoopWalk.h), in the shape
// of clang-tidy's: each check is a class of its own (LoopCheckUnit) that
// reads the walk's record and reports through the diagnostics engine, and
// Checks.def is the one table of them, in the order checkLoop runs them.
// Where each check's run() is:
//
//   canonical-form, loop-exits, gotos, invariant-bounds  FormChecks.cpp
//   local-names                                          LocalNames.cpp
//   private-clause, data-clause-names                    ClauseChecks.cpp
//   reduction-clause                                     ReductionChecks.cpp
//   shared-writes, array-races                           SharingChecks.cpp
//     (array-races' writes in called functions:          CallWrites.cpp)
//   private-reads, private-after-loop                    PrivateChecks.cpp
//   dependences                                          DependenceChecks.cpp
//   data-uses                                            SectionChecks.cpp
//
// Adding a check: docs/contributing.md.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_LOOPCHECKS_H
#define FPM_LIB_LOOPCHECKS_H

#include "Analysis/LoopWalk.h"

#include <memory>

namespace fpm::detail {

/// What one check's run leaves the loop.
enum class CheckResult {
  /// Nothing wrong (warnings, if any, do not count).
  Pass,
  /// At least one error; the checks after it still run.
  Errors,
  /// An error after which no other check can read the walk.
  Stop
};

/// What a check reads and what it leaves for the loop's LoopVariables.
struct CheckContext {
  LoopWalk &Walk;
  /// The loop's header, as the walk read it.
  const CanonicalLoop &Loop;
  /// C: the enclosing function's types, typedefs and enums the body uses,
  /// in source order (local-names).
  llvm::SmallVector<const NamedDecl *, 4> LocalTypes;
};

/// One check of a partitioned loop: reads the walk (Context.Walk) and
/// reports what it finds through the walk's diagnostics engine.
class LoopCheckUnit {
public:
  virtual ~LoopCheckUnit() = default;
  virtual CheckResult run(CheckContext &Context) = 0;
};

#define FPM_LOOP_CHECK(Name, Class, Gate, Description)                         \
  class Class final : public LoopCheckUnit {                                   \
  public:                                                                      \
    CheckResult run(CheckContext &Context) override;                           \
  };
#include "Analysis/Checks.def"

/// When a check of the table runs.
enum class CheckGate {
  Always,
  /// Only on a loop no earlier check found an error in.
  NoErrors
};

/// One line of Checks.def.
struct LoopCheckInfo {
  const char *Name;
  CheckGate Gate;
  const char *Description;
  std::unique_ptr<LoopCheckUnit> (*Create)();
};

/// Checks.def's lines, in run order.
llvm::ArrayRef<LoopCheckInfo> loopChecks();

/// The line of the check called Name; null if there is none.
const LoopCheckInfo *findLoopCheck(llvm::StringRef Name);

/// Runs the checks of the table in order over Walk, whose header
/// canonical-form reads (and whose body is recorded where it is
/// canonical), honouring each one's gate and a Stop; whether none found an
/// error.
bool runLoopChecks(CheckContext &Context);

/// After a diagnostic about VD: where the file declares it `#pragma omp
/// threadprivate`, which a loop converted from OpenMP no longer honours.
void noteThreadPrivate(const LoopWalk &Walk, const VarDecl *VD);

/// After an error about VD, a scalar a callee writes through the body's
/// argument: where it does.
void noteCallWrite(const LoopWalk &Walk, const VarDecl *VD);

/// array-races' part in the functions the body calls (CallWrites.cpp), with
/// the body's Values; Reported: the arrays already reported, to which it
/// adds. Whether it found no error.
bool checkCallWrites(LoopWalk &Walk, const LoopWalk::IterationValues &Values,
                     llvm::DenseSet<const VarDecl *> &Reported);

} // namespace fpm::detail

#endif // FPM_LIB_LOOPCHECKS_H
