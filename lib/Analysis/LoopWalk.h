//===- LoopWalk.h - The one walk of a partitioned loop ----------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The one walk of a partitioned loop (LoopWalk): what it records of the
// loop's header, its body and its clauses, and the readers of that record,
// which report nothing. The checks (LoopChecks.h, a class each, in the
// order of Checks.def) read it and report; so do the proof that an
// iteration writes an out section whole (coverOut) and the data clauses
// fpm works out (deriveClauses). Where each part is defined:
//
//   the walk, the header, the clauses' names  LoopWalk.cpp
//   each statement's parent, inner loops' ranges, invariants, subscripts
//     and sections as IntPolys, which calls are followed  WalkReaders.cpp
//   a shared scalar's reduction shape                     SharedScalars.cpp
//   what varies between iterations                       IterationValues.cpp
//   what the functions the body calls write               CallWrites.cpp
//   how a use treats a private variable, whether the code after the loop
//     reads it                                            PrivateChecks.cpp
//   coverOut                                              OutCover.cpp
//   deriveClauses                                         DeriveSections.cpp
//
// And the small AST helpers these files share. Over 600 lines because it
// is the one interface of those files and of the checks, each part
// declared next to the record it reads.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_LOOPWALK_H
#define FPM_LIB_LOOPWALK_H

#include "Analysis/IntPoly.h"
#include "Analysis/LoopChecker.h"
#include "Analysis/StmtWalk.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <deque>
#include <optional>
#include <vector>

namespace fpm::detail {

using namespace clang;

using Level = DiagnosticsEngine::Level;

/// How deep the checks follow calls into the functions a loop calls, and
/// how many they look at: beyond them they prove nothing.
constexpr unsigned MaxCallDepth = 6;
constexpr size_t MaxFrames = 64;

inline const VarDecl *referencedVar(const Expr *E) {
  if (!E)
    return nullptr;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

/// A binary operator, built in or (in templates) an overloaded operator call.
struct BinaryView {
  BinaryOperatorKind Op;
  const Expr *LHS, *RHS;
};

inline std::optional<BinaryView> asBinary(const Expr *E) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *BO = dyn_cast<BinaryOperator>(E))
    return BinaryView{BO->getOpcode(), BO->getLHS(), BO->getRHS()};
  const auto *Call = dyn_cast<CXXOperatorCallExpr>(E);
  if (!Call || Call->getNumArgs() != 2)
    return std::nullopt;
  std::optional<BinaryOperatorKind> Op;
  switch (Call->getOperator()) {
  case OO_Less:
    Op = BO_LT;
    break;
  case OO_LessEqual:
    Op = BO_LE;
    break;
  case OO_Greater:
    Op = BO_GT;
    break;
  case OO_GreaterEqual:
    Op = BO_GE;
    break;
  case OO_ExclaimEqual:
    Op = BO_NE;
    break;
  case OO_Plus:
    Op = BO_Add;
    break;
  case OO_Minus:
    Op = BO_Sub;
    break;
  case OO_Equal:
    Op = BO_Assign;
    break;
  case OO_PlusEqual:
    Op = BO_AddAssign;
    break;
  case OO_MinusEqual:
    Op = BO_SubAssign;
    break;
  case OO_StarEqual:
    Op = BO_MulAssign;
    break;
  case OO_SlashEqual:
    Op = BO_DivAssign;
    break;
  case OO_PercentEqual:
    Op = BO_RemAssign;
    break;
  case OO_AmpEqual:
    Op = BO_AndAssign;
    break;
  case OO_PipeEqual:
    Op = BO_OrAssign;
    break;
  case OO_CaretEqual:
    Op = BO_XorAssign;
    break;
  case OO_LessLessEqual:
    Op = BO_ShlAssign;
    break;
  case OO_GreaterGreaterEqual:
    Op = BO_ShrAssign;
    break;
  default:
    return std::nullopt;
  }
  return BinaryView{*Op, Call->getArg(0), Call->getArg(1)};
}

