//===- ClauseSema.cpp - The clauses' expressions, checked by Sema ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ClauseSema.h says what it checks. About 770 lines in one file: the
// affine reader, the reading of each dimension's bounds into SectionShape
// and the scope check() parses the expressions in share Sema's state for
// one pragma at a time, and splitting them would pass that state around.
//
//===----------------------------------------------------------------------===//

#include "Analysis/ClauseSema.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Parse/Parser.h"
#include "clang/Sema/EnterExpressionEvaluationContext.h"
#include "clang/Sema/Lookup.h"
#include "clang/Sema/Scope.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// What one scope of the loop's declares: Decls in the order written.
struct Layer {
  llvm::SmallVector<NamedDecl *, 8> Decls;
  llvm::SmallVector<UsingDirectiveDecl *, 1> UsingDirectives;
};

/// The scopes between the loop and its function.
struct LoopScope {
  /// The function (not a lambda) whose body holds the loop.
  FunctionDecl *Fn = nullptr;
  /// Innermost first; the last is Fn's parameters.
  llvm::SmallVector<Layer, 4> Layers;
  /// The loop is in a lambda, a block or a captured statement.
  bool InCapture = false;
};

void addDecl(Layer &L, Decl *D) {
  if (auto *UD = dyn_cast<UsingDirectiveDecl>(D)) {
    L.UsingDirectives.push_back(UD);
    return;
  }
  if (auto *DD = dyn_cast<DecompositionDecl>(D)) {
    for (BindingDecl *B : DD->bindings())
      addDecl(L, B);
    return;
  }
  auto *ND = dyn_cast<NamedDecl>(D);
  if (!ND || ND->isImplicit())
    return;
  if (ND->getDeclName())
    L.Decls.push_back(ND);
  // What Sema puts on the scope chains with them: using declarations'
  // targets, unscoped enumerators.
  if (auto *Using = dyn_cast<BaseUsingDecl>(ND))
    for (UsingShadowDecl *Shadow : Using->shadows())
      L.Decls.push_back(Shadow);
  if (auto *Enum = dyn_cast<EnumDecl>(ND); Enum && !Enum->isScoped())
    for (EnumConstantDecl *E : Enum->enumerators())
      L.Decls.push_back(E);
}

void addStmt(Layer &L, const Stmt *S) {
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(S))
    for (Decl *D : DS->decls())
      addDecl(L, D);
}

void addParams(Layer &L, ArrayRef<ParmVarDecl *> Params) {
  for (ParmVarDecl *P : Params)
    if (P->getDeclName())
      L.Decls.push_back(P);
}

