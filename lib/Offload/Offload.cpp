//===- Offload.cpp - Which loops run on OpenCL devices --------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// planOffload (Offload.h): whether a loop also runs on OpenCL devices, from
// its sections' shapes and the kernel KernelEmitter prints, and the remarks
// that say so. Some 720 lines: each refusal is decided at the
// section it names, in the one pass over the clauses that the kernel's
// request is built from.
//
//===----------------------------------------------------------------------===//

#include "Offload/Offload.h"

#include "Analysis/StmtWalk.h"
#include "LoopModel.h"
#include "Offload/KernelCheck.h"
#include "Offload/KernelEmitter.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// The loop the kernel is generated from, its variable and its function: in
/// a function template, its one instantiation's copy (the template's own has
/// dependent types).
struct ConcreteLoop {
  const ForStmt *For = nullptr;
  const VarDecl *Var = nullptr;
  const FunctionDecl *Fn = nullptr;
};

/// L's concrete loop; For null, with Why set, when a template has not
/// exactly one instantiation.
ConcreteLoop concreteLoop(const LoopModel &L, std::string &Why) {
  const FunctionTemplateDecl *Template = L.Fn->getDescribedFunctionTemplate();
  if (!Template && !L.Fn->isDependentContext())
    return {L.Loop.For, L.Loop.Var, L.Fn};
  llvm::SmallVector<const FunctionDecl *, 2> Instances;
  if (Template)
    for (const FunctionDecl *FD : Template->specializations())
      if (FD->hasBody())
        Instances.push_back(FD);
  if (Instances.size() != 1) {
    Why = "it is in a template with " + std::to_string(Instances.size()) +
          " instantiations; fpm offloads a template's loop when it has one";
    return {};
  }
  // The instantiation's statements keep the template's locations.
  SourceLocation ForLoc = L.Loop.For->getForLoc();
  llvm::SmallVector<const Stmt *, 32> Work{Instances[0]->getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *For = dyn_cast<ForStmt>(S);
        For && For->getForLoc() == ForLoc) {
      const VarDecl *Var = nullptr;
      if (const auto *DS = dyn_cast_or_null<DeclStmt>(For->getInit()))
        Var = DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                                 : nullptr;
      else if (const auto *BO =
                   dyn_cast_or_null<BinaryOperator>(For->getInit()))
        if (const auto *DRE =
                dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
          Var = dyn_cast<VarDecl>(DRE->getDecl());
      if (Var)
        return {For, Var, Instances[0]};
      break;
    }
    llvm::append_range(Work, S->children());
  }
  Why = "fpm cannot find the loop in the template's instantiation";
  return {};
}

/// V, a variable declared outside the loop, as C's function sees it: in a
/// template's instantiation, its copy of the template's local or parameter,
/// found by its location (an instantiation keeps the template's); V itself
/// when V is not in a template. Null if there is no copy.
const VarDecl *concreteVar(const ConcreteLoop &C, const VarDecl *V) {
  if (!V->isLocalVarDeclOrParm() || !V->getDeclContext()->isDependentContext())
    return V;
  for (const ParmVarDecl *P : C.Fn->parameters())
    if (P->getLocation() == V->getLocation())
      return P;
  llvm::SmallVector<const Stmt *, 32> Work{C.Fn->getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D);
            VD && VD->getLocation() == V->getLocation())
          return VD;
    llvm::append_range(Work, S->children());
  }
  return nullptr;
}