/// ++ and --, built in or overloaded.
inline std::optional<std::pair<UnaryOperatorKind, const Expr *>>
asIncDec(const Expr *E) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    if (UO->isIncrementDecrementOp())
      return std::make_pair(UO->getOpcode(), UO->getSubExpr());
  if (const auto *Call = dyn_cast<CXXOperatorCallExpr>(E)) {
    bool Post = Call->getNumArgs() == 2;
    if (Call->getOperator() == OO_PlusPlus)
      return std::make_pair(Post ? UO_PostInc : UO_PreInc, Call->getArg(0));
    if (Call->getOperator() == OO_MinusMinus)
      return std::make_pair(Post ? UO_PostDec : UO_PreDec, Call->getArg(0));
  }
  return std::nullopt;
}

inline bool isIntegerVar(const VarDecl *VD) {
  QualType T = VD->getType();
  return T->isDependentType() ||
         (T->isIntegerType() && !T->isBooleanType() && !T.isConstQualified());
}

/// An index `i`, `i + c`, `c + i` or `i - c` of the loop variable: c.
inline std::optional<int64_t> loopOffset(const ASTContext &Ctx, const Expr *E,
                                         const VarDecl *Var) {
  if (referencedVar(E) == Var)
    return 0;
  auto Bin = asBinary(E);
  if (!Bin || (Bin->Op != BO_Add && Bin->Op != BO_Sub))
    return std::nullopt;
  const Expr *C = nullptr;
  if (referencedVar(Bin->LHS) == Var)
    C = Bin->RHS;
  else if (Bin->Op == BO_Add && referencedVar(Bin->RHS) == Var)
    C = Bin->LHS;
  if (!C || C->isValueDependent())
    return std::nullopt;
  Expr::EvalResult R;
  if (!C->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  int64_t V = R.Val.getInt().getSExtValue();
  return Bin->Op == BO_Sub ? -V : V;
}

/// The body of a loop statement; null for anything else.
inline const Stmt *loopBody(const Stmt *S) {
  if (const auto *F = dyn_cast<ForStmt>(S))
    return F->getBody();
  if (const auto *W = dyn_cast<WhileStmt>(S))
    return W->getBody();
  if (const auto *D = dyn_cast<DoStmt>(S))
    return D->getBody();
  if (const auto *R = dyn_cast<CXXForRangeStmt>(S))
    return R->getBody();
  return nullptr;
}

/// The variable a `for` statement's init declares or assigns, and the value
/// it starts from.
inline std::pair<const VarDecl *, const Expr *> initVar(const ForStmt *L) {
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(L->getInit())) {
    if (DS->isSingleDecl())
      if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl());
          VD && VD->getInit())
        return {VD, VD->getInit()};
  } else if (auto Bin = asBinary(dyn_cast_or_null<Expr>(L->getInit()));
             Bin && Bin->Op == BO_Assign) {
    if (const VarDecl *VD = referencedVar(Bin->LHS))
      return {VD, Bin->RHS};
  }
  return {nullptr, nullptr};
}

/// An integer variable whose value the checks can follow.
inline bool isPlainInteger(const VarDecl *VD) {
  QualType T = VD->getType();
  return !T->isDependentType() && !T->isReferenceType() && T->isIntegerType() &&
         !T->isBooleanType() && !T.isVolatileQualified();
}

/// A call that can write no memory the loop's arrays may share: a builtin
/// or a function of the standard library (not a member) taking numbers only
/// (sqrt, fabs, std::min).
inline bool isNumericCall(const CallExpr *Call) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD || FD->isVariadic() || isa<CXXMethodDecl>(FD) ||
      (!FD->getBuiltinID() && !FD->isInStdNamespace()))
    return false;
  return llvm::all_of(FD->parameters(), [](const ParmVarDecl *P) {
    QualType T = P->getType();
    if (const auto *Ref = T->getAs<ReferenceType>()) {
      T = Ref->getPointeeType();
      if (!T.isConstQualified())
        return false;
    }
    return T->isArithmeticType();
  });
}

/// One use of an array: `Root[I0][I1]...`.
struct Subscript {
  const VarDecl *Root;
  llvm::SmallVector<const Expr *, 2> Indices;
  const Expr *At;
  bool IsWrite;
  /// A compound assignment, `++` or `--`: the element is read, then written.
  bool AlsoReads = false;
  /// In a lambda of the body, which may run at any time, or never.
  bool InLambda = false;
  /// The name of Root in it.
  const DeclRefExpr *RootRef = nullptr;
};

