//===- LoopCheck.h - The state of one loop's checks -------------*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Private to LoopChecker.cpp, SharingChecks.cpp, CallWrites.cpp,
// PrivateChecks.cpp, DependenceChecks.cpp, SectionChecks.cpp, WalkReaders.cpp
// and OutCover.cpp: the one walk of a loop's body (LoopCheck) and what it
// records, which the DOALL checks (LoopChecker.cpp, and SharingChecks.cpp,
// CallWrites.cpp, PrivateChecks.cpp and DependenceChecks.cpp for what
// iterations share), the data-section checks
// (SectionChecks.cpp) and the proof that out sections are written whole
// (OutCover.cpp) read, through the readers in WalkReaders.cpp, and the small
// AST helpers they share. Over 600 lines because it is the one interface
// of those files, each of which declares what it adds here, next to the
// record it reads.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_LOOPCHECK_H
#define FPM_LIB_LOOPCHECK_H

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

/// How a subscript uses its element.
enum class UseKind { Other, Read, Write, ReadWrite };

/// One use of a variable in the body, in evaluation order.
struct Access {
  const VarDecl *Var;
  const Expr *At;
  bool Reads;
  bool Writes;
};

class LoopCheck {
public:
  LoopCheck(ASTContext &Ctx, const PartitionPragma &Pragma,
            const FunctionDecl &Fn, const ForStmt &For,
            llvm::ArrayRef<OmpThreadPrivate> ThreadPrivates = {},
            const SectionShapes *Shapes = nullptr)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Diags(Ctx.getDiagnostics()),
        Pragma(Pragma), Fn(Fn), For(For), ThreadPrivates(ThreadPrivates),
        Shapes(Shapes) {}

  bool run(CanonicalLoop &Loop, LoopVariables &Vars);
  llvm::SmallVector<OutCover, 2> coverOut(const VarDecl &LoopVar);

private:
  bool checkHeader(CanonicalLoop &Loop);
  void walk(const Stmt *S);
  void walkTarget(const Expr *E, bool Reads);
  void recordSubscript(const ArraySubscriptExpr *ASE, bool IsWrite,
                       bool AlsoReads = false);
  void access(const Expr *At, const VarDecl *VD, bool Reads, bool Writes);
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
  bool checkGotos();
  bool checkLocalNames();
  bool onlyLoaded(const Stmt *Root, const VarDecl *VD) const;
  bool checkInvariant(const Expr *E, StringRef What);
  bool checkSections(StringRef Clause, ArrayRef<DataSection> Sections);
  bool checkReductions(llvm::SmallVectorImpl<ReductionVar> &Reductions,
                       llvm::SmallPtrSetImpl<const VarDecl *> &Named);
  std::optional<const ValueDecl *> visibleDecl(StringRef Name) const;

  // What iterations share (SharingChecks.cpp): writes to shared scalars,
  // arrays written at the same elements by every iteration, loop-carried
  // dependences between an array's write and its reads.
  bool checkSharedWrites(const llvm::SmallSetVector<const VarDecl *, 4> &Priv);
  bool checkArrayRaces(const llvm::SmallSetVector<const VarDecl *, 4> &Priv);
  void reportDependences();
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
  void reportSharedWrite(const VarDecl *VD, const Expr *At);

  // What a private variable holds (PrivateChecks.cpp): read before it is
  // written in an iteration, read after the loop.
  enum class VarUse { Read, Write, Escape, Ignore };
  VarUse useOf(const DeclRefExpr *DRE,
               llvm::SmallVectorImpl<const FieldDecl *> &Path) const;
  const DeclRefExpr *useInLambda(const LambdaExpr *Lambda,
                                 const DeclRefExpr *Capture) const;
  void checkPrivateReads(const llvm::SmallSetVector<const VarDecl *, 4> &Priv);
  void checkPrivateArrayRead(
      const VarDecl *VD,
      llvm::function_ref<void(const VarDecl *, const Expr *)> Warn);
  void
  checkPrivatesAfterLoop(const llvm::SmallSetVector<const VarDecl *, 4> &Priv);
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
  bool isReadModifyWrite(const Subscript &W) const;
  bool separatesIterations(const Subscript &W, const IterationValues &Values);
  std::optional<IntPoly> iterationLeaf(const VarDecl *VD, const Stmt *At,
                                       InnerLoops *Inner, unsigned Depth);
  std::optional<IntPoly> dependencePoly(const Expr *Index, const Stmt *At);

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
  bool checkCallWrites(const IterationValues &Values,
                       const llvm::SmallSetVector<const VarDecl *, 4> &Priv,
                       llvm::DenseSet<const VarDecl *> &Reported);
  void noteCallWrite(const VarDecl *VD);
  void noteThreadPrivate(const VarDecl *VD);
  /// Whether a function's first use of a parameter writes the elements it
  /// points to (firstUseOfParameter).
  enum class FirstUse { Writes, Reads, Unused, Unknown };
  FirstUse firstUseOfParameter(const FunctionDecl *Def, const VarDecl *P,
                               unsigned Depth, const Expr *&ReadAt);
  const FunctionDecl *followableCallee(const CallExpr *Call,
                                       unsigned Depth) const;

  // The data clauses against the body's subscripts: what an OpenCL device
  // would miss (docs/pragma.md, "Offloading").
  struct ClauseSection {
    StringRef Clause;
    const DataSection *Section;
  };
  void checkDataUses();
  void reportOutsideSection(const VarDecl *Array, const ClauseSection &CS);
  void reportOutReadBeforeWrite(const VarDecl *Array,
                                ArrayRef<ClauseSection> Sections);
  std::optional<IntPoly>
  offsetInSection(const Subscript &S, const IntPoly &Lower, InnerLoops &Inner);
  bool provenOutside(const Subscript &S, const IntPoly &Lower,
                     const IntPoly &Length);
  UseKind useKind(const Subscript &S) const;
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
  bool
  writesAreVisible(const llvm::DenseSet<const VarDecl *> &ClauseArrays) const;
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

public:
  DerivedClauses deriveClauses(const VarDecl &LoopVar);

private:
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
  bool Ok = true;
  /// Walk without reporting (checkOutCover: the loop was checked before).
  bool Quiet = false;

  // The walk's state and findings.
  unsigned LoopDepth = 0, SwitchDepth = 0, LambdaDepth = 0;
  llvm::SmallVector<Access, 32> Accesses;
  llvm::SmallVector<Subscript, 16> Subscripts;
  llvm::SmallSetVector<const VarDecl *, 4> NestedInductionVars;
  /// C: the enclosing function's types, typedefs and enums the body uses
  /// (checkLocalNames), in source order.
  llvm::SmallVector<const NamedDecl *, 4> LocalTypes;
  llvm::SmallVector<const GotoStmt *, 2> Gotos;
  /// The private variables, and the reduction ones, once run() knows them.
  llvm::SmallPtrSet<const VarDecl *, 4> PrivateVars;
  llvm::SmallPtrSet<const VarDecl *, 2> ReductionVars;
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

#endif // FPM_LIB_LOOPCHECK_H
