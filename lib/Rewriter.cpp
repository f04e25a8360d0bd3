//===- Rewriter.cpp - Turning a partitioned loop into runtime calls -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Rewriter.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// S as the inside of a C string literal.
std::string escapeString(StringRef S) {
  std::string Out;
  for (char C : S) {
    if (C == '\\' || C == '"')
      Out += '\\';
    if (C == '\n') {
      Out += "\\n";
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

/// Whether T names a type declared inside a function, or an unnamed one:
/// a type the context struct before the function and the outlined body
/// after it cannot name.
bool usesLocalType(QualType T) {
  const Type *Ty = T.getTypePtr();
  while (true) {
    if (const auto *TT = Ty->getAs<TypedefType>())
      return TT->getDecl()->getDeclContext()->isFunctionOrMethod();
    const Type *Inner = Ty->getPointeeOrArrayElementType();
    if (Inner == Ty)
      break;
    Ty = Inner;
  }
  if (const TagDecl *Tag = Ty->getAsTagDecl())
    return Tag->getDeclContext()->isFunctionOrMethod() ||
           (!Tag->getIdentifier() && !Tag->getTypedefNameForAnonDecl());
  return false;
}

/// The array variable E names, if E is one of Arrays named directly
/// (possibly parenthesised).
const VarDecl *
namedArray(const Expr *E,
           const llvm::SmallPtrSetImpl<const VarDecl *> &Arrays) {
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParens());
  if (!DRE)
    return nullptr;
  const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
  return VD && Arrays.count(VD) ? VD : nullptr;
}

/// Calls F(Loc, Spelling, Array) for each operator in S whose value depends on
/// its operand being an array rather than a pointer (sizeof, alignof,
/// __builtin_object_size) applied to one of Arrays.
template <typename Fn>
void forEachArraySizeQuery(const Stmt *S,
                           const llvm::SmallPtrSetImpl<const VarDecl *> &Arrays,
                           const SourceManager &SM, const LangOptions &LO,
                           Fn &&F) {
  if (!S)
    return;
  if (const auto *U = dyn_cast<UnaryExprOrTypeTraitExpr>(S)) {
    if (!U->isArgumentType())
      if (const VarDecl *VD = namedArray(U->getArgumentExpr(), Arrays)) {
        SourceLocation Op = SM.getSpellingLoc(U->getOperatorLoc());
        F(U->getOperatorLoc(),
          Lexer::getSourceText(CharSourceRange::getTokenRange(Op), SM, LO), VD);
      }
  } else if (const auto *Call = dyn_cast<CallExpr>(S)) {
    unsigned ID = Call->getBuiltinCallee();
    if ((ID == Builtin::BI__builtin_object_size ||
         ID == Builtin::BI__builtin_dynamic_object_size) &&
        Call->getNumArgs() > 0)
      if (const VarDecl *VD =
              namedArray(Call->getArg(0)->IgnoreImpCasts(), Arrays))
        F(Call->getArg(0)->getExprLoc(),
          ID == Builtin::BI__builtin_object_size
              ? "__builtin_object_size"
              : "__builtin_dynamic_object_size",
          VD);
  }
  for (const Stmt *Child : S->children())
    forEachArraySizeQuery(Child, Arrays, SM, LO, F);
}

} // namespace

/// The pieces of text the two rewrites share.
struct LoopRewriter::LoopText {
  std::string Suffix;  // "_<k>": the suffix of the block's names
  std::string VarName; // the loop variable
  std::string Lower, Bound, Step, Compare;
  std::string I64, U64;              // int64_t, spelled for the language
  SourceLocation BodyBegin, BodyEnd; // [begin, end) of the body's text
  std::string BodyLine;  // #line (and indentation) before the body's text
  std::string AfterLine; // #line (and indentation) before the text after
  std::string File;
  unsigned Line = 0;
  /// The OpenCL C kernel, when the loop offloads.
  std::optional<GeneratedKernel> Kernel;
};

LoopRewriter::LoopRewriter(ASTContext &Ctx, clang::Rewriter &Rewrite,
                           bool Remarks)
    : Ctx(Ctx), Rewrite(Rewrite), Remarks(Remarks) {}

namespace {

/// Helpers over one file's text.
class Text {
public:
  explicit Text(ASTContext &Ctx)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Policy(Ctx.getLangOpts()) {
    Policy.SuppressUnwrittenScope = true;
  }

  std::string of(SourceRange Range) const {
    return Lexer::getSourceText(SM.getExpansionRange(Range), SM,
                                Ctx.getLangOpts())
        .str();
  }
  std::string of(const Expr *E) const {
    if (const auto *List = dyn_cast<InitListExpr>(E->IgnoreImplicit()))
      if (List->getNumInits() == 1)
        E = List->getInit(0);
    return of(E->getSourceRange());
  }
  std::string type(QualType T, StringRef Name = "") const {
    std::string S;
    llvm::raw_string_ostream OS(S);
    T.print(OS, Policy, Name);
    return S;
  }
  /// `#line` for Loc's line.
  std::string lineDirective(SourceLocation Loc) const {
    PresumedLoc P = SM.getPresumedLoc(Loc);
    return "#line " + std::to_string(P.getLine()) + " \"" +
           escapeString(P.getFilename()) + "\"\n";
  }
  /// `#line` for Loc, then spaces up to Loc's column.
  std::string lineMarker(SourceLocation Loc) const {
    PresumedLoc P = SM.getPresumedLoc(Loc);
    // Indent what follows to its column, unless nothing follows.
    StringRef Rest(SM.getCharacterData(Loc));
    Rest = Rest.substr(0, Rest.find_first_of("\r\n"));
    bool Blank = Rest.find_first_not_of(" \t") == StringRef::npos;
    return lineDirective(Loc) + std::string(Blank ? 0 : P.getColumn() - 1, ' ');
  }

private:
  ASTContext &Ctx;
  const SourceManager &SM;
  PrintingPolicy Policy;
};

/// Where the text of Body ends: after its last token, and after the `;`
/// that ends it when the statement's range leaves that out.
std::optional<SourceLocation> bodyEnd(const Stmt *Body, const SourceManager &SM,
                                      const LangOptions &LO) {
  const Stmt *Last = Body;
  while (true) {
    if (const auto *F = dyn_cast<ForStmt>(Last))
      Last = F->getBody();
    else if (const auto *W = dyn_cast<WhileStmt>(Last))
      Last = W->getBody();
    else if (const auto *R = dyn_cast<CXXForRangeStmt>(Last))
      Last = R->getBody();
    else if (const auto *I = dyn_cast<IfStmt>(Last))
      Last = I->getElse() ? I->getElse() : I->getThen();
    else if (const auto *S = dyn_cast<SwitchStmt>(Last))
      Last = S->getBody();
    else if (const auto *L = dyn_cast<LabelStmt>(Last))
      Last = L->getSubStmt();
    else if (const auto *A = dyn_cast<AttributedStmt>(Last))
      Last = A->getSubStmt();
    else
      break;
  }
  SourceLocation LastToken = SM.getExpansionRange(Body->getEndLoc()).getEnd();
  if (isa<CompoundStmt, NullStmt, DeclStmt, CXXTryStmt>(Last))
    return Lexer::getLocForEndOfToken(LastToken, 0, SM, LO);
  std::optional<Token> Semi = Lexer::findNextToken(LastToken, SM, LO);
  if (!Semi || Semi->isNot(tok::semi))
    return std::nullopt;
  return Semi->getEndLoc();
}

} // namespace

bool LoopRewriter::rewrite(const LoopRewrite &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  const CanonicalLoop &Loop = L.Loop;
  const ForStmt *For = Loop.For;
  bool Cxx = Ctx.getLangOpts().CPlusPlus;
  Text T(Ctx);

  if (For->getForLoc().isMacroID() ||
      !SM.isWrittenInMainFile(For->getForLoc())) {
    report(Diags, SM.getExpansionLoc(For->getForLoc()), Level::Error,
           "cannot rewrite a loop that comes from a macro expansion");
    return false;
  }
  LoopText LT;
  LT.Suffix = "_" + std::to_string(L.Index);
  LT.VarName = Loop.Var->getName().str();
  LT.I64 = Cxx ? "std::int64_t" : "int64_t";
  LT.U64 = Cxx ? "std::uint64_t" : "uint64_t";
  LT.Lower = T.of(Loop.Lower);
  LT.Bound = T.of(Loop.Bound);
  if (!Loop.Step)
    LT.Step = Loop.StepNegated ? "-1" : "1";
  else
    LT.Step = std::string(Loop.StepNegated ? "-" : "") + "(" + LT.I64 + ")(" +
              T.of(Loop.Step) + ")";
  static const char *const CompareNames[] = {"FPM_LT", "FPM_LE", "FPM_GT",
                                             "FPM_GE", "FPM_NE"};
  LT.Compare = CompareNames[static_cast<int>(Loop.Compare)];
  LT.BodyBegin = L.BodyBegin.isValid()
                     ? L.BodyBegin
                     : SM.getExpansionLoc(For->getBody()->getBeginLoc());
  std::optional<SourceLocation> End =
      bodyEnd(For->getBody(), SM, Ctx.getLangOpts());
  if (!End) {
    report(Diags, SM.getExpansionLoc(For->getBody()->getBeginLoc()),
           Level::Error, "cannot find where the body of this loop ends");
    return false;
  }
  LT.BodyEnd = *End;
  LT.BodyLine = T.lineMarker(LT.BodyBegin);
  LT.AfterLine = T.lineMarker(LT.BodyEnd);
  PresumedLoc ForLoc = SM.getPresumedLoc(For->getForLoc());
  LT.File = ForLoc.getFilename();
  LT.Line = ForLoc.getLine();
  if (auto It = Kernels.find(L.Index); It != Kernels.end())
    LT.Kernel = std::move(It->second);

  bool Ok = Cxx ? rewriteCxx(L, LT) : rewriteC(L, LT);
  Rewritten |= Ok;
  return Ok;
}

namespace {

/// The loop the kernel is generated from: in a function template, its one
/// instantiation's copy (the template's own has dependent types). Null, with
/// Why set, when there is not exactly one.
std::pair<const ForStmt *, const VarDecl *> concreteLoop(const LoopRewrite &L,
                                                         std::string &Why) {
  const FunctionTemplateDecl *Template = L.Fn->getDescribedFunctionTemplate();
  if (!Template && !L.Fn->isDependentContext())
    return {L.Loop.For, L.Loop.Var};
  llvm::SmallVector<const FunctionDecl *, 2> Instances;
  if (Template)
    for (const FunctionDecl *FD : Template->specializations())
      if (FD->hasBody())
        Instances.push_back(FD);
  if (Instances.size() != 1) {
    Why = "it is in a template with " + std::to_string(Instances.size()) +
          " instantiations; fpm offloads a template's loop when it has one";
    return {nullptr, nullptr};
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
        return {For, Var};
      break;
    }
    llvm::append_range(Work, S->children());
  }
  Why = "fpm cannot find the loop in the template's instantiation";
  return {nullptr, nullptr};
}

} // namespace

