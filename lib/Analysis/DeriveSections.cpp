//===- DeriveSections.cpp - The data clauses a loop without any needs -----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoopWalk's derivation of in/out/inout sections for a loop whose pragma has
// none (deriveDataClauses, LoopChecker.h): from the walk's record of the
// body's subscripts, each index read as an IntPoly over the loop variable,
// invariants and inner loops' variables, whose ranges (unitRange) give the
// least and greatest element an iteration touches in each dimension. What it
// cannot bound it names, at the use, with the clause to write. A little over
// 700 lines: the derivation's steps (uses, hulls, groups, rows, clauses)
// each read the walk's record in turn, and none is used elsewhere.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopWalk.h"

#include "clang/Basic/CharInfo.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace fpm::detail {
namespace {

/// The least and greatest index of one dimension an iteration touches, as
/// polynomials over the loop variable and invariants.
struct DimHull {
  IntPoly Lo, Hi;
};

/// The elements of one array some uses touch: one hull per dimension.
struct Hull {
  llvm::SmallVector<DimHull, 2> Dims;
  /// A dimension was widened to the array's whole extent (not exactly
  /// what the uses touch).
  bool Widened = false;
};

std::optional<int64_t> difference(const IntPoly &A, const IntPoly &B) {
  std::optional<IntPoly> D = A.minus(B);
  return D ? D->getConstant() : std::nullopt;
}

/// The constant extent of each dimension of an array, the first's included
/// (nullopt where a pointer or a variable length stands).
using Extents = llvm::SmallVector<std::optional<int64_t>, 3>;

/// Dimension D of an array with extents E from 0 to its end; nullopt where
/// E does not say.
std::optional<DimHull> wholeDim(const Extents &E, size_t D) {
  if (D >= E.size() || !E[D])
    return std::nullopt;
  return DimHull{IntPoly(), *IntPoly::constant(*E[D] - 1)};
}

/// A and B, hulls of the same array, differ by constants in every bound, or
/// in a dimension after the first that has a constant extent (a C program
/// indexes it within): one hull holds both.
std::optional<Hull> merged(const Hull &A, const Hull &B, const Extents &E) {
  Hull M = A;
  M.Widened |= B.Widened;
  for (size_t D = 0; D < A.Dims.size(); ++D) {
    // A whole dimension holds any index a C program uses there.
    if (std::optional<DimHull> Whole = wholeDim(E, D);
        Whole && ((A.Dims[D].Lo == Whole->Lo && A.Dims[D].Hi == Whole->Hi) ||
                  (B.Dims[D].Lo == Whole->Lo && B.Dims[D].Hi == Whole->Hi))) {
      M.Dims[D] = std::move(*Whole);
      continue;
    }
    std::optional<int64_t> Lo = difference(A.Dims[D].Lo, B.Dims[D].Lo);
    std::optional<int64_t> Hi = difference(A.Dims[D].Hi, B.Dims[D].Hi);
    if (!Lo || !Hi) {
      std::optional<DimHull> Whole = D > 0 ? wholeDim(E, D) : std::nullopt;
      if (!Whole)
        return std::nullopt;
      M.Dims[D] = std::move(*Whole);
      M.Widened = true;
      continue;
    }
    if (*Lo > 0)
      M.Dims[D].Lo = B.Dims[D].Lo;
    if (*Hi < 0)
      M.Dims[D].Hi = B.Dims[D].Hi;
  }
  return M;
}

/// Inner holds Part in every dimension, provably, or as a whole dimension
/// of constant extent.
bool holds(const Hull &Inner, const Hull &Part, const Extents &E) {
  for (size_t D = 0; D < Inner.Dims.size(); ++D) {
    std::optional<DimHull> Whole = wholeDim(E, D);
    if (Whole && Inner.Dims[D].Lo == Whole->Lo && Inner.Dims[D].Hi == Whole->Hi)
      continue;
    std::optional<int64_t> Lo = difference(Part.Dims[D].Lo, Inner.Dims[D].Lo);
    std::optional<int64_t> Hi = difference(Inner.Dims[D].Hi, Part.Dims[D].Hi);
    if (!Lo || !Hi || *Lo < 0 || *Hi < 0)
      return false;
  }
  return true;
}

/// Adds Part to the first of Groups it can share a hull with, or as a group
/// of its own.
void addToGroups(llvm::SmallVectorImpl<Hull> &Groups, const Hull &Part,
                 const Extents &E) {
  for (Hull &G : Groups)
    if (std::optional<Hull> M = merged(G, Part, E)) {
      G = std::move(*M);
      return;
    }
  Groups.push_back(Part);
}

/// Dimension D of H made whole, where E gives its extent.
void widen(Hull &H, const Extents &E, size_t D) {
  if (std::optional<DimHull> W = wholeDim(E, D);
      W && !(H.Dims[D].Lo == W->Lo && H.Dims[D].Hi == W->Hi)) {
    H.Dims[D] = std::move(*W);
    H.Widened = true;
  }
}

/// H in the shape a device copies (ClauseSema's RunLayout), where whole
/// dimensions make it one. Where no dimension after the first moves with
/// the loop variable V, whole elements of the first (rows): hulls of one
/// row merge then. Where a later one, M, does: past M's first dimension
/// of more than one index the rest whole (the run), and before M one
/// dimension of more than one index (the rows), the others up to the last
/// such whole: their elements are then rows of runs a pitch apart.
void fitRows(Hull &H, const Extents &E, IntPoly::Var V) {
  const size_t N = H.Dims.size();
  size_t M = 1;
  while (M < N && !H.Dims[M].Lo.uses(V))
    ++M;
  if (M == N) {
    for (size_t D = 1; D < N; ++D)
      widen(H, E, D);
    return;
  }
  auto Single = [&](size_t D) {
    return difference(H.Dims[D].Hi, H.Dims[D].Lo) == 0;
  };
  auto Whole = [&](size_t D) {
    std::optional<DimHull> W = wholeDim(E, D);
    return W && H.Dims[D].Lo == W->Lo && H.Dims[D].Hi == W->Hi;
  };
  // Already rows of runs: the run the last dimension that is not whole,
  // before it single indices, then whole dimensions after the rows' first,
  // then single indices; the moving dimension a single index or the run.
  size_t RunDim = N - 1;
  while (RunDim > M && Whole(RunDim))
    --RunDim;
  size_t D = RunDim;
  while (D > 0 && Single(D - 1))
    --D;
  while (D > 1 && Whole(D - 1))
    --D;
  if (D > 0)
    --D; // the rows' first dimension
  bool Fits = M == RunDim || Single(M);
  for (size_t X = 0; X < D && Fits; ++X)
    Fits = Single(X);
  if (Fits)
    return;
  size_t Run = M + 1;
  while (Run < N && Single(Run))
    ++Run;
  for (size_t D = Run + 1; D < N; ++D)
    widen(H, E, D);
  std::optional<size_t> First, Last;
  for (size_t D = 0; D < M; ++D)
    if (!Single(D)) {
      First = First.value_or(D);
      Last = D;
    }
  if (First)
    for (size_t D = *First + 1; D <= *Last; ++D)
      widen(H, E, D);
}

/// P is C + K * V with C and K free of V: what the runtime takes for a
/// section's lower bound.
bool affineIn(const IntPoly &P, IntPoly::Var V) {
  std::optional<IntPoly> Next =
      IntPoly::variable(V).plus(*IntPoly::constant(1));
  Next = Next ? P.substitute(V, *Next) : std::nullopt;
  std::optional<IntPoly> Step = Next ? Next->minus(P) : std::nullopt;
  return Step && !Step->uses(V);
}

/// The extents of an array of type T.
Extents extentsOf(const ASTContext &Ctx, QualType T) {
  Extents E;
  T = T.getNonReferenceType();
  while (true) {
    if (const auto *P = T->getAs<PointerType>()) {
      E.push_back(std::nullopt);
      T = P->getPointeeType();
    } else if (const ArrayType *A = Ctx.getAsArrayType(T)) {
      const auto *C = dyn_cast<ConstantArrayType>(A);
      E.push_back(C ? std::optional<int64_t>(C->getSize().getZExtValue())
                    : std::nullopt);
      T = A->getElementType();
    } else {
      return E;
    }
  }
}

/// P as C: where it may be negative, its unsigned variables converted
/// first (`(long long)i - 1`: at i = 0 the runtime samples -1, not a
/// wrapped unsigned value).
std::string boundText(const IntPoly &P) {
  std::string Text = P.str();
  if (P.hasNoNegativeCoefficient())
    return Text;
  for (IntPoly::Var V : P.vars()) {
    if (!V->getType()->isUnsignedIntegerType())
      continue;
    std::string Name = V->getName().str(), Out;
    for (size_t I = 0; I < Text.size();) {
      bool Starts =
          Text.compare(I, Name.size(), Name) == 0 &&
          (I == 0 || !(isAlphanumeric(Text[I - 1]) || Text[I - 1] == '_'));
      size_t End = I + Name.size();
      if (Starts && (End == Text.size() ||
                     !(isAlphanumeric(Text[End]) || Text[End] == '_'))) {
        Out += "(long long)" + Name;
        I = End;
      } else {
        Out += Text[I++];
      }
    }
    Text = std::move(Out);
  }
  return Text;
}

/// Length of D: Hi - Lo + 1.
std::optional<IntPoly> lengthOf(const DimHull &D) {
  std::optional<IntPoly> Length = D.Hi.minus(D.Lo);
  return Length ? Length->plus(*IntPoly::constant(1)) : std::nullopt;
}

std::string sectionText(StringRef Array, const Hull &H) {
  std::string Text = Array.str();
  for (const DimHull &D : H.Dims) {
    std::optional<IntPoly> Length = lengthOf(D);
    Text +=
        "[" + boundText(D.Lo) + ":" + (Length ? boundText(*Length) : "?") + "]";
  }
  return Text;
}

/// H as a section: its text and each dimension's bounds.
DerivedSection derivedSection(StringRef Clause, StringRef Array,
                              const Hull &H) {
  DerivedSection S{Clause.str(), sectionText(Array, H), {}};
  for (const DimHull &D : H.Dims)
    if (std::optional<IntPoly> Length = lengthOf(D))
      S.Bounds.push_back({D.Lo, *Length});
  return S;
}

} // namespace