/// What is declared around For, from For up to its function, as the parser
/// had it on its scope chains at the `for`.
LoopScope loopScope(ASTContext &Ctx, const ForStmt &For) {
  LoopScope Result;
  DynTypedNode Node = DynTypedNode::create(For);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      break;
    DynTypedNode Parent = Parents[0];
    const Stmt *Child = Node.get<Stmt>();
    Layer L;
    // Sema takes the declarations as they are: not const.
    if (auto *P = const_cast<Stmt *>(Parent.get<Stmt>())) {
      if (auto *CS = dyn_cast<CompoundStmt>(P)) {
        for (const Stmt *S : CS->body()) {
          if (S == Child)
            break;
          addStmt(L, S);
        }
      } else if (auto *F = dyn_cast<ForStmt>(P)) {
        if (Child == F->getBody()) {
          addStmt(L, F->getInit());
          if (VarDecl *V = F->getConditionVariable())
            addDecl(L, V);
        }
      } else if (auto *If = dyn_cast<IfStmt>(P)) {
        addStmt(L, If->getInit());
        if (VarDecl *V = If->getConditionVariable())
          addDecl(L, V);
      } else if (auto *W = dyn_cast<WhileStmt>(P)) {
        if (VarDecl *V = W->getConditionVariable())
          addDecl(L, V);
      } else if (auto *Sw = dyn_cast<SwitchStmt>(P)) {
        addStmt(L, Sw->getInit());
        if (VarDecl *V = Sw->getConditionVariable())
          addDecl(L, V);
      } else if (auto *R = dyn_cast<CXXForRangeStmt>(P)) {
        if (Child == R->getBody()) {
          addStmt(L, R->getInit());
          addDecl(L, R->getLoopVariable());
        }
      } else if (auto *Catch = dyn_cast<CXXCatchStmt>(P)) {
        if (VarDecl *V = Catch->getExceptionDecl())
          addDecl(L, V);
      } else if (auto *Lambda = dyn_cast<LambdaExpr>(P)) {
        Result.InCapture = true;
        addParams(L, Lambda->getCallOperator()->parameters());
        for (const LambdaCapture &C : Lambda->captures())
          if (C.capturesVariable())
            if (auto *V = dyn_cast<VarDecl>(C.getCapturedVar());
                V && V->isInitCapture())
              addDecl(L, V);
      } else if (auto *Block = dyn_cast<BlockExpr>(P)) {
        Result.InCapture = true;
        addParams(L, Block->getBlockDecl()->parameters());
      } else if (isa<CapturedStmt>(P)) {
        Result.InCapture = true;
      }
    } else if (const auto *FD = Parent.get<FunctionDecl>()) {
      if (!isLambdaCallOperator(FD)) {
        Result.Fn = const_cast<FunctionDecl *>(FD);
        addParams(L, Result.Fn->parameters());
        Result.Layers.push_back(std::move(L));
        break;
      }
      // A lambda's body reached from its call operator: the parameters
      // come with the LambdaExpr.
      Result.InCapture = true;
    }
    if (!L.Decls.empty() || !L.UsingDirectives.empty())
      Result.Layers.push_back(std::move(L));
    Node = Parent;
  }
  return Result;
}

/// The integer that a section's bound or the grain must be: an integer or
/// unscoped enumeration type, or in C++ a class that converts to one (as
/// OpenMP's array sections and Clang's checks of them).
class IntegerConverter : public Sema::ICEConvertDiagnoser {
public:
  explicit IntegerConverter(const std::string &What)
      : ICEConvertDiagnoser(/*AllowScopedEnumerations=*/false,
                            /*Suppress=*/false, /*SuppressConversion=*/false),
        What(What) {}

  Sema::SemaDiagnosticBuilder diagnoseNotInt(Sema &S, SourceLocation Loc,
                                             QualType T) override {
    return diag(S, Loc, Level::Error, "%0 must have an integer type, not %1")
           << What << T;
  }
  Sema::SemaDiagnosticBuilder diagnoseIncomplete(Sema &S, SourceLocation Loc,
                                                 QualType T) override {
    return diag(S, Loc, Level::Error, "%0 has the incomplete type %1")
           << What << T;
  }
  Sema::SemaDiagnosticBuilder diagnoseExplicitConv(Sema &S, SourceLocation Loc,
                                                   QualType T,
                                                   QualType ConvTy) override {
    return diag(S, Loc, Level::Error,
                "%0 of type %1 converts to an integer (%2) only explicitly")
           << What << T << ConvTy;
  }
  Sema::SemaDiagnosticBuilder noteExplicitConv(Sema &S, CXXConversionDecl *Conv,
                                               QualType ConvTy) override {
    return diag(S, Conv->getLocation(), Level::Note,
                "conversion to %0 declared here")
           << ConvTy;
  }
  Sema::SemaDiagnosticBuilder diagnoseAmbiguous(Sema &S, SourceLocation Loc,
                                                QualType T) override {
    return diag(S, Loc, Level::Error,
                "%0 of type %1 converts to more than one integer type")
           << What << T;
  }
  Sema::SemaDiagnosticBuilder noteAmbiguous(Sema &S, CXXConversionDecl *Conv,
                                            QualType ConvTy) override {
    return diag(S, Conv->getLocation(), Level::Note,
                "conversion to %0 declared here")
           << ConvTy;
  }
  Sema::SemaDiagnosticBuilder diagnoseConversion(Sema &S, SourceLocation Loc,
                                                 QualType, QualType) override {
    // Picking a conversion function is allowed: nothing to say.
    return S.Diag(Loc, S.getDiagnostics().getCustomDiagID(Level::Ignored, ""));
  }

private:
  template <unsigned N>
  static Sema::SemaDiagnosticBuilder diag(Sema &S, SourceLocation Loc, Level L,
                                          const char (&Format)[N]) {
    return S.Diag(Loc, S.getDiagnostics().getCustomDiagID(L, Format));
  }

