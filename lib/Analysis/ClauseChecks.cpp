//===- ClauseChecks.cpp - The names of the private and data clauses -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks (LoopChecks.h) of the names the private, in, out and inout
// clauses give: private-clause (each a variable the loop uses, not the
// loop variable) and data-clause-names (each an array or a pointer visible
// at the loop; the sections' bounds are ClauseSema's to check).
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm::detail {

/// The private clause names variables declared outside the loop that the
/// body uses (LoopWalk::findPrivates): an error for a name of nothing and
/// for the loop variable, a warning for a variable the body does not use.
CheckResult PrivateClauseCheck::run(CheckContext &Context) {
  const LoopWalk &W = Context.Walk;
  bool ClauseOk = true;
  for (const PrivateUse &Use : W.PrivateUses) {
    const PrivateName &Name = *Use.Name;
    switch (Use.What) {
    case PrivateUse::Private:
      break;
    case PrivateUse::Unknown:
      report(W.Diags, Name.Loc, Level::Error,
             "unknown variable '%0' in 'private(...)': it names no variable "
             "visible at the loop")
          << Name.Name;
      ClauseOk = false;
      break;
    case PrivateUse::Unused:
      report(W.Diags, Name.Loc, Level::Warning,
             "private variable '%0' is not used in the loop")
          << Name.Name;
      break;
    case PrivateUse::LoopVariable:
      report(W.Diags, Name.Loc, Level::Error,
             "the loop variable '%0' cannot be private")
          << Name.Name;
      ClauseOk = false;
      break;
    }
  }
  return ClauseOk ? CheckResult::Pass : CheckResult::Errors;
}

/// The in, out and inout clauses name arrays or pointers the loop can see
/// (their bounds are ClauseSema's to check, with the compiler's Sema).
static bool checkSections(const LoopWalk &W, StringRef Clause,
                          ArrayRef<DataSection> Sections) {
  bool SectionsOk = true;
  for (const DataSection &Section : Sections) {
    if (Section.ArrayIsMacro)
      continue;
    std::optional<const ValueDecl *> D = W.visibleDecl(Section.Array);
    if (!D) {
      report(W.Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' names no variable visible at the loop")
          << Section.Array << Clause;
      SectionsOk = false;
      continue;
    }
    if (!*D)
      continue;
    QualType T = (*D)->getType().getNonReferenceType();
    if (T->isPointerType() || T->isArrayType() || T->isDependentType())
      continue;
    if (T->isRecordType())
      report(W.Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' is not an array or a pointer: its type is %2; "
             "name a pointer to its elements instead")
          << Section.Array << Clause << T;
    else
      report(W.Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' is not an array or a pointer: its type is %2")
          << Section.Array << Clause << T;
    report(W.Diags, (*D)->getLocation(), Level::Note, "'%0' is declared here")
        << Section.Array;
    SectionsOk = false;
  }
  return SectionsOk;
}

CheckResult DataClauseNamesCheck::run(CheckContext &Context) {
  const LoopWalk &W = Context.Walk;
  bool InOk = checkSections(W, "in", W.Pragma.In);
  bool OutOk = checkSections(W, "out", W.Pragma.Out);
  bool InOutOk = checkSections(W, "inout", W.Pragma.InOut);
  return InOk && OutOk && InOutOk ? CheckResult::Pass : CheckResult::Errors;
}

} // namespace fpm::detail
