//===- SectionChecks.cpp - What a device would lose of the data clauses ---===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The data-uses check (LoopChecks.h), which reads the data clauses against
// the body: a subscript provably outside its section and an out array read
// before it is written (warnings, only for a loop without errors). Each proves
// with integer polynomials (IntPoly.h) or stays silent, reading the walk's
// record with WalkReaders.cpp's readers.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

using namespace clang;

namespace fpm::detail {

namespace {

/// How a subscript uses its element.
enum class UseKind { Other, Read, Write, ReadWrite };

/// One section of a data clause.
struct ClauseSection {
  StringRef Clause;
  const DataSection *Section;
};

UseKind useKind(const LoopWalk &Walk, const Subscript &S) {
  if (S.InLambda || !S.RootRef || S.Indices.empty() ||
      S.At->isInstantiationDependent() || !S.At->getType()->isScalarType())
    return UseKind::Other;
  if (S.IsWrite)
    return S.AlsoReads ? UseKind::ReadWrite : UseKind::Write;
  return Walk.readsValue(S.At) ? UseKind::Read : UseKind::Other;
}

/// Every write of the body is to a variable, an element of a clause's array
/// or of an array of the body's own, and no call can write through a
/// pointer: a write to a clause's array is one of the body's subscripts.
bool writesAreVisible(const LoopWalk &Walk,
                      const llvm::DenseSet<const VarDecl *> &ClauseArrays) {
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
            Walk.isInside(VD->getLocation(),
                          Walk.For.getBody()->getSourceRange()));
  };
  return forEachStmt(Walk.For.getBody(), [&](const Stmt *S) {
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
    return true;
  });
}

/// S's first index minus a section's lower bound, with the inner loops
/// whose variables it uses in Inner; nullopt if it is no integer
/// polynomial.
std::optional<IntPoly> offsetInSection(LoopWalk &Walk, const Subscript &S,
                                       const IntPoly &Lower,
                                       LoopWalk::InnerLoops &Inner) {
  std::optional<IntPoly> Index =
      intPolyFromExpr(S.Indices[0], Walk.Ctx, [&](const VarDecl *VD) {
        return Walk.bodyLeaf(VD, S.At, &Inner, 0);
      });
  return Index ? Index->minus(Lower) : std::nullopt;
}

