//===- LoopChecker.h - Is a partitioned loop a DOALL loop? ------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Checks the `for` statement a `#pragma fpm partition` stands before against
// the spec (docs/pragma.md, "The loop", "Variables", "What the rewriter
// refuses"): canonical form, no way out of the body, no write to the loop
// variable, no write to a shared scalar (a reduction's shape suggests
// reduction(...)), no array written at the same elements by every
// iteration unless private, nor updated at elements chosen by memory the
// iteration reads (an array reduction), in the body or in the functions it
// calls, no name in the private and data clauses that means nothing at the
// loop; warns about likely loop-carried dependences,
// private variables read before written in an iteration or read after the
// loop, and, where it can
// prove them, about what an OpenCL device would miss of the data clauses: a
// subscript outside its array's section, and an array declared only `out`
// that the body reads before it writes it. What it learns (the loop's parts
// and how each variable is shared) is what the rewriter needs; with the same
// machinery it proves, for the kernel it generates, that an iteration writes
// every element of an `out` section (checkOutCover).
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_LOOPCHECKER_H
#define FPM_LIB_LOOPCHECKER_H

#include "fpm/fpm.h"

#include "Analysis/ClauseSema.h"
#include "Analysis/IntPoly.h"
#include "Analysis/OpenMpRegions.h"
#include "Record/PragmaParser.h"

#include "clang/AST/Type.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace clang {
class ASTContext;
class Expr;
class QualType;
class ForStmt;
class FunctionDecl;
class NamedDecl;
class VarDecl;
} // namespace clang