LoopWalk::ElementUse LoopWalk::elementUse(const Subscript &S) const {
  if (S.InLambda || !S.RootRef || S.Indices.empty() ||
      S.At->isInstantiationDependent())
    return ElementUse::Unknown;
  QualType T = S.At->getType();
  // A pointer read from an array (a row of `double **`) would reach the
  // device as the host's address.
  if (T->isScalarType() && !T->isAnyPointerType() &&
      !T->isMemberPointerType() && !T->isBlockPointerType()) {
    if (S.IsWrite)
      return S.AlsoReads ? ElementUse::Update : ElementUse::Write;
    return readsValue(S.At) ? ElementUse::Read : ElementUse::Unknown;
  }
  if (isa<ConstantArrayType>(T.getCanonicalType()))
    return S.IsWrite ? ElementUse::Unknown : passedBlock(S.At);
  if (!T->isRecordType())
    return ElementUse::Unknown;
  if (S.IsWrite)
    return S.AlsoReads ? ElementUse::Update : ElementUse::Write;
  // A member of the element, `p[i].x` or `p[i].v[k]`: read where its value
  // is loaded, written in part where it is assigned.
  const Stmt *Cur = S.At;
  const Stmt *P = parentOf(Cur);
  while (true) {
    if (isa_and_nonnull<ParenExpr>(P)) {
    } else if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P);
               Cast && (Cast->getCastKind() == CK_NoOp ||
                        Cast->getCastKind() == CK_ArrayToPointerDecay)) {
    } else if (const auto *ME = dyn_cast_or_null<MemberExpr>(P);
               ME && !ME->isArrow() && ME->getBase() == Cur) {
    } else if (const auto *ASE = dyn_cast_or_null<ArraySubscriptExpr>(P);
               ASE && ASE->getBase() == Cur) {
    } else {
      break;
    }
    Cur = P;
    P = parentOf(P);
  }
  if (Cur == S.At)
    return ElementUse::Unknown;
  if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P))
    return Cast->getCastKind() == CK_LValueToRValue ? ElementUse::Read
                                                    : ElementUse::Unknown;
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
      BO && BO->isAssignmentOp() && BO->getLHS() == Cur)
    return ElementUse::Update;
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(P);
      UO && UO->isIncrementDecrementOp())
    return ElementUse::Update;
  return ElementUse::Unknown;
}

