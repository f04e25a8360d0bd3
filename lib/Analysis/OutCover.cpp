//===- OutCover.cpp - Out sections an iteration writes whole --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoopWalk::coverOut (LoopWalk.h), a reader of the walk's record: whether each
// iteration of a partitioned loop writes every element of an `out` section. A
// device copies an `out` section back whole without copying it in first: an
// element an iteration does not write comes back as whatever the device's
// buffer held. A generated kernel gets an out array as OUT only where this
// proves that each iteration writes all of its section, and as INOUT elsewhere
// (Offload.cpp); a wrong proof is a wrong answer, a missing one only a copy, so
// anything it does not understand proves nothing.
//
// The proof collects the plain assignments `p[e] = ...` through which an
// iteration writes the array: in the body, and in the functions it calls
// whose bodies are visible (the kernel carries them too), with each
// parameter bound to its argument (a pointer into the array at an offset, an
// integer polynomial of the loop's terms). Each one that runs on every
// iteration writes a range of the section, [Start, Start + Length), over the
// `for` loops around it; the section is covered when ranges chain from its
// element 0 to its length. It reads the walk's record with WalkReaders.cpp's
// readers (what runs on every iteration, the inner loops' ranges, which names
// are invariant). One file of a little over 600 lines, as its parts are the
// steps of one proof (coverSection), read in order.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopWalk.h"

using namespace clang;