/// One use of a variable in the body, in evaluation order.
struct Access {
  const VarDecl *Var;
  const Expr *At;
  bool Reads;
  bool Writes;
};

/// Why a loop's header is not in canonical form (readHeader), for the
/// canonical-form check to say.
struct HeaderFault {
  enum Kind {
    /// The init declares or assigns no integer variable.
    Init,
    /// The test does not compare the loop variable.
    Test,
    /// The increment is none of the forms allowed.
    Increment,
    /// A step of zero.
    ZeroStep,
    /// A step away from the test's bound (NoteLoc: the test).
    Direction
  } What;
  SourceLocation Loc, NoteLoc;
  /// Direction: the test wants the variable to increase.
  bool WantsUp = false;
};

/// A name of the private clause, as the walk finds it at the loop.
struct PrivateUse {
  const PrivateName *Name;
  enum Kind {
    /// A variable declared outside the loop that the body uses (Var).
    Private,
    /// Visible at the loop, not used in the body.
    Unused,
    /// No variable visible at the loop.
    Unknown,
    /// The loop variable.
    LoopVariable
  } What;
  const VarDecl *Var = nullptr;
};

/// A name of the reduction clause, as the walk finds it at the loop.
struct ReductionUse {
  const ReductionName *Name;
  enum Kind {
    /// A variable fpm reduces into.
    Valid,
    /// No variable visible at the loop.
    Unknown,
    /// Not a variable (a member of a class).
    NotVariable,
    LoopVariable,
    /// Not a scalar of an arithmetic type.
    NotArithmetic,
    ConstOrVolatile,
    Register,
    /// A bitwise operator on a floating type.
    BitwiseOnFloat
  } What;
  /// The variable, where it is one.
  const VarDecl *Var = nullptr;
  /// Valid, of a type that does not depend on a template parameter, and
  /// the body never names it.
  bool Unused = false;
};

/// The one walk of a partitioned loop: what it records of the loop's
/// header, body and clauses, and the readers of that record. The walk and
/// its readers report nothing: the checks (LoopChecks.h) do, each reading
/// this record; checkOutCover and deriveDataClauses read it too.
class LoopWalk {
public:
  LoopWalk(ASTContext &Ctx, const PartitionPragma &Pragma,
           const FunctionDecl &Fn, const ForStmt &For,
           llvm::ArrayRef<OmpThreadPrivate> ThreadPrivates = {},
           const SectionShapes *Shapes = nullptr)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Diags(Ctx.getDiagnostics()),
        Pragma(Pragma), Fn(Fn), For(For), ThreadPrivates(ThreadPrivates),
        Shapes(Shapes) {}

  /// Reads For's header into Loop, and the loop variable, its first value
  /// and direction into the record; false, with Fault, where it is not in
  /// canonical form (then nothing else is recorded).
  bool readHeader(CanonicalLoop &Loop);
  /// Walks the body once (Var set, by readHeader or by the caller), and
  /// records what it uses and writes, its exits, what the functions it
  /// calls write, and what the private and reduction clauses name.
  void recordBody();
  /// For each section of the out clause, in order, whether every
  /// iteration writes all of it (OutCover.cpp).
  llvm::SmallVector<OutCover, 2> coverOut();

  void walk(const Stmt *S);
  void walkTarget(const Expr *E, bool Reads);
  void recordSubscript(const ArraySubscriptExpr *ASE, bool IsWrite,
                       bool AlsoReads = false);
  void access(const Expr *At, const VarDecl *VD, bool Reads, bool Writes);
  void findPrivates();
  void findReductions();
  bool isInside(SourceLocation Loc, SourceRange Range) const;
  bool isOutsideLoop(const VarDecl *VD) const {
    return !isInside(VD->getLocation(), For.getSourceRange());
  }
  std::string text(const Expr *E) const {
    return Lexer::getSourceText(
               CharSourceRange::getTokenRange(E->getSourceRange()), SM,
               Ctx.getLangOpts())
        .str();
  }
  bool onlyLoaded(const Stmt *Root, const VarDecl *VD) const;
  std::optional<const ValueDecl *> visibleDecl(StringRef Name) const;