/// How a function uses a block of constant extents passed to it (an array
/// or a row of one, `f(lhs[i][j])` or `f(a)` with `void f(double b[5][5])`):
/// it reaches that block only, and may write it unless it takes it as
/// const. Unknown where E is not a call's argument.
LoopWalk::ElementUse LoopWalk::passedBlock(const Expr *E) const {
  const Stmt *P = parentOf(E);
  while (isa_and_nonnull<ParenExpr>(P))
    P = parentOf(P);
  const auto *Decay = dyn_cast_or_null<ImplicitCastExpr>(P);
  if (!Decay || Decay->getCastKind() != CK_ArrayToPointerDecay)
    return ElementUse::Unknown;
  // A const parameter adds a qualification conversion.
  const Expr *Arg = Decay;
  P = parentOf(Arg);
  while (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P)) {
    if (Cast->getCastKind() != CK_NoOp)
      return ElementUse::Unknown;
    Arg = Cast;
    P = parentOf(Cast);
  }
  const auto *Call = dyn_cast_or_null<CallExpr>(P);
  const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
  if (!Callee)
    return ElementUse::Unknown;
  for (unsigned A = 0; A < Call->getNumArgs() && A < Callee->getNumParams();
       ++A) {
    if (Call->getArg(A) != Arg)
      continue;
    const auto *Ptr = Callee->getParamDecl(A)->getType()->getAs<PointerType>();
    QualType Pointee = Ptr ? Ptr->getPointeeType() : QualType();
    while (!Pointee.isNull() && Pointee->isArrayType() &&
           !Pointee.isConstQualified())
      Pointee = Ctx.getAsArrayType(Pointee)->getElementType();
    return !Pointee.isNull() && Pointee.isConstQualified() ? ElementUse::Read
                                                           : ElementUse::Update;
  }
  return ElementUse::Unknown;
}

