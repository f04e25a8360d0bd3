//===- LoopChecker.cpp - Is a partitioned loop a DOALL loop? --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "LoopChecker.h"
#include "IntPoly.h"

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

#include <optional>

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

const VarDecl *referencedVar(const Expr *E) {
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

std::optional<BinaryView> asBinary(const Expr *E) {
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
std::optional<std::pair<UnaryOperatorKind, const Expr *>>
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

bool isIntegerVar(const VarDecl *VD) {
  QualType T = VD->getType();
  return T->isDependentType() ||
         (T->isIntegerType() && !T->isBooleanType() && !T.isConstQualified());
}

/// An index `i`, `i + c`, `c + i` or `i - c` of the loop variable: c.
std::optional<int64_t> loopOffset(const ASTContext &Ctx, const Expr *E,
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
const Stmt *loopBody(const Stmt *S) {
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
std::pair<const VarDecl *, const Expr *> initVar(const ForStmt *L) {
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
bool isPlainInteger(const VarDecl *VD) {
  QualType T = VD->getType();
  return !T->isDependentType() && !T->isReferenceType() && T->isIntegerType() &&
         !T->isBooleanType() && !T.isVolatileQualified();
}

/// A call that can write no memory the loop's arrays may share: a builtin
/// or a function of the standard library (not a member) taking numbers only
/// (sqrt, fabs, std::min).
bool isNumericCall(const CallExpr *Call) {
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
            const FunctionDecl &Fn, const ForStmt &For)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Diags(Ctx.getDiagnostics()),
        Pragma(Pragma), Fn(Fn), For(For) {}

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
  void reportDependences();
  bool checkGotos();
  bool checkInvariant(const Expr *E, StringRef What);
  bool checkSections(StringRef Clause, ArrayRef<DataSection> Sections);
  std::optional<const ValueDecl *> visibleDecl(StringRef Name) const;

  // The data clauses against the body's subscripts: what an OpenCL device
  // would miss (spec/pragma.md, "Offloading").
  struct ClauseSection {
    StringRef Clause;
    const DataSection *Section;
  };
  /// The inner loops whose induction variables an index uses.
  using InnerLoops = llvm::SmallMapVector<const VarDecl *, const ForStmt *, 2>;
  void checkDataUses();
  void reportOutsideSection(const VarDecl *Array, const ClauseSection &CS);
  void reportOutReadBeforeWrite(const VarDecl *Array,
                                ArrayRef<ClauseSection> Sections);
  bool provenOutside(const Subscript &S, const IntPoly &Lower,
                     const IntPoly &Length);
  UseKind useKind(const Subscript &S) const;
  bool readsValue(const Expr *E) const;
  std::optional<IntPoly> sectionPoly(StringRef Text);
  std::optional<IntPoly> bodyLeaf(const VarDecl *VD, const Stmt *Context,
                                  InnerLoops *Inner, unsigned Depth);
  std::optional<int64_t> constantValue(const VarDecl *VD) const;
  bool isInvariant(const VarDecl *VD);
  bool onlyRead(const Stmt *Root, const VarDecl *VD) const;
  const Stmt *parentOf(const Stmt *S) const;
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
  std::optional<UnitRange> unitRange(const ForStmt *L, const VarDecl *V);

  // Whether an iteration writes every element of an out section.
  /// A `for` loop of the body around a write, and the values of its
  /// variable.
  struct InnerRange {
    const ForStmt *Loop;
    const VarDecl *Var;
    UnitRange Range;
  };
  OutCover coverSection(const DataSection &Section);
  std::optional<std::string>
  whyNotEachIteration(const Subscript &S,
                      llvm::SmallVectorImpl<InnerRange> &Ranges);
  std::optional<std::string> whyNotCovering(const Subscript &S,
                                            ArrayRef<InnerRange> Ranges,
                                            const IntPoly &Lower,
                                            const IntPoly &Length);

  ASTContext &Ctx;
  SourceManager &SM;
  DiagnosticsEngine &Diags;
  const PartitionPragma &Pragma;
  const FunctionDecl &Fn;
  const ForStmt &For;
  const VarDecl *Var = nullptr;
  bool Ok = true;
  /// Walk without reporting (checkOutCover: the loop was checked before).
  bool Quiet = false;

  // The walk's state and findings.
  unsigned LoopDepth = 0, SwitchDepth = 0, LambdaDepth = 0;
  llvm::SmallVector<Access, 32> Accesses;
  llvm::SmallVector<Subscript, 16> Subscripts;
  llvm::SmallSetVector<const VarDecl *, 4> NestedInductionVars;
  llvm::SmallVector<const GotoStmt *, 2> Gotos;
  /// isInvariant's answers.
  llvm::DenseMap<const VarDecl *, bool> Invariant;
  /// parentOf's map, built on first use.
  mutable llvm::DenseMap<const Stmt *, const Stmt *> Parents;
};

bool LoopCheck::isInside(SourceLocation Loc, SourceRange Range) const {
  Loc = SM.getExpansionLoc(Loc);
  SourceLocation B = SM.getExpansionLoc(Range.getBegin());
  SourceLocation E = SM.getExpansionRange(Range.getEnd()).getEnd();
  if (SM.getFileID(Loc) != SM.getFileID(B))
    return false;
  return !SM.isBeforeInTranslationUnit(Loc, B) &&
         !SM.isBeforeInTranslationUnit(E, Loc);
}

bool LoopCheck::checkHeader(CanonicalLoop &Loop) {
  Loop.For = &For;
  // init: `T v = lower` or `v = lower`.
  const Stmt *Init = For.getInit();
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(Init)) {
    if (DS->isSingleDecl())
      if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl()))
        if (VD->getInit() && isIntegerVar(VD)) {
          Var = VD;
          Loop.DeclaredInInit = true;
          Loop.Lower = VD->getInit();
        }
  } else if (const auto *E = dyn_cast_or_null<Expr>(Init)) {
    if (auto Bin = asBinary(E); Bin && Bin->Op == BO_Assign)
      if (const VarDecl *VD = referencedVar(Bin->LHS); VD && isIntegerVar(VD)) {
        Var = VD;
        Loop.Lower = Bin->RHS;
      }
  }
  if (!Var) {
    report(Diags, Init ? Init->getBeginLoc() : For.getLParenLoc(), Level::Error,
           "loop not in canonical form: its init must declare or assign one "
           "integer loop variable");
    return false;
  }
  Loop.Var = Var;

  // test: `v < bound` (or the other comparisons, either way round).
  const Expr *Cond = For.getCond();
  auto Bin = asBinary(Cond);
  std::optional<LoopCompare> Compare;
  if (Bin) {
    bool Left = referencedVar(Bin->LHS) == Var;
    bool Right = !Left && referencedVar(Bin->RHS) == Var;
    switch (Bin->Op) {
    case BO_LT:
      Compare = Left ? LoopCompare::LT : LoopCompare::GT;
      break;
    case BO_LE:
      Compare = Left ? LoopCompare::LE : LoopCompare::GE;
      break;
    case BO_GT:
      Compare = Left ? LoopCompare::GT : LoopCompare::LT;
      break;
    case BO_GE:
      Compare = Left ? LoopCompare::GE : LoopCompare::LE;
      break;
    case BO_NE:
      Compare = LoopCompare::NE;
      break;
    default:
      break;
    }
    if (!Left && !Right)
      Compare.reset();
    else
      Loop.Bound = Left ? Bin->RHS : Bin->LHS;
  }
  if (!Compare) {
    report(Diags, Cond ? Cond->getBeginLoc() : For.getLParenLoc(), Level::Error,
           "loop not in canonical form: its test must compare the loop "
           "variable '%0' with '<', '<=', '>', '>=' or '!='")
        << Var->getName();
    return false;
  }
  Loop.Compare = *Compare;

  // incr: `v++`, `++v`, `v--`, `--v`, `v += c`, `v -= c`, `v = v + c`.
  const Expr *Inc = For.getInc();
  bool IncOk = false;
  if (auto IncDec = asIncDec(Inc);
      IncDec && referencedVar(IncDec->second) == Var) {
    IncOk = true;
    Loop.StepNegated =
        IncDec->first == UO_PreDec || IncDec->first == UO_PostDec;
  } else if (auto Step = asBinary(Inc);
             Step && referencedVar(Step->LHS) == Var) {
    if (Step->Op == BO_AddAssign || Step->Op == BO_SubAssign) {
      IncOk = true;
      Loop.Step = Step->RHS;
      Loop.StepNegated = Step->Op == BO_SubAssign;
    } else if (Step->Op == BO_Assign) {
      if (auto Sum = asBinary(Step->RHS);
          Sum && Sum->Op == BO_Add && referencedVar(Sum->LHS) == Var) {
        IncOk = true;
        Loop.Step = Sum->RHS;
      }
    }
  }
  if (!IncOk) {
    report(Diags, Inc ? Inc->getBeginLoc() : For.getRParenLoc(), Level::Error,
           "loop not in canonical form: its increment must be '++', '--', "
           "'+= c', '-= c' or '%0 = %0 + c'")
        << Var->getName();
    return false;
  }
  if (Loop.Step && !Loop.Step->isValueDependent()) {
    Expr::EvalResult R;
    if (Loop.Step->EvaluateAsInt(R, Ctx) && R.Val.getInt().isZero()) {
      report(Diags, Loop.Step->getBeginLoc(), Level::Error,
             "loop not in canonical form: its step must not be zero");
      return false;
    }
  }
  return true;
}

void LoopCheck::access(const Expr *At, const VarDecl *VD, bool Reads,
                       bool Writes) {
  Accesses.push_back({VD, At, Reads, Writes});
}

void LoopCheck::recordSubscript(const ArraySubscriptExpr *ASE, bool IsWrite,
                                bool AlsoReads) {
  Subscript Sub{nullptr, {}, ASE, IsWrite};
  Sub.AlsoReads = IsWrite && AlsoReads;
  Sub.InLambda = LambdaDepth > 0;
  const Expr *Base = ASE;
  while (const auto *A =
             dyn_cast<ArraySubscriptExpr>(Base->IgnoreParenImpCasts())) {
    Sub.Indices.insert(Sub.Indices.begin(), A->getIdx());
    Base = A->getBase();
  }
  Sub.Root = referencedVar(Base);
  Sub.RootRef = dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts());
  if (Sub.Root)
    Subscripts.push_back(Sub);
  walk(Base);
  for (const Expr *Index : Sub.Indices)
    walk(Index);
}

