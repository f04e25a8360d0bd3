//===- ClauseSema.h - The clauses' expressions, checked by Sema -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The rewriter copies each clause expression (a section's bounds, the grain,
// a kernel's argument) into the rewritten file, where the compiler reads it
// at the loop. ClauseSema has Clang read it there first, at rewrite time:
// Clang's own Parser and Sema parse its tokens in the scope of the loop, so
// that an undeclared name, a struct where an integer is needed, or Sema's
// warnings (a division by zero) are Clang's diagnostics at the clause's
// tokens, rather than errors in the rewritten file, or a program that aborts
// at run time (a grain below 1).
//
// How, and why so (the alternatives tried on paper):
//
// - A Parser after the translation unit is parsed, over the same
//   Preprocessor and Sema. ParseAST's Parser is gone by then (two at once
//   would register the same pragma handlers); the new one starts on a token
//   stream of the clause's tokens, each expression ended by an eof that the
//   parser never consumes (as Clang's late-parsed default arguments are), so
//   nothing past them is ever lexed: the main file's lexer is gone.
// - The scope of the loop is rebuilt as Clang's own late parsing of template
//   bodies rebuilds it (Parser::ParseLateTemplatedFuncDef): the lexical
//   contexts of the function with their template parameters, then the
//   function, then one scope per enclosing block holding what it declares
//   before the loop (variables, types, enumerators, using declarations), the
//   loop variable in the innermost for a section's bounds (the rewritten
//   file evaluates them at sample iterations). The declarations are put on
//   the scope chains without being added to any DeclContext, and taken off
//   again before each scope is left (so that Sema's unused-declaration
//   warnings are not given twice).
// - The expressions are parsed and discarded: nothing is added to the AST
//   the later stages read. Macros were expanded at the pragma
//   (expandClauseMacros), as the body's are.
// - Injecting the expressions as tokens from the pragma handler, in an
//   `if (0) ... else` before the `for`, would have had Clang check them
//   during the parse, but it changes the AST every later stage walks (the
//   loop's parent), cannot see the loop variable a section uses, needs care
//   at file scope and before a statement that is no `for`, and an `if (0)`
//   or `sizeof` silences exactly the warnings wanted (Sema drops runtime
//   diagnostics in unreachable or unevaluated code).
//
// Expressions are potentially evaluated, as they are in the rewritten file
// (a division by zero is a warning), except in a lambda or a block, where
// fpm keeps no capture state: there they are unevaluated, and those warnings
// are not given. A dependent expression in a template is left to the
// compiler, which checks it at instantiation.
//
// A section's first dimension (the one the runtime copies: the others are
// covered by whole elements of it) must be affine in the loop variable v:
// a polynomial of degree 1 or 0 in v whose coefficients do not depend on v.
// Every other name keeps its value while the sections are evaluated (before
// the loop, at three sample iterations), so any expression without v is
// such a coefficient (`len[0]`, `f(n)`); what is refused is v under a
// memory read (`idx[i]`), a call, a product of two terms with v, or any
// other operator (`/`, `?:`, a narrowing cast). In a template's dependent
// bound, only what every instantiation has is refused (a read, a call, a
// product); a cast or an operator of a dependent type passes. The runtime
// checks a section at three iterations only: exact for an affine one, blind
// between the samples for any other (a permutation that fixes them).
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_CLAUSESEMA_H
#define FPM_LIB_CLAUSESEMA_H

#include "Analysis/IntPoly.h"
#include "Record/PragmaParser.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>

namespace clang {
class Expr;
class ForStmt;
class Parser;
class Sema;
class VarDecl;
} // namespace clang