/// A device copies an `out` section back whole, without copying it in: the
/// kernel gets each array of an out section of one dimension that the body
/// may write only in part as INOUT instead (one of several dimensions is
/// INOUT already, EmitCommon.cpp), with a remark that says why.
void copyInPartialOuts(ASTContext &Ctx, const LoopModel &L,
                       const ConcreteLoop &C, GeneratedKernel &Kernel,
                       bool Remarks) {
  const PartitionPragma &P = *L.Pragma;
  llvm::SmallVector<OutCover, 2> Covers = checkOutCover(
      Ctx, P, *C.Fn, *C.For, *C.Var, C.For == L.Loop.For ? &L.Shapes : nullptr);
  for (KernelParam &Param : Kernel.Params) {
    if (Param.K != KernelParam::Kind::Array || Param.Section < P.In.size() ||
        Param.Section - P.In.size() >= P.Out.size())
      continue;
    size_t Out = Param.Section - P.In.size();
    const DataSection &Section = P.Out[Out];
    // A masked array goes to a device whole and comes back element by
    // element written.
    bool Masked = llvm::any_of(Kernel.Params, [&](const KernelParam &Q) {
      return Q.K == KernelParam::Kind::Mask && Q.Section == Param.Section;
    });
    if (Section.Dims != 1 || Covers[Out].Whole || Masked)
      continue;
    Param.CopyIn = true;
    if (Remarks)
      report(Ctx.getDiagnostics(), Section.Loc, Level::Remark,
             "'%0' may be written only in part of its section '%1': %2; on "
             "OpenCL devices it is copied in as well as out (as for "
             "'inout'), so that the elements an iteration leaves unwritten "
             "keep their values, at the cost of copying the section to the "
             "device")
          << Section.Array << Section.Text << Covers[Out].Why;
  }
}

/// The loop's step when it is a constant.
std::optional<int64_t> constantStep(const ASTContext &Ctx,
                                    const CanonicalLoop &Loop) {
  int64_t Sign = Loop.StepNegated ? -1 : 1;
  if (!Loop.Step)
    return Sign;
  Expr::EvalResult R;
  if (Loop.Step->isValueDependent() || !Loop.Step->EvaluateAsInt(R, Ctx) ||
      !R.Val.getInt().isSignedIntN(32))
    return std::nullopt;
  // An unsigned step of all ones (`w += -1` on an unsigned w) is -1, as the
  // loop's wrapping arithmetic takes it.
  return Sign * R.Val.getInt().getSExtValue();
}

/// E as a polynomial over variables.
std::optional<IntPoly> polyOf(const ASTContext &Ctx, const Expr *E) {
  return intPolyFromExpr(E, Ctx, [](const VarDecl *VD) {
    return std::optional<IntPoly>(IntPoly::variable(VD));
  });
}

/// Whether Lower, a section's lower bound, is >= 0 at every iteration of
/// Loop, taking every variable but the loop's as >= 0 (sizes and offsets
/// are): with the loop variable written as its least value plus v >= 0,
/// no coefficient is negative (`(i - 1) * n` from i = 1 is `v * n`). A
/// wrong guess costs the device, never the answer: the runtime does not run
/// a kernel on an array whose section reaches below its element 0 unless
/// the kernel takes its origin.
bool startsAtZeroOrAbove(const ASTContext &Ctx, const CanonicalLoop &Loop,
                         const std::optional<IntPoly> &Lower) {
  if (!Lower)
    return false;
  if (!Lower->uses(Loop.Var))
    return Lower->hasNoNegativeCoefficient();
  // The loop variable's least value: the start of a loop that runs up, the
  // bound of one that runs down (one past it for `>` and `!=`).
  std::optional<int64_t> Step = constantStep(Ctx, Loop);
  if (!Step || *Step == 0)
    return false;
  std::optional<IntPoly> Least =
      polyOf(Ctx, *Step > 0 ? Loop.Lower : Loop.Bound);
  if (Least && *Step < 0 && Loop.Compare != LoopCompare::GE)
    Least = Least->plus(*IntPoly::constant(1));
  std::optional<IntPoly> From =
      Least ? Least->plus(IntPoly::variable(Loop.Var)) : std::nullopt;
  std::optional<IntPoly> Shifted =
      From ? Lower->substitute(Loop.Var, *From) : std::nullopt;
  return Shifted && Shifted->hasNoNegativeCoefficient();
}

