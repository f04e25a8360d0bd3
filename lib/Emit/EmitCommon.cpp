//===- EmitCommon.cpp - What the C and C++ emitters share -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Emit/Emitters.h"
#include "Offload/Offload.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <cstdio>

using namespace clang;

namespace fpm {

/// S as the inside of a C string literal: a kernel file's CR (CRLF line
/// ends) or other control byte would end the literal's line or change its
/// meaning, so they are written as octal escapes, and `??` as `?\?` (C89's
/// trigraphs).
std::string escapeString(StringRef S) {
  std::string Out;
  for (size_t I = 0; I < S.size(); ++I) {
    const char C = S[I];
    if (C == '\\' || C == '"')
      Out += '\\';
    if (C == '\n') {
      Out += "\\n";
      continue;
    }
    if (C == '?' && I > 0 && S[I - 1] == '?') {
      Out += "\\?";
      continue;
    }
    if (static_cast<unsigned char>(C) < 0x20 && C != '\t') {
      char Octal[8];
      std::snprintf(Octal, sizeof Octal, "\\%03o",
                    static_cast<unsigned>(static_cast<unsigned char>(C)));
      Out += Octal;
      continue;
    }
    Out += C;
  }
  return Out;
}

/// S with no end of a block comment in it.
std::string commentSafe(StringRef S) {
  std::string Out;
  for (size_t I = 0; I < S.size(); ++I) {
    Out += S[I];
    if (S[I] == '*' && I + 1 < S.size() && S[I + 1] == '/')
      Out += ' ';
  }
  return Out;
}

Text::Text(ASTContext &Ctx)
    : Ctx(Ctx), SM(Ctx.getSourceManager()), Policy(Ctx.getLangOpts()) {
  Policy.SuppressUnwrittenScope = true;
}

std::string Text::of(SourceRange Range) const {
  return Lexer::getSourceText(SM.getExpansionRange(Range), SM,
                              Ctx.getLangOpts())
      .str();
}

std::string Text::of(const Expr *E) const {
  if (const auto *List = dyn_cast<InitListExpr>(E->IgnoreImplicit()))
    if (List->getNumInits() == 1)
      E = List->getInit(0);
  return of(E->getSourceRange());
}

std::string Text::type(QualType T, StringRef Name) const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  T.print(OS, Policy, Name);
  return S;
}

std::string Text::lineDirective(SourceLocation Loc) const {
  PresumedLoc P = SM.getPresumedLoc(Loc);
  return "#line " + std::to_string(P.getLine()) + " \"" +
         escapeString(P.getFilename()) + "\"\n";
}

std::string Text::lineMarker(SourceLocation Loc) const {
  PresumedLoc P = SM.getPresumedLoc(Loc);
  // Indent what follows to its column, unless nothing follows.
  StringRef Rest(SM.getCharacterData(Loc));
  Rest = Rest.substr(0, Rest.find_first_of("\r\n"));
  bool Blank = Rest.find_first_not_of(" \t") == StringRef::npos;
  return lineDirective(Loc) + std::string(Blank ? 0 : P.getColumn() - 1, ' ');
}

