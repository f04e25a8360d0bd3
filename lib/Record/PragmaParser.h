//===- PragmaParser.h - Parsing '#pragma fpm partition' ---------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Clang keeps no unknown pragma in the AST, so a PragmaHandler for the `fpm`
// namespace records each `#pragma fpm partition` while the file is parsed:
// where it is and its clauses, parsed and checked as the spec says
// (docs/pragma.md). Malformed clauses are reported through the
// preprocessor's DiagnosticsEngine as they are seen.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_PRAGMAPARSER_H
#define FPM_LIB_PRAGMAPARSER_H

#include "fpm/fpm.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Token.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace clang {
class Preprocessor;
} // namespace clang

namespace fpm {

/// Reports a diagnostic of our own through Clang's engine, so that it prints
/// as `file:line:col: error: ...` with the source line and a caret.
template <unsigned N>
clang::DiagnosticBuilder
report(clang::DiagnosticsEngine &Diags, clang::SourceLocation Loc,
       clang::DiagnosticsEngine::Level Level, const char (&Format)[N]) {
  return Diags.Report(Loc, Diags.getCustomDiagID(Level, Format));
}

/// One `array[lower:length]` of an in, out or inout clause, as written (line
/// splices removed). A section of several dimensions, `A[i:1][0:m]`, keeps
/// its first; the rewriter describes it by whole elements of A (rows).
struct DataSection {
  std::string Array;
  /// The whole section, `A[i*n:n]`.
  std::string Text;
  /// The lower bound and the length of the first dimension.
  std::string Lower, Length;
  unsigned Dims = 1;
  /// Every dimension's bounds as written, the first's too.
  struct Bounds {
    std::string Lower, Length;
  };
  llvm::SmallVector<Bounds, 2> DimBounds;
  /// The array's name is a macro: it names no variable the checks can find.
  bool ArrayIsMacro = false;
  /// The identifiers of the section (not after `.` or `->`), the array's
  /// first: the names it may use.
  llvm::SmallVector<std::string, 2> Names;
  clang::SourceLocation Loc;
};

/// One name of a private clause.
struct PrivateName {
  std::string Name;
  clang::SourceLocation Loc;
};

/// The operators of `reduction(op: list)`, with fpm.h's values (`enum
/// fpm_reduction_op`): Op(Enumerator, fpm.h's name, the clause's spelling).
// clang-format off
#define FPM_REDUCTION_OPS(Op)                                                  \
  Op(Add, FPM_REDUCE_ADD, "+")          Op(Mul, FPM_REDUCE_MUL, "*")           \
  Op(Min, FPM_REDUCE_MIN, "min")        Op(Max, FPM_REDUCE_MAX, "max")         \
  Op(BitAnd, FPM_REDUCE_BIT_AND, "&")   Op(BitOr, FPM_REDUCE_BIT_OR, "|")      \
  Op(BitXor, FPM_REDUCE_BIT_XOR, "^")   Op(And, FPM_REDUCE_AND, "&&")          \
  Op(Or, FPM_REDUCE_OR, "||")
// clang-format on

enum class ReductionOp {
#define FPM_ENUMERATOR(Name, Value, Spelling) Name = Value,
  FPM_REDUCTION_OPS(FPM_ENUMERATOR)
#undef FPM_ENUMERATOR
};

/// The operator as the clause writes it: "+", "min", "&&".
inline const char *reductionOpSpelling(ReductionOp Op) {
  switch (Op) {
#define FPM_SPELLING(Name, Value, Spelling)                                    \
  case ReductionOp::Name:                                                      \
    return Spelling;
    FPM_REDUCTION_OPS(FPM_SPELLING)
#undef FPM_SPELLING
  }
  return "";
}

/// fpm.h's name of the operator: "FPM_REDUCE_ADD".
inline const char *reductionOpEnumerator(ReductionOp Op) {
  switch (Op) {
#define FPM_NAME(Name, Value, Spelling)                                        \
  case ReductionOp::Name:                                                      \
    return #Value;
    FPM_REDUCTION_OPS(FPM_NAME)
#undef FPM_NAME
  }
  return "";
}

/// One variable of a reduction clause, with the clause's operator.
struct ReductionName {
  ReductionOp Op = ReductionOp::Add;
  std::string Name;
  /// The name, and the operator (for messages about it).
  clang::SourceLocation Loc, OpLoc;
};

/// One argument of a kernel clause: an expression as written (line splices
/// removed), passed to the kernel's parameter of the same position.
struct KernelArgument {
  std::string Text;
  clang::SourceLocation Loc;
};

/// One expression of a clause, for ClauseSema's check of it at the loop: its
/// tokens with macros expanded as they are at the pragma (the body's
/// macros: one #undef'd after the loop still counts), each keeping its
/// location in the clause.
struct ClauseExpr {
  enum class Kind {
    /// `grain(g)`: evaluated before the loop; an integer, at least 1.
    Grain,
    /// A lower bound or a length of a section of in, out or inout, of any
    /// dimension: evaluated with the loop variable in scope; an integer.
    Bound,
    /// An argument of `kernel(...)`; ClauseSema checks the ones evaluated
    /// before the loop (kernelArgIsScalar): a value the kernel takes.
    KernelArg
  };
  Kind K = Kind::Grain;
  /// What it is, for messages: "the grain", "the length of the section
  /// 'a[i:n]'".
  std::string What;
  /// The text as written (line splices removed), for KernelArg.
  std::string Text;
  /// Bound: its section's clause ("in", "out", "inout") and index there,
  /// the dimension (0: the first) and whether it is the length (else the
  /// lower bound).
  std::string Clause;
  unsigned Section = 0, Dim = 0;
  bool IsLength = false;
  llvm::SmallVector<clang::Token, 8> Tokens;
  /// Its first token as written, for messages about it as a whole.
  clang::SourceLocation Loc;
};

/// A `#pragma fpm partition` and its clauses. Optional clauses left out of
/// the pragma are empty strings.
struct PartitionPragma {
  /// The `#` of the directive, and the end of its line.
  clang::SourceLocation HashLoc;
  clang::SourceLocation EndLoc;
  /// The `partition` token, for messages about the pragma as a whole.
  clang::SourceLocation KeywordLoc;
  /// The directive as written (for the marker comment left in its place).
  std::string Text;

