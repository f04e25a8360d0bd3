//===- DataRegions.cpp - #pragma fpm data and update ----------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Emit/DataRegions.h"

#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <string>

using namespace clang;

namespace fpm {
namespace {

/// FPM_DATA_IN, ... for a clause of `data`.
const char *mapOf(llvm::StringRef Clause) {
  if (Clause == "in")
    return "FPM_DATA_IN";
  if (Clause == "out")
    return "FPM_DATA_OUT";
  if (Clause == "create")
    return "FPM_DATA_CREATE";
  return "FPM_DATA_INOUT";
}

/// The array as written, as a C string literal, for messages.
std::string nameLiteral(const DataPragma::Array &A) {
  std::string Literal = "\"";
  for (char C : A.Name) {
    if (C == '"' || C == '\\')
      Literal += '\\';
    Literal += C;
  }
  return Literal + "\"";
}

/// `(void *)&(a)[0]` and its bytes, as the rewritten file computes them.
std::string start(const DataPragma::Array &A) {
  return "(void *)&(" + A.Name + ")[0]";
}
std::string bytes(const DataPragma::Array &A, bool Cxx) {
  return std::string(Cxx ? "(std::size_t)(" : "(size_t)(") + A.Length +
         ") * sizeof((" + A.Name + ")[0])";
}

/// What a C program does when a region's call fails: as a loop's.
std::string orAbort(const std::string &Call) {
  return "if (" + Call +
         " != FPM_OK) { fprintf(stderr, \"%s:%d: fpm: %s\\n\", __FILE__, "
         "__LINE__, fpm_last_error()); abort(); }";
}

/// The pragma's text replaced by `Text` and the newlines it had.
void replacePragma(Rewriter &Rewrite, const DataPragma &Pragma,
                   const std::string &Text) {
  const SourceManager &SM = Rewrite.getSourceMgr();
  CharSourceRange Range =
      CharSourceRange::getCharRange(Pragma.HashLoc, Pragma.EndLoc);
  llvm::StringRef Old = Lexer::getSourceText(Range, SM, Rewrite.getLangOpts());
  Rewrite.ReplaceText(Pragma.HashLoc, Old.size(),
                      Text + std::string(Old.count('\n'), '\n'));
}

} // namespace

bool emitDataRegions(Rewriter &Rewrite,
                     llvm::ArrayRef<PlacedDataPragma> Pragmas,
                     std::vector<LoopRegionEnd> &LoopEnds) {
  const bool Cxx = Rewrite.getLangOpts().CPlusPlus;
  unsigned K = 0;
  for (const PlacedDataPragma &E : Pragmas) {
    const DataPragma &Pragma = *E.Pragma;
    if (!E.Region) { // update
      std::string Calls;
      for (const DataPragma::Array &A : Pragma.Arrays) {
        const bool Host = A.Clause == "host";
        if (Cxx)
          Calls += std::string("::fpm::DataRegion::") +
                   (Host ? "updateHost" : "updateDevice") + "(&(" + A.Name +
                   ")[0], (std::size_t)(" + A.Length + ")); ";
        else
          Calls += orAbort(std::string(Host ? "fpm_update_host("
                                            : "fpm_update_device(") +
                           "&(" + A.Name + ")[0], " + bytes(A, false) + ")") +
                   " ";
      }
      replacePragma(Rewrite, Pragma, "{ " + Calls + "}");
      continue;
    }
    const std::string Name = "fpm_region_" + std::to_string(K++);
    const std::string Count = std::to_string(Pragma.Arrays.size());
    std::string Begin, End;
    if (Cxx) {
      Begin = " ::fpm::DataRegion " + Name + "{";
      for (const DataPragma::Array &A : Pragma.Arrays)
        Begin += std::string(&A == &Pragma.Arrays.front() ? "" : ", ") + "{" +
                 mapOf(A.Clause) + ", " + start(A) + ", " + bytes(A, true) +
                 ", " + nameLiteral(A) + "}";
      Begin += "};";
    } else {
      // The user's block nests in one that opens and closes the region, so
      // that its declarations still come first in a block (C89).
      Begin = " fpm_data " + Name + "[" + Count + "]; ";
      for (size_t I = 0; I < Pragma.Arrays.size(); ++I) {
        const DataPragma::Array &A = Pragma.Arrays[I];
        std::string At = Name + "[" + std::to_string(I) + "].";
        Begin += At + "map = " + mapOf(A.Clause) + "; " + At +
                 "data = " + start(A) + "; " + At +
                 "bytes = " + bytes(A, false) + "; " + At +
                 "name = " + nameLiteral(A) + "; ";
      }
      Begin += orAbort("fpm_data_begin(" + Name + ", " + Count + ")") + " {";
      End = "} " + orAbort("fpm_data_end(" + Name + ", " + Count + ")") + " ";
    }
    if (const auto *Block = dyn_cast<CompoundStmt>(E.Region)) {
      Rewrite.InsertTextAfter(Block->getLBracLoc().getLocWithOffset(1), Begin);
      if (!End.empty())
        Rewrite.InsertTextBefore(Block->getRBracLoc(), End);
      replacePragma(Rewrite, Pragma, "");
      continue;
    }
    // A loop: the block it would have had, around it, opened in the
    // pragma's place.
    replacePragma(Rewrite, Pragma, "{" + Begin);
    LoopEnds.push_back({E.RegionEnd, " " + End + "}"});
  }
  return !Pragmas.empty();
}

void closeLoopRegions(Rewriter &Rewrite,
                      llvm::ArrayRef<LoopRegionEnd> LoopEnds) {
  // Before what else ends there (the end of a region on a block, `...;}`);
  // a region on a loop nested in another's loop ends at the same place, its
  // end first. No partitioned loop's rewrite ends there (the check refuses
  // a region's loop whose body is one without braces).
  for (const LoopRegionEnd &End : LoopEnds)
    Rewrite.InsertTextBefore(End.Loc, End.Text);
}

} // namespace fpm