namespace fpm::detail {
namespace {

/// How many write sites coverOut looks at for one section (and calls:
/// MaxFrames): beyond them it proves nothing.
constexpr size_t MaxSites = 32;

/// The type of an element of Array, a pointer or an array of one dimension.
QualType elementType(const ASTContext &Ctx, const VarDecl *Array) {
  QualType T = Array->getType().getNonReferenceType();
  if (const auto *P = T->getAs<PointerType>())
    return P->getPointeeType();
  if (const ArrayType *A = Ctx.getAsArrayType(T))
    return A->getElementType();
  return QualType();
}

/// Whether Assign, an assignment to an element of type T, writes all of it:
/// a scalar, or a struct copied whole (in C++ by its trivial copy or move
/// assignment, not an `operator=` of its own that may write a part).
bool assignsWhole(const Expr *Assign, QualType T) {
  if (T->isScalarType())
    return true;
  if (!T->isRecordType())
    return false;
  const auto *Call = dyn_cast<CXXOperatorCallExpr>(Assign);
  if (!Call)
    return true;
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(Call->getDirectCallee());
  return Method && Method->isTrivial() &&
         (Method->isCopyAssignmentOperator() ||
          Method->isMoveAssignmentOperator());
}

/// `element 3`, `elements 1 to n - 2`.
std::string elements(const IntPoly &First, const IntPoly &Last) {
  return First == Last ? "element " + First.str()
                       : "elements " + First.str() + " to " + Last.str();
}

/// `a`, `a and b`, `a, b and c`.
std::string listed(llvm::ArrayRef<std::string> Items) {
  std::string S;
  for (size_t I = 0; I < Items.size(); ++I)
    S += (I == 0 ? "" : I + 1 == Items.size() ? " and " : ", ") + Items[I];
  return S;
}

} // namespace

/// A + B (A - B with Negate), with the inner loops of both.
std::optional<LoopWalk::LoopPoly> LoopWalk::sumOf(LoopPoly A, const LoopPoly &B,
                                                  bool Negate) {
  std::optional<IntPoly> Sum = Negate ? A.P.minus(B.P) : A.P.plus(B.P);
  if (!Sum)
    return std::nullopt;
  A.P = std::move(*Sum);
  for (const auto &Entry : B.Inner)
    A.Inner.insert(Entry);
  return A;
}

/// Whether Pieces, those not Used, chain from From to Length: some piece
/// starts at From or a constant before it and ends where the rest chains on.
/// Sound for every value of the variables: the chain's points go from 0 to
/// Length, so each element x of [0, Length) lies between two consecutive
/// points p <= x < q, and the piece between them, [Start, q) with Start <=
/// p, is not empty there and so written whole.
bool LoopWalk::chains(ArrayRef<Piece> Pieces, const IntPoly &From,
                      const IntPoly &Length, llvm::SmallVectorImpl<bool> &Used,
                      unsigned &Budget) {
  if (From == Length)
    return true;
  for (size_t I = 0; I < Pieces.size(); ++I) {
    if (Used[I] || Budget == 0)
      continue;
    --Budget;
    const Piece &P = Pieces[I];
    std::optional<IntPoly> Back = From.minus(P.Start);
    std::optional<int64_t> Before = Back ? Back->getConstant() : std::nullopt;
    std::optional<IntPoly> End = P.Start.plus(P.Length);
    if (!Before || *Before < 0 || !End)
      continue;
    Used[I] = true;
    if (chains(Pieces, *End, Length, Used, Budget))
      return true;
    Used[I] = false;
  }
  return false;
}

/// What VD stands for in an index or a bound evaluated at Context, in the
/// function F follows (the loop's body where F is null: bodyLeaf): a
/// constant its value, a parameter the argument the call binds it to, an
/// induction variable of a `for` of the function holding Context itself
/// (recorded in Inner; none where Inner is null, and then no argument that
/// names one either), a local of the function assigned only by its
/// initializer what it was initialized to.
std::optional<IntPoly> LoopWalk::frameLeaf(const VarDecl *VD,
                                           const Stmt *Context,
                                           const CallFrame *F,
                                           InnerLoops *Inner, unsigned Depth) {
  if (!F)
    return bodyLeaf(VD, Context, Inner, Depth);
  if (std::optional<int64_t> C = constantValue(VD))
    return IntPoly::constant(*C);
  if (auto It = F->Ints.find(VD); It != F->Ints.end()) {
    const LoopPoly &Arg = It->second;
    if (!Arg.Inner.empty()) {
      if (!Inner)
        return std::nullopt;
      for (const auto &Entry : Arg.Inner)
        Inner->insert(Entry);
    }
    return Arg.P;
  }
  if (Inner)
    if (const ForStmt *L = inductionLoop(VD, Context)) {
      Inner->insert({VD, L});
      return IntPoly::variable(VD);
    }
  const Stmt *Body = F->Callee->getBody();
  if (Depth >= 8 || !isPlainInteger(VD) || isa<ParmVarDecl>(VD) ||
      !VD->hasLocalStorage() || !VD->getInit() ||
      VD->getDeclContext() != F->Callee || !onlyRead(Body, VD))
    return std::nullopt;
  return intPolyFromExpr(VD->getInit(), Ctx, [&](const VarDecl *W) {
    return frameLeaf(W, Context, F, /*Inner=*/nullptr, Depth + 1);
  });
}

/// E, an integer expression of F's function evaluated at Context, as a
/// polynomial of the loop's terms and inner loops' variables.
std::optional<LoopWalk::LoopPoly>
LoopWalk::framePoly(const Expr *E, const CallFrame *F, const Stmt *Context) {
  LoopPoly Result;
  std::optional<IntPoly> P = intPolyFromExpr(E, Ctx, [&](const VarDecl *VD) {
    return frameLeaf(VD, Context, F, &Result.Inner, 0);
  });
  if (!P)
    return std::nullopt;
  Result.P = std::move(*P);
  return Result;
}

/// Where E, a pointer of F's function evaluated at Context, points into
/// Array: its element there; nullopt if fpm cannot tell. E is the array,
/// a parameter bound into it, `q + k`, `k + q`, `q - k` or `&q[k]` of such
/// a q, through conversions that keep the element type (qualifiers, an
/// array's decay): an element of another type would count in other units.
std::optional<LoopWalk::LoopPoly> LoopWalk::pointerInto(const Expr *E,
                                                        const CallFrame *F,
                                                        const VarDecl *Array,
                                                        const Stmt *Context) {
  E = E->IgnoreParens();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (F)
      if (auto It = F->Pointers.find(VD); It != F->Pointers.end())
        return It->second;
    // A called function names the array itself only where it is a global
    // array: a pointer it names might have been moved meanwhile.
    if (VD == Array &&
        (!F || (Array->getType()->isArrayType() && Array->hasGlobalStorage())))
      return LoopPoly{};
    return std::nullopt;
  }
  QualType Element = elementType(Ctx, Array);
  QualType T = E->getType();
  if (Element.isNull() || !T->isPointerType() ||
      !Ctx.hasSameUnqualifiedType(T->getPointeeType(), Element))
    return std::nullopt;
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(E)) {
    CastKind K = Cast->getCastKind();
    if (K != CK_LValueToRValue && K != CK_NoOp && K != CK_ArrayToPointerDecay)
      return std::nullopt;
    return pointerInto(Cast->getSubExpr(), F, Array, Context);
  }
  const Expr *Base = nullptr, *Offset = nullptr;
  bool Minus = false;
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub)) {
    Base = BO->getLHS();
    Offset = BO->getRHS();
    Minus = BO->getOpcode() == BO_Sub;
    if (!Minus && !Base->getType()->isPointerType())
      std::swap(Base, Offset);
  } else if (const auto *UO = dyn_cast<UnaryOperator>(E);
             UO && UO->getOpcode() == UO_AddrOf) {
    if (const auto *ASE =
            dyn_cast<ArraySubscriptExpr>(UO->getSubExpr()->IgnoreParens())) {
      Base = ASE->getBase();
      Offset = ASE->getIdx();
    }
  }
  if (!Base || !Base->getType()->isPointerType() ||
      !Offset->getType()->isIntegerType())
    return std::nullopt;
  std::optional<LoopPoly> Into = pointerInto(Base, F, Array, Context);
  std::optional<LoopPoly> By =
      Into ? framePoly(Offset, F, Context) : std::nullopt;
  return By ? sumOf(std::move(*Into), *By, Minus) : std::nullopt;
}