void LoopCheck::walkTarget(const Expr *E, bool Reads) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      return access(DRE, VD, Reads, /*Writes=*/true);
    return;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E); ME && !ME->isArrow())
    return walkTarget(ME->getBase(), /*Reads=*/true);
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return recordSubscript(ASE, /*IsWrite=*/true, /*AlsoReads=*/Reads);
  walk(E);
}

void LoopCheck::walk(const Stmt *S) {
  if (!S)
    return;
  if (const auto *E = dyn_cast<Expr>(S)) {
    if (auto Bin = asBinary(E);
        Bin && BinaryOperator::isAssignmentOp(Bin->Op)) {
      walk(Bin->RHS);
      walkTarget(Bin->LHS, /*Reads=*/Bin->Op != BO_Assign);
      return;
    }
    if (auto IncDec = asIncDec(E))
      return walkTarget(IncDec->second, /*Reads=*/true);
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      access(DRE, VD, /*Reads=*/true, /*Writes=*/false);
    return;
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S))
    return recordSubscript(ASE, /*IsWrite=*/false);
  if (const auto *Lambda = dyn_cast<LambdaExpr>(S)) {
    for (const Expr *Capture : Lambda->capture_inits())
      walk(Capture);
    ++LambdaDepth;
    walk(Lambda->getBody());
    --LambdaDepth;
    return;
  }
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D)) {
        // The sizes of a VLA declared in the body are uses too.
        for (QualType T = VD->getType(); const auto *AT = Ctx.getAsArrayType(T);
             T = AT->getElementType())
          if (const auto *VAT = dyn_cast<VariableArrayType>(AT))
            walk(VAT->getSizeExpr());
        walk(VD->getInit());
      }
    return;
  }
  if (LambdaDepth == 0) {
    if (const auto *Break = dyn_cast<BreakStmt>(S)) {
      if (LoopDepth == 0 && SwitchDepth == 0) {
        if (!Quiet)
          report(Diags, Break->getBreakLoc(), Level::Error,
                 "'break' leaves the partitioned loop");
        Ok = false;
      }
      return;
    }
    if (const auto *Return = dyn_cast<ReturnStmt>(S)) {
      if (!Quiet)
        report(Diags, Return->getReturnLoc(), Level::Error,
               "'return' leaves the partitioned loop");
      Ok = false;
      return;
    }
    if (const auto *Goto = dyn_cast<IndirectGotoStmt>(S)) {
      if (!Quiet)
        report(Diags, Goto->getGotoLoc(), Level::Error,
               "'goto' leaves the partitioned loop");
      Ok = false;
      return;
    }
  }
  if (const auto *Goto = dyn_cast<GotoStmt>(S)) {
    if (LambdaDepth == 0)
      Gotos.push_back(Goto);
    return;
  }
  if (const auto *Nested = dyn_cast<ForStmt>(S)) {
    if (auto Bin = asBinary(dyn_cast_or_null<Expr>(Nested->getInit()));
        Bin && Bin->Op == BO_Assign)
      if (const VarDecl *VD = referencedVar(Bin->LHS);
          VD && VD != Var && isOutsideLoop(VD))
        NestedInductionVars.insert(VD);
  }
  bool IsLoop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
  bool IsSwitch = isa<SwitchStmt>(S);
  LoopDepth += IsLoop;
  SwitchDepth += IsSwitch;
  for (const Stmt *Child : S->children())
    walk(Child);
  LoopDepth -= IsLoop;
  SwitchDepth -= IsSwitch;
}

bool LoopCheck::checkGotos() {
  bool GotosOk = true;
  SourceRange Body = For.getBody()->getSourceRange();
  // A goto in the body to a label outside it.
  for (const GotoStmt *Goto : Gotos) {
    const LabelStmt *Target = Goto->getLabel()->getStmt();
    if (!Target || !isInside(Target->getBeginLoc(), Body)) {
      report(Diags, Goto->getGotoLoc(), Level::Error,
             "'goto' leaves the partitioned loop");
      GotosOk = false;
    }
  }
  // A goto outside the body to a label in it.
  llvm::SmallVector<const Stmt *, 64> Work{Fn.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *Goto = dyn_cast<GotoStmt>(S)) {
      const LabelStmt *Target = Goto->getLabel()->getStmt();
      if (Target && isInside(Target->getBeginLoc(), Body) &&
          !isInside(Goto->getGotoLoc(), Body)) {
        report(Diags, Target->getIdentLoc(), Level::Error,
               "label '%0' in the partitioned loop is the target of a 'goto' "
               "outside it")
            << Target->getName();
        report(Diags, Goto->getGotoLoc(), Level::Note, "the 'goto' is here");
        GotosOk = false;
      }
    }
    llvm::append_range(Work, S->children());
  }
  return GotosOk;
}