/// The least and greatest value of S's index in dimension D over the inner
/// loops around S: an IntPoly, each inner loop's variable at the end of its
/// range that makes it least or greatest. nullopt where the index is not
/// affine in an inner loop's variable, or that loop's range is unknown.
std::optional<std::pair<IntPoly, IntPoly>>
LoopWalk::indexBounds(const Subscript &S, size_t D) {
  InnerLoops Inner;
  std::optional<IntPoly> P =
      intPolyFromExpr(S.Indices[D], Ctx, [&](const VarDecl *VD) {
        return bodyLeaf(VD, S.At, &Inner, 0);
      });
  if (!P)
    return std::nullopt;
  IntPoly Lo = *P, Hi = *P;
  for (const auto &[V, L] : Inner) {
    if (!Lo.uses(V) && !Hi.uses(V))
      continue;
    std::optional<UnitRange> Range = unitRange(L, V);
    if (!Range)
      return std::nullopt;
    std::optional<IntPoly> Last = Range->First.plus(Range->Count);
    Last = Last ? Last->minus(*IntPoly::constant(1)) : std::nullopt;
    if (!Last)
      return std::nullopt;
    auto At = [&](const IntPoly &Of, bool Least) -> std::optional<IntPoly> {
      auto Split = Of.splitLinear(V);
      if (!Split)
        return std::nullopt;
      auto &[C, K] = *Split;
      std::optional<IntPoly> KP = IntPoly::constant(K);
      std::optional<IntPoly> Scaled =
          KP ? KP->times((K >= 0) == Least ? Range->First : *Last)
             : std::nullopt;
      return Scaled ? C.plus(*Scaled) : std::nullopt;
    };
    std::optional<IntPoly> NewLo = At(Lo, true), NewHi = At(Hi, false);
    if (!NewLo || !NewHi)
      return std::nullopt;
    Lo = std::move(*NewLo);
    Hi = std::move(*NewHi);
  }
  // What is left: the loop variable and invariants, or an inner loop's
  // variable a range used (which unitRange does not take).
  for (const IntPoly *B : {&Lo, &Hi})
    for (IntPoly::Var V : B->vars())
      if (V != Var && !isInvariant(V))
        return std::nullopt;
  return std::pair{std::move(Lo), std::move(Hi)};
}