  const std::string &What;
};

/// Whether T cannot be a kernel's argument passed by value: a host address
/// (pointers, arrays, functions), or no value at all.
bool isHostAddressOrVoid(QualType T) {
  return T->isAnyPointerType() || T->isBlockPointerType() ||
         T->isMemberPointerType() || T->isNullPtrType() || T->isArrayType() ||
         T->isFunctionType() || T->isVoidType();
}

/// Whether evaluating S reads V (not in the operand of a sizeof or an
/// alignof, unless it has a variable size).
bool evaluates(const Stmt *S, const VarDecl *V) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    return DRE->getDecl() == V;
  if (const auto *Trait = dyn_cast<UnaryExprOrTypeTraitExpr>(S);
      Trait && !Trait->getTypeOfArgument()->isVariablyModifiedType())
    return false;
  return llvm::any_of(S->children(),
                      [&](const Stmt *C) { return evaluates(C, V); });
}

/// Reads a section's bound against the loop variable V: its degree in V
/// (0 or 1) while it is affine in V, else where and why it is not. In a
/// template's dependent bound (Dependent), what only an instantiation can
/// tell (a cast to a dependent type, an operator of a dependent type, a
/// construct it does not know) is taken as affine: only a read, a call or a
/// product that is there in every instantiation stops it.
class AffineReader {
public:
  AffineReader(const ASTContext &Ctx, const VarDecl *V, bool Dependent)
      : Ctx(Ctx), V(V), Dependent(Dependent) {}

  unsigned degree(const Expr *E);

  /// Where the expression stops being affine in V (null if it does not).
  const Expr *At = nullptr;
  std::string Why;

private:
  /// E stops it: "'E' What 'V'After".
  unsigned fail(const Expr *E, const char *What, const char *After = "") {
    if (!At) {
      At = E;
      Why =
          "'" + text(E) + "' " + What + " '" + V->getName().str() + "'" + After;
    }
    return 0;
  }
  /// Neither affine nor known not to be.
  unsigned unknown(const Expr *E) {
    return Dependent ? 0 : fail(E, "is not linear in");
  }
  std::string text(const Expr *E) const {
    const SourceManager &SM = Ctx.getSourceManager();
    return Lexer::getSourceText(SM.getExpansionRange(E->getSourceRange()), SM,
                                Ctx.getLangOpts())
        .str();
  }
  unsigned sum(const Expr *L, const Expr *R) {
    return std::max(degree(L), degree(R));
  }
  unsigned product(const Expr *E, const Expr *L, const Expr *R) {
    unsigned D = degree(L) + degree(R);
    if (D > 1 && !At)
      return fail(E, "multiplies two values computed from");
    return D;
  }

  const ASTContext &Ctx;
  const VarDecl *V;
  bool Dependent;
};