bool LoopCheck::checkInvariant(const Expr *E, StringRef What) {
  if (!E)
    return true;
  llvm::SmallVector<const Stmt *, 16> Work{E};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (VD == Var) {
        report(Diags, DRE->getLocation(), Level::Error,
               "loop not in canonical form: its %0 depends on the loop "
               "variable '%1'")
            << What << VD->getName();
        return false;
      }
      auto Write = llvm::find_if(
          Accesses, [&](const Access &A) { return A.Var == VD && A.Writes; });
      if (VD && Write != Accesses.end()) {
        report(Diags, DRE->getLocation(), Level::Error,
               "loop not in canonical form: its %0 is not loop-invariant: "
               "'%1' is written in the body")
            << What << VD->getName();
        report(Diags, Write->At->getExprLoc(), Level::Note,
               "'%0' is written here")
            << VD->getName();
        return false;
      }
    }
    llvm::append_range(Work, S->children());
  }
  return true;
}

void LoopCheck::reportDependences() {
  llvm::DenseSet<const Expr *> Warned;
  for (const Subscript &W : Subscripts) {
    if (!W.IsWrite)
      continue;
    for (const Subscript &R : Subscripts) {
      if (R.IsWrite || R.Root != W.Root ||
          R.Indices.size() != W.Indices.size() || Warned.count(R.At))
        continue;
      for (size_t P = 0; P < W.Indices.size(); ++P) {
        auto WO = loopOffset(Ctx, W.Indices[P], Var);
        auto RO = loopOffset(Ctx, R.Indices[P], Var);
        if (WO && RO && *WO == 0 && *RO != 0) {
          report(Diags, R.At->getExprLoc(), Level::Warning,
                 "'%0' is written at '%1' and read at '%2' in the partitioned "
                 "loop: likely a loop-carried dependence")
              << W.Root->getName() << text(W.At) << text(R.At);
          report(Diags, W.At->getExprLoc(), Level::Note, "'%0' is written here")
              << text(W.At);
          Warned.insert(R.At);
          break;
        }
      }
    }
  }
}

/// What Name means at the loop, found as the compiler would: the variable
/// the body uses by that name; else a declaration of an enclosing block
/// before the loop, a parameter, a member or a global. nullptr if it might
/// be a member fpm cannot see (of a base class); nullopt if it names
/// nothing.
std::optional<const ValueDecl *> LoopCheck::visibleDecl(StringRef Name) const {
  auto Use = llvm::find_if(Accesses, [&](const Access &A) {
    return A.Var->getName() == Name && isOutsideLoop(A.Var);
  });
  if (Use != Accesses.end())
    return Use->Var;
  auto Named = [&](const ParmVarDecl *P) { return P->getName() == Name; };
  SourceLocation ForBegin = SM.getExpansionLoc(For.getBeginLoc());
  DynTypedNode Node = DynTypedNode::create(For);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      break;
    Node = Parents[0];
    if (const auto *P = Node.get<Stmt>()) {
      const VarDecl *Found = nullptr;
      for (const Stmt *Child : P->children()) {
        if (!Child)
          continue;
        if (!SM.isBeforeInTranslationUnit(
                SM.getExpansionLoc(Child->getBeginLoc()), ForBegin))
          break;
        if (const auto *DS = dyn_cast<DeclStmt>(Child))
          for (const Decl *D : DS->decls())
            if (const auto *VD = dyn_cast<VarDecl>(D);
                VD && VD->getName() == Name)
              Found = VD;
      }
      if (Found)
        return Found;
      if (const auto *Lambda = dyn_cast<LambdaExpr>(P))
        if (const ParmVarDecl *const *It =
                llvm::find_if(Lambda->getCallOperator()->parameters(), Named);
            It != Lambda->getCallOperator()->param_end())
          return *It;
    } else if (const auto *FD = Node.get<FunctionDecl>()) {
      if (FD == &Fn)
        break;
      if (auto It = llvm::find_if(FD->parameters(), Named);
          It != FD->param_end())
        return *It;
    }
  }
  if (auto It = llvm::find_if(Fn.parameters(), Named); It != Fn.param_end())
    return *It;
  bool InClass = false;
  for (const DeclContext *DC = Fn.getDeclContext(); DC; DC = DC->getParent()) {
    InClass |= isa<RecordDecl>(DC);
    for (const NamedDecl *ND : DC->lookup(&Ctx.Idents.get(Name)))
      if (isa<VarDecl, FieldDecl>(ND))
        return cast<ValueDecl>(ND);
  }
  if (InClass)
    return nullptr;
  return std::nullopt;
}

/// The in, out and inout clauses name arrays or pointers the loop can see.
bool LoopCheck::checkSections(StringRef Clause,
                              ArrayRef<DataSection> Sections) {
  bool SectionsOk = true;
  for (const DataSection &Section : Sections) {
    if (Section.ArrayIsMacro)
      continue;
    std::optional<const ValueDecl *> D = visibleDecl(Section.Array);
    if (!D) {
      report(Diags, Section.Loc, Level::Error,
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
      report(Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' is not an array or a pointer: its type is %2; "
             "name a pointer to its elements instead")
          << Section.Array << Clause << T;
    else
      report(Diags, Section.Loc, Level::Error,
             "'%0' in '%1(...)' is not an array or a pointer: its type is %2")
          << Section.Array << Clause << T;
    report(Diags, (*D)->getLocation(), Level::Note, "'%0' is declared here")
        << Section.Array;
    SectionsOk = false;
  }
  return SectionsOk;
}

//===----------------------------------------------------------------------===//
// The data clauses against the body's subscripts
//===----------------------------------------------------------------------===//
//
// On an OpenCL device only the sections of the in, out and inout clauses are
// copied to and from the device. Two warnings, each only where the AST proves
// it: a subscript outside its array's section, and an array declared only
// `out` whose elements the body reads before it writes any.

/// The statement S is a child of, in the function's body as children()
/// sees it (the tree walk() walks: a declaration's initializer and a VLA's
/// size are children of its DeclStmt, an initializer list is its semantic
/// form); null outside it.
const Stmt *LoopCheck::parentOf(const Stmt *S) const {
  if (Parents.empty() && Fn.getBody()) {
    llvm::SmallVector<const Stmt *, 64> Work{Fn.getBody()};
    while (!Work.empty()) {
      const Stmt *P = Work.pop_back_val();
      for (const Stmt *Child : P->children())
        if (Child && Parents.try_emplace(Child, P).second)
          Work.push_back(Child);
    }
  }
  return Parents.lookup(S);
}

UseKind LoopCheck::useKind(const Subscript &S) const {
  if (S.InLambda || !S.RootRef || S.Indices.empty() ||
      S.At->isInstantiationDependent() || !S.At->getType()->isScalarType())
    return UseKind::Other;
  if (S.IsWrite)
    return S.AlsoReads ? UseKind::ReadWrite : UseKind::Write;
  return readsValue(S.At) ? UseKind::Read : UseKind::Other;
}

/// The value of E, an lvalue, is read where E stands, and nothing else is
/// done with it: an lvalue-to-rvalue conversion, or an argument of a
/// numeric call (std::min binds a reference to const).
bool LoopCheck::readsValue(const Expr *E) const {
  const Stmt *Cur = E;
  const Stmt *P = parentOf(Cur);
  auto IsNoOp = [](const Stmt *S) {
    const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(S);
    return Cast && Cast->getCastKind() == CK_NoOp;
  };
  for (; isa_and_nonnull<ParenExpr>(P) || IsNoOp(P); Cur = P, P = parentOf(P))
    ;
  if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P))
    return Cast->getCastKind() == CK_LValueToRValue;
  if (const auto *Call = dyn_cast_or_null<CallExpr>(P))
    return Cur != Call->getCallee() && isNumericCall(Call);
  return false;
}