/// Section `Index` of P's in, out and inout clauses, in that order.
const DataSection &sectionAt(const PartitionPragma &P, unsigned Index) {
  if (Index < P.In.size())
    return P.In[Index];
  Index -= P.In.size();
  return Index < P.Out.size() ? P.Out[Index] : P.InOut[Index - P.Out.size()];
}

/// Why two iterations of a written section described by runs (Shape.Runs)
/// may share an element, or nothing: exactly one dimension moves, a single
/// index (each iteration's rows then lie within one index of it, its later
/// dimensions staying within their extents) or the run's (dimension
/// RunDim), by at least its length at each iteration; the rows of the
/// iterations then interleave without meeting while the section stays in
/// its array (the runtime checks that).
std::optional<std::string> runsOverlap(const SectionShape &Shape,
                                       const CanonicalLoop &Loop,
                                       std::optional<int64_t> Step,
                                       const std::string &Var) {
  unsigned Moving = 0, Moves = 0;
  for (unsigned D = 1; D <= Shape.Inner.size(); ++D)
    if (Shape.Inner[D - 1].LowerMoves) {
      ++Moving;
      Moves = D;
    }
  if (Moving != 1)
    return "moves in more than one dimension: fpm cannot show that two "
           "iterations never write the same element";
  const DimShape &Run = Shape.Inner[Moves - 1];
  if (Moves != Shape.Runs->RunDim)
    return Run.Length && Run.Length->getConstant() == 1
               ? std::nullopt
               : std::optional<std::string>(
                     "moves in a dimension that its rows span: fpm cannot "
                     "show that two iterations never write the same "
                     "element");
  // How far the run moves per iteration: its lower bound at v + 1 less at v
  // (affine), times the step; it must be at least its length. Where the
  // difference has no negative coefficient (sizes are >= 0) that holds;
  // where it is a negative constant it does not; otherwise the runtime
  // checks the values.
  std::optional<IntPoly> One = IntPoly::constant(1),
                         Zero = IntPoly::constant(0);
  std::optional<IntPoly> StepPoly =
      Step ? IntPoly::constant(*Step) : std::nullopt;
  std::optional<IntPoly> At1 = Run.Lower->substitute(Loop.Var, *One);
  std::optional<IntPoly> At0 = Run.Lower->substitute(Loop.Var, *Zero);
  std::optional<IntPoly> Move = At1 && At0 ? At1->minus(*At0) : std::nullopt;
  // A step too large for a polynomial's coefficient: the runtime checks.
  if (!Move || !StepPoly)
    return std::nullopt;
  std::optional<IntPoly> Apart = Move->times(*StepPoly);
  std::optional<IntPoly> MinusOne = IntPoly::constant(-1);
  for (bool Negate : {false, true}) {
    std::optional<IntPoly> Signed =
        !Apart || !Negate ? Apart : Apart->times(*MinusOne);
    std::optional<IntPoly> Gap =
        Signed ? Signed->minus(*Run.Length) : std::nullopt;
    if (Gap && Gap->hasNoNegativeCoefficient())
      return std::nullopt;
  }
  std::optional<int64_t> By = Apart ? Apart->getConstant() : std::nullopt;
  std::optional<int64_t> Length = Run.Length->getConstant();
  if (By && Length && (*By < 0 ? -*By : *By) < *Length)
    return "overlaps the next iteration's: its dimension " +
           std::to_string(Moves + 1) + " starts " +
           std::to_string(*By < 0 ? -*By : *By) + " further at each " +
           "iteration of " + Var + " and has " + std::to_string(*Length) +
           ", and a device copies a written section back whole";
  return std::nullopt;
}