unsigned AffineReader::degree(const Expr *E) {
  if (At || !evaluates(E, V))
    return 0;
  E = E->IgnoreParens();
  if (const auto *Full = dyn_cast<FullExpr>(E))
    return degree(Full->getSubExpr());
  if (isa<DeclRefExpr>(E))
    return 1; // V itself: nothing else that evaluates V is one
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    const Expr *Sub = Cast->getSubExpr();
    switch (Cast->getCastKind()) {
    case CK_LValueToRValue:
    case CK_NoOp:
      return degree(Sub);
    case CK_IntegralCast:
      // A narrower type wraps where the wider one would not.
      if (Ctx.getIntWidth(Cast->getType()) < Ctx.getIntWidth(Sub->getType()))
        return fail(E, "narrows a value computed from");
      return degree(Sub);
    case CK_Dependent:
      return Dependent ? degree(Sub) : unknown(E);
    default:
      return fail(E, "converts a value computed from",
                  " through a type that is no integer");
    }
  }
  if (const auto *Construct = dyn_cast<CXXUnresolvedConstructExpr>(E);
      Construct && Construct->getNumArgs() == 1)
    return degree(Construct->getArg(0));
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    const Expr *L = BO->getLHS(), *R = BO->getRHS();
    switch (BO->getOpcode()) {
    case BO_Add:
    case BO_Sub:
      return sum(L, R);
    case BO_Mul:
      return product(E, L, R);
    case BO_Shl:
      if (!evaluates(R, V))
        return degree(L);
      break;
    case BO_Comma:
      if (!evaluates(L, V))
        return degree(R);
      break;
    default:
      break;
    }
    return fail(E, "is not linear in");
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    switch (UO->getOpcode()) {
    case UO_Minus:
    case UO_Plus:
    case UO_Not:
      return degree(UO->getSubExpr());
    case UO_Deref:
      return fail(E, "reads memory at an address computed from");
    default:
      return fail(E, "is not linear in");
    }
  }
  if (isa<ArraySubscriptExpr, MemberExpr>(E))
    return fail(E, "reads memory at an address computed from");
  // An operator of a dependent type may be the built-in one.
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && Dependent && Op->getNumArgs() == 2) {
    switch (Op->getOperator()) {
    case OO_Plus:
    case OO_Minus:
      return sum(Op->getArg(0), Op->getArg(1));
    case OO_Star:
      return product(E, Op->getArg(0), Op->getArg(1));
    case OO_Subscript:
      return fail(E, "reads memory at an address computed from");
    default:
      return unknown(E);
    }
  }
  if (isa<CallExpr>(E))
    return fail(E, "calls a function with a value computed from");
  return unknown(E);
}

/// The loop variable of For: the variable its init declares or assigns.
const VarDecl *loopVariable(const ForStmt &For) {
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(For.getInit()))
    return DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                              : nullptr;
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(For.getInit());
      BO && BO->getOpcode() == BO_Assign)
    if (const auto *DRE =
            dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
      return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

/// How many arrays and pointers T is of before its element (`double *[4]`:
/// 2), and that element; a dependent type ends the count.
std::pair<unsigned, QualType> indirections(const ASTContext &Ctx, QualType T) {
  unsigned Levels = 0;
  for (; !T->isDependentType(); ++Levels) {
    if (const ArrayType *AT = Ctx.getAsArrayType(T))
      T = AT->getElementType();
    else if (const auto *PT = T->getAs<PointerType>())
      T = PT->getPointeeType();
    else
      break;
  }
  return {Levels, T};
}

} // namespace

ClauseSema::ClauseSema(Sema &S) : S(S) {}

ClauseSema::~ClauseSema() = default;