namespace {

/// The declarations of the generated kernel and its arguments, at the start
/// of the loop's block (C89 wants them before any statement).
std::string kernelDeclarations(const GeneratedKernel &K, const std::string &S,
                               bool Cxx, const Text &T) {
  std::string Decls;
  llvm::raw_string_ostream OS(Decls);
  OS << "  /* fpm-rewrite: the OpenCL C kernel " << commentSafe(K.Origin)
     << " */\n";
  OS << "  static const char fpm_source" << S << "[] =";
  StringRef Source = K.Source;
  while (!Source.empty()) {
    auto [Line, Rest] = Source.split('\n');
    OS << "\n      \"" << escapeString(Line) << "\\n\"";
    Source = Rest;
  }
  OS << ";\n";
  for (const KernelParam &P : K.Params)
    if (P.K == KernelParam::Kind::Extent)
      OS << "  " << (Cxx ? "std::int64_t " : "int64_t ") << P.Name << S
         << ";\n";
  // The hand-written kernel's values, evaluated once before the loop.
  for (const KernelParam &P : K.Params)
    if (!P.Init.empty())
      OS << T.lineDirective(P.InitLoc) << "  "
         << (Cxx ? "const auto " : "const __typeof__((" + P.Init + ")) ")
         << P.HostExpr << " = (" << P.Init << ");\n";
  OS << "  fpm_arg fpm_kernel_args" << S << "[" << K.Params.size() << "];\n";
  OS << "  fpm_kernel fpm_kernel" << S << " = " << (Cxx ? "{}" : "{0}")
     << ";\n";
  OS << "  int fpm_offload" << S << ";\n";
  return Decls;
}

/// One section of the loop's in, out and inout clauses, as the runtime gets
/// it.
struct DataArg {
  const DataSection *Section;
  const char *Kind;   // FPM_ARG_IN, _OUT or _INOUT
  std::string Clause; // `in(A[i*n:n])`, for comments
};

/// The sections of the in, out and inout clauses, in that order (each
/// clause's in the order written). A section of several dimensions is
/// described by whole elements of its first (rows): more than an `out`
/// writes, so it is passed as INOUT.
llvm::SmallVector<DataArg, 4> dataArgs(const PartitionPragma &P) {
  llvm::SmallVector<DataArg, 4> Args;
  auto Add = [&](ArrayRef<DataSection> Sections, const char *Kind,
                 StringRef Clause) {
    for (const DataSection &Section : Sections)
      Args.push_back({&Section,
                      Section.Dims > 1 && StringRef(Kind) == "FPM_ARG_OUT"
                          ? "FPM_ARG_INOUT"
                          : Kind,
                      (Clause + "(" + Section.Text + ")").str()});
  };
  Add(P.In, "FPM_ARG_IN", "in");
  Add(P.Out, "FPM_ARG_OUT", "out");
  Add(P.InOut, "FPM_ARG_INOUT", "inout");
  return Args;
}

/// The elements of the array VD in its first Dims dimensions, where their
/// extents are constants.
std::optional<uint64_t> constantExtent(const VarDecl *VD, unsigned Dims) {
  if (!VD)
    return std::nullopt;
  uint64_t Extent = 1;
  QualType T = VD->getType().getNonReferenceType();
  for (unsigned D = 0; D < Dims; ++D) {
    const auto *A = dyn_cast<ConstantArrayType>(T.getCanonicalType());
    if (!A || A->getSize().getActiveBits() > 40 || Extent > (1ull << 40))
      return std::nullopt;
    Extent *= A->getSize().getZExtValue();
    T = A->getElementType();
  }
  return Extent;
}

/// `A[0]...[0]`, D subscripts: a row of dimension D - 1 of array A.
std::string subscripted(const std::string &Array, unsigned D) {
  std::string Text = Array;
  for (unsigned I = 0; I < D; ++I)
    Text += "[0]";
  return Text;
}

/// The elements of array A, of Dims dimensions, that one index of
/// dimension D holds, as a C expression.
std::string elementsOf(const std::string &Array, unsigned D, unsigned Dims,
                       const std::string &I64) {
  if (D + 1 == Dims)
    return "1";
  return "(" + I64 + ")(sizeof(" + subscripted(Array, D + 1) + ") / sizeof(" +
         subscripted(Array, Dims) + "))";
}

/// A section described by runs (SectionShape::Runs), sampled: its first
/// run's element, the run's elements, the rows and their pitch.
void emitRuns(llvm::raw_ostream &OS, const DataSection &Section,
              const RunLayout &Runs, const std::string &E,
              const std::string &I64) {
  const std::string &A = Section.Array;
  const unsigned Dims = Section.Dims;
  // `(int64_t)(Bound)`, times the elements of one index of dimension D.
  auto Times = [&](const std::string &Bound, unsigned D) {
    std::string Text = "(" + I64 + ")(" + Bound + ")";
    return D + 1 == Dims ? Text : Text + " * " + elementsOf(A, D, Dims, I64);
  };
  std::string Lower;
  for (unsigned D = 0; D < Dims; ++D)
    Lower += (D ? " + " : "") + Times(Section.DimBounds[D].Lower, D);
  OS << "      " << E << ".lower[fpm_s] = " << Lower << ";\n";
  OS << "      " << E << ".length[fpm_s] = "
     << Times(Section.DimBounds[Runs.RunDim].Length, Runs.RunDim) << ";\n";
  if (!Runs.RowDim)
    return;
  // RowDim's length times the whole dimensions up to RowEnd.
  OS << "      " << E << ".rows = (" << I64 << ")("
     << Section.DimBounds[*Runs.RowDim].Length << ")";
  if (*Runs.RowDim + 1 < Runs.RowEnd)
    OS << " * (" << I64 << ")(sizeof(" << subscripted(A, *Runs.RowDim + 1)
       << ") / sizeof(" << subscripted(A, Runs.RowEnd) << "))";
  OS << "; " << E << ".pitch = " << elementsOf(A, Runs.RowEnd - 1, Dims, I64)
     << ";\n";
}

/// The data part of the loop's block (lib/README.md, "The data clauses in
/// fpm_loop.data"): fills fpm_sections<S> (zeroed) with each section's
/// array, kind, element size, clause and, for an array (Shapes), its
/// extent, then with its lower bound and length at the logical
/// iterations fpm_sample_iteration() names, the loop variable Var (of type
/// Type) computed from each as the body computes it; fpm_describe_sections
/// turns them into fpm_data<S> and fpm_info<S>.data when every section is
/// affine, and says so in fpm_affine<S>. Each line with the user's text is
/// preceded by a `#line` to the section's line, so that the compiler's
/// messages about it point at the clause.
void emitData(llvm::raw_ostream &OS, ArrayRef<DataArg> Args,
              ArrayRef<SectionShape> Shapes, bool Nested,
              const std::string &Type, const std::string &Var,
              const std::string &S, const std::string &I64,
              const std::string &U64, const Text &T) {
  std::string Sections = "fpm_sections" + S, Trip = "fpm_trip" + S;
  std::string N = std::to_string(Args.size());
  OS << "  /* fpm-rewrite: the data clauses' sections, sampled at iterations "
        "0, 1 and T-1 */\n";
  for (size_t I = 0; I < Args.size(); ++I) {
    const DataSection &Section = *Args[I].Section;
    std::string E = Sections + "[" + std::to_string(I) + "]";
    // A section as runs counts the array's scalar elements, any other
    // whole elements of its first dimension.
    const bool ByRuns = Shapes.size() == Args.size() && Shapes[I].Runs;
    // Over row pointers, a row's elements: the runtime follows the pointers.
    const bool Rows =
        Shapes.size() == Args.size() && Shapes[I].takesWholeRows();
    std::string Element = subscripted(Section.Array, ByRuns ? Section.Dims : 1);
    OS << T.lineDirective(Section.Loc);
    OS << "  " << E << ".kind = " << Args[I].Kind << "; " << E
       << ".base = (void *)" << Section.Array << "; " << E << ".size = sizeof("
       << (Rows ? subscripted(Section.Array, 2) : Element) << "); " << E
       << ".clause = \"" << escapeString(Args[I].Clause) << "\";";
    // An array's extent: the runtime reads nothing outside it. A constant
    // one as a number: in C, a loop inside another partitioned loop sees
    // the array as a pointer, in the outer one's outlined body (where a
    // variable-length one's is unknown).
    if (Shapes.size() == Args.size() && Shapes[I].IsArray) {
      if (std::optional<uint64_t> Extent =
              constantExtent(Shapes[I].Decl, ByRuns ? Section.Dims : 1))
        OS << " " << E << ".extent = " << *Extent << ";";
      else if (!Nested)
        OS << " " << E << ".extent = (" << I64 << ")(sizeof(" << Section.Array
           << ") / sizeof(" << Element << "));";
    }
    if (Rows)
      OS << " /* rows through its row pointers"
         << (StringRef(Args[I].Clause).starts_with("out(")
                 ? " (INOUT: they may be written in part)"
                 : "")
         << " */";
    else if (ByRuns)
      OS << " /* as runs of its elements"
         << (StringRef(Args[I].Clause).starts_with("out(")
                 ? " (INOUT: they may be written in part)"
                 : "")
         << " */";
    else if (Section.Dims > 1)
      OS << " /* by whole elements of " << Section.Array
         << (StringRef(Args[I].Clause).starts_with("out(")
                 ? " (INOUT: they may be written in part)"
                 : "")
         << " */";
    OS << "\n";
  }
  OS << "  {\n";
  OS << "    int fpm_s;\n";
  OS << "    for (fpm_s = 0; " << Trip << " > 0 && fpm_s < 3; ++fpm_s) {\n";
  OS << "      const " << Type << " " << Var << " = (" << Type << ")((" << U64
     << ")fpm_lower" << S << " + (" << U64 << ")fpm_sample_iteration(" << Trip
     << ", fpm_s) * (" << U64 << ")fpm_step" << S << ");\n";
  OS << "      (void)" << Var << ";\n";
  for (size_t I = 0; I < Args.size(); ++I) {
    const DataSection &Section = *Args[I].Section;
    std::string E = Sections + "[" + std::to_string(I) + "]";
    OS << T.lineDirective(Section.Loc);
    if (Shapes.size() == Args.size() && Shapes[I].Runs) {
      emitRuns(OS, Section, *Shapes[I].Runs, E, I64);
      continue;
    }
    OS << "      " << E << ".lower[fpm_s] = (" << I64 << ")(" << Section.Lower
       << "); " << E << ".length[fpm_s] = (" << I64 << ")(" << Section.Length
       << ");\n";
    // The same at every iteration (ClauseSema): kept from the last sample.
    if (Shapes.size() == Args.size() && Shapes[I].takesWholeRows())
      OS << "      " << E << ".row_length = (" << I64 << ")("
         << Section.DimBounds[1].Length << ");\n";
  }
  OS << "    }\n";
  OS << "  }\n";
  OS << "  fpm_affine" << S << " = fpm_describe_sections(&fpm_info" << S
     << ", fpm_data" << S << ", " << Sections << ", " << N << ", " << Trip
     << ");\n";
  OS << "  (void)fpm_affine" << S << ";\n";
}

} // namespace