bool LoopRewriter::offload(const LoopRewrite &L) {
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
    return true;
  };
  if (P.In.empty() && P.Out.empty() && P.InOut.empty())
    return Refuse(P.KeywordLoc,
                  "it has no in(...), out(...) or inout(...) clause saying "
                  "which data a device must copy");

  // The arrays of the data clauses, in the order of the loop's fpm_args.
  llvm::SmallVector<ClauseArray, 4> Arrays;
  unsigned Index = 0;
  for (const auto *Sections : {&P.In, &P.Out, &P.InOut})
    for (const DataSection &Section : *Sections) {
      bool Written = Sections != &P.In;
      if (Section.ArrayIsMacro)
        return Refuse(Section.Loc,
                      "'" + Section.Array + "' in a data clause is a macro");
      if (llvm::any_of(Arrays, [&](const ClauseArray &A) {
            return A.Name == Section.Array;
          }))
        return Refuse(Section.Loc,
                      "'" + Section.Array +
                          "' is named in more than one section; a device "
                          "needs one section per array");
      Arrays.push_back({Section.Array, Index++, Written});
    }

  if (!P.KernelName.empty()) {
    // The user's kernel: its parameters are the clause's arguments.
    GeneratedKernel Kernel;
    Kernel.Name = P.KernelName;
    Kernel.Source = P.KernelSource;
    Kernel.Origin = "'" + P.KernelName + "' from " + P.KernelPath;
    for (const KernelArgument &Arg : P.KernelArgs) {
      auto Array = llvm::find_if(
          Arrays, [&](const ClauseArray &A) { return A.Name == Arg.Text; });
      KernelParam Param;
      if (Array != Arrays.end()) {
        Param.K = KernelParam::Kind::Array;
        Param.Section = Array->Index;
      } else {
        Param.K = KernelParam::Kind::Scalar;
        Param.HostExpr = "fpm_karg" + std::to_string(Kernel.Params.size()) +
                         "_" + std::to_string(L.Index);
        Param.Init = Arg.Text;
        Param.InitLoc = Arg.Loc;
      }
      Kernel.Params.push_back(std::move(Param));
    }
    if (Remarks)
      report(Diags, P.KernelNameLoc, Level::Remark,
             "loop '%0' runs the kernel '%1' of '%2' on OpenCL devices")
          << L.Name << P.KernelName << P.KernelFile;
    Kernels.try_emplace(L.Index, std::move(Kernel));
    return true;
  }

  std::string Why;
  auto [For, Var] = concreteLoop(L, Why);
  if (!For)
    return Refuse(P.KeywordLoc, Why);
  llvm::SmallVector<std::string, 4> Private;
  for (const VarDecl *VD : L.Vars.Private)
    Private.push_back(VD->getName().str());
  KernelRequest Request;
  Request.For = For;
  Request.Var = Var;
  Request.Arrays = Arrays;
  Request.Private = Private;
  Request.Name = "fpm_kernel_" + std::to_string(L.Index);
  std::variant<GeneratedKernel, OffloadRefusal> Result =
      generateKernel(Ctx, Request);
  if (const auto *Refusal = std::get_if<OffloadRefusal>(&Result))
    return Refuse(Refusal->Loc, Refusal->Reason);
  auto &Kernel = std::get<GeneratedKernel>(Result);
  if (Remarks)
    report(Diags, P.KeywordLoc, Level::Remark,
           "loop '%0' is offloaded: OpenCL C kernel '%1' generated from its "
           "body")
        << L.Name << Kernel.Name;
  Kernels.try_emplace(L.Index, std::move(Kernel));
  return true;
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