/// Why a device cannot take Section, over an array of row pointers
/// (SectionShape::RowsArePointers), or nothing: the runtime packs whole
/// rows of one level of pointers, each from its element 0 with the same
/// length at every iteration (fpm_arg::row_length).
std::optional<std::string>
rowPointersRefusal(const DataSection &Section, const SectionShape &Shape,
                   const CanonicalLoop &Loop, const ASTContext &Ctx,
                   const std::string &Var, StringRef Kind) {
  const std::string Named =
      "its section '" + Section.Text + "' in '" + Kind.str() + "(...)'";
  const std::string &A = Section.Array;
  if (!Shape.Known)
    return "'" + A + "' holds pointers to its rows, and fpm cannot read " +
           Named + " in this template";
  if (Shape.RowLevels != 1 || Section.Dims != 2)
    return "'" + A + "' holds pointers to rows whose elements are " +
           "pointers or arrays themselves (" + Named +
           "): a device follows one level of row pointers (`T **rows`, " +
           "`rows[i:1][0:m]`); allocate what its rows point to as one block " +
           "(`double (*u)[n][n]`) to offload this loop";
  const DimShape &Row = Shape.Inner[0];
  if (!Shape.takesWholeRows())
    return "'" + A + "' holds pointers to its rows, and " + Named +
           " does not take each row from its element 0 with a length that " +
           "stays the same for every iteration of " + Var +
           ": a device packs whole rows; write '" + A + "[" +
           Section.DimBounds[0].Lower + ":" + Section.DimBounds[0].Length +
           "][0:m]', m the elements of a row the loop touches";
  if (std::optional<int64_t> Length = Row.Length->getConstant();
      Length && *Length <= 0)
    return "the rows of " + Named + " have no element";
  if (!startsAtZeroOrAbove(Ctx, Loop, Shape.Lower))
    return "'" + A + "' holds pointers to its rows, and " + Named +
           " may reach below row 0: a device follows the row pointers from "
           "row 0 (name the rows from row 0 on, as in '" +
           A + "[0:n][0:m]', n the rows of '" + A + "')";
  return std::nullopt;
}

} // namespace

bool followsRowPointers(const ASTContext &Ctx, const CanonicalLoop &Loop,
                        const SectionShape &Shape) {
  return Shape.takesWholeRows() && startsAtZeroOrAbove(Ctx, Loop, Shape.Lower);
}

/// The first expression in Body that assigns to, increments or decrements
/// an element of Array (`A[i] = ...`, `A[i][j] += ...`, `*(A + i) = ...`,
/// `++A[i]`); null when none does.
static const Expr *writeTo(const Stmt *Body, const VarDecl *Array) {
  auto WritesArray = [&](const Expr *Target) {
    for (;;) {
      Target = Target->IgnoreParenImpCasts();
      if (const auto *Subscript = dyn_cast<ArraySubscriptExpr>(Target))
        Target = Subscript->getBase();
      else if (const auto *Member = dyn_cast<MemberExpr>(Target))
        Target = Member->getBase();
      else if (const auto *Deref = dyn_cast<UnaryOperator>(Target);
               Deref && Deref->getOpcode() == UO_Deref)
        Target = Deref->getSubExpr();
      else if (const auto *Sum = dyn_cast<BinaryOperator>(Target);
               Sum && Sum->isAdditiveOp())
        Target = Sum->getLHS()->getType()->isPointerType() ? Sum->getLHS()
                                                           : Sum->getRHS();
      else
        break;
    }
    const auto *Ref = dyn_cast<DeclRefExpr>(Target);
    return Ref && Ref->getDecl() == Array;
  };
  const Expr *Write = nullptr;
  forEachStmt(Body, [&](const Stmt *S) {
    if (const auto *Assign = dyn_cast<BinaryOperator>(S);
        Assign && Assign->isAssignmentOp() && WritesArray(Assign->getLHS()))
      Write = Assign->getLHS();
    else if (const auto *Step = dyn_cast<UnaryOperator>(S);
             Step && Step->isIncrementDecrementOp() &&
             WritesArray(Step->getSubExpr()))
      Write = Step->getSubExpr();
    return Write == nullptr;
  });
  return Write;
}