void emitSetup(llvm::raw_ostream &OS, const LoopModel &L, const LoopText &LT,
               const std::string &Type, const std::string &Zero,
               const std::string &ExtraDecls, const Text &T) {
  const PartitionPragma &P = *L.Pragma;
  const std::string &S = LT.Suffix, &I64 = LT.I64;
  bool Cxx = L.Fn->getASTContext().getLangOpts().CPlusPlus;
  llvm::SmallVector<DataArg, 4> Data = dataArgs(P);
  OS << "  const " << Type << " fpm_lower" << S << " = (" << Type << ")("
     << LT.Lower << ");\n";
  // The bound in the type the test compares in: cut down to the variable's
  // type, a long -1 would let an unsigned loop run 2^32 times.
  const std::string &BoundType = LT.CompareType.empty() ? Type : LT.CompareType;
  OS << "  const " << BoundType << " fpm_bound" << S << " = (" << BoundType
     << ")(" << LT.Bound << ");\n";
  OS << "  const " << I64 << " fpm_step" << S << " = " << LT.Step << ";\n";
  OS << "  const " << I64 << " fpm_trip" << S << " = fpm_trip_count_typed(("
     << I64 << ")fpm_lower" << S << ", (" << I64 << ")fpm_bound" << S
     << ", fpm_step" << S << ", " << LT.Compare << ", FPM_INT_TYPE(" << Type
     << "), FPM_INT_TYPE(" << BoundType << "));\n";
  OS << "  fpm_loop fpm_info" << S << " = " << Zero << ";\n";
  OS << ExtraDecls;
  if (L.Kernel)
    OS << kernelDeclarations(*L.Kernel, S, Cxx, T);
  // A length that changes with the iteration is no section the runtime
  // takes (the loop stays on CPU PEs: Offload): none is sampled then.
  const SectionShape *Varies =
      llvm::find_if(L.Shapes, [](const SectionShape &X) {
        return X.Known && X.LengthVaries;
      });
  // Nor are the pointers of an array of rows in a shape the runtime cannot
  // follow (fpm-profile would put back the pointers, not the rows; MPI
  // would send them to other ranks).
  const SectionShape *Pointers =
      llvm::find_if(L.Shapes, [&](const SectionShape &X) {
        return X.RowsArePointers &&
               !followsRowPointers(L.Fn->getASTContext(), L.Loop, X);
      });
  if (Varies != L.Shapes.end()) {
    OS << "  /* fpm-rewrite: no data for the runtime: the length of '"
       << commentSafe(Data[Varies - L.Shapes.begin()].Clause)
       << "' changes with the iteration */\n";
    Data.clear();
  } else if (Pointers != L.Shapes.end()) {
    OS << "  /* fpm-rewrite: no data for the runtime: '"
       << commentSafe(Data[Pointers - L.Shapes.begin()].Clause)
       << "' is over an array of row pointers, and does not take each of "
          "its rows whole from element 0 ([0:m]) from row 0 up */\n";
    Data.clear();
  }
  if (!Data.empty()) {
    OS << "  fpm_section fpm_sections" << S << "[" << Data.size()
       << "] = " << Zero << ";\n";
    OS << "  fpm_arg fpm_data" << S << "[" << Data.size() << "];\n";
    OS << "  int fpm_affine" << S << ";\n";
  }
  OS << "  fpm_info" << S << ".name = \"" << escapeString(L.Name) << "\";\n";
  if (!P.Schedule.empty())
    OS << "  fpm_info" << S << ".schedule = \"" << escapeString(P.Schedule)
       << "\";\n";
  if (!P.Devices.empty())
    OS << "  fpm_info" << S << ".devices = \"" << P.Devices << "\";\n";
  // The clause's text after a `#line` to its line, as the sections' (a
  // grain in a template is checked by the compiler, at instantiation).
  if (!P.Grain.empty())
    OS << T.lineDirective(P.GrainLoc) << "  fpm_info" << S << ".grain = ("
       << I64 << ")(" << P.Grain << ");\n";
  OS << "  fpm_info" << S << ".file = \"" << escapeString(LT.File) << "\";\n";
  OS << "  fpm_info" << S << ".line = " << LT.Line << ";\n";
  if (!Data.empty())
    emitData(OS, Data, L.Shapes, L.Nested && !Cxx, Type, LT.VarName, S, I64,
             LT.U64, T);
}