/// Every use of VD in Root reads its value.
bool LoopCheck::onlyRead(const Stmt *Root, const VarDecl *VD) const {
  llvm::SmallVector<const Stmt *, 32> Work{Root};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl() == VD && !readsValue(DRE))
      return false;
    llvm::append_range(Work, S->children());
  }
  return true;
}

std::optional<int64_t> LoopCheck::constantValue(const VarDecl *VD) const {
  if (!isPlainInteger(VD) || !VD->getType().isConstQualified())
    return std::nullopt;
  const Expr *Init = VD->getAnyInitializer();
  Expr::EvalResult R;
  if (!Init || Init->isInstantiationDependent() ||
      !Init->EvaluateAsInt(R, Ctx) || !R.Val.getInt().isRepresentableByInt64())
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

/// VD, a local or a parameter declared outside the loop, keeps its value
/// through the loop: the loop only reads it, and nothing may write it behind
/// the function's back (its address is never taken, no reference is bound to
/// it, no lambda assigns it).
bool LoopCheck::isInvariant(const VarDecl *VD) {
  if (auto It = Invariant.find(VD); It != Invariant.end())
    return It->second;
  auto Check = [&] {
    if (VD == Var || !isPlainInteger(VD) ||
        !(isa<ParmVarDecl>(VD) || VD->hasLocalStorage()) ||
        !isOutsideLoop(VD) || !Fn.getBody() || !onlyRead(&For, VD))
      return false;
    llvm::SmallVector<const Stmt *, 64> Work{Fn.getBody()};
    while (!Work.empty()) {
      const Stmt *S = Work.pop_back_val();
      if (!S || S == &For)
        continue;
      llvm::append_range(Work, S->children());
      const auto *DRE = dyn_cast<DeclRefExpr>(S);
      if (!DRE || DRE->getDecl() != VD || readsValue(DRE))
        continue;
      if (DRE->refersToEnclosingVariableOrCapture())
        return false;
      const Stmt *P = parentOf(DRE);
      while (isa_and_nonnull<ParenExpr>(P))
        P = parentOf(P);
      if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
          BO && BO->isAssignmentOp() && BO->getLHS()->IgnoreParens() == DRE)
        continue;
      if (const auto *UO = dyn_cast_or_null<UnaryOperator>(P);
          UO && UO->isIncrementDecrementOp())
        continue;
      return false;
    }
    return true;
  };
  bool Result = Check();
  Invariant[VD] = Result;
  return Result;
}

/// The innermost `for` of the body whose init sets VD and whose body holds
/// Context.
const ForStmt *LoopCheck::inductionLoop(const VarDecl *VD,
                                        const Stmt *Context) const {
  const Stmt *Cur = Context;
  for (const Stmt *P = parentOf(Cur); P && P != &For; Cur = P, P = parentOf(P))
    if (const auto *L = dyn_cast<ForStmt>(P);
        L && L->getBody() == Cur && initVar(L).first == VD)
      return L;
  return nullptr;
}

/// What VD stands for in an index evaluated at Context: the loop variable
/// and the invariant variables themselves, a constant its value, an
/// induction variable of an inner loop holding Context itself (recorded in
/// Inner; none where Inner is null), a local of the body assigned only by
/// its initializer what it was initialized to.
std::optional<IntPoly> LoopCheck::bodyLeaf(const VarDecl *VD,
                                           const Stmt *Context,
                                           InnerLoops *Inner, unsigned Depth) {
  if (VD == Var)
    return IntPoly::variable(VD);
  if (std::optional<int64_t> C = constantValue(VD))
    return IntPoly::constant(*C);
  if (isInvariant(VD))
    return IntPoly::variable(VD);
  if (Inner)
    if (const ForStmt *L = inductionLoop(VD, Context)) {
      Inner->insert({VD, L});
      return IntPoly::variable(VD);
    }
  if (Depth >= 8 || !isPlainInteger(VD) || isa<ParmVarDecl>(VD) ||
      !VD->hasLocalStorage() || !VD->getInit() ||
      !isInside(VD->getLocation(), For.getBody()->getSourceRange()) ||
      !onlyRead(For.getBody(), VD))
    return std::nullopt;
  return intPolyFromExpr(VD->getInit(), Ctx, [&](const VarDecl *W) {
    return bodyLeaf(W, Context, /*Inner=*/nullptr, Depth + 1);
  });
}

/// A bound of a section, `i*n`, as a polynomial: the names are the variables
/// the loop sees by them, each of which must be the loop variable, a constant
/// or invariant; a macro is unknown.
std::optional<IntPoly> LoopCheck::sectionPoly(StringRef Text) {
  return parseIntPoly(Text, [&](StringRef Name) -> std::optional<IntPoly> {
    if (Ctx.Idents.get(Name).hadMacroDefinition())
      return std::nullopt;
    if (Name == Var->getName())
      return IntPoly::variable(Var);
    std::optional<const ValueDecl *> D = visibleDecl(Name);
    const auto *VD = D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
    if (!VD)
      return std::nullopt;
    if (std::optional<int64_t> C = constantValue(VD))
      return IntPoly::constant(*C);
    if (isInvariant(VD))
      return IntPoly::variable(VD);
    return std::nullopt;
  });
}

/// The loops of the body around S (not the partitioned loop), innermost
/// first.
llvm::SmallVector<const Stmt *, 4>
LoopCheck::enclosingLoops(const Stmt *S) const {
  llvm::SmallVector<const Stmt *, 4> Loops;
  for (const Stmt *P = parentOf(S); P && P != &For; P = parentOf(P))
    if (loopBody(P))
      Loops.push_back(P);
  return Loops;
}

/// E runs each time Body runs (to its end): nothing between them is
/// conditional (if, ?:, &&, ||, the body of a loop, a lambda).
bool LoopCheck::evaluatedEachTime(const Stmt *Body, const Stmt *E) const {
  for (const Stmt *Cur = E; Cur != Body;) {
    const Stmt *P = parentOf(Cur);
    if (!P || P == &For)
      return false;
    bool Each = false;
    if (const auto *CO = dyn_cast<ConditionalOperator>(P))
      Each = Cur == CO->getCond();
    else if (const auto *BO = dyn_cast<BinaryOperator>(P))
      Each = !BO->isLogicalOp() || Cur == BO->getLHS();
    else if (isa<AbstractConditionalOperator, ChooseExpr, GenericSelectionExpr,
                 LambdaExpr, BlockExpr, StmtExpr, UnaryExprOrTypeTraitExpr,
                 CXXTypeidExpr, CXXNoexceptExpr, OpaqueValueExpr>(P))
      Each = false;
    else if (isa<Expr, CompoundStmt, DeclStmt, AttributedStmt>(P))
      Each = true;
    else if (const auto *If = dyn_cast<IfStmt>(P))
      Each = Cur == If->getCond() || Cur == If->getInit();
    else if (const auto *Switch = dyn_cast<SwitchStmt>(P))
      Each = Cur == Switch->getCond() || Cur == Switch->getInit();
    else if (const auto *While = dyn_cast<WhileStmt>(P))
      Each = Cur == While->getCond();
    else if (const auto *F = dyn_cast<ForStmt>(P))
      Each = Cur == F->getInit() || Cur == F->getCond();
    else if (const auto *Do = dyn_cast<DoStmt>(P))
      Each = Cur == Do->getBody();
    if (!Each)
      return false;
    Cur = P;
  }
  return true;
}