  // What the body does with a scalar the iterations share (SharedScalars.cpp):
  // a reduction's shape, a reduction that leaves the serial loop's value.
  std::optional<StringRef> reductionShape(const Expr *Target,
                                          const VarDecl *VD) const;
  /// A reduction that leaves in a variable the body writes but never reads
  /// what the serial loop leaves (finalValueReduction).
  struct FinalReduction {
    StringRef Op;
    /// What the body assigns: "1", "'i'".
    std::string Assigned;
    /// What must hold before the loop, "'found' is 0 or 1"; empty where
    /// proven.
    std::string Condition;
  };
  std::optional<FinalReduction> finalValueReduction(const VarDecl *VD) const;
  std::optional<int64_t> valueBeforeLoop(const VarDecl *VD) const;
  bool readsCarriedValue(const VarDecl *Except) const;

  // What a private variable holds (PrivateChecks.cpp, beside the checks
  // that read them): how a use treats it, whether the code after the loop
  // reads it.
  enum class VarUse { Read, Write, Escape, Ignore };
  VarUse useOf(const DeclRefExpr *DRE,
               llvm::SmallVectorImpl<const FieldDecl *> &Path) const;
  const DeclRefExpr *useInLambda(const LambdaExpr *Lambda,
                                 const DeclRefExpr *Capture) const;
  /// Whether the code after the loop may read VD before it writes it.
  struct ReadAfter {
    enum { No, Maybe, Yes } Kind = Maybe;
    /// The read, for Yes.
    const DeclRefExpr *At = nullptr;
  };
  ReadAfter readAfterLoop(const VarDecl *VD) const;
  /// The inner loops whose induction variables an index uses.
  using InnerLoops = llvm::SmallMapVector<const VarDecl *, const ForStmt *, 2>;
  /// What may differ between iterations at a point of the body, or of a
  /// function it calls (findIterationValues; followShared for a callee).
  struct IterationValues {
    /// The loop variable, every variable computed from it in the iteration
    /// (by assignment, or under a condition that uses it) and every
    /// variable fpm cannot follow (its address taken, an array or a struct
    /// of the iteration's own, a shared one written in the body); in a
    /// callee, the parameters whose arguments vary too.
    llvm::DenseSet<const VarDecl *> Varying;
    /// The variables computed (by assignment or initialization) from memory
    /// the iteration reads: an element of an array, `*p`, `p->m`. Not the
    /// variable of a `for` loop set in its header (`for (j = row[i]; ...)`),
    /// which sweeps a range rather than picks an element.
    llvm::DenseSet<const VarDecl *> Loaded;
    /// The conditions each subscript, `*p`, `p->m` and call runs under: if,
    /// ?:, && and ||, and the tests of the loops around it.
    llvm::DenseMap<const Expr *, llvm::SmallVector<const Expr *, 4>> Conditions;
    /// A break, continue, goto or return, and the conditions it runs
    /// under: where they vary, what follows it runs in some iterations only.
    struct Jump {
      const Stmt *S;
      llvm::SmallVector<const Expr *, 4> Conditions;
      /// The loop it continues or leaves (null: the partitioned loop, or
      /// the callee a return leaves), or for a goto the whole body or callee.
      const Stmt *Loop;
    };
    llvm::SmallVector<Jump, 4> Jumps;
    /// Each assignment to a variable: what its value is computed from, and
    /// the conditions it runs under.
    struct Def {
      const VarDecl *Target;
      /// The value assigned; null for ++, --, and in a `for` header.
      const Stmt *Value;
      llvm::SmallVector<const Stmt *, 4> Conditions;
    };
    std::vector<Def> Defs;