void ClauseSema::readBound(const ClauseExpr &E, const Expr &X,
                           const VarDecl &Var, const DataSection &Section,
                           SectionShape &Shape) {
  ASTContext &Ctx = S.getASTContext();
  bool Dependent = X.isInstantiationDependent();
  AffineReader Reader(Ctx, &Var, Dependent);
  unsigned Degree = Reader.degree(&X);
  if (Dependent) {
    Shape.Known = false;
    Degree = 0;
  }
  std::optional<IntPoly> Poly =
      intPolyFromExpr(&X, Ctx, [](const VarDecl *VD) -> std::optional<IntPoly> {
        return IntPoly::variable(VD);
      });
  // `i - i` reads i and does not move.
  bool Uses = Degree > 0 && (!Poly || Poly->uses(&Var));
  (E.IsLength ? Shape.Length : Shape.Lower) = Poly;
  (E.IsLength ? Shape.LengthVaries : Shape.LowerMoves) = Uses;
  // The section's array, as the loop sees it.
  LookupResult Found(S, &Ctx.Idents.get(Section.Array), E.Loc,
                     Sema::LookupOrdinaryName);
  const ArrayType *Type = nullptr;
  QualType Row;
  if (S.LookupName(Found, S.getCurScope()) && Found.isSingleResult())
    if (const auto *VD = dyn_cast<ValueDecl>(Found.getFoundDecl())) {
      if (!E.IsLength)
        Shape.Decl = dyn_cast<VarDecl>(VD);
      QualType T = VD->getType().getNonReferenceType();
      Type = Ctx.getAsArrayType(T);
      Row = Type                 ? Type->getElementType()
            : T->isPointerType() ? T->getPointeeType()
                                 : QualType();
    }
  if (!E.IsLength && Found.isSingleResult() && !Dependent)
    if (const auto *VD = dyn_cast<ValueDecl>(Found.getFoundDecl())) {
      // The dimensions the variable's type has: arrays and pointers.
      auto [Depth, T] = indirections(Ctx, VD->getType().getNonReferenceType());
      if (!T->isDependentType() && Depth > 0 && Section.Dims > Depth)
        report(S.getDiagnostics(), Section.Loc, Level::Error,
               "the section '%0' has %1 dimensions, but '%2' has %3")
            << Section.Text << Section.Dims << Section.Array << Depth;
    }
  if (!E.IsLength) {
    Shape.IsArray = isa_and_nonnull<ConstantArrayType, VariableArrayType>(Type);
    Shape.RowsArePointers =
        Section.Dims > 1 && !Row.isNull() && Row->isPointerType();
    if (Shape.RowsArePointers)
      Shape.RowLevels = indirections(Ctx, Row).first;
    // The later dimensions' extents, where the type says.
    Shape.Inner.assign(Section.Dims - 1, DimShape());
    QualType Elem = Row;
    for (DimShape &D : Shape.Inner) {
      const ArrayType *Of = Elem.isNull() ? nullptr : Ctx.getAsArrayType(Elem);
      if (!Of)
        break;
      if (const auto *Constant = dyn_cast<ConstantArrayType>(Of);
          Constant && Constant->getSize().getActiveBits() < 63)
        D.Extent = Constant->getSize().getZExtValue();
      Elem = Of->getElementType();
    }
  }
  if (!Reader.At)
    return;
  // What to write instead: the whole array, its extent when its type says.
  std::string Whole = E.Clause + "(" + Section.Array + "[0:";
  const auto *Array = dyn_cast_or_null<ConstantArrayType>(Type);
  if (Array)
    Whole =
        "'" + Whole + std::to_string(Array->getSize().getZExtValue()) + "])'";
  else
    Whole = "'" + Whole + "n])', n the number of elements of '" +
            Section.Array + "'";
  report(S.getDiagnostics(), Reader.At->getBeginLoc(), Level::Error,
         "%0 is not affine in the loop variable '%1' (%2): a section must "
         "move by a fixed number of elements from one iteration to the next, "
         "which the runtime checks at three iterations only; name every "
         "element the loop may touch instead, as in %3")
      << E.What << Var.getName() << Reader.Why << Whole;
}

void ClauseSema::readInnerBound(const ClauseExpr &E, const Expr &X,
                                const VarDecl &Var, SectionShape &Shape) {
  if (E.Dim == 0 || E.Dim > Shape.Inner.size())
    return;
  DimShape &D = Shape.Inner[E.Dim - 1];
  ASTContext &Ctx = S.getASTContext();
  bool Dependent = X.isInstantiationDependent();
  AffineReader Reader(Ctx, &Var, Dependent);
  unsigned Degree = Dependent ? 0 : Reader.degree(&X);
  std::optional<IntPoly> Poly =
      intPolyFromExpr(&X, Ctx, [](const VarDecl *VD) -> std::optional<IntPoly> {
        return IntPoly::variable(VD);
      });
  bool Uses = Degree > 0 && (!Poly || Poly->uses(&Var));
  (E.IsLength ? D.Length : D.Lower) = Poly;
  (E.IsLength ? D.LengthVaries : D.LowerMoves) = Uses;
  D.Affine &= !Dependent && !Reader.At;
}