/// Each run of Body, a loop's body, goes from its start to its end: no
/// break or continue of that loop, no goto, label, case or return, no throw,
/// no call of a noreturn function or through a pointer.
bool LoopCheck::runsThrough(const Stmt *Body) const {
  struct Item {
    const Stmt *S;
    unsigned Loops, Switches;
  };
  llvm::SmallVector<Item, 32> Work{{Body, 0, 0}};
  while (!Work.empty()) {
    auto [S, Loops, Switches] = Work.pop_back_val();
    if (!S || isa<LambdaExpr, BlockExpr>(S))
      continue;
    if (isa<GotoStmt, IndirectGotoStmt, LabelStmt, ReturnStmt, CoreturnStmt,
            CXXThrowExpr, CXXTryStmt, AsmStmt>(S) ||
        (isa<BreakStmt>(S) && Loops == 0 && Switches == 0) ||
        (isa<ContinueStmt>(S) && Loops == 0) ||
        (isa<SwitchCase>(S) && Switches == 0))
      return false;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *FD = Call->getDirectCallee();
      if (!FD || FD->isNoReturn())
        return false;
    }
    unsigned InLoop = loopBody(S) ? 1 : 0;
    unsigned InSwitch = isa<SwitchStmt>(S) ? 1 : 0;
    for (const Stmt *Child : S->children())
      Work.push_back({Child, Loops + InLoop, Switches + InSwitch});
  }
  return true;
}

/// Every write of the body is to a variable, an element of a clause's array
/// or of an array of the body's own, and no call can write through a
/// pointer: a write to a clause's array is one of the body's subscripts.
bool LoopCheck::writesAreVisible(
    const llvm::DenseSet<const VarDecl *> &ClauseArrays) const {
  auto KnownTarget = [&](const Expr *E) {
    E = E->IgnoreParens();
    while (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (ME->isArrow())
        return false;
      E = ME->getBase()->IgnoreParens();
    }
    bool Element = false, ThroughPointer = false;
    while (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
      Element = true;
      E = ASE->getBase()->IgnoreParenImpCasts();
      ThroughPointer |= E->getType()->isPointerType();
    }
    const VarDecl *VD = referencedVar(E);
    if (!VD || VD->getType()->isReferenceType())
      return false;
    // An array of the body's own, not a pointer it holds.
    return !Element || ClauseArrays.count(VD) ||
           (!ThroughPointer &&
            isInside(VD->getLocation(), For.getBody()->getSourceRange()));
  };
  llvm::SmallVector<const Stmt *, 64> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    llvm::append_range(Work, S->children());
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      if (!isNumericCall(Call))
        return false;
    } else if (const auto *Construct = dyn_cast<CXXConstructExpr>(S)) {
      if (!Construct->getConstructor()->isTrivial())
        return false;
    } else if (isa<CXXNewExpr, CXXDeleteExpr, AsmStmt>(S)) {
      return false;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(S);
               BO && BO->isAssignmentOp()) {
      if (!KnownTarget(BO->getLHS()))
        return false;
    } else if (const auto *UO = dyn_cast<UnaryOperator>(S);
               UO && UO->isIncrementDecrementOp()) {
      if (!KnownTarget(UO->getSubExpr()))
        return false;
    }
  }
  return true;
}

/// L as `for (V = a; V < b; ++V)` (or `V <= b`, `b > V`, `b >= V`, `V += 1`,
/// `V = V + 1`, `1 + V`), V a plain integer its body only reads, a and b
/// polynomials of values that do not change during an iteration of the
/// partitioned loop: a, and the number of runs, b - a (b - a + 1 with `<=`)
/// where that is not negative; nullopt for anything else.
std::optional<LoopCheck::UnitRange> LoopCheck::unitRange(const ForStmt *L,
                                                         const VarDecl *V) {
  auto [Init, Start] = initVar(L);
  if (Init != V || !isPlainInteger(V) || !onlyRead(L->getBody(), V))
    return std::nullopt;
  const Expr *Bound = nullptr;
  bool Inclusive = false;
  if (auto Test = asBinary(L->getCond())) {
    if ((Test->Op == BO_LT || Test->Op == BO_LE) &&
        referencedVar(Test->LHS) == V)
      Bound = Test->RHS;
    else if ((Test->Op == BO_GT || Test->Op == BO_GE) &&
             referencedVar(Test->RHS) == V)
      Bound = Test->LHS;
    Inclusive = Test->Op == BO_LE || Test->Op == BO_GE;
  }
  bool ByOne = false;
  if (auto IncDec = asIncDec(L->getInc()))
    ByOne = (IncDec->first == UO_PreInc || IncDec->first == UO_PostInc) &&
            referencedVar(IncDec->second) == V;
  else if (auto Step = asBinary(L->getInc());
           Step && referencedVar(Step->LHS) == V) {
    auto IsOne = [&](const Expr *E) {
      Expr::EvalResult R;
      return E && !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) &&
             R.Val.getInt() == 1;
    };
    if (Step->Op == BO_AddAssign)
      ByOne = IsOne(Step->RHS);
    else if (auto Sum = asBinary(Step->RHS);
             Step->Op == BO_Assign && Sum && Sum->Op == BO_Add)
      ByOne = (referencedVar(Sum->LHS) == V && IsOne(Sum->RHS)) ||
              (referencedVar(Sum->RHS) == V && IsOne(Sum->LHS));
  }
  if (!Start || !Bound || !ByOne)
    return std::nullopt;
  auto Leaf = [&](const VarDecl *W) {
    return bodyLeaf(W, L, /*Inner=*/nullptr, 0);
  };
  std::optional<IntPoly> First = intPolyFromExpr(Start, Ctx, Leaf);
  std::optional<IntPoly> End = intPolyFromExpr(Bound, Ctx, Leaf);
  if (End && Inclusive)
    End = End->plus(*IntPoly::constant(1));
  std::optional<IntPoly> Count =
      First && End ? End->minus(*First) : std::nullopt;
  if (!Count)
    return std::nullopt;
  return UnitRange{std::move(*First), std::move(*Count)};
}