DerivedClauses LoopWalk::deriveClauses() {
  DerivedClauses Result;
  auto Fail = [&](SourceLocation Loc, std::string Why) {
    Result.Loc = Loc;
    Result.Why = std::move(Why);
    Result.Clauses.clear();
    return Result;
  };
  auto IsPrivate = [&](const VarDecl *VD) {
    return llvm::any_of(Pragma.Private, [&](const PrivateName &P) {
      return P.Name == VD->getName();
    });
  };
  // The arrays the body indexes, in the order of their first use.
  llvm::MapVector<const VarDecl *, llvm::SmallVector<const Subscript *, 4>>
      Arrays;
  llvm::SmallPtrSet<const DeclRefExpr *, 16> Indexed;
  // Arrays passed whole to functions (passedBlock), and how.
  llvm::DenseMap<const VarDecl *, llvm::SmallVector<ElementUse, 2>> Passed;
  for (const Subscript &S : Subscripts)
    if (isOutsideLoop(S.Root) && !IsPrivate(S.Root)) {
      Arrays[S.Root].push_back(&S);
      Indexed.insert(S.RootRef);
    }
  // A pointer or an array the body uses otherwise (passes it, takes an
  // element's address, reads `*p`): which elements it reaches is unknown.
  const DeclRefExpr *Unknown = nullptr;
  forEachStmt(For.getBody(), [&](const Stmt *S) {
    const auto *DRE = dyn_cast<DeclRefExpr>(S);
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!VD || !isOutsideLoop(VD) || IsPrivate(VD) || Indexed.count(DRE))
      return true;
    QualType T = VD->getType().getNonReferenceType();
    if (!T->isPointerType() && !T->isArrayType())
      return true;
    if (Extents E = extentsOf(Ctx, T);
        T->isConstantArrayType() && llvm::all_of(E, [](auto X) { return X; }))
      if (ElementUse Use = passedBlock(DRE); Use != ElementUse::Unknown) {
        Arrays[VD];
        Passed[VD].push_back(Use);
        return true;
      }
    Unknown = DRE;
    return false;
  });
  if (Unknown) {
    std::string Name = Unknown->getDecl()->getName().str();
    return Fail(Unknown->getLocation(),
                "'" + Name + "' is used other than by its elements ('" + Name +
                    "[...]'), so fpm cannot tell which of them a device "
                    "needs; name them in in(...), out(...) or inout(...)");
  }

  // The arrays the functions the body calls name themselves (globals): a
  // device sees of such an array only the sections the loop names, so one
  // the body indexes too is named whole (where its type gives the extent),
  // and one it writes is left to the user.
  llvm::DenseMap<const VarDecl *, const FunctionDecl *> CalleeGlobals;
  {
    llvm::SmallPtrSet<const FunctionDecl *, 8> Seen;
    llvm::SmallVector<std::pair<const Stmt *, const FunctionDecl *>, 8> Todo{
        {For.getBody(), nullptr}};
    while (!Todo.empty()) {
      if (Seen.size() > MaxFrames)
        return Fail(For.getBeginLoc(),
                    "the body calls more functions than fpm follows for "
                    "the globals they use");
      auto [Root, In] = Todo.pop_back_val();
      forEachStmt(Root, [&, In = In](const Stmt *S) {
        if (const auto *Call = dyn_cast<CallExpr>(S))
          if (const FunctionDecl *Callee = Call->getDirectCallee()) {
            const FunctionDecl *Def = nullptr;
            if (Callee->getBody(Def) && Seen.insert(Def).second)
              Todo.push_back({Def->getBody(), Def});
          }
        const auto *DRE = dyn_cast<DeclRefExpr>(S);
        const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
        if (In && VD && VD->hasGlobalStorage() && !VD->isStaticLocal())
          CalleeGlobals.try_emplace(VD, In);
        return true;
      });
    }
  }

  for (const auto &[Array, Uses] : Arrays) {
    std::string Name = Array->getName().str();
    if (Ctx.Idents.get(Name).hadMacroDefinition())
      return Fail(Uses.front()->At->getExprLoc(),
                  "'" + Name + "' is also the name of a macro");
    Extents E = extentsOf(Ctx, Array->getType());
    llvm::SmallVector<Hull, 2> Reads, Writes;
    bool Updated = false;
    if (auto Callee = CalleeGlobals.find(Array);
        Callee != CalleeGlobals.end()) {
      std::optional<Hull> Whole = Hull();
      for (size_t D = 0; D < E.size() && Whole; ++D)
        if (std::optional<DimHull> W = wholeDim(E, D))
          Whole->Dims.push_back(std::move(*W));
        else
          Whole.reset();
      bool Written = llvm::any_of(Uses, [&](const Subscript *S) {
        return elementUse(*S) != ElementUse::Read;
      });
      if (!Whole || Written || !E.size())
        return Fail(Uses.empty() ? For.getBeginLoc()
                                 : Uses.front()->At->getExprLoc(),
                    "'" + Name + "' is also used by '" +
                        Callee->second->getNameAsString() +
                        "', which the body calls, at elements fpm does not "
                        "work out; name them in in(...), out(...) or "
                        "inout(...)");
      Reads.push_back(*Whole);
    }
    for (ElementUse Use : Passed.lookup(Array)) {
      Hull H;
      for (size_t D = 0; D < E.size(); ++D)
        H.Dims.push_back(*wholeDim(E, D));
      Reads.push_back(H);
      if (Use == ElementUse::Update) {
        Writes.push_back(H);
        Updated = true;
      }
    }
    for (const Subscript *S : Uses) {
      std::string At = text(S->At);
      ElementUse Use = elementUse(*S);
      if (Use == ElementUse::Unknown || S->Indices.size() > E.size() ||
          (S->Indices.size() < E.size() &&
           !isa<ConstantArrayType>(S->At->getType().getCanonicalType())))
        return Fail(S->At->getExprLoc(),
                    "fpm cannot tell how the loop uses '" + At + "'" +
                        (S->At->isInstantiationDependent()
                             ? " (its type depends on a template parameter)"
                             : "") +
                        "; name the elements of '" + Name +
                        "' it reads and writes in in(...), out(...) or "
                        "inout(...)");
      bool Writes_ = Use != ElementUse::Read;
      Updated |= Use == ElementUse::Update;
      // Each dimension's bounds; one fpm cannot bound is the whole extent
      // where the type gives it (a written section then is inout), and a
      // block passed to a function is its whole dimensions.
      Hull H;
      llvm::SmallVector<std::optional<std::pair<IntPoly, IntPoly>>, 4> Bounds;
      for (size_t D = 0; D < S->Indices.size(); ++D)
        Bounds.push_back(indexBounds(*S, D));
      for (size_t D = 0; D < E.size(); ++D) {
        if (D >= S->Indices.size()) {
          std::optional<DimHull> W = wholeDim(E, D);
          if (!W)
            return Fail(S->At->getExprLoc(),
                        "fpm cannot tell how the loop uses '" + At + "'");
          H.Dims.push_back(std::move(*W));
          continue;
        }
        if (Bounds[D]) {
          H.Dims.push_back(
              {std::move(Bounds[D]->first), std::move(Bounds[D]->second)});
          continue;
        }
        // A written first dimension whole where no later one moves: the
        // iterations write elements scattered over the array, which a
        // device merges through a write mask.
        std::optional<DimHull> W = wholeDim(E, D);
        if (!W && Writes_)
          return Fail(
              S->Indices[D]->getExprLoc(),
              "fpm cannot tell which elements of '" + Name +
                  "' an iteration writes at '" + At +
                  "' (an index that is not an affine function of the loop "
                  "variable and of inner loops' variables with known "
                  "bounds); name them in out(...) or inout(...)");
        if (!W)
          return Fail(S->At->getExprLoc(),
                      "fpm cannot tell which elements of '" + Name +
                          "' the loop reads at '" + At + "', and '" + Name +
                          "' has no extent fpm knows; name them: in(" + Name +
                          "[0:<elements>])");
        H.Dims.push_back(std::move(*W));
        H.Widened = true;
      }
      fitRows(H, E, Var);
      (Writes_ ? Writes : Reads).push_back(H);
      if (Use == ElementUse::Update)
        Reads.push_back(H);
    }

    // The sections: the hulls that share bounds, one per group, each
    // dimension after the first whole where its bounds vary in length
    // with the loop variable.
    auto Group = [&](ArrayRef<Hull> Parts) {
      llvm::SmallVector<Hull, 2> Groups;
      for (const Hull &H : Parts)
        addToGroups(Groups, H, E);
      for (Hull &G : Groups)
        fitRows(G, E, Var);
      return Groups;
    };
    llvm::SmallVector<Hull, 2> WriteGroups = Group(Writes);
    llvm::SmallVector<Hull, 2> ReadGroups = Group(Reads);
    // Writes at places fpm cannot relate (`cov[i][j]` and `cov[j][i]`): the
    // whole array, merged through a write mask, where its type gives it.
    if (WriteGroups.size() > 1 && llvm::all_of(E, [](auto X) { return X; })) {
      Hull Whole;
      Whole.Widened = true;
      for (size_t D = 0; D < E.size(); ++D)
        Whole.Dims.push_back(*wholeDim(E, D));
      WriteGroups.assign(1, Whole);
    }
    if (WriteGroups.size() > 1)
      return Fail(Uses.front()->At->getExprLoc(),
                  "the loop writes elements of '" + Name +
                      "' at places fpm cannot relate (" +
                      sectionText(Name, WriteGroups[0]) + " and " +
                      sectionText(Name, WriteGroups[1]) +
                      "); name them in out(...) or inout(...)");
    auto Fixed = [&](Hull &H, bool Written) -> std::optional<std::string> {
      for (size_t D = 0; D < H.Dims.size(); ++D) {
        // The runtime takes a lower bound affine in the loop variable and a
        // length that does not change with it.
        std::optional<IntPoly> Length = lengthOf(H.Dims[D]);
        if (Length && !Length->uses(Var) && affineIn(H.Dims[D].Lo, Var))
          continue;
        if (std::optional<DimHull> Whole = wholeDim(E, D)) {
          H.Dims[D] = std::move(*Whole);
          H.Widened = true;
          continue;
        }
        return "the elements of '" + Name + "' an iteration " +
               (Written ? "writes" : "reads") + " (" + sectionText(Name, H) +
               ") change in number with '" + Var->getName().str() +
               "' or are not an affine function of it";
      }
      return std::nullopt;
    };
    std::optional<Hull> Written;
    if (!WriteGroups.empty()) {
      Written = WriteGroups.front();
      if (std::optional<std::string> Why = Fixed(*Written, true))
        return Fail(Uses.front()->At->getExprLoc(),
                    *Why + "; name them in out(...) or inout(...)");
    }
    llvm::SmallVector<Hull, 2> ReadOnly;
    bool ReadsWritten = false;
    for (Hull &R : ReadGroups) {
      if (std::optional<std::string> Why = Fixed(R, false))
        return Fail(Uses.front()->At->getExprLoc(),
                    *Why + "; write in(" + Name + "[...])");
      if (Written && holds(*Written, R, E))
        ReadsWritten = true;
      else
        ReadOnly.push_back(R);
    }
    for (const Hull &R : ReadOnly)
      Result.Clauses.push_back(derivedSection("in", Name, R));
    if (!Written)
      continue;
    std::string Section = sectionText(Name, *Written);
    bool Out = !ReadsWritten && !Updated && !Written->Widened;
    if (Out && Written->Dims.size() == 1) {
      DataSection S;
      S.Array = Name;
      S.Text = Section;
      S.Lower = boundText(Written->Dims[0].Lo);
      std::optional<IntPoly> Length = lengthOf(Written->Dims[0]);
      S.Length = Length ? boundText(*Length) : "";
      S.DimBounds.push_back({S.Lower, S.Length});
      S.Names.push_back(Name);
      Out = coverSection(S).Whole;
    }
    Result.Clauses.push_back(
        derivedSection(Out ? "out" : "inout", Name, *Written));
  }
  return Result;
}

} // namespace fpm::detail