void emitKernel(llvm::raw_ostream &OS, const LoopModel &L, const std::string &S,
                bool Cxx) {
  const GeneratedKernel &K = *L.Kernel;
  const char *I64 = Cxx ? "std::int64_t" : "int64_t";
  for (const KernelParam &P : K.Params)
    if (P.K == KernelParam::Kind::Extent)
      OS << "  " << P.Name << S << " = (" << I64 << ")" << P.HostExpr << ";\n";
  std::string Args = "fpm_kernel_args" + S;
  for (size_t I = 0; I < K.Params.size(); ++I) {
    const KernelParam &P = K.Params[I];
    OS << "  " << Args << "[" << I << "] = ";
    auto Scalar = [&](const std::string &Name) {
      OS << "fpm_scalar_arg(&" << Name << ", sizeof(" << Name << "));\n";
    };
    switch (P.K) {
    case KernelParam::Kind::Lower:
      Scalar("fpm_lower" + S);
      break;
    case KernelParam::Kind::Step:
      Scalar("fpm_step" + S);
      break;
    case KernelParam::Kind::Scalar:
      Scalar(P.HostExpr);
      break;
    case KernelParam::Kind::Array:
      OS << "fpm_data" << S << "[" << P.Section << "];\n";
      if (P.CopyIn)
        OS << "  " << Args << "[" << I
           << "].kind = FPM_ARG_INOUT; /* an out section that may be written "
              "in part: copied in too */\n";
      break;
    case KernelParam::Kind::Extent:
      Scalar(P.Name + S);
      break;
    case KernelParam::Kind::Origin:
    case KernelParam::Kind::Mask: {
      auto Array = llvm::find_if(K.Params, [&](const KernelParam &Q) {
        return Q.K == KernelParam::Kind::Array && Q.Section == P.Section;
      });
      if (P.K == KernelParam::Kind::Origin)
        OS << "fpm_origin_arg(" << Array - K.Params.begin() << ");\n";
      else
        OS << "fpm_mask_arg(" << Array - K.Params.begin() << ", " << P.HostExpr
           << "); /* its writes merge through a mask */\n";
      break;
    }
    case KernelParam::Kind::Whole: {
      // All of a global array that no clause names: a shared input
      // (fpm_scalar_arg zeroes the rest; stride and count 0 are all of it).
      const std::string &A = P.HostExpr;
      std::string Arg = Args + "[" + std::to_string(I) + "]";
      OS << "fpm_scalar_arg(" << A << ", sizeof(" << A << "[0]));\n";
      OS << "  " << Arg << ".kind = FPM_ARG_IN; " << Arg << ".length = " << Arg
         << ".extent = (" << I64 << ")(sizeof(" << A << ") / sizeof(" << A
         << "[0]));\n";
      OS << "  " << Arg << ".clause = \"" << escapeString(P.Name) << "\";\n";
      break;
    }
    case KernelParam::Kind::End:
      OS << "fpm_end_arg();\n";
      break;
    case KernelParam::Kind::RowLength:
      // The length the runtime packs the rows with (fpm_arg::row_length).
      Scalar("fpm_sections" + S + "[" + std::to_string(P.Section) +
             "].row_length");
      break;
    case KernelParam::Kind::Reduction:
      // One partial result per work-group, of the variable's size; the
      // runtime allocates them (fpm.h, FPM_ARG_REDUCTION).
      OS << "fpm_scalar_arg(&" << P.HostExpr << ", sizeof(" << P.HostExpr
         << ")); /* reduction variable " << P.HostExpr << " */\n";
      OS << "  " << Args << "[" << I << "].kind = FPM_ARG_REDUCTION; " << Args
         << "[" << I << "].offset = " << P.Reduction << ";\n";
      break;
    }
  }
  std::string Kernel = "fpm_kernel" + S;
  OS << "  " << Kernel << ".source = fpm_source" << S << ";\n";
  OS << "  " << Kernel << ".name = \"" << K.Name << "\";\n";
  if (!K.Options.empty())
    OS << "  " << Kernel << ".options = \"" << escapeString(K.Options)
       << "\";\n";
  OS << "  " << Kernel << ".args = " << Args << ";\n";
  OS << "  " << Kernel << ".arg_count = " << K.Params.size() << ";\n";
  // A loop without data (a reduction alone) has no sections to check.
  OS << "  fpm_offload" << S << " = "
     << (dataArgs(*L.Pragma).empty() ? "" : "fpm_affine" + S + " && ")
     << "fpm_kernel_fits(&fpm_info" << S << ", &" << Kernel << ", fpm_trip" << S
     << ");\n";
}

} // namespace fpm