/// S's first index, against the first dimension of a section
/// `[Lower:Length]`, is outside it each time S runs (constant offset), or
/// at the first or the last iteration of an inner loop `for (v = a; v < b;
/// ++v)` that runs S at each.
bool LoopCheck::provenOutside(const Subscript &S, const IntPoly &Lower,
                              const IntPoly &Length) {
  InnerLoops Inner;
  std::optional<IntPoly> Index =
      intPolyFromExpr(S.Indices[0], Ctx, [&](const VarDecl *VD) {
        return bodyLeaf(VD, S.At, &Inner, 0);
      });
  std::optional<IntPoly> Offset = Index ? Index->minus(Lower) : std::nullopt;
  if (!Offset)
    return false;
  // An offset of the runs from Min to Max (a constant: Min = Max) is below
  // 0 or at Length or past it, provably.
  auto Outside = [&](const std::optional<IntPoly> &Min,
                     const std::optional<IntPoly> &Max) {
    if (!Min || !Max)
      return false;
    for (const IntPoly *Offset : {&*Min, &*Max}) {
      if (std::optional<int64_t> Low = Offset->getConstant(); Low && *Low < 0)
        return true;
      std::optional<IntPoly> Past = Offset->minus(Length);
      if (std::optional<int64_t> High =
              Past ? Past->getConstant() : std::nullopt;
          High && *High >= 0)
        return true;
    }
    return false;
  };

  const VarDecl *V = nullptr;
  const ForStmt *L = nullptr;
  for (const auto &[W, Loop] : Inner) {
    if (!Offset->uses(W))
      continue;
    if (V)
      return false;
    V = W;
    L = Loop;
  }
  if (!V)
    return Outside(Offset, Offset);

  // Offset = C + K*v, v running from First to Last by 1 in a loop that
  // leaves only through its test and runs S at each iteration.
  auto Split = Offset->splitLinear(V);
  if (!Split || Split->second == 0 || !evaluatedEachTime(L->getBody(), S.At) ||
      !runsThrough(L->getBody()))
    return false;
  std::optional<UnitRange> Range = unitRange(L, V);
  if (!Range)
    return false;
  const IntPoly &First = Range->First;
  std::optional<IntPoly> Last = First.plus(Range->Count);
  if (Last)
    Last = Last->minus(*IntPoly::constant(1));
  if (!Last)
    return false;
  const auto &[C, K] = *Split;
  std::optional<IntPoly> KP = IntPoly::constant(K);
  auto At = [&](const IntPoly &Value) -> std::optional<IntPoly> {
    std::optional<IntPoly> Scaled = KP ? KP->times(Value) : std::nullopt;
    return Scaled ? C.plus(*Scaled) : std::nullopt;
  };
  return K > 0 ? Outside(At(First), At(*Last)) : Outside(At(*Last), At(First));
}

void LoopCheck::reportOutsideSection(const VarDecl *Array,
                                     const ClauseSection &CS) {
  const DataSection &Section = *CS.Section;
  std::optional<IntPoly> Lower = sectionPoly(Section.Lower);
  std::optional<IntPoly> Length = sectionPoly(Section.Length);
  if (!Lower || !Length)
    return;
  bool Reads = CS.Clause != "out", Writes = CS.Clause != "in";
  for (const Subscript &S : Subscripts) {
    if (S.Root != Array)
      continue;
    UseKind Kind = useKind(S);
    bool Read = (Kind == UseKind::Read || Kind == UseKind::ReadWrite) && Reads;
    bool Write =
        (Kind == UseKind::Write || Kind == UseKind::ReadWrite) && Writes;
    if ((!Read && !Write) || !provenOutside(S, *Lower, *Length))
      continue;
    std::string At = text(S.At);
    report(Diags, S.At->getExprLoc(), Level::Warning,
           "'%0' is outside the section '%1' of '%2(...)': on an OpenCL "
           "device this element would %select{not be copied to the "
           "device|not be copied back|be neither copied to the device nor "
           "back}3")
        << (At.empty() ? Array->getName().str() + "[...]" : At) << Section.Text
        << CS.Clause
        << (Read && Write ? 2
            : Write       ? 1
                          : 0);
    report(Diags, Section.Loc, Level::Note, "the section is declared here");
    return;
  }
}

void LoopCheck::reportOutReadBeforeWrite(const VarDecl *Array,
                                         ArrayRef<ClauseSection> Sections) {
  // Every use of the array in the body reads or writes one of its elements.
  llvm::DenseMap<const DeclRefExpr *, const Subscript *> Uses;
  for (const Subscript &S : Subscripts)
    if (S.Root == Array) {
      if (useKind(S) == UseKind::Other)
        return;
      Uses[S.RootRef] = &S;
    }
  llvm::SmallVector<const Stmt *, 64> Work{For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl() == Array && !Uses.count(DRE))
      return;
    llvm::append_range(Work, S->children());
  }

  auto FullExpr = [&](const Stmt *E) {
    for (const Stmt *P = parentOf(E); isa_and_nonnull<Expr>(P); P = parentOf(P))
      E = P;
    return E;
  };
  // W, a subscript evaluated after R, may write before R's first read: in
  // the same full expression, unless R is on the right of W's assignment;
  // in a loop around both, unless R reads at each iteration of the
  // outermost such loop, from the first.
  auto MayPrecede = [&](const Subscript &W, const Subscript &R) {
    if (FullExpr(W.At) == FullExpr(R.At)) {
      const Stmt *Assign = parentOf(W.At);
      while (isa_and_nonnull<ParenExpr>(Assign))
        Assign = parentOf(Assign);
      const auto *BO = dyn_cast_or_null<BinaryOperator>(Assign);
      if (!BO || !BO->isAssignmentOp())
        return true;
      const Stmt *Cur = R.At;
      const Stmt *P = parentOf(Cur);
      for (; P && P != BO; Cur = P, P = parentOf(P))
        ;
      if (P != BO || Cur != BO->getRHS())
        return true;
    }
    llvm::SmallVector<const Stmt *, 4> AroundR = enclosingLoops(R.At);
    llvm::SmallVector<const Stmt *, 4> AroundW = enclosingLoops(W.At);
    for (const Stmt *Loop : llvm::reverse(AroundR))
      if (llvm::is_contained(AroundW, Loop))
        return !evaluatedEachTime(loopBody(Loop), R.At) ||
               !runsThrough(loopBody(Loop));
    return false;
  };

  for (size_t RI = 0; RI < Subscripts.size(); ++RI) {
    const Subscript &R = Subscripts[RI];
    if (R.Root != Array)
      continue;
    UseKind RK = useKind(R);
    if (RK == UseKind::Write)
      return; // Every later read comes after a write.
    if (RK != UseKind::Read && RK != UseKind::ReadWrite)
      continue;
    bool First = true;
    for (size_t WI = RI + 1; WI < Subscripts.size() && First; ++WI) {
      const Subscript &W = Subscripts[WI];
      UseKind WK = W.Root == Array ? useKind(W) : UseKind::Other;
      if ((WK == UseKind::Write || WK == UseKind::ReadWrite) &&
          MayPrecede(W, R))
        First = false;
    }
    if (First) {
      report(Diags, R.At->getExprLoc(), Level::Warning,
             "'%0' is declared 'out(...)' but read here before it is "
             "written: on an OpenCL device the read sees uninitialized "
             "memory; declare it 'inout(...)'")
          << Array->getName();
      report(Diags, Sections.front().Section->Loc, Level::Note,
             "the section is declared here");
      return;
    }
    if (RK == UseKind::ReadWrite)
      return; // It writes too.
  }
}

void LoopCheck::checkDataUses() {
  llvm::MapVector<const VarDecl *, llvm::SmallVector<ClauseSection, 2>> Arrays;
  for (auto [Clause, Sections] :
       {std::pair<StringRef, const llvm::SmallVector<DataSection, 2> *>{
            "in", &Pragma.In},
        {"out", &Pragma.Out},
        {"inout", &Pragma.InOut}})
    for (const DataSection &Section : *Sections) {
      // A macro may name any of the arrays: no array's clauses are known.
      if (Section.ArrayIsMacro)
        return;
      std::optional<const ValueDecl *> D = visibleDecl(Section.Array);
      const auto *VD = D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
      if (VD && !VD->getType()->isDependentType())
        Arrays[VD].push_back({Clause, &Section});
    }
  llvm::DenseSet<const VarDecl *> ClauseArrays;
  for (const auto &Entry : Arrays)
    ClauseArrays.insert(Entry.first);
  bool Visible = Gotos.empty() && writesAreVisible(ClauseArrays);
  for (const auto &[Array, Sections] : Arrays) {
    if (Sections.size() == 1)
      reportOutsideSection(Array, Sections.front());
    if (Visible && llvm::all_of(Sections, [](const ClauseSection &CS) {
          return CS.Clause == "out" && CS.Section->Dims == 1;
        }))
      reportOutReadBeforeWrite(Array, Sections);
  }
}