namespace {

/// The runs of Shape (RunLayout), when every later dimension's bounds are
/// affine with lengths that do not vary and the dimensions before the run
/// make rows a pitch apart.
std::optional<RunLayout> runLayout(const SectionShape &Shape) {
  auto Constant = [](const std::optional<IntPoly> &P) {
    return P ? P->getConstant() : std::nullopt;
  };
  for (const DimShape &D : Shape.Inner)
    if (!D.Affine || D.LengthVaries || !D.Lower || !D.Length)
      return std::nullopt;
  if (Shape.LengthVaries || !Shape.Length)
    return std::nullopt;
  // Dimension d (d >= 1) is whole: [0:extent].
  auto Whole = [&](unsigned D) {
    const DimShape &X = Shape.Inner[D - 1];
    return X.Extent && Constant(X.Lower) == 0 && Constant(X.Length) == X.Extent;
  };
  auto One = [&](unsigned D) {
    return Constant(D ? Shape.Inner[D - 1].Length : Shape.Length) == 1;
  };
  const unsigned N = Shape.Inner.size() + 1;
  unsigned Run = N - 1;
  while (Run > 0 && Whole(Run))
    --Run;
  if (Run == 0)
    return std::nullopt;
  RunLayout Layout;
  Layout.RunDim = Run;
  // Single indices [End, Run) before the run: they move the rows, not
  // shape them.
  unsigned End = Run;
  while (End > 0 && One(End - 1))
    --End;
  if (End == 0)
    return Layout;
  // Whole dimensions [Block, End), after the rows' first dimension.
  unsigned Block = End;
  while (Block > 1 && Whole(Block - 1))
    --Block;
  Layout.RowEnd = End;
  Layout.RowDim = Block < End && One(Block - 1) ? Block : Block - 1;
  for (unsigned D = 0; D < *Layout.RowDim; ++D)
    if (!One(D))
      return std::nullopt;
  return Layout;
}

} // namespace