/// Fills the generated kernel's arguments, after the loop's sections are
/// described, and sets `fpm_offload<S>`: whether this call may run it (the
/// sections are ones a device takes).
void emitKernel(llvm::raw_ostream &OS, const GeneratedKernel &K,
                const std::string &S, bool Cxx) {
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
      break;
    case KernelParam::Kind::Extent:
      Scalar(P.Name + S);
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
  OS << "  fpm_offload" << S << " = fpm_affine" << S
     << " && fpm_kernel_fits(&fpm_info" << S << ", &" << Kernel << ", fpm_trip"
     << S << ");\n";
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

/// The data part of the loop's block (lib/README.md, "The data clauses in
/// fpm_loop.data"): fills fpm_sections<S> with each section's array, kind
/// and element size, then with its lower bound and length at the logical
/// iterations fpm_sample_iteration() names, the loop variable Var (of type
/// Type) computed from each as the body computes it; fpm_describe_sections
/// turns them into fpm_data<S> and fpm_info<S>.data when every section is
/// affine, and says so in fpm_affine<S>. Each line with the user's text is
/// preceded by a `#line` to the section's line, so that the compiler's
/// messages about it point at the clause.
void emitData(llvm::raw_ostream &OS, ArrayRef<DataArg> Args,
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
    OS << T.lineDirective(Section.Loc);
    OS << "  " << E << ".kind = " << Args[I].Kind << "; " << E
       << ".base = (void *)" << Section.Array << "; " << E << ".size = sizeof("
       << Section.Array << "[0]); /* " << commentSafe(Args[I].Clause);
    if (Section.Dims > 1)
      OS << ", by whole elements of " << Section.Array
         << (StringRef(Args[I].Clause).starts_with("out(")
                 ? " (INOUT: they may be written in part)"
                 : "");
    OS << " */\n";
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
    OS << "      " << E << ".lower[fpm_s] = (" << I64 << ")(" << Section.Lower
       << "); " << E << ".length[fpm_s] = (" << I64 << ")(" << Section.Length
       << ");\n";
  }
  OS << "    }\n";
  OS << "  }\n";
  OS << "  fpm_affine" << S << " = fpm_describe_sections(&fpm_info" << S
     << ", fpm_data" << S << ", " << Sections << ", " << N << ", " << Trip
     << ");\n";
  OS << "  (void)fpm_affine" << S << ";\n";
}

} // namespace