    /// Whether E may differ between iterations: it names a varying
    /// variable (but Except), or calls a function that is not a numeric one
    /// (which may read or keep any state).
    bool varies(const Stmt *E, const VarDecl *Except = nullptr) const {
      if (!E)
        return false;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
        if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
            VD && VD != Except && Varying.count(VD))
          return true;
      if (const auto *Call = dyn_cast<CallExpr>(E);
          Call && !isNumericCall(Call))
        return true;
      return llvm::any_of(E->children(),
                          [&](const Stmt *C) { return varies(C, Except); });
    }
    bool anyVaries(llvm::ArrayRef<const Expr *> Es) const {
      return llvm::any_of(Es, [&](const Expr *E) { return varies(E); });
    }
    bool loads(const Stmt *E) const;
    /// Varying and Loaded to a fixed point over Defs.
    void settle();
  };
  void
  findIterationValues(IterationValues &Values,
                      const llvm::SmallSetVector<const VarDecl *, 4> &Priv);
  void walkValues(IterationValues &Values, const Stmt *Root, const Stmt *Whole);
  bool sameInEachIteration(const IterationValues &Values, const Expr *At,
                           llvm::ArrayRef<const Expr *> Indices) const;
  // (IterationValues.cpp, with the rest of IterationValues.)
  std::optional<IntPoly> iterationLeaf(const VarDecl *VD, const Stmt *At,
                                       InnerLoops *Inner, unsigned Depth);

  // What the functions the body calls write of the variables declared
  // outside the loop (CallWrites.cpp).
  /// A call followed into its callee's body: the callee's pointer and
  /// reference parameters bound to the variables their arguments point
  /// into or name.
  struct SharedFrame {
    /// The frame of the function that makes the call; null for the body.
    const SharedFrame *Caller = nullptr;
    unsigned Depth = 1;
    /// The call, and each call that leads to it, runs under the same
    /// conditions in every iteration (sameInEachIteration).
    bool Each = true;
    struct Binding {
      const VarDecl *Var;
      /// The body's argument that names Var; null where a callee names it
      /// itself (a global).
      const Expr *Arg;
      /// The parameter reaches Var's own storage (`&t`, `x`, `&x[k]`), not
      /// what Var, a pointer, points to.
      bool Storage;
    };
    /// The pointer parameters the callee never assigns, and its non-const
    /// references.
    llvm::DenseMap<const VarDecl *, Binding> Bound;
    /// What varies in the callee; nothing where followed without the
    /// body's values.
    IterationValues Values;
  };
  /// A write of a variable declared outside the loop in a function the body
  /// calls (or a use of a global the function names itself).
  struct CallWrite {
    const VarDecl *Var;
    /// The body's call that leads there.
    const CallExpr *Call;
    /// The body's argument that names Var; null where a callee names it
    /// itself (a global).
    const Expr *Arg;
    /// The write (the use) in a callee; null for a call fpm cannot follow,
    /// which receives a pointer to Var that it may write through.
    const Expr *At;
    /// The callee that writes (the one fpm does not follow).
    const FunctionDecl *Callee;
    /// Var's own storage, not what Var, a pointer, points to.
    bool Storage;
    /// A use of a global that may not write it.
    bool OnlyReads = false;
    /// For an array: the write runs under the same conditions, at the same
    /// elements, in every iteration (with the body's values).
    bool Same = false;
  };
  void collectCallWrites(const IterationValues *BodyValues,
                         std::deque<SharedFrame> &Frames,
                         llvm::SmallVectorImpl<CallWrite> &Writes);
  void followShared(const CallExpr *Call, const SharedFrame *Caller,
                    const IterationValues *Values, const CallExpr *BodyCall,
                    std::deque<SharedFrame> &Frames,
                    llvm::SmallVectorImpl<CallWrite> &Writes);
  std::optional<SharedFrame::Binding>
  boundTarget(const Expr *Arg, const SharedFrame *Caller, bool Reference) const;
  void markCallWrites();
  /// Whether a function's first use of a parameter writes the elements it
  /// points to (firstUseOfParameter).
  enum class FirstUse { Writes, Reads, Unused, Unknown };
  FirstUse firstUseOfParameter(const FunctionDecl *Def, const VarDecl *P,
                               unsigned Depth, const Expr *&ReadAt);
  const FunctionDecl *followableCallee(const CallExpr *Call,
                                       unsigned Depth) const;

  // The readers of the record the checks and the proofs share
  // (WalkReaders.cpp).
  bool readsValue(const Expr *E) const;
  std::optional<IntPoly> sectionPoly(const DataSection &Section, bool Length);
  std::optional<IntPoly> bodyLeaf(const VarDecl *VD, const Stmt *Context,
                                  InnerLoops *Inner, unsigned Depth);
  std::optional<int64_t> constantValue(const VarDecl *VD) const;
  bool isInvariant(const VarDecl *VD);
  bool onlyRead(const Stmt *Root, const VarDecl *VD) const;
  bool onlyReadOrAssigned(const Stmt *Root, const VarDecl *VD,
                          const Stmt *Skip = nullptr) const;
  const Stmt *parentOf(const Stmt *S) const;
  void addParents(const Stmt *Root) const;
  const ForStmt *inductionLoop(const VarDecl *VD, const Stmt *Context) const;
  llvm::SmallVector<const Stmt *, 4> enclosingLoops(const Stmt *S) const;
  bool evaluatedEachTime(const Stmt *Body, const Stmt *E) const;
  bool runsThrough(const Stmt *Body) const;
  /// The values of a `for` loop's variable: First to First + Count - 1.
  struct UnitRange {
    IntPoly First, Count;
  };
  struct CallFrame;
  std::optional<UnitRange> unitRange(const ForStmt *L, const VarDecl *V,
                                     const CallFrame *F = nullptr);

  // The data clauses of a loop without any (DeriveSections.cpp).
  /// How an iteration uses one element of an array.
  enum class ElementUse { Read, Write, Update, Unknown };
  ElementUse elementUse(const Subscript &S) const;
  ElementUse passedBlock(const Expr *E) const;
  /// The least and greatest index of dimension D a subscript reaches over
  /// the inner loops around it.
  std::optional<std::pair<IntPoly, IntPoly>> indexBounds(const Subscript &S,
                                                         size_t D);
  DerivedClauses deriveClauses();

  // Whether an iteration writes every element of an out section
  // (OutCover.cpp).
  /// A `for` loop around a write (in the body or in a function it calls),
  /// and the values of its variable.
  struct InnerRange {
    const ForStmt *Loop;
    const VarDecl *Var;
    UnitRange Range;
  };
  /// A polynomial over the loop's own terms (its variable, invariants) and
  /// the variables of the inner loops in Inner.
  struct LoopPoly {
    IntPoly P;
    InnerLoops Inner;
  };
  /// A call the iteration makes, followed into the callee's body for its
  /// writes to one out array: the callee's parameters as the call binds
  /// them, in the loop's terms.
  struct CallFrame {
    /// The definition the call runs.
    const FunctionDecl *Callee = nullptr;
    /// The frame of the function that makes the call; null for the body.
    const CallFrame *Caller = nullptr;
    /// Calls from the body to here.
    unsigned Depth = 1;
    /// Why the call may not run on every iteration; empty if it does.
    std::string NotEach;
    /// The `for` loops around the call, at every level, innermost first.
    llvm::SmallVector<InnerRange, 2> Ranges;
    /// The integer parameters the callee only reads, and their arguments.
    llvm::DenseMap<const VarDecl *, LoopPoly> Ints;
    /// The pointer parameters the callee only reads whose argument points
    /// into the array: its element there.
    llvm::DenseMap<const VarDecl *, LoopPoly> Pointers;
  };
  /// A plain assignment `p[e] = ...` to an element of the array, in the
  /// body (Frame null) or in a function it calls.
  struct WriteSite {
    const ArraySubscriptExpr *At;
    const CallFrame *Frame;
    /// The element p + e, from the array's element 0; nullopt if unknown.
    std::optional<LoopPoly> Element;
  };
  /// The elements of a section one write site writes on every iteration:
  /// [Start, Start + Length), counted from the section's lower bound, all
  /// of them whenever Length > 0.
  struct Piece {
    IntPoly Start, Length;
    /// `'y[i*n]'`, `'p[j]' in 'row'`: the assignment, for a remark.
    std::string Where;
  };
  OutCover coverSection(const DataSection &Section);
  void collectWrites(const Stmt *Root, const CallFrame *F, const VarDecl *Array,
                     std::deque<CallFrame> &Frames,
                     llvm::SmallVectorImpl<WriteSite> &Sites);
  void followCall(const CallExpr *Call, const CallFrame *F,
                  const VarDecl *Array, std::deque<CallFrame> &Frames,
                  llvm::SmallVectorImpl<WriteSite> &Sites);
  bool mayRecurse(const FunctionDecl *Def) const;
  std::optional<LoopPoly> pointerInto(const Expr *E, const CallFrame *F,
                                      const VarDecl *Array,
                                      const Stmt *Context);
  std::optional<LoopPoly> framePoly(const Expr *E, const CallFrame *F,
                                    const Stmt *Context);
  std::optional<IntPoly> frameLeaf(const VarDecl *VD, const Stmt *Context,
                                   const CallFrame *F, InnerLoops *Inner,
                                   unsigned Depth);
  bool runsToEnd(const FunctionDecl *Def) const;
  std::optional<std::string>
  whyNotEachRun(const Stmt *S, const CallFrame *F, const std::string &What,
                llvm::SmallVectorImpl<InnerRange> &Ranges);
  std::optional<Piece> pieceOf(const WriteSite &S, const std::string &Where,
                               ArrayRef<InnerRange> Ranges,
                               const IntPoly &Lower, std::string &Why);
  static std::optional<LoopPoly> sumOf(LoopPoly A, const LoopPoly &B,
                                       bool Negate = false);
  static bool chains(ArrayRef<Piece> Pieces, const IntPoly &From,
                     const IntPoly &Length, llvm::SmallVectorImpl<bool> &Used,
                     unsigned &Budget);

  ASTContext &Ctx;
  SourceManager &SM;
  DiagnosticsEngine &Diags;
  const PartitionPragma &Pragma;
  const FunctionDecl &Fn;
  const ForStmt &For;
  const VarDecl *Var = nullptr;
  /// The loop variable's first value, and whether the loop counts up (known
  /// from the test, or from a step known at compile time).
  const Expr *Lower = nullptr;
  std::optional<bool> Increasing;
  /// Why the header is not in canonical form (readHeader).
  std::optional<HeaderFault> Fault;

  // The walk's state and findings.
  unsigned LoopDepth = 0, SwitchDepth = 0, LambdaDepth = 0;
  llvm::SmallVector<Access, 32> Accesses;
  llvm::SmallVector<Subscript, 16> Subscripts;
  llvm::SmallSetVector<const VarDecl *, 4> NestedInductionVars;
  /// What leaves the loop from the body, outside lambdas, in the order of
  /// the walk: a `break` of the loop itself, a `return`, a computed `goto`.
  llvm::SmallVector<const Stmt *, 2> Exits;
  llvm::SmallVector<const GotoStmt *, 2> Gotos;
  /// Each name of the private and the reduction clause, as found at the
  /// loop, in the clauses' order.
  llvm::SmallVector<PrivateUse, 4> PrivateUses;
  llvm::SmallVector<ReductionUse, 2> ReductionUses;
  /// The variables each iteration has its own copy of: the private
  /// clause's and the induction variables of nested loops, less the valid
  /// reduction variables.
  llvm::SmallSetVector<const VarDecl *, 4> Private;
  /// The reduction clause's valid variables, in its order.
  llvm::SmallVector<ReductionVar, 2> Reductions;
  /// Every variable the reduction clause names, valid or not (the body may
  /// write them: an error about the clause is enough).
  llvm::SmallPtrSet<const VarDecl *, 2> Reduced;
  /// What the functions the body calls write (markCallWrites), without
  /// the body's values.
  llvm::SmallVector<CallWrite, 2> CallWrites;
  /// The variables the file declares `#pragma omp threadprivate`.
  llvm::ArrayRef<OmpThreadPrivate> ThreadPrivates;
  /// The sections as ClauseSema read them, in in, out, inout order; null
  /// where For is not the loop it read (a template's instantiation).
  const SectionShapes *Shapes;
  /// isInvariant's answers.
  llvm::DenseMap<const VarDecl *, bool> Invariant;
  /// parentOf's map: the function's body, built on first use, and the
  /// bodies of the functions coverOut follows (ParentRoots).
  mutable llvm::DenseMap<const Stmt *, const Stmt *> Parents;
  mutable llvm::SmallPtrSet<const Stmt *, 4> ParentRoots;
};

} // namespace fpm::detail

#endif // FPM_LIB_LOOPWALK_H
