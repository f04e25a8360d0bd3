//===- OutCover.cpp - Out sections an iteration writes whole --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// LoopCheck::coverOut (LoopCheck.h): whether each iteration of a partitioned
// loop writes every element of an `out` section. A device copies an `out`
// section back whole without copying it in first: an element an iteration
// does not write comes back as whatever the device's buffer held. A generated
// kernel gets an out array as OUT only where this proves that each iteration
// writes all of its section, and as INOUT elsewhere (Offload.cpp). It reads
// the walk's record with SectionChecks.cpp's readers (what runs on every
// iteration, the inner loops' ranges, which names are invariant).
//
//===----------------------------------------------------------------------===//

#include "LoopCheck.h"

using namespace clang;

namespace fpm::detail {

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
  std::optional<IntPoly> Offset = offsetInSection(S, Lower, Inner);
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

} // namespace fpm::detail