/// The start of the block both languages share: the loop's parameters
/// evaluated once, its trip count, its fpm_loop with the sections of its
/// data clauses. Type is the loop variable's type; Zero the initialiser of a
/// zeroed struct.
static void emitSetup(llvm::raw_ostream &OS, const LoopRewrite &L,
                      const std::string &Type, const std::string &Zero,
                      const std::string &ExtraDecls, const std::string &S,
                      const std::string &I64, const std::string &U64,
                      const std::string &Var, const std::string &Lower,
                      const std::string &Bound, const std::string &Step,
                      const std::string &Compare, const std::string &File,
                      unsigned Line) {
  const PartitionPragma &P = *L.Pragma;
  llvm::SmallVector<DataArg, 4> Data = dataArgs(P);
  OS << "  const " << Type << " fpm_lower" << S << " = (" << Type << ")("
     << Lower << ");\n";
  OS << "  const " << Type << " fpm_bound" << S << " = (" << Type << ")("
     << Bound << ");\n";
  OS << "  const " << I64 << " fpm_step" << S << " = " << Step << ";\n";
  OS << "  const " << I64 << " fpm_trip" << S << " = fpm_trip_count((" << I64
     << ")fpm_lower" << S << ", (" << I64 << ")fpm_bound" << S << ", fpm_step"
     << S << ", " << Compare << ", (" << Type << ")-1 > (" << Type << ")0);\n";
  OS << "  fpm_loop fpm_info" << S << " = " << Zero << ";\n";
  OS << ExtraDecls;
  if (!Data.empty()) {
    OS << "  fpm_section fpm_sections" << S << "[" << Data.size() << "];\n";
    OS << "  fpm_arg fpm_data" << S << "[" << Data.size() << "];\n";
    OS << "  int fpm_affine" << S << ";\n";
  }
  OS << "  fpm_info" << S << ".name = \"" << escapeString(L.Name) << "\";\n";
  if (!P.Schedule.empty())
    OS << "  fpm_info" << S << ".schedule = \"" << escapeString(P.Schedule)
       << "\";\n";
  if (!P.Devices.empty())
    OS << "  fpm_info" << S << ".devices = \"" << P.Devices << "\";\n";
  if (!P.Grain.empty())
    OS << "  fpm_info" << S << ".grain = (" << I64 << ")(" << P.Grain << ");\n";
  OS << "  fpm_info" << S << ".file = \"" << escapeString(File) << "\";\n";
  OS << "  fpm_info" << S << ".line = " << Line << ";\n";
  if (!Data.empty())
    emitData(OS, Data, Type, Var, S, I64, U64, Text(L.Fn->getASTContext()));
}