namespace fpm {

/// The comparison of a canonical loop's test, the loop variable on the left,
/// with fpm.h's values (`enum fpm_compare`).
enum class LoopCompare {
  LT = FPM_LT,
  LE = FPM_LE,
  GT = FPM_GT,
  GE = FPM_GE,
  NE = FPM_NE
};

/// fpm.h's name of the comparison: "FPM_LT".
inline const char *compareEnumerator(LoopCompare Compare) {
  switch (Compare) {
  case LoopCompare::LT:
    return "FPM_LT";
  case LoopCompare::LE:
    return "FPM_LE";
  case LoopCompare::GT:
    return "FPM_GT";
  case LoopCompare::GE:
    return "FPM_GE";
  case LoopCompare::NE:
    return "FPM_NE";
  }
  return "";
}

/// `for (Var = Lower; Var Compare Bound; Var += Step)`.
struct CanonicalLoop {
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Var = nullptr;
  /// `for (int i = ...)` rather than `int i; ... for (i = ...)`.
  bool DeclaredInInit = false;
  const clang::Expr *Lower = nullptr;
  const clang::Expr *Bound = nullptr;
  LoopCompare Compare = LoopCompare::LT;
  /// The type the test compares in (the usual arithmetic conversions of the
  /// variable's type and the bound's: `long` for `unsigned i < n` with a
  /// long n), canonical; null where it depends on a template parameter.
  clang::QualType CompareType;
  /// The step's expression; null for `++` and `--` (a step of 1 or -1).
  const clang::Expr *Step = nullptr;
  /// `--` and `-= c`: the step is minus Step (or -1).
  bool StepNegated = false;
};

/// A variable of the reduction clause, checked: declared outside the loop,
/// a scalar of an arithmetic type (a reference to one in C++), neither
/// const nor volatile; bitwise operators on integer types only.
struct ReductionVar {
  ReductionOp Op = ReductionOp::Add;
  const clang::VarDecl *Var = nullptr;
  /// Its name in the clause.
  clang::SourceLocation Loc;
  /// fpm.h's enum fpm_scalar_type of its type, "FPM_TYPE_DOUBLE"; empty
  /// when the type depends on a template parameter (fpm::scalarType<T>()
  /// finds it in each instantiation).
  std::string ScalarType;
};

/// fpm.h's `enum fpm_scalar_type` enumerator of T ("FPM_TYPE_INT32"), a
/// type without references; nullptr for a type that is not one of them (a
/// pointer, an enum, a struct, `__int128`, `_Float16`, ...).
const char *scalarTypeEnumerator(const clang::ASTContext &Ctx,
                                 clang::QualType T);

/// How the body shares the variables it names that are declared outside the
/// loop.
struct LoopVariables {
  /// Locals and parameters of the enclosing function the body uses and does
  /// not write (read only, or arrays), in order of first use.
  llvm::SmallVector<const clang::VarDecl *, 8> Shared;
  /// Variables each iteration has its own copy of: the private clause's and
  /// the induction variables of nested loops (automatic privatization).
  llvm::SmallVector<const clang::VarDecl *, 4> Private;
  /// Locals and parameters of the enclosing function that the in, out and
  /// inout clauses name, other than the loop variable: a C loop nested in
  /// another partitioned loop evaluates its sections in the outer one's
  /// outlined body, which must declare them.
  llvm::SmallVector<const clang::VarDecl *, 4> ClauseVars;
  /// The reduction clause's variables, in the clause's order (the order of
  /// the partial results the runtime passes): neither Shared nor Private.
  llvm::SmallVector<ReductionVar, 2> Reductions;
  /// C: the types, typedefs and enums the enclosing function declares
  /// before the loop and the body uses (through the types of the variables
  /// it names too), in source order: the outlined body declares them again.
  llvm::SmallVector<const clang::NamedDecl *, 4> LocalTypes;
  /// Shared variables, not arrays, that the body writes into or takes the
  /// address of (a struct's member, an atomic, a scalar passed by
  /// address): the outlined C body reaches them through their address.
  llvm::SmallVector<const clang::VarDecl *, 4> Addressed;
};

/// Checks For, which Pragma stands before, in Fn. Reports every violation as
/// an error and every suspicion as a warning through Ctx's diagnostics (the
/// data clauses' warnings only for a loop without errors), with a note
/// where a variable they name is one of ThreadPrivates (OpenMP gave each
/// thread a copy of it; fpm shares it unless it is private). Returns false
/// if there was an error; fills Loop and Vars otherwise.
/// Shapes: the sections as ClauseSema read them (macros expanded,
/// enumerators folded), where their text alone says too little.
bool checkLoop(clang::ASTContext &Ctx, const PartitionPragma &Pragma,
               const clang::FunctionDecl &Fn, const clang::ForStmt &For,
               CanonicalLoop &Loop, LoopVariables &Vars,
               llvm::ArrayRef<OmpThreadPrivate> ThreadPrivates = {},
               const SectionShapes *Shapes = nullptr);

/// Whether each iteration of a loop writes every element of one section of
/// its out clause.
struct OutCover {
  /// Proven: the plain assignments to the array that run on every
  /// iteration, in the body or in the functions it calls, write, over the
  /// ranges of the `for` loops around them, ranges of elements that
  /// together are all of the iteration's section.
  bool Whole = false;
  /// Otherwise why fpm cannot prove it, for a remark: "the assignment to
  /// 'y[i]' is conditional".
  std::string Why;
};

/// For each section of Pragma's out clause, in order, whether every
/// iteration of For provably writes all of it (a section of one dimension
/// only; one of several is never Whole). For is a loop checkLoop accepted,
/// in Fn, or its copy in Fn, the one instantiation of the function template
/// whose pattern holds that loop; Var is its loop variable. Shapes, as
/// checkLoop's, only where For is the loop ClauseSema read. Reports nothing.
llvm::SmallVector<OutCover, 2>
checkOutCover(clang::ASTContext &Ctx, const PartitionPragma &Pragma,
              const clang::FunctionDecl &Fn, const clang::ForStmt &For,
              const clang::VarDecl &Var, const SectionShapes *Shapes = nullptr);

/// The data clauses fpm works out for a loop whose pragma has none: for each
/// array declared outside the loop that the body indexes, the least and
/// greatest element of each dimension an iteration touches, from subscripts
/// affine in the loop variable and in inner loops' variables whose bounds
/// the loop does not change (DeriveSections.cpp).
struct DerivedSection {
  /// "in", "out" or "inout".
  std::string Clause;
  /// As a user writes it: `a[i*n:n]`, `A[0:100][j:1]`.
  std::string Section;
  /// Each dimension's lower bound and length, which the text, read back at
  /// the pragma, must give.
  llvm::SmallVector<std::pair<IntPoly, IntPoly>, 2> Bounds;
};
struct DerivedClauses {
  /// Read only: in; written: out where every iteration writes all of its
  /// section and reads none of it, else inout (with an in of what it reads
  /// elsewhere). Empty, with Why, where fpm cannot tell.
  llvm::SmallVector<DerivedSection, 4> Clauses;
  /// Why not, at the use that says it (Why empty: derived).
  clang::SourceLocation Loc;
  std::string Why;
  /// `in(a[i*n:n], b[0:n*n]) out(c[i*n:n])`, as the pragma would take them.
  std::string text() const;
  /// The sections in the order of the pragma's: in's, out's, inout's.
  llvm::SmallVector<const DerivedSection *, 4> inOrder() const;
};

/// Derives the data clauses of For, a loop checkLoop accepted with Pragma,
/// which has none; Var is its loop variable. Reports nothing.
DerivedClauses deriveDataClauses(clang::ASTContext &Ctx,
                                 const PartitionPragma &Pragma,
                                 const clang::FunctionDecl &Fn,
                                 const clang::ForStmt &For,
                                 const clang::VarDecl &Var);

} // namespace fpm

#endif // FPM_LIB_LOOPCHECKER_H