bool planOffload(ASTContext &Ctx, LoopModel &L, bool Remarks) {
  const PartitionPragma &P = *L.Pragma;
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  if (P.Devices == "cpu")
    return true;
  auto Refuse = [&](SourceLocation Loc, StringRef Why) {
    if (P.Devices == "gpu") {
      report(Diags, Loc, Level::Error,
             "loop '%0' cannot run on OpenCL devices: %1")
          << L.Name << Why;
      return false;
    }
    if (Remarks)
      report(Diags, Loc, Level::Remark, "loop '%0' stays on CPU PEs: %1")
          << L.Name << Why;
    if (Remarks && L.Derived && !L.Derived->empty())
      report(Diags, P.KeywordLoc, Level::Note,
             "with the data clauses fpm worked out: %0")
          << *L.Derived;
    return true;
  };
  if (L.NotDerived)
    return Refuse(L.NotDerived->Loc,
                  "it has no data clause and " + L.NotDerived->Reason);
  if (P.In.empty() && P.Out.empty() && P.InOut.empty() && !L.Derived)
    return Refuse(P.KeywordLoc,
                  "it has no in(...), out(...) or inout(...) clause saying "
                  "which data a device must copy");

  // The arrays of the data clauses, in the order of the loop's fpm_args.
  llvm::SmallVector<ClauseArray, 4> Arrays;
  // The written sections the same for every iteration, each with what
  // shows it: a device merges their writes through a write mask.
  struct MaskedSection {
    size_t Index;
    std::string Why;
  };
  llvm::SmallVector<MaskedSection, 2> Masked;
  unsigned Index = 0;
  for (const auto *Sections : {&P.In, &P.Out, &P.InOut})
    for (const DataSection &Section : *Sections) {
      bool Written = Sections != &P.In;
      if (Section.ArrayIsMacro)
        return Refuse(Section.Loc,
                      "'" + Section.Array + "' in a data clause is a macro");
      Arrays.push_back({Section.Array, Index++, Written});
    }

  // What the clauses alone show a device cannot take, which the runtime
  // would otherwise refuse at every call.
  if (L.Shapes.size() == Arrays.size()) {
    std::string Var = "'" + L.Loop.Var->getName().str() + "'";
    std::optional<int64_t> Step = constantStep(Ctx, L.Loop);
    size_t I = 0;
    for (const auto &[Sections, Kind] :
         {std::pair{&P.In, "in"}, {&P.Out, "out"}, {&P.InOut, "inout"}})
      for (const DataSection &Section : *Sections) {
        const SectionShape &Shape = L.Shapes[I];
        ClauseArray &Array = Arrays[I++];
        Array.Decl = Shape.Decl;
        if (Shape.RowsArePointers) {
          if (std::optional<std::string> Why =
                  rowPointersRefusal(Section, Shape, L.Loop, Ctx, Var, Kind))
            return Refuse(Section.Loc, *Why);
          Array.RowPointers = true;
        }
        if (!Shape.Known) {
          Array.Origin = true;
          continue;
        }
        std::string Named =
            "its section '" + Section.Text + "' in '" + Kind + "(...)'";
        if (Shape.LengthVaries)
          return Refuse(Section.Loc,
                        "the length of " + Named + " changes with " + Var +
                            ", and the runtime copies the same number of "
                            "elements for every iteration; give it the "
                            "largest length an iteration needs");
        if (std::optional<int64_t> Length =
                Shape.Length ? Shape.Length->getConstant() : std::nullopt;
            Length && *Length <= 0)
          return Refuse(Section.Loc, Named + " has no element");
        Array.Origin = !startsAtZeroOrAbove(Ctx, L.Loop, Shape.Lower);
        Array.ScalarUnits = Shape.Runs.has_value();
        if (Shape.Runs)
          for (const DimShape &D : Shape.Inner)
            Array.Origin |= !startsAtZeroOrAbove(Ctx, L.Loop, D.Lower);
        if (!Array.Written)
          continue;
        // Written sections are copied back whole, each by the PE that ran
        // the iteration: two iterations' must not share an element.
        if (Shape.Runs) {
          if (std::optional<std::string> Why =
                  runsOverlap(Shape, L.Loop, Step, Var))
            return Refuse(Section.Loc, Named + " " + *Why);
          continue;
        }
        if (Section.Dims > 1 && !Shape.LowerMoves && Shape.innerMoves())
          return Refuse(
              Section.Loc,
              Named +
                  " moves in a later dimension than its first, in a "
                  "shape a device cannot copy back: fpm copies rows of "
                  "runs of elements, so the dimensions after the one "
                  "that moves must be whole ([0:N], N the array's "
                  "constant extent there), those before it one index "
                  "each but for one block, and every bound affine in " +
                  Var + " with lengths that do not change");
        if (!Shape.LowerMoves) {
          // Iterations write elements scattered over it (`cov[i][j]` and
          // `cov[j][i]`, a triangle, a CSR row): a generated kernel marks
          // each element it writes, and a device copies back those only,
          // into one block of memory.
          if (Array.RowPointers)
            return Refuse(Section.Loc,
                          Named + " takes the same rows at every iteration (" +
                              Var +
                              " is not in its first lower bound): a device "
                              "merges such writes through a write mask into "
                              "one block of memory, not through row "
                              "pointers");
          Array.Masked = true;
          Masked.push_back(
              {I - 1, Section.Dims == 1
                          ? Named + " is the same for every iteration (" + Var +
                                " is not in its lower bound)"
                          : Named + " takes the same elements of '" +
                                Section.Array + "' at every iteration (" + Var +
                                " is in none of its lower bounds)"});
          continue;
        }
        std::optional<std::pair<IntPoly, int64_t>> Linear =
            Shape.Lower ? Shape.Lower->splitLinear(L.Loop.Var) : std::nullopt;
        std::optional<int64_t> Length =
            Shape.Length ? Shape.Length->getConstant() : std::nullopt;
        if (Linear && Step && Length) {
          int64_t Apart = Linear->second * *Step;
          Apart = Apart < 0 ? -Apart : Apart;
          if (Apart < *Length)
            return Refuse(Section.Loc,
                          "the written sections of neighbouring iterations "
                          "overlap: " +
                              Named + " starts " + std::to_string(Apart) +
                              " element" + (Apart == 1 ? "" : "s") +
                              " further at each iteration and has " +
                              std::to_string(*Length) +
                              ", and a device copies a written section "
                              "back whole");
        }
      }
  } else {
    for (ClauseArray &Array : Arrays)
      Array.Origin = true;
  }

  // The rows of an array of row pointers are packed one way per array:
  // every section of it must give its rows the same length.
  for (const ClauseArray &A : Arrays) {
    if (!A.RowPointers)
      continue;
    const DataSection &Section = sectionAt(P, A.Index);
    for (const ClauseArray &B : Arrays)
      if (B.Name == A.Name && B.Index < A.Index &&
          sectionAt(P, B.Index).DimBounds[1].Length !=
              Section.DimBounds[1].Length)
        return Refuse(Section.Loc,
                      "'" + A.Name +
                          "' is named in several sections whose "
                          "rows have different lengths ('" +
                          sectionAt(P, B.Index).Text + "' and '" +
                          Section.Text +
                          "'): a device packs the rows of one array one way; "
                          "give every section of it the same '[0:m]'");
  }
  // A masked array's copy back is of what the device marked; another
  // written section of it would be copied back whole, over what other PEs
  // wrote.
  for (const MaskedSection &M : Masked)
    for (const ClauseArray &B : Arrays)
      if (B.Index != M.Index && B.Written && B.Name == Arrays[M.Index].Name) {
        const DataSection &Section = sectionAt(P, B.Index);
        return Refuse(Section.Loc,
                      M.Why +
                          ", so a device merges what iterations write "
                          "into it through a write mask, and its written "
                          "section '" +
                          Section.Text +
                          "' would be copied back whole over what other PEs "
                          "wrote: name '" +
                          B.Name + "' in one written section");
      }

  // An array named in several sections gets one device buffer, which
  // starts at its element 0 (the runtime shares it between arguments of the
  // same data): none of them may reach below it.
  for (const ClauseArray &A : Arrays)
    if (A.Origin && llvm::count_if(Arrays, [&](const ClauseArray &B) {
                      return B.Name == A.Name;
                    }) > 1) {
      const DataSection &Section = sectionAt(P, A.Index);
      return Refuse(Section.Loc,
                    "'" + A.Name +
                        "' is named in several sections, and its section '" +
                        Section.Text +
                        "' may reach below its element 0: a device gives "
                        "the sections of one array one buffer, from its "
                        "element 0");
    }

  for (const ReductionVar &R : L.Vars.Reductions)
    if (R.ScalarType == "FPM_TYPE_LONG_DOUBLE")
      return Refuse(R.Loc, "its reduction variable '" + R.Var->getName().str() +
                               "' is a long double, which OpenCL C does not "
                               "have");

  if (!P.KernelName.empty()) {
    if (!Masked.empty())
      return Refuse(sectionAt(P, Masked.front().Index).Loc,
                    Masked.front().Why +
                        ": a device copies a written section back whole, "
                        "so two PEs would each copy back the elements the "
                        "other wrote (a kernel generated from the body marks "
                        "the elements it writes and merges them; a kernel of "
                        "your own cannot)");
    // The user's kernel: its parameters are the clause's arguments.
    GeneratedKernel Kernel;
    Kernel.Name = P.KernelName;
    Kernel.Source = P.KernelSource;
    Kernel.Origin = "'" + P.KernelName + "' from " + P.KernelPath;
    for (const KernelArgument &Arg : P.KernelArgs) {
      auto Array = llvm::find_if(
          Arrays, [&](const ClauseArray &A) { return A.Name == Arg.Text; });
      auto Reduction =
          llvm::find_if(L.Vars.Reductions, [&](const ReductionVar &R) {
            return R.Var->getName() == Arg.Text;
          });
      KernelParam Param;
      if (kernelArgIsScalar(P, Arg.Text)) {
        // Evaluated before the loop (ClauseSema checked it there).
        Param.K = KernelParam::Kind::Scalar;
        Param.HostExpr = "fpm_karg" + std::to_string(Kernel.Params.size()) +
                         "_" + std::to_string(L.Index);
        Param.Init = Arg.Text;
        Param.InitLoc = Arg.Loc;
      } else if (Reduction != L.Vars.Reductions.end()) {
        // Its partial results: one per work-group (FPM_ARG_REDUCTION).
        Param.K = KernelParam::Kind::Reduction;
        Param.HostExpr = Arg.Text;
        Param.Reduction = Reduction - L.Vars.Reductions.begin();
      } else {
        assert(Array != Arrays.end() && "a data clause's array");
        Param.K = KernelParam::Kind::Array;
        Param.Section = Array->Index;
      }
      Kernel.Params.push_back(std::move(Param));
    }
    // The device compiler parses it at run time; so does Clang here.
    if (!parseOpenClKernel(Kernel.Source, P.KernelPath, Kernel.Options)) {
      report(Diags, P.KernelFileLoc, Level::Error,
             "the kernel file '%0' is not valid OpenCL C 1.2 (errors above): "
             "a device would fail to build it when the program runs")
          << P.KernelFile;
      return false;
    }
    if (Remarks)
      report(Diags, P.KernelNameLoc, Level::Remark,
             "loop '%0' runs the kernel '%1' of '%2' on OpenCL devices")
          << L.Name << P.KernelName << P.KernelFile;
    L.Kernel = std::move(Kernel);
    return true;
  }

  // A write to an array its clauses only copy in would stay on the device.
  for (const ClauseArray &A : Arrays)
    if (A.Decl && !A.Written &&
        llvm::none_of(Arrays, [&](const ClauseArray &B) {
          return B.Written && B.Decl == A.Decl;
        }))
      if (const Expr *Write = writeTo(L.Loop.For->getBody(), A.Decl))
        return Refuse(Write->getExprLoc(),
                      "it writes '" + A.Name +
                          "', which its clauses only copy to devices "
                          "('in(...)'): a device's write would never come "
                          "back; name '" +
                          A.Name + "' in 'inout(...)'");

  std::string Why;
  ConcreteLoop Concrete = concreteLoop(L, Why);
  if (!Concrete.For)
    return Refuse(P.KeywordLoc, Why);
  llvm::SmallVector<std::string, 4> Private;
  for (const VarDecl *VD : L.Vars.Private)
    Private.push_back(VD->getName().str());
  llvm::SmallVector<KernelReduction, 2> Reductions;
  for (const ReductionVar &R : L.Vars.Reductions) {
    const VarDecl *VD = concreteVar(Concrete, R.Var);
    if (!VD)
      return Refuse(R.Loc, "fpm cannot find the reduction variable '" +
                               R.Var->getName().str() +
                               "' in the template's instantiation");
    Reductions.push_back({R.Var->getName().str(), R.Op,
                          VD->getType().getNonReferenceType(), R.Loc});
  }
  KernelRequest Request;
  Request.For = Concrete.For;
  Request.Var = Concrete.Var;
  Request.Fn = Concrete.Fn;
  Request.Arrays = Arrays;
  Request.Private = Private;
  Request.Reductions = Reductions;
  Request.Name = "fpm_kernel_" + std::to_string(L.Index);
  std::variant<GeneratedKernel, OffloadRefusal> Result =
      generateKernel(Ctx, Request);
  if (const auto *Refusal = std::get_if<OffloadRefusal>(&Result))
    return Refuse(Refusal->Loc, Refusal->Reason);
  auto &Kernel = std::get<GeneratedKernel>(Result);
  if (!parseOpenClKernel(Kernel.Source, L.Name + "." + Kernel.Name + ".cl",
                         Kernel.Options)) {
    report(Diags, P.KeywordLoc, Level::Error,
           "internal error: the OpenCL C kernel fpm generated for loop '%0' "
           "does not parse (errors above); please report it with this loop. "
           "'devices(cpu)' on the pragma keeps the loop off devices")
        << L.Name;
    return false;
  }
  if (Remarks && L.Derived && !L.Derived->empty()) {
    // The clauses as a fix-it: pasted, they pin what fpm worked out.
    report(Diags, P.KeywordLoc, Level::Remark,
           "loop '%0' is offloaded with %1, the data clauses fpm worked out: "
           "OpenCL C kernel '%2' generated from its body")
        << L.Name << *L.Derived << Kernel.Name
        << FixItHint::CreateInsertion(P.EndLoc, " " + *L.Derived);
  } else if (Remarks) {
    report(Diags, P.KeywordLoc, Level::Remark,
           "loop '%0' is offloaded: OpenCL C kernel '%1' generated from its "
           "body")
        << L.Name << Kernel.Name;
  }
  if (Remarks) {
    for (const KernelParam &Param : Kernel.Params)
      if (Param.K == KernelParam::Kind::Whole)
        report(Diags, Param.UseLoc, Level::Remark,
               "'%0' is copied whole to OpenCL devices, once per call, as "
               "'%1': the loop reads it and no data clause names it")
            << StringRef(Param.HostExpr).ltrim(':') << Param.Name;
    for (const MaskedSection &M : Masked) {
      const DataSection &Section = sectionAt(P, M.Index);
      report(Diags, Section.Loc, Level::Remark,
             "writes to '%0' are merged through a write mask: %1, so an "
             "OpenCL device gets all of it once per call, marks each element "
             "its iterations write, and copies back after each range only "
             "the marked elements")
          << Section.Array << M.Why;
    }
  }
  copyInPartialOuts(Ctx, L, Concrete, Kernel, Remarks);
  L.Kernel = std::move(Kernel);
  return true;
}

} // namespace fpm