namespace fpm {

llvm::SmallVector<const DerivedSection *, 4> DerivedClauses::inOrder() const {
  llvm::SmallVector<const DerivedSection *, 4> Sections;
  for (StringRef Kind : {"in", "out", "inout"})
    for (const DerivedSection &S : Clauses)
      if (S.Clause == Kind)
        Sections.push_back(&S);
  return Sections;
}

std::string DerivedClauses::text() const {
  std::string Text;
  for (StringRef Kind : {"in", "out", "inout"}) {
    llvm::SmallVector<std::string, 4> Sections;
    for (const DerivedSection *S : inOrder())
      if (S->Clause == Kind)
        Sections.push_back(S->Section);
    if (Sections.empty())
      continue;
    if (!Text.empty())
      Text += " ";
    Text += Kind.str() + "(" + llvm::join(Sections, ", ") + ")";
  }
  return Text;
}

DerivedClauses deriveDataClauses(ASTContext &Ctx, const PartitionPragma &Pragma,
                                 const FunctionDecl &Fn, const ForStmt &For,
                                 const VarDecl &Var) {
  detail::LoopWalk Walk(Ctx, Pragma, Fn, For);
  Walk.Var = &Var;
  Walk.recordBody();
  return Walk.deriveClauses();
}

} // namespace fpm