bool LoopRewriter::rewriteCxx(const LoopRewrite &L, const LoopText &LT) {
  const SourceManager &SM = Ctx.getSourceManager();
  const CanonicalLoop &Loop = L.Loop;
  const VarDecl *Var = Loop.Var;
  Text T(Ctx);
  const std::string &S = LT.Suffix;

  // The loop variable's type, as the code around the loop can name it.
  std::string VarType;
  if (!Loop.DeclaredInInit) {
    VarType = "decltype(" + LT.VarName + ")";
  } else if (!Var->getType()->isDependentType()) {
    VarType = T.type(Var->getType().getUnqualifiedType());
  } else {
    VarType = T.of(Var->getTypeSourceInfo()->getTypeLoc().getSourceRange());
    if (StringRef(VarType).contains("auto"))
      VarType = "decltype(" + LT.Lower + ")";
  }
  std::string Alias = "fpm_t" + S;

  std::string Prefix;
  llvm::raw_string_ostream OS(Prefix);
  OS << "/* fpm-rewrite: " << commentSafe(L.Pragma->Text) << " */\n{\n";
  OS << "  using " << Alias << " = " << VarType << ";\n";
  emitSetup(OS, L, Alias, "{}",
            LT.Kernel ? kernelDeclarations(*LT.Kernel, S, /*Cxx=*/true, T) : "",
            S, LT.I64, LT.U64, LT.VarName, LT.Lower, LT.Bound, LT.Step,
            LT.Compare, LT.File, LT.Line);
  if (LT.Kernel)
    emitKernel(OS, *LT.Kernel, S, /*Cxx=*/true);
  OS << "  ::fpm::parallelFor(fpm_info" << S << ", fpm_trip" << S;
  if (LT.Kernel)
    OS << ", fpm_offload" << S << " ? &fpm_kernel" << S << " : nullptr";
  OS << ", [&](std::int64_t fpm_begin, std::int64_t fpm_end) {\n";
  for (const VarDecl *VD : L.Vars.Private) {
    QualType PT = VD->getType();
    if (PT->isReferenceType())
      OS << "    " << T.type(PT.getNonReferenceType(), VD->getName()) << ";\n";
    else
      OS << "    decltype(" << VD->getName() << ") " << VD->getName() << ";\n";
  }
  OS << "    for (std::int64_t fpm_k = fpm_begin; fpm_k < fpm_end; ++fpm_k) "
        "{\n";
  OS << "      " << Alias << " " << LT.VarName << " = (" << Alias << ")(("
     << LT.U64 << ")fpm_lower" << S << " + (" << LT.U64 << ")fpm_k * ("
     << LT.U64 << ")fpm_step" << S << ");\n";
  OS << "      (void)" << LT.VarName << ";\n";
  OS << LT.BodyLine;

  std::string Suffix;
  llvm::raw_string_ostream After(Suffix);
  After << "\n    }\n  });\n";
  if (!Loop.DeclaredInInit)
    After << "  " << LT.VarName << " = (" << Alias << ")((" << LT.U64
          << ")fpm_lower" << S << " + (" << LT.U64 << ")fpm_trip" << S << " * ("
          << LT.U64 << ")fpm_step" << S << ");\n  (void)" << LT.VarName
          << ";\n";
  After << "}\n" << LT.AfterLine;

  SourceLocation Hash = L.Pragma->HashLoc;
  unsigned Length = SM.getFileOffset(LT.BodyBegin) - SM.getFileOffset(Hash);
  Rewrite.ReplaceText(Hash, Length, Prefix);
  Rewrite.InsertTextAfter(LT.BodyEnd, Suffix);
  return true;
}