/// Each call of Def runs its body to the end or to a `return` that is its
/// last statement: nothing before can leave it (runsThrough).
bool LoopWalk::runsToEnd(const FunctionDecl *Def) const {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody());
  if (!Body)
    return false;
  for (const Stmt *S : Body->body()) {
    if (const auto *Return = dyn_cast<ReturnStmt>(S))
      return S == Body->body_back() && runsThrough(Return->getRetValue());
    if (!runsThrough(S))
      return false;
  }
  return true;
}

/// Follows Call, made by F's function (the loop's body where F is null),
/// into the callee's body for its writes to Array, with the parameters bound
/// to what fpm understands of the arguments; nothing if fpm does not follow
/// the callee (followableCallee), or passes no pointer into Array. A
/// parameter the callee writes is bound to nothing.
void LoopWalk::followCall(const CallExpr *Call, const CallFrame *F,
                          const VarDecl *Array, std::deque<CallFrame> &Frames,
                          llvm::SmallVectorImpl<WriteSite> &Sites) {
  unsigned Depth = F ? F->Depth + 1 : 1;
  const FunctionDecl *Def = followableCallee(Call, Depth);
  if (!Def || Frames.size() >= MaxFrames)
    return;
  CallFrame Frame;
  Frame.Callee = Def;
  Frame.Caller = F;
  Frame.Depth = Depth;
  for (unsigned I = 0; I < Def->getNumParams(); ++I) {
    const ParmVarDecl *P = Def->getParamDecl(I);
    const Expr *Arg = Call->getArg(I);
    // The argument converted to the parameter's type, as a prototype makes
    // it; a function without one might see other values.
    if (!Ctx.hasSameUnqualifiedType(Arg->getType(), P->getType()) ||
        !onlyRead(Def->getBody(), P))
      continue;
    if (isPlainInteger(P)) {
      if (std::optional<LoopPoly> Value = framePoly(Arg, F, Call))
        Frame.Ints[P] = std::move(*Value);
    } else if (P->getType()->isPointerType() &&
               Ctx.hasSameUnqualifiedType(P->getType()->getPointeeType(),
                                          elementType(Ctx, Array))) {
      if (std::optional<LoopPoly> Into = pointerInto(Arg, F, Array, Call))
        Frame.Pointers[P] = std::move(*Into);
    }
  }
  if (Frame.Pointers.empty() &&
      !(Array->getType()->isArrayType() && Array->hasGlobalStorage()))
    return;
  if (std::optional<std::string> Why =
          whyNotEachRun(Call, F, "the call of '" + Def->getNameAsString() + "'",
                        Frame.Ranges))
    Frame.NotEach = std::move(*Why);
  Frames.push_back(std::move(Frame));
  collectWrites(Def->getBody(), &Frames.back(), Array, Frames, Sites);
}