bool LoopCheck::run(CanonicalLoop &Loop, LoopVariables &Vars) {
  if (!checkHeader(Loop))
    return false;
  walk(For.getBody());
  Ok &= checkGotos();
  Ok &= checkInvariant(Loop.Bound, "bound");
  Ok &= checkInvariant(Loop.Step, "step");

  // The private clause names variables declared outside the loop.
  llvm::SmallSetVector<const VarDecl *, 4> Private;
  for (const PrivateName &Name : Pragma.Private) {
    auto Use = llvm::find_if(Accesses, [&](const Access &A) {
      return A.Var->getName() == Name.Name && isOutsideLoop(A.Var);
    });
    if (Use == Accesses.end()) {
      report(Diags, Name.Loc, Level::Warning,
             "private variable '%0' is not used in the loop")
          << Name.Name;
      continue;
    }
    if (Use->Var == Var) {
      report(Diags, Name.Loc, Level::Error,
             "the loop variable '%0' cannot be private")
          << Name.Name;
      Ok = false;
      continue;
    }
    Private.insert(Use->Var);
  }
  for (const VarDecl *VD : NestedInductionVars)
    Private.insert(VD);
  Ok &= checkSections("in", Pragma.In);
  Ok &= checkSections("out", Pragma.Out);
  Ok &= checkSections("inout", Pragma.InOut);

  // Writes: never to the loop variable, to an outside scalar only if private.
  llvm::DenseSet<const VarDecl *> Reported;
  for (const Access &A : Accesses) {
    if (!A.Writes || Reported.count(A.Var))
      continue;
    if (A.Var == Var) {
      report(Diags, A.At->getExprLoc(), Level::Error,
             "the loop variable '%0' is written in the body of the "
             "partitioned loop")
          << Var->getName();
      Reported.insert(A.Var);
      Ok = false;
      continue;
    }
    if (!isOutsideLoop(A.Var) || Private.count(A.Var) ||
        A.Var->getType()->isArrayType())
      continue;
    report(Diags, A.At->getExprLoc(), Level::Error,
           "'%0' is declared outside the partitioned loop and written in it: "
           "a loop-carried dependence or a race (list it in 'private(...)' if "
           "each iteration assigns it before reading it)")
        << A.Var->getName();
    Reported.insert(A.Var);
    Ok = false;
  }

  // A private variable read before it is written.
  for (const VarDecl *VD : Private) {
    auto First =
        llvm::find_if(Accesses, [&](const Access &A) { return A.Var == VD; });
    if (First != Accesses.end() && First->Reads)
      report(Diags, First->At->getExprLoc(), Level::Warning,
             "private variable '%0' may be read before it is written in an "
             "iteration")
          << VD->getName();
  }
  reportDependences();
  if (!Ok)
    return false;
  checkDataUses();

  Vars.Private.assign(Private.begin(), Private.end());
  llvm::SmallSetVector<const VarDecl *, 8> Shared;
  for (const Access &A : Accesses)
    if (A.Var != Var && !Private.count(A.Var) && isOutsideLoop(A.Var) &&
        A.Var->isLocalVarDeclOrParm() && !A.Var->isLocalExternDecl())
      Shared.insert(A.Var);
  Vars.Shared.assign(Shared.begin(), Shared.end());

  llvm::SmallSetVector<const VarDecl *, 4> ClauseVars;
  for (const auto *Sections : {&Pragma.In, &Pragma.Out, &Pragma.InOut})
    for (const DataSection &Section : *Sections)
      for (StringRef Name : Section.Names)
        if (std::optional<const ValueDecl *> D = visibleDecl(Name); D && *D)
          if (const auto *VD = dyn_cast<VarDecl>(*D);
              VD && VD != Var && VD->isLocalVarDeclOrParm() &&
              !VD->isLocalExternDecl())
            ClauseVars.insert(VD);
  Vars.ClauseVars.assign(ClauseVars.begin(), ClauseVars.end());
  return true;
}

//===----------------------------------------------------------------------===//
// Out sections written whole
//===----------------------------------------------------------------------===//
//
// A device copies an `out` section back whole without copying it in first:
// an element an iteration does not write comes back as whatever the
// device's buffer held. A generated kernel gets an out array as OUT only
// where this proves that each iteration writes all of its section, and as
// INOUT elsewhere (Offload.cpp).

/// Why S may not run on every iteration of the partitioned loop; nullopt if
/// it does, with the `for` loops of the body around it, innermost first, in
/// Ranges: S is under no condition in their bodies nor in the partitioned
/// loop's, no break, continue, goto or call that does not return can skip
/// it, and each loop around it is a `for` by one whose bounds stay the same
/// through the iteration (unitRange).
std::optional<std::string>
LoopCheck::whyNotEachIteration(const Subscript &S,
                               llvm::SmallVectorImpl<InnerRange> &Ranges) {
  std::string What = "the assignment to '" + text(S.At) + "'";
  const Stmt *Inner = S.At;
  for (const Stmt *Loop : enclosingLoops(S.At)) {
    const auto *L = dyn_cast<ForStmt>(Loop);
    if (!L)
      return What + " is in a loop other than 'for'";
    if (!evaluatedEachTime(L->getBody(), Inner))
      return What + " is conditional";
    if (!runsThrough(L->getBody()))
      return "a 'break', 'continue', 'goto' or a call that does not return "
             "may end the loop around " +
             What + " early";
    const VarDecl *V = initVar(L).first;
    std::optional<UnitRange> Range = V ? unitRange(L, V) : std::nullopt;
    if (!Range)
      return What +
             " is in a 'for' loop that fpm cannot count (it counts 'for (v "
             "= a; v < b; ++v)', a and b the same through the iteration)";
    Ranges.push_back({L, V, std::move(*Range)});
    Inner = L;
  }
  if (!evaluatedEachTime(For.getBody(), Inner))
    return What + " is conditional";
  if (!runsThrough(For.getBody()))
    return "a 'continue', 'goto' or a call that does not return may skip " +
           What;
  return std::nullopt;
}