namespace fpm {

/// A dimension past the first of a section, as ClauseSema read it against
/// the loop variable.
struct DimShape {
  std::optional<IntPoly> Lower, Length;
  bool LowerMoves = false, LengthVaries = false;
  /// Both bounds are affine in the loop variable.
  bool Affine = true;
  /// The array's extent in this dimension, where its type says.
  std::optional<int64_t> Extent;
};

/// How the runtime gets a section of several dimensions whose first does
/// not move and a later one does (a column `A[0:m][j:1]`, a plane
/// `u[0:5][i:1][0:J][0:K]`): in the array's scalar elements, an iteration
/// touching `rows` runs a pitch apart (fpm_arg). Dimensions past RunDim
/// are whole: a run is RunDim's length times their elements. Rows are
/// RowDim's length times the whole dimensions between it and RowEnd;
/// dimensions [RowEnd, RunDim) and those before RowDim have length 1
/// (`lhs[0:5][i:1][j:1][k:1]`: five rows of one element); without RowDim,
/// one row. The pitch is the elements of one index of dimension
/// RowEnd - 1.
struct RunLayout {
  unsigned RunDim = 0;
  std::optional<unsigned> RowDim;
  unsigned RowEnd = 0;
};

/// A section's first dimension, `[Lower:Length]`, as ClauseSema read it
/// against the loop variable, and the later ones.
struct SectionShape {
  /// Whether it was read: not where a bound is dependent (in a template).
  bool Known = false;
  /// The lower bound moves with the loop variable; the length changes with
  /// it (each affine in it).
  bool LowerMoves = false, LengthVaries = false;
  /// Each as an integer polynomial over variables, where IntPoly can say.
  std::optional<IntPoly> Lower, Length;
  /// The section's array is declared as one (not a pointer; in a template,
  /// not of a dependent type): `sizeof` gives its extent.
  bool IsArray = false;
  /// The variable the array's name finds at the loop, where it is one: a
  /// helper that names a global is told from it.
  const clang::VarDecl *Decl = nullptr;
  /// A section of several dimensions over an array whose elements are
  /// pointers (`double **rows`, `in(rows[i:1][0:m])`): the runtime follows
  /// them (fpm_arg::row_length) where Offload finds the shape it can take.
  bool RowsArePointers = false;
  /// With RowsArePointers, the levels of pointers and arrays in a row's
  /// type: 1 for `double *` (rows of scalars or structs), 2 for the rows of
  /// `double ***u`.
  unsigned RowLevels = 0;
  /// Dimensions 2, 3, ... of the section.
  llvm::SmallVector<DimShape, 2> Inner;
  /// Where the first dimension does not move and a later one does, the
  /// runs the runtime gets when they have that shape.
  std::optional<RunLayout> Runs;
  /// Over an array of row pointers, the shape the runtime takes
  /// (fpm_arg::row_length): one level of pointers to rows, each row whole
  /// from its element 0 (`rows[i:1][0:m]`), its length the same for every
  /// iteration.
  bool takesWholeRows() const {
    if (!RowsArePointers || !Known || RowLevels != 1 || Inner.size() != 1)
      return false;
    const DimShape &Row = Inner.front();
    return Row.Affine && Row.Lower && Row.Lower->getConstant() == 0 &&
           Row.Length && !Row.LengthVaries;
  }
  /// A later dimension's lower bound moves with the loop variable.
  bool innerMoves() const {
    return llvm::any_of(Inner, [](const DimShape &D) { return D.LowerMoves; });
  }
};

/// The shapes of a pragma's sections, in the order of the loop's fpm_args:
/// in's, then out's, then inout's.
using SectionShapes = llvm::SmallVector<SectionShape, 4>;

/// Checks the clause expressions of one translation unit's partition
/// pragmas, after the unit is parsed (it parses with a Parser of its own).
class ClauseSema {
public:
  explicit ClauseSema(clang::Sema &S);
  ~ClauseSema();

  /// Checks the expressions of Pragma, the pragma of For: each parses as an
  /// expression in the loop's scope; a section's bounds and the grain have
  /// an integer type (or convert to one, in C++), a grain that is a
  /// constant is at least 1 and fits int64_t; the first dimension of a
  /// section is affine in the loop variable; an argument of kernel(...)
  /// passed by value is no pointer, array or function. Errors (and Sema's
  /// warnings) are reported at the tokens; returns false after an error.
  /// Shapes gets each section's shape (Known false where it was not read).
  bool check(const PartitionPragma &Pragma, const clang::ForStmt &For,
             SectionShapes &Shapes);

private:
  /// Reads X, the first dimension's bound E of Section, against the loop
  /// variable Var into Shape; an error at X where it is not affine in Var.
  void readBound(const ClauseExpr &E, const clang::Expr &X,
                 const clang::VarDecl &Var, const DataSection &Section,
                 SectionShape &Shape);
  /// Reads X, bound E of a later dimension of a section, into Shape.Inner.
  void readInnerBound(const ClauseExpr &E, const clang::Expr &X,
                      const clang::VarDecl &Var, SectionShape &Shape);

  clang::Sema &S;
  std::unique_ptr<clang::Parser> P;
};

} // namespace fpm

#endif // FPM_LIB_CLAUSESEMA_H