/// S's first index, against the first dimension of a section
/// `[Lower:Length]`, is outside it each time S runs (constant offset), or
/// at the first or the last iteration of an inner loop `for (v = a; v < b;
/// ++v)` that runs S at each.
bool provenOutside(LoopWalk &Walk, const Subscript &S, const IntPoly &Lower,
                   const IntPoly &Length) {
  LoopWalk::InnerLoops Inner;
  std::optional<IntPoly> Offset = offsetInSection(Walk, S, Lower, Inner);
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
  if (!Split || Split->second == 0 ||
      !Walk.evaluatedEachTime(L->getBody(), S.At) ||
      !Walk.runsThrough(L->getBody()))
    return false;
  std::optional<LoopWalk::UnitRange> Range = Walk.unitRange(L, V);
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

void reportOutsideSection(LoopWalk &Walk, const VarDecl *Array,
                          const ClauseSection &CS) {
  const DataSection &Section = *CS.Section;
  std::optional<IntPoly> Lower = Walk.sectionPoly(Section, /*Length=*/false);
  std::optional<IntPoly> Length = Walk.sectionPoly(Section, /*Length=*/true);
  if (!Lower || !Length)
    return;
  bool Reads = CS.Clause != "out", Writes = CS.Clause != "in";
  for (const Subscript &S : Walk.Subscripts) {
    if (S.Root != Array)
      continue;
    UseKind Kind = useKind(Walk, S);
    bool Read = (Kind == UseKind::Read || Kind == UseKind::ReadWrite) && Reads;
    bool Write =
        (Kind == UseKind::Write || Kind == UseKind::ReadWrite) && Writes;
    if ((!Read && !Write) || !provenOutside(Walk, S, *Lower, *Length))
      continue;
    std::string At = Walk.text(S.At);
    report(Walk.Diags, S.At->getExprLoc(), Level::Warning,
           "'%0' is outside the section '%1' of '%2(...)': on an OpenCL "
           "device this element would %select{not be copied to the "
           "device|not be copied back|be neither copied to the device nor "
           "back}3")
        << (At.empty() ? Array->getName().str() + "[...]" : At) << Section.Text
        << CS.Clause
        << (Read && Write ? 2
            : Write       ? 1
                          : 0);
    report(Walk.Diags, Section.Loc, Level::Note,
           "the section is declared here");
    return;
  }
}

void reportOutReadBeforeWrite(LoopWalk &Walk, const VarDecl *Array,
                              ArrayRef<ClauseSection> Sections) {
  // Every use of the array in the body reads or writes one of its elements.
  llvm::DenseMap<const DeclRefExpr *, const Subscript *> Uses;
  for (const Subscript &S : Walk.Subscripts)
    if (S.Root == Array) {
      if (useKind(Walk, S) == UseKind::Other)
        return;
      Uses[S.RootRef] = &S;
    }
  if (!forEachStmt(Walk.For.getBody(), [&](const Stmt *S) {
        const auto *DRE = dyn_cast<DeclRefExpr>(S);
        return !DRE || DRE->getDecl() != Array || Uses.count(DRE);
      }))
    return;

  auto FullExpr = [&](const Stmt *E) {
    for (const Stmt *P = Walk.parentOf(E); isa_and_nonnull<Expr>(P);
         P = Walk.parentOf(P))
      E = P;
    return E;
  };
  // W, a subscript evaluated after R, may write before R's first read: in
  // the same full expression, unless R is on the right of W's assignment;
  // in a loop around both, unless R reads at each iteration of the
  // outermost such loop, from the first.
  auto MayPrecede = [&](const Subscript &W, const Subscript &R) {
    if (FullExpr(W.At) == FullExpr(R.At)) {
      const Stmt *Assign = Walk.parentOf(W.At);
      while (isa_and_nonnull<ParenExpr>(Assign))
        Assign = Walk.parentOf(Assign);
      const auto *BO = dyn_cast_or_null<BinaryOperator>(Assign);
      if (!BO || !BO->isAssignmentOp())
        return true;
      const Stmt *Cur = R.At;
      const Stmt *P = Walk.parentOf(Cur);
      for (; P && P != BO; Cur = P, P = Walk.parentOf(P))
        ;
      if (P != BO || Cur != BO->getRHS())
        return true;
    }
    llvm::SmallVector<const Stmt *, 4> AroundR = Walk.enclosingLoops(R.At);
    llvm::SmallVector<const Stmt *, 4> AroundW = Walk.enclosingLoops(W.At);
    for (const Stmt *Loop : llvm::reverse(AroundR))
      if (llvm::is_contained(AroundW, Loop))
        return !Walk.evaluatedEachTime(loopBody(Loop), R.At) ||
               !Walk.runsThrough(loopBody(Loop));
    return false;
  };

  for (size_t RI = 0; RI < Walk.Subscripts.size(); ++RI) {
    const Subscript &R = Walk.Subscripts[RI];
    if (R.Root != Array)
      continue;
    UseKind RK = useKind(Walk, R);
    if (RK == UseKind::Write)
      return; // Every later read comes after a write.
    if (RK != UseKind::Read && RK != UseKind::ReadWrite)
      continue;
    bool First = true;
    for (size_t WI = RI + 1; WI < Walk.Subscripts.size() && First; ++WI) {
      const Subscript &W = Walk.Subscripts[WI];
      UseKind WK = W.Root == Array ? useKind(Walk, W) : UseKind::Other;
      if ((WK == UseKind::Write || WK == UseKind::ReadWrite) &&
          MayPrecede(W, R))
        First = false;
    }
    if (First) {
      report(Walk.Diags, R.At->getExprLoc(), Level::Warning,
             "'%0' is declared 'out(...)' but read here before it is "
             "written: on an OpenCL device the read sees uninitialized "
             "memory; declare it 'inout(...)'")
          << Array->getName();
      report(Walk.Diags, Sections.front().Section->Loc, Level::Note,
             "the section is declared here");
      return;
    }
    if (RK == UseKind::ReadWrite)
      return; // It writes too.
  }
}

} // namespace

CheckResult DataUsesCheck::run(CheckContext &Context) {
  LoopWalk &Walk = Context.Walk;
  llvm::MapVector<const VarDecl *, llvm::SmallVector<ClauseSection, 2>> Arrays;
  for (auto [Clause, Sections] :
       {std::pair<StringRef, const llvm::SmallVector<DataSection, 2> *>{
            "in", &Walk.Pragma.In},
        {"out", &Walk.Pragma.Out},
        {"inout", &Walk.Pragma.InOut}})
    for (const DataSection &Section : *Sections) {
      // A macro may name any of the arrays: no array's clauses are known.
      if (Section.ArrayIsMacro)
        return CheckResult::Pass;
      std::optional<const ValueDecl *> D = Walk.visibleDecl(Section.Array);
      const auto *VD = D ? dyn_cast_or_null<VarDecl>(*D) : nullptr;
      if (VD && !VD->getType()->isDependentType())
        Arrays[VD].push_back({Clause, &Section});
    }
  llvm::DenseSet<const VarDecl *> ClauseArrays;
  for (const auto &Entry : Arrays)
    ClauseArrays.insert(Entry.first);
  bool Visible = Walk.Gotos.empty() && writesAreVisible(Walk, ClauseArrays);
  for (const auto &[Array, Sections] : Arrays) {
    if (Sections.size() == 1)
      reportOutsideSection(Walk, Array, Sections.front());
    if (Visible && llvm::all_of(Sections, [](const ClauseSection &CS) {
          return CS.Clause == "out" && CS.Section->Dims == 1;
        }))
      reportOutReadBeforeWrite(Walk, Array, Sections);
  }
  return CheckResult::Pass;
}

} // namespace fpm::detail