/// The plain assignments to elements of Array under Root, in F's function
/// (the loop's body where F is null), and in the functions it calls, in
/// the order they are written; not in a lambda or a block, which may run at
/// any time or never.
void LoopWalk::collectWrites(const Stmt *Root, const CallFrame *F,
                             const VarDecl *Array,
                             std::deque<CallFrame> &Frames,
                             llvm::SmallVectorImpl<WriteSite> &Sites) {
  llvm::SmallVector<const Stmt *, 64> Work{Root};
  while (!Work.empty() && Sites.size() < MaxSites) {
    const Stmt *S = Work.pop_back_val();
    if (!S || isa<LambdaExpr, BlockExpr>(S))
      continue;
    if (isa<BinaryOperator, CXXOperatorCallExpr>(S))
      if (auto Bin = asBinary(cast<Expr>(S)); Bin && Bin->Op == BO_Assign)
        if (const auto *ASE =
                dyn_cast<ArraySubscriptExpr>(Bin->LHS->IgnoreParens());
            ASE && !ASE->isInstantiationDependent() &&
            assignsWhole(cast<Expr>(S), ASE->getType()))
          if (std::optional<LoopPoly> Base =
                  pointerInto(ASE->getBase(), F, Array, ASE)) {
            WriteSite Site{ASE, F, std::nullopt};
            if (std::optional<LoopPoly> Index =
                    framePoly(ASE->getIdx(), F, ASE))
              Site.Element = sumOf(std::move(*Base), *Index);
            Sites.push_back(std::move(Site));
          }
    if (const auto *Call = dyn_cast<CallExpr>(S);
        Call && !isa<CXXOperatorCallExpr>(Call))
      followCall(Call, F, Array, Frames, Sites);
    // Children in reverse, so that they come off the stack in order.
    size_t Mark = Work.size();
    llvm::append_range(Work, S->children());
    std::reverse(Work.begin() + Mark, Work.end());
  }
}

/// Why S, in F's function (the loop's body where F is null), may not run on
/// every iteration of the partitioned loop; nullopt if it does, with the
/// `for` loops around it, innermost first and then those around the calls
/// that lead to it, in Ranges: S is under no condition in their bodies nor
/// in its function's, no break, continue, goto, return or call that does
/// not return can skip it, each loop around it is a `for` by one whose
/// bounds stay the same through the iteration (unitRange), and the call of
/// its function runs on every iteration in turn.
std::optional<std::string>
LoopWalk::whyNotEachRun(const Stmt *S, const CallFrame *F,
                        const std::string &What,
                        llvm::SmallVectorImpl<InnerRange> &Ranges) {
  const Stmt *Inner = S;
  for (const Stmt *Loop : enclosingLoops(S)) {
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
    std::optional<UnitRange> Range = V ? unitRange(L, V, F) : std::nullopt;
    if (!Range)
      return What +
             " is in a 'for' loop that fpm cannot count (it counts 'for (v "
             "= a; v < b; ++v)', a and b the same through the iteration)";
    Ranges.push_back({L, V, std::move(*Range)});
    Inner = L;
  }
  if (!F) {
    if (!evaluatedEachTime(For.getBody(), Inner))
      return What + " is conditional";
    if (!runsThrough(For.getBody()))
      return "a 'continue', 'goto' or a call that does not return may skip " +
             What;
    return std::nullopt;
  }
  if (!evaluatedEachTime(F->Callee->getBody(), Inner))
    return What + " is conditional";
  if (!runsToEnd(F->Callee))
    return "a 'return', 'goto' or a call that does not return may skip " + What;
  if (!F->NotEach.empty())
    return F->NotEach;
  Ranges.append(F->Ranges.begin(), F->Ranges.end());
  return std::nullopt;
}