bool LoopRewriter::rewriteC(const LoopRewrite &L, const LoopText &LT) {
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  const CanonicalLoop &Loop = L.Loop;
  const VarDecl *Var = Loop.Var;
  Text T(Ctx);
  const std::string &S = LT.Suffix;
  std::string VarType = T.type(Var->getType().getUnqualifiedType());
  std::string Ctx_ = "fpm_c" + S;

  // What the context carries, how the call site fills it and how the
  // outlined function declares the body's names from it.
  std::string Members, Sets, Locals;
  llvm::raw_string_ostream M(Members), Set(Sets), Local(Locals);
  auto CannotOutline = [&](const VarDecl *VD, StringRef Why) {
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot outline the loop's body: '%0' %1")
        << VD->getName() << Why;
    report(Diags, VD->getLocation(), Level::Note, "'%0' is declared here")
        << VD->getName();
    return false;
  };
  // The outlined body sees the arrays it shares as pointers: an operator
  // that measures the array itself would measure a pointer instead.
  llvm::SmallPtrSet<const VarDecl *, 8> Arrays;
  for (const VarDecl *VD : L.Vars.Shared)
    if (VD->getType()->isArrayType())
      Arrays.insert(VD);
  bool Measured = false;
  forEachArraySizeQuery(
      Loop.For->getBody(), Arrays, SM, Ctx.getLangOpts(),
      [&](SourceLocation At, StringRef Op, const VarDecl *VD) {
        if (Op == "sizeof")
          report(Diags, SM.getExpansionLoc(At), Level::Error,
                 "'%0' of array '%1' declared outside the loop cannot be "
                 "outlined in C: the outlined body sees a pointer; take the "
                 "size outside the loop (e.g. 'size_t %1_size = sizeof %1;') "
                 "and use that")
              << Op << VD->getName();
        else
          report(Diags, SM.getExpansionLoc(At), Level::Error,
                 "'%0' of array '%1' declared outside the loop cannot be "
                 "outlined in C: the outlined body sees a pointer; compute "
                 "it outside the loop and use that")
              << Op << VD->getName();
        report(Diags, VD->getLocation(), Level::Note, "'%0' is declared here")
            << VD->getName();
        Measured = true;
      });
  if (Measured)
    return false;
  for (const VarDecl *VD : L.Vars.Shared) {
    std::string N = VD->getName().str();
    QualType Declared = VD->getType();
    if (usesLocalType(Declared))
      return CannotOutline(VD, "has a type declared in the function");
    QualType Passed =
        Declared->isArrayType() ? Ctx.getArrayDecayedType(Declared) : Declared;
    if (!Passed->isVariablyModifiedType()) {
      M << "  " << T.type(Passed.getUnqualifiedType(), N) << ";\n";
      Set << "  " << Ctx_ << "." << N << " = " << N << ";\n";
      Local << "  " << T.type(Declared->isArrayType() ? Passed : Declared, N)
            << " = fpm_c->" << N << ";\n";
      continue;
    }
    // A VLA or a pointer to one: the address travels as void *, with each
    // variable extent measured at the call site.
    const auto *Ptr = Passed->getAs<PointerType>();
    if (!Ptr)
      return CannotOutline(VD, "has a variably modified type fpm cannot pass");
    QualType Elem = Ptr->getPointeeType();
    std::string Dims;
    M << "  void *" << N << ";\n";
    Set << "  " << Ctx_ << "." << N << " = (void *)" << N << ";\n";
    std::string Zeros = "[0]";
    for (unsigned Level = 1; const ArrayType *AT = Ctx.getAsArrayType(Elem);
         ++Level, Elem = AT->getElementType(), Zeros += "[0]") {
      if (const auto *CAT = dyn_cast<ConstantArrayType>(AT)) {
        Dims += "[" + std::to_string(CAT->getSize().getZExtValue()) + "]";
        continue;
      }
      if (!isa<VariableArrayType>(AT))
        return CannotOutline(VD, "has an array type fpm cannot pass");
      std::string Dim = "fpm_" + N + "_d" + std::to_string(Level);
      Dims += "[" + Dim + "]";
      M << "  int64_t " << Dim << ";\n";
      Set << "  " << Ctx_ << "." << Dim << " = (int64_t)(sizeof(" << N << Zeros
          << ") / sizeof(" << N << Zeros << "[0]));\n";
      Local << "  const int64_t " << Dim << " = fpm_c->" << Dim << ";\n";
    }
    if (Elem->isVariablyModifiedType())
      return CannotOutline(VD, "has a variably modified type fpm cannot pass");
    Local << "  " << T.type(Elem, "(*" + N + ")" + Dims) << " = ("
          << T.type(Elem, "(*)" + Dims) << ")fpm_c->" << N << ";\n";
  }
  for (const VarDecl *VD : L.Vars.Private) {
    QualType PT = VD->getType().getUnqualifiedType();
    if (usesLocalType(PT))
      return CannotOutline(VD, "has a type declared in the function");
    if (PT->isVariablyModifiedType())
      return CannotOutline(VD, "is private and has a variably modified type");
    Local << "  " << T.type(PT, VD->getName()) << ";\n";
  }
  if (usesLocalType(Var->getType()))
    return CannotOutline(Var, "has a type declared in the function");

  // The context struct and a prototype of the outlined body go before the
  // function; the body's definition goes right after it, where the macros
  // the function defines before the loop are defined too.
  SourceLocation FnBegin = SM.getExpansionLoc(L.Fn->getBeginLoc());
  FnBegin = FnBegin.getLocWithOffset(
      -static_cast<int>(SM.getExpansionColumnNumber(FnBegin) - 1));
  SourceLocation FnEnd = SM.getExpansionRange(L.Fn->getEndLoc()).getEnd();
  FnEnd = Lexer::getLocForEndOfToken(FnEnd, 0, SM, Ctx.getLangOpts());
  if (FnEnd.isInvalid() || !SM.isWrittenInMainFile(FnEnd)) {
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot outline the loop's body: cannot find where '%0' ends")
        << L.Fn->getName();
    return false;
  }

  std::string Declared;
  llvm::raw_string_ostream D(Declared);
  D << "/* fpm-rewrite: the context of loop " << commentSafe(L.Name)
    << ", outlined from " << L.Fn->getName() << " */\n";
  D << "struct fpm_ctx" << S << " {\n";
  D << "  " << VarType << " fpm_lower;\n  int64_t fpm_step;\n" << Members;
  D << "};\n";
  D << "static int fpm_body" << S << "(int64_t, int64_t, void *);\n";
  D << T.lineMarker(FnBegin);

  std::string Outlined;
  llvm::raw_string_ostream O(Outlined);
  O << "\n/* fpm-rewrite: the body of loop " << commentSafe(L.Name)
    << ", outlined from " << L.Fn->getName() << " */\n";
  O << "static int fpm_body" << S
    << "(int64_t fpm_begin, int64_t fpm_end, void *fpm_ctx) {\n";
  O << "  struct fpm_ctx" << S << " *fpm_c = (struct fpm_ctx" << S
    << " *)fpm_ctx;\n";
  O << Locals;
  O << "  int64_t fpm_k;\n";
  O << "  for (fpm_k = fpm_begin; fpm_k < fpm_end; ++fpm_k) {\n";
  O << "    " << VarType << " " << LT.VarName << " = (" << VarType
    << ")((uint64_t)fpm_c->fpm_lower + (uint64_t)fpm_k * "
       "(uint64_t)fpm_c->fpm_step);\n";
  O << "    (void)" << LT.VarName << ";\n";
  O << LT.BodyLine;
  // The body as rewritten so far: the calls of the partitioned loops nested
  // in it, rewritten before it, move with it. Their names read the same in
  // the outlined body, which declares the body's names again.
  O << Rewrite.getRewrittenText(
      CharSourceRange::getCharRange(LT.BodyBegin, LT.BodyEnd));
  O << "\n  }\n  return 0;\n}\n";
  O << T.lineMarker(FnEnd);

  // The call, in place of the pragma and the loop.
  std::string Call;
  llvm::raw_string_ostream C(Call);
  C << "/* fpm-rewrite: " << commentSafe(L.Pragma->Text) << " */\n{\n";
  emitSetup(C, L, VarType, "{0}",
            "  struct fpm_ctx" + S + " " + Ctx_ + ";\n" +
                (LT.Kernel ? kernelDeclarations(*LT.Kernel, S, /*Cxx=*/false, T)
                           : ""),
            S, LT.I64, LT.U64, LT.VarName, LT.Lower, LT.Bound, LT.Step,
            LT.Compare, LT.File, LT.Line);
  C << "  " << Ctx_ << ".fpm_lower = fpm_lower" << S << ";\n";
  C << "  " << Ctx_ << ".fpm_step = fpm_step" << S << ";\n";
  C << Sets;
  // The enclosing function's own copies of the private variables are no
  // longer used there.
  for (const VarDecl *VD : L.Vars.Private)
    if (VD->isLocalVarDeclOrParm())
      C << "  (void)" << VD->getName() << ";\n";
  if (LT.Kernel) {
    emitKernel(C, *LT.Kernel, S, /*Cxx=*/false);
    C << "  if (fpm_parallel_for_kernel(&fpm_info" << S << ", fpm_trip" << S
      << ", fpm_body" << S << ", &" << Ctx_ << ", fpm_offload" << S
      << " ? &fpm_kernel" << S << " : NULL) != FPM_OK) {\n";
  } else {
    C << "  if (fpm_parallel_for(&fpm_info" << S << ", fpm_trip" << S
      << ", fpm_body" << S << ", &" << Ctx_ << ") != FPM_OK) {\n";
  }
  C << "    fprintf(stderr, \"%s:%d: fpm: %s\\n\", fpm_info" << S
    << ".file, fpm_info" << S << ".line, fpm_last_error());\n";
  C << "    abort();\n  }\n";
  if (!Loop.DeclaredInInit)
    C << "  " << LT.VarName << " = (" << VarType << ")((uint64_t)fpm_lower" << S
      << " + (uint64_t)fpm_trip" << S << " * (uint64_t)fpm_step" << S
      << ");\n  (void)" << LT.VarName << ";\n";
  C << "}\n" << LT.AfterLine;

  // The length of the text replaced, as rewritten so far (with the nested
  // loops' calls).
  SourceLocation Hash = L.Pragma->HashLoc;
  clang::Rewriter::RewriteOptions Replaced;
  Replaced.IncludeInsertsAtBeginOfRange = false;
  int Length = Rewrite.getRangeSize(
      CharSourceRange::getCharRange(Hash, LT.BodyEnd), Replaced);
  if (Length < 0) {
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot find the text of this loop");
    return false;
  }
  Rewrite.ReplaceText(Hash, Length, Call);
  Rewrite.InsertTextBefore(FnBegin, Declared);
  Rewrite.InsertTextBefore(FnEnd, Outlined);
  return true;
}

void LoopRewriter::finish() {
  if (!Rewritten)
    return;
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Start = SM.getLocForStartOfFile(SM.getMainFileID());
  Text T(Ctx);
  std::string Includes = Ctx.getLangOpts().CPlusPlus
                             ? "#include <fpm/fpm.hpp>\n"
                             : "#include <fpm/fpm.h>\n#include <stdio.h>\n"
                               "#include <stdlib.h>\n";
  Rewrite.InsertTextBefore(Start, "/* Rewritten by fpm-rewrite. */\n" +
                                      Includes + T.lineMarker(Start));
}

} // namespace fpm