  std::string Name;
  /// The schedule in the runtime's form: "gss, 80", "css(4)", "wdah".
  std::string Schedule;
  /// "cpu", "gpu" or "all".
  std::string Devices;
  /// The grain expression as written, and where.
  std::string Grain;
  clang::SourceLocation GrainLoc;
  llvm::SmallVector<DataSection, 2> In, Out, InOut;
  llvm::SmallVector<PrivateName, 2> Private;
  /// `reduction(op: list)`: each variable with its operator, as written.
  llvm::SmallVector<ReductionName, 2> Reductions;

  /// `kernel("file.cl", name[, arg, ...])`: the file as written (escape
  /// sequences decoded), the kernel function's name and its arguments in
  /// order; empty without the clause.
  std::string KernelFile, KernelName;
  llvm::SmallVector<KernelArgument, 4> KernelArgs;
  /// The file's string literal and the name, for messages about them.
  clang::SourceLocation KernelFileLoc, KernelNameLoc;
  /// The kernel file found relative to the directory of the file the
  /// pragma is in (as `#include "..."` finds it first), as its real path,
  /// and its text, read when the pragma is seen (loadKernel).
  std::string KernelPath, KernelSource;

  /// Every expression of the clauses, in the order written, for ClauseSema.
  std::vector<ClauseExpr> Exprs;
};

/// Whether a kernel(...) argument is evaluated before the loop and passed
/// by value: any but the name of a data clause's array (passed as its
/// section) or of a reduction variable (its partial results).
bool kernelArgIsScalar(const PartitionPragma &Pragma, llvm::StringRef Text);

/// Parses the clauses after `partition` (Tokens, up to but not including the
/// end of the directive at EndLoc) into Pragma. Reports every problem as an
/// error and returns false if there was one. Pragma.Exprs gets each
/// expression's tokens as written (expandClauseMacros expands them).
///
/// The clauses' expressions themselves (a grain of 0, an undeclared name, a
/// struct where an integer is needed) are ClauseSema's to check, at the
/// loop.
bool parsePartitionClauses(clang::Preprocessor &PP,
                           llvm::ArrayRef<clang::Token> Tokens,
                           clang::SourceLocation EndLoc,
                           PartitionPragma &Pragma);

/// Expands the macros in each of Pragma.Exprs as the preprocessor is now,
/// at the pragma: the rewritten file evaluates them where the loop is.
void expandClauseMacros(clang::Preprocessor &PP, PartitionPragma &Pragma);

/// Finds and reads the file of Pragma's kernel clause, if it has one:
/// KernelFile relative to the directory of the file the pragma is in, or as
/// is if absolute; sets KernelPath and KernelSource. A file that cannot be
/// read, or whose text declares no `__kernel void <KernelName>(` (or
/// `kernel void`), is an error at the clause; returns false then.
bool loadKernel(clang::Preprocessor &PP, PartitionPragma &Pragma);

/// A `#pragma fpm data` (a data region over the block after it: its
/// arrays keep their device copies from one loop call to the next) or
/// `#pragma fpm update` (a statement: the host's or the devices' copies made
/// current), with its arrays.
struct DataPragma {
  enum class Kind { Data, Update };
  Kind K = Kind::Data;
  clang::SourceLocation HashLoc, EndLoc, KeywordLoc;
  /// One array of a clause: the clause (in, out, inout, create; host,
  /// device), the array and its elements (the first dimension's length),
  /// as written, macros unexpanded: the rewritten file evaluates them.
  struct Array {
    std::string Clause, Name, Length;
    clang::SourceLocation Loc;
  };
  llvm::SmallVector<Array, 4> Arrays;
};

/// Parses the clauses after `data` or `update` (Tokens, up to EndLoc) into
/// Pragma.Arrays: `data` takes in, out, inout and create, `update` host and
/// device, each a list of sections `a[0:n]` (more dimensions may follow,
/// whole). Reports every problem as an error and returns false if there was
/// one.
bool parseDataClauses(clang::Preprocessor &PP,
                      llvm::ArrayRef<clang::Token> Tokens,
                      clang::SourceLocation EndLoc, DataPragma &Pragma);

/// Handles every `#pragma fpm ...`: records the valid `partition` pragmas of
/// the main file in Pragmas, in source order, their kernel files read
/// (loadKernel), and its `data` and `update` pragmas in DataPragmas.
class FpmPragmaHandler : public clang::PragmaHandler {
public:
  explicit FpmPragmaHandler(std::vector<PartitionPragma> &Pragmas,
                            std::vector<DataPragma> *DataPragmas = nullptr)
      : clang::PragmaHandler("fpm"), Pragmas(Pragmas),
        DataPragmas(DataPragmas) {}

  void HandlePragma(clang::Preprocessor &PP, clang::PragmaIntroducer Introducer,
                    clang::Token &FirstToken) override;

private:
  std::vector<PartitionPragma> &Pragmas;
  std::vector<DataPragma> *DataPragmas;
};

} // namespace fpm

#endif // FPM_LIB_PRAGMAPARSER_H