/// Why the elements S writes in an iteration, over the Ranges of the loops
/// around it, may not be exactly the section [Lower, Lower + Length); nullopt
/// if they are. They are when S's index is Lower + the sum of c * (v - a)
/// over the loops whose variables v it uses (a: v's first value), and,
/// ordered by c, the first c is 1, each next c the one before times the
/// count of its loop, and Length the last c times its count: one loop with
/// b - a = Length, or nested ones as in `i*n*m + j*m + k` (their counts are
/// taken as non-negative: a section of n*m elements with n and m negative
/// would be meaningless). A loop whose variable S does not use must run a
/// constant number of times, at least once.
std::optional<std::string>
LoopCheck::whyNotCovering(const Subscript &S, ArrayRef<InnerRange> Ranges,
                          const IntPoly &Lower, const IntPoly &Length) {
  std::string What = "the assignment to '" + text(S.At) + "'";
  InnerLoops Inner;
  std::optional<IntPoly> Index =
      intPolyFromExpr(S.Indices[0], Ctx, [&](const VarDecl *VD) {
        return bodyLeaf(VD, S.At, &Inner, 0);
      });
  std::optional<IntPoly> Offset = Index ? Index->minus(Lower) : std::nullopt;
  if (!Offset)
    return "fpm cannot read the index of '" + text(S.At) +
           "' as an integer polynomial";
  llvm::SmallVector<const InnerRange *, 4> Used;
  for (const auto &[W, Loop] : Inner) {
    if (!Offset->uses(W))
      continue;
    const InnerRange *R =
        llvm::find_if(Ranges, [&, Loop = Loop](const InnerRange &R) {
          return R.Loop == Loop;
        });
    if (R == Ranges.end())
      return "fpm cannot follow the index of '" + text(S.At) + "'";
    Used.push_back(R);
  }
  for (const InnerRange &R : Ranges) {
    std::optional<int64_t> Count = R.Range.Count.getConstant();
    if (!llvm::is_contained(Used, &R) && (!Count || *Count < 1))
      return "the 'for' loop around " + What + " may run no iteration";
  }

  // The offset with each variable counted from its loop's first value
  // (v = a + u, u named v again), then split into D0 + sum C[t] * v[t].
  std::optional<IntPoly> U = *Offset;
  for (const InnerRange *R : Used) {
    std::optional<IntPoly> Shifted =
        R->Range.First.plus(IntPoly::variable(R->Var));
    U = U && Shifted ? U->substitute(R->Var, *Shifted) : std::nullopt;
  }
  IntPoly Zero;
  auto At = [&](const InnerRange *One) -> std::optional<IntPoly> {
    std::optional<IntPoly> P = U;
    for (const InnerRange *R : Used)
      if (P)
        P = P->substitute(R->Var, R == One ? *IntPoly::constant(1) : Zero);
    return P;
  };
  std::optional<IntPoly> D0 = U ? At(nullptr) : std::nullopt;
  llvm::SmallVector<IntPoly, 4> Coefficients;
  std::optional<IntPoly> Sum = D0;
  for (const InnerRange *R : Used) {
    std::optional<IntPoly> AtOne = Sum ? At(R) : std::nullopt;
    std::optional<IntPoly> C = AtOne ? AtOne->minus(*D0) : std::nullopt;
    std::optional<IntPoly> Term =
        C ? C->times(IntPoly::variable(R->Var)) : std::nullopt;
    Sum = Term ? Sum->plus(*Term) : std::nullopt;
    if (C)
      Coefficients.push_back(*C);
  }
  std::string Unknown = "fpm cannot prove that the elements " + What +
                        " writes are the whole section";
  // Linear in the variables, with no product of two of them.
  if (!Sum || !(*Sum == *U))
    return Unknown;

  // The mixed radix: coefficient 1, then each the one before times its
  // loop's count, Length at the end.
  std::optional<IntPoly> Radix = IntPoly::constant(1);
  llvm::SmallVector<bool, 4> Taken(Used.size(), false);
  for (size_t Step = 0; Step < Used.size() && Radix; ++Step) {
    size_t T = 0;
    while (T < Used.size() && (Taken[T] || !(Coefficients[T] == *Radix)))
      ++T;
    if (T == Used.size()) {
      Radix = std::nullopt;
      break;
    }
    Taken[T] = true;
    Radix = Radix->times(Used[T]->Range.Count);
  }
  if (D0->getConstant() == 0 && Radix && *Radix == Length)
    return std::nullopt;

  // Where it is one run of one loop by one or a single element: which.
  auto Elements = [](const IntPoly &First, const IntPoly &Last) {
    return First == Last ? "element " + First.str()
                         : "elements " + First.str() + " to " + Last.str();
  };
  std::optional<IntPoly> One = IntPoly::constant(1);
  std::optional<IntPoly> Last = Used.empty() ? D0
                                : Used.size() == 1 && Coefficients[0] == *One
                                    ? D0->plus(Used[0]->Range.Count)
                                    : std::nullopt;
  if (Last && !Used.empty())
    Last = Last->minus(*One);
  std::optional<IntPoly> End = Length.minus(*One);
  if (!Last || !End)
    return Unknown;
  return What + " writes " + Elements(*D0, *Last) +
         " of the section, which has " + Elements(Zero, *End);
}

/// Whether every iteration writes all of Section, an out clause's: some
/// plain assignment `A[e] = ...` to an element of its array runs on every
/// iteration (whyNotEachIteration) and writes exactly the section there
/// (whyNotCovering). Otherwise the reason of the assignment that came
/// closest.
OutCover LoopCheck::coverSection(const DataSection &Section) {
  OutCover Cover;
  if (Section.Dims != 1) {
    Cover.Why = "it has several dimensions";
    return Cover;
  }
  std::optional<const ValueDecl *> D =
      Section.ArrayIsMacro ? std::nullopt : visibleDecl(Section.Array);
  const auto *Array = D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
  if (!Array) {
    Cover.Why = "fpm cannot find the variable '" + Section.Array + "' names";
    return Cover;
  }
  std::optional<IntPoly> Lower = sectionPoly(Section.Lower);
  std::optional<IntPoly> Length = sectionPoly(Section.Length);
  if (!Lower || !Length) {
    Cover.Why = "fpm cannot read the section's bounds as integer polynomials "
                "of the loop variable and values the loop does not change";
    return Cover;
  }
  unsigned Closest = 0; // 1: an assignment not on every iteration; 2: one
                        // that is, to other elements.
  for (const Subscript &S : Subscripts) {
    if (S.Root != Array || S.Indices.size() != 1 ||
        useKind(S) != UseKind::Write)
      continue;
    llvm::SmallVector<InnerRange, 2> Ranges;
    if (std::optional<std::string> Why = whyNotEachIteration(S, Ranges)) {
      if (Closest < 1)
        Cover.Why = std::move(*Why);
      Closest = std::max(Closest, 1u);
      continue;
    }
    if (std::optional<std::string> Why =
            whyNotCovering(S, Ranges, *Lower, *Length)) {
      if (Closest < 2)
        Cover.Why = std::move(*Why);
      Closest = 2;
      continue;
    }
    Cover.Whole = true;
    Cover.Why.clear();
    return Cover;
  }
  if (Closest == 0)
    Cover.Why = "the body has no assignment '" + Section.Array +
                "[...] = ...' that fpm can follow";
  return Cover;
}

llvm::SmallVector<OutCover, 2> LoopCheck::coverOut(const VarDecl &LoopVar) {
  Quiet = true;
  Var = &LoopVar;
  walk(For.getBody());
  llvm::SmallVector<OutCover, 2> Covers;
  for (const DataSection &Section : Pragma.Out)
    Covers.push_back(coverSection(Section));
  return Covers;
}

} // namespace

bool checkLoop(ASTContext &Ctx, const PartitionPragma &Pragma,
               const FunctionDecl &Fn, const ForStmt &For, CanonicalLoop &Loop,
               LoopVariables &Vars) {
  return LoopCheck(Ctx, Pragma, Fn, For).run(Loop, Vars);
}

llvm::SmallVector<OutCover, 2>
checkOutCover(ASTContext &Ctx, const PartitionPragma &Pragma,
              const FunctionDecl &Fn, const ForStmt &For, const VarDecl &Var) {
  return LoopCheck(Ctx, Pragma, Fn, For).coverOut(Var);
}

} // namespace fpm