bool ClauseSema::check(const PartitionPragma &Pragma, const ForStmt &For,
                       SectionShapes &Shapes) {
  // A section's shape, by its clause and index there.
  Shapes.assign(Pragma.In.size() + Pragma.Out.size() + Pragma.InOut.size(),
                SectionShape());
  auto ShapeOf = [&](const ClauseExpr &E) -> SectionShape & {
    size_t Base = E.Clause == "in"    ? 0
                  : E.Clause == "out" ? Pragma.In.size()
                                      : Pragma.In.size() + Pragma.Out.size();
    return Shapes[Base + E.Section];
  };
  auto SectionOf = [&](const ClauseExpr &E) -> const DataSection & {
    return (E.Clause == "in"    ? Pragma.In
            : E.Clause == "out" ? Pragma.Out
                                : Pragma.InOut)[E.Section];
  };
  const VarDecl *Var = loopVariable(For);
  llvm::SmallVector<const ClauseExpr *, 8> Exprs;
  for (const ClauseExpr &E : Pragma.Exprs)
    if (E.K != ClauseExpr::Kind::KernelArg || kernelArgIsScalar(Pragma, E.Text))
      Exprs.push_back(&E);
  ASTContext &Ctx = S.getASTContext();
  LoopScope Around = loopScope(Ctx, For);
  if (Exprs.empty() || !Around.Fn)
    return true;
  DiagnosticsEngine &Diags = S.getDiagnostics();
  Preprocessor &PP = S.getPreprocessor();

  // The loop's variable, if its init declares it: in scope for the
  // sections' bounds.
  NamedDecl *LoopVar = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(For.getInit());
      DS && DS->isSingleDecl())
    if (auto *VD =
            const_cast<VarDecl *>(dyn_cast<VarDecl>(DS->getSingleDecl()));
        VD && VD->getDeclName())
      LoopVar = VD;

  // The tokens: each expression, then an eof naming it; then a few eofs
  // naming nothing, so that a look ahead past the last finds one too.
  llvm::SmallVector<Token, 32> Stream;
  for (const ClauseExpr *E : Exprs) {
    llvm::append_range(Stream, E->Tokens);
    Token End;
    End.startToken();
    End.setKind(tok::eof);
    End.setLocation(E->Tokens.empty() ? E->Loc : E->Tokens.back().getEndLoc());
    End.setEofData(E);
    Stream.push_back(End);
  }
  Token Pad;
  Pad.startToken(); // no eof data: the eof of no expression
  Pad.setKind(tok::eof);
  Pad.setLocation(Stream.back().getLocation());
  Stream.append(4, Pad);
  PP.EnterTokenStream(Stream, /*DisableMacroExpansion=*/true,
                      /*IsReinject=*/true);
  if (!P) {
    // The parser opens the translation unit's scope again (Sema's context
    // must be none for that), and reads its first token.
    P = std::make_unique<Parser>(PP, S, /*SkipFunctionBodies=*/false);
    DeclContext *Saved = S.CurContext;
    S.CurContext = nullptr;
    P->Initialize();
    S.CurContext = Saved;
  } else {
    // From the eof that ended the last loop's stream to this one's first.
    P->ConsumeToken();
  }

  // Scopes entered here, to be left in reverse; the declarations put on
  // each are taken off it by hand, so that Sema does not look at them
  // again as it would at the end of a real scope (unused variables).
  unsigned Entered = 0;
  auto Enter = [&](unsigned Flags) {
    P->EnterScope(Flags);
    ++Entered;
    return S.getCurScope();
  };
  auto Push = [&](NamedDecl *D) {
    Scope *Cur = S.getCurScope();
    for (auto I = S.IdResolver.begin(D->getDeclName()); I != S.IdResolver.end();
         ++I)
      if (Cur->isDeclScope(*I) && D->declarationReplaces(*I)) {
        Cur->RemoveDecl(*I);
        S.IdResolver.RemoveDecl(*I);
        break;
      }
    Cur->AddDecl(D);
    S.IdResolver.AddDecl(D);
  };
  auto Leave = [&] {
    Scope *Cur = S.getCurScope();
    llvm::SmallVector<Decl *, 8> Decls(Cur->decls());
    for (Decl *D : Decls) {
      Cur->RemoveDecl(D);
      if (cast<NamedDecl>(D)->getDeclName())
        S.IdResolver.RemoveDecl(cast<NamedDecl>(D));
    }
    P->ExitScope();
    --Entered;
  };

  bool Ok = true;
  {
    Sema::ContextRAII TU(S, Ctx.getTranslationUnitDecl());
    // The function's lexical contexts, outermost first, each with its
    // template parameters, as ParseLateTemplatedFuncDef enters them.
    llvm::SmallVector<DeclContext *, 4> Contexts;
    for (DeclContext *DC = Around.Fn; DC && !DC->isTranslationUnit();
         DC = DC->getLexicalParent())
      Contexts.push_back(DC);
    for (DeclContext *DC : llvm::reverse(Contexts)) {
      S.ActOnReenterTemplateScope(
          cast<Decl>(DC), [&] { return Enter(Scope::TemplateParamScope); });
      if (DC == Around.Fn)
        Enter(Scope::FnScope | Scope::DeclScope | Scope::CompoundStmtScope);
      else
        Enter(Scope::DeclScope);
      S.PushDeclContext(S.getCurScope(), DC);
    }
    S.PushFunctionScope();
    for (const Layer &L : llvm::reverse(Around.Layers)) {
      if (&L != &Around.Layers.back())
        Enter(Scope::DeclScope | Scope::CompoundStmtScope);
      for (NamedDecl *D : L.Decls)
        Push(D);
      for (UsingDirectiveDecl *UD : L.UsingDirectives)
        S.getCurScope()->PushUsingDirective(UD);
    }

    for (size_t I = 0; I < Exprs.size(); ++I) {
      const ClauseExpr &E = *Exprs[I];
      bool WithLoopVar = E.K == ClauseExpr::Kind::Bound && LoopVar;
      if (WithLoopVar) {
        Enter(Scope::DeclScope | Scope::ControlScope);
        Push(LoopVar);
      }
      DiagnosticErrorTrap Trap(Diags);
      {
        EnterExpressionEvaluationContext Evaluation(
            S, Around.InCapture
                   ? Sema::ExpressionEvaluationContext::Unevaluated
                   : Sema::ExpressionEvaluationContext::PotentiallyEvaluated);
        ExprResult R = P->ParseExpression();
        if (R.isUsable())
          R = S.CorrectDelayedTyposInExpr(R);
        const Token &Tok = P->getCurToken();
        if (Tok.isNot(tok::eof) || Tok.getEofData() != &E) {
          if (!Trap.hasErrorOccurred())
            report(Diags, Tok.getLocation(), Level::Error,
                   "expected the end of %0")
                << E.What;
          P->SkipUntil(tok::eof, Parser::StopBeforeMatch);
        }
        Expr *X = R.isUsable() && !Trap.hasErrorOccurred() ? R.get() : nullptr;
        if (X && E.K != ClauseExpr::Kind::KernelArg) {
          IntegerConverter Converter(E.What);
          ExprResult C = S.PerformContextualImplicitConversion(X->getBeginLoc(),
                                                               X, Converter);
          X = C.isUsable() && !Trap.hasErrorOccurred() ? C.get() : nullptr;
        } else if (X && !X->isTypeDependent() &&
                   isHostAddressOrVoid(X->getType())) {
          report(Diags, X->getBeginLoc(), Level::Error,
                 "%0 is passed to the kernel by value and cannot have type "
                 "%1; name an array of a data clause to pass its section")
              << E.What << X->getType();
          X = nullptr;
        }
        if (X)
          X = S.ActOnFinishFullExpr(X, /*DiscardedValue=*/false).get();
        if (E.K == ClauseExpr::Kind::Bound && E.Dim == 0) {
          SectionShape &Shape = ShapeOf(E);
          // Known once both bounds are read: the lower one comes first.
          Shape.Known = X && Var && (!E.IsLength || Shape.Known);
          if (X && Var)
            readBound(E, *X, *Var, SectionOf(E), Shape);
        } else if (E.K == ClauseExpr::Kind::Bound && X && Var) {
          readInnerBound(E, *X, *Var, ShapeOf(E));
        }
        // A constant grain: what the runtime takes, at least 1 and an
        // int64_t.
        if (X && E.K == ClauseExpr::Kind::Grain && !X->isValueDependent())
          if (std::optional<llvm::APSInt> V = X->getIntegerConstantExpr(Ctx)) {
            bool Fits = V->isSigned() ? V->getSignificantBits() <= 64
                                      : V->getActiveBits() <= 63;
            if (!Fits || V->isNegative() || V->isZero())
              report(Diags, E.Loc, Level::Error,
                     "the grain must be a positive integer that fits in "
                     "int64_t; this one is %0")
                  << toString(*V, 10);
          }
      }
      Ok &= !Trap.hasErrorOccurred();
      if (WithLoopVar)
        Leave();
      // On to the next expression's first token; the last eof stays.
      if (I + 1 < Exprs.size())
        P->ConsumeToken();
    }

    while (Entered)
      Leave();
    // Sema's warnings that wait for the end of a function (a division by
    // zero, reachable or not) come now.
    S.PopFunctionScopeInfo();
  }
  // Sections whose first dimension stays while a later one moves reach
  // the runtime as runs of their elements, where they have that shape.
  for (SectionShape &Shape : Shapes)
    if (Shape.Known && !Shape.LowerMoves && Shape.innerMoves() &&
        !Shape.RowsArePointers)
      Shape.Runs = runLayout(Shape);
  return Ok;
}

} // namespace fpm