/// The elements of the section [Lower, ...) that S, which runs on every
/// iteration, writes over the Ranges of the loops around it: a piece
/// [Start, Start + Length); nullopt with Why if fpm cannot tell. They are a
/// piece when S's element is Lower + Start + the sum of c * (v - a) over the
/// loops whose variables v it uses (a: v's first value), and, ordered by c,
/// the first c is 1, each next c the one before times the count of its
/// loop: Length is the last c times its count (one loop: v - a, b - a
/// elements; nested ones as in `i*n*8 + j*8 + k`, all counts but one
/// constants). One loop may also run backwards (c = -1). A loop whose
/// variable S does not use must run a constant number of times, at least
/// once.
std::optional<LoopWalk::Piece> LoopWalk::pieceOf(const WriteSite &S,
                                                 const std::string &Where,
                                                 ArrayRef<InnerRange> Ranges,
                                                 const IntPoly &Lower,
                                                 std::string &Why) {
  std::string What = "the assignment to " + Where;
  std::optional<IntPoly> Offset =
      S.Element ? S.Element->P.minus(Lower) : std::nullopt;
  if (!Offset) {
    Why = "fpm cannot read the index of " + Where + " as an integer polynomial";
    return std::nullopt;
  }
  llvm::SmallVector<const InnerRange *, 4> Used;
  for (const auto &[W, Loop] : S.Element->Inner) {
    if (!Offset->uses(W))
      continue;
    const InnerRange *R =
        llvm::find_if(Ranges, [&, Loop = Loop](const InnerRange &R) {
          return R.Loop == Loop;
        });
    if (R == Ranges.end()) {
      Why = "fpm cannot follow the index of " + Where;
      return std::nullopt;
    }
    Used.push_back(R);
  }
  for (const InnerRange &R : Ranges) {
    std::optional<int64_t> Count = R.Range.Count.getConstant();
    if (!llvm::is_contained(Used, &R) && (!Count || *Count < 1)) {
      Why = "the 'for' loop around " + What + " may run no iteration";
      return std::nullopt;
    }
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
  Why = "fpm cannot prove that the elements " + What +
        " writes are a range of the section";
  // Linear in the variables, with no product of two of them.
  if (!Sum || !(*Sum == *U))
    return std::nullopt;

  std::optional<IntPoly> One = IntPoly::constant(1);
  if (Used.size() == 1 && Coefficients[0] == *One->negated()) {
    // Backwards: D0, D0 - 1, ..., D0 - Count + 1.
    const IntPoly &Count = Used[0]->Range.Count;
    std::optional<IntPoly> Start = D0->minus(Count);
    Start = Start ? Start->plus(*One) : std::nullopt;
    if (!Start)
      return std::nullopt;
    return Piece{std::move(*Start), Count, Where};
  }
  // The mixed radix: coefficient 1, then each the one before times its
  // loop's count. All counts but one must be constants >= 1: then the
  // product is positive only where every loop runs (n*m is positive with n
  // and m negative, where nothing is written).
  std::optional<IntPoly> Radix = One;
  unsigned Symbolic = 0;
  llvm::SmallVector<bool, 4> Taken(Used.size(), false);
  for (size_t Step = 0; Step < Used.size() && Radix; ++Step) {
    size_t T = 0;
    while (T < Used.size() && (Taken[T] || !(Coefficients[T] == *Radix)))
      ++T;
    if (T == Used.size())
      return std::nullopt;
    Taken[T] = true;
    const IntPoly &Count = Used[T]->Range.Count;
    std::optional<int64_t> Constant = Count.getConstant();
    Symbolic += !Constant || *Constant < 1;
    Radix = Radix->times(Count);
  }
  if (!Radix)
    return std::nullopt;
  if (Symbolic > 1) {
    Why = What + " is in loops of which several run a number of times that "
                 "is not a constant: the product of their counts may be "
                 "positive where two of them run no iteration";
    return std::nullopt;
  }
  Why.clear();
  return Piece{std::move(*D0), std::move(*Radix), Where};
}

/// Whether every iteration writes all of Section, an out clause's: the
/// plain assignments to elements of its array that run on every iteration
/// (whyNotEachRun), in the body or in the functions it calls, each write a
/// piece of the section (pieceOf), and the pieces chain from its element 0
/// to its length (chains). Otherwise why not, for the remark: what the
/// pieces write, else the reason of the assignment that came closest.
OutCover LoopWalk::coverSection(const DataSection &Section) {
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
  std::optional<IntPoly> Lower = sectionPoly(Section, /*Length=*/false);
  std::optional<IntPoly> Length = sectionPoly(Section, /*Length=*/true);
  if (!Lower || !Length) {
    Cover.Why = "fpm cannot read the section's bounds as integer polynomials "
                "of the loop variable and values the loop does not change";
    return Cover;
  }
  // The array the body names is the same memory throughout the loop: an
  // array, or a local or parameter pointer whose address is never taken
  // (the checks refuse a write to it in the body), not a global pointer a
  // called function might move.
  QualType T = Array->getType();
  if (T->isReferenceType() ||
      !(T->isArrayType() ||
        ((Array->hasLocalStorage() || isa<ParmVarDecl>(Array)) &&
         Fn.getBody() && onlyReadOrAssigned(Fn.getBody(), Array)))) {
    Cover.Why = "fpm cannot tell that '" + Section.Array +
                "' points to the same memory throughout the loop";
    return Cover;
  }
  if (!onlyRead(For.getBody(), Var)) {
    Cover.Why = "the body may change the loop variable '" +
                Var->getName().str() + "' through its address";
    return Cover;
  }

  std::deque<CallFrame> Frames;
  llvm::SmallVector<WriteSite, 8> Sites;
  collectWrites(For.getBody(), nullptr, Array, Frames, Sites);
  llvm::SmallVector<Piece, 8> Pieces;
  std::string NotEach, NotPiece; // The first reason of each kind.
  for (const WriteSite &S : Sites) {
    std::string Where = "'" + text(S.At) + "'";
    if (S.Frame)
      Where += " in '" + S.Frame->Callee->getNameAsString() + "'";
    llvm::SmallVector<InnerRange, 2> Ranges;
    if (std::optional<std::string> Why = whyNotEachRun(
            S.At, S.Frame, "the assignment to " + Where, Ranges)) {
      if (NotEach.empty())
        NotEach = std::move(*Why);
      continue;
    }
    std::string Why;
    if (std::optional<Piece> P = pieceOf(S, Where, Ranges, *Lower, Why))
      Pieces.push_back(std::move(*P));
    else if (NotPiece.empty())
      NotPiece = std::move(Why);
  }
  llvm::SmallVector<bool, 8> Used(Pieces.size(), false);
  unsigned Budget = 4096;
  if (chains(Pieces, IntPoly(), *Length, Used, Budget)) {
    Cover.Whole = true;
    return Cover;
  }

  std::optional<IntPoly> Last = Length->minus(*IntPoly::constant(1));
  llvm::SmallVector<std::string, 4> Wheres, Writes;
  for (const Piece &P : Pieces) {
    std::optional<IntPoly> End = P.Start.plus(P.Length);
    std::optional<IntPoly> PieceLast =
        End ? End->minus(*IntPoly::constant(1)) : std::nullopt;
    if (!PieceLast || !Last)
      break;
    Wheres.push_back(P.Where);
    Writes.push_back(elements(P.Start, *PieceLast));
  }
  if (!Pieces.empty() && Wheres.size() == Pieces.size())
    Cover.Why =
        (Pieces.size() == 1 ? "the assignment to " : "the assignments to ") +
        listed(Wheres) + (Pieces.size() == 1 ? " writes " : " write ") +
        listed(Writes) + " of the section, which has " +
        elements(IntPoly(), *Last);
  else if (!NotPiece.empty())
    Cover.Why = NotPiece;
  else if (!NotEach.empty())
    Cover.Why = NotEach;
  else
    Cover.Why = "the body has no assignment '" + Section.Array +
                "[...] = ...' that fpm can follow";
  return Cover;
}

llvm::SmallVector<OutCover, 2> LoopWalk::coverOut() {
  llvm::SmallVector<OutCover, 2> Covers;
  for (const DataSection &Section : Pragma.Out)
    Covers.push_back(coverSection(Section));
  return Covers;
}

} // namespace fpm::detail
