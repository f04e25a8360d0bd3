//===- CEmitter.cpp - A partitioned loop as an outlined C body ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
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

bool emitC(ASTContext &Ctx, clang::Rewriter &Rewrite, const LoopModel &L,
           const LoopText &LT) {
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
  // The extents of array type Elem, numbered from Level on (N followed by
  // Zeros names the array of that level): each variable one becomes a
  // context member, measured with sizeof at the call site and copied into a
  // const local of the outlined body. Appends every extent to Dims and
  // leaves Elem the element type; false at an array type that is neither
  // constant nor variable.
  auto MeasureExtents = [&](const std::string &N, QualType &Elem,
                            unsigned Level, std::string Zeros,
                            std::string &Dims) {
    for (; const ArrayType *AT = Ctx.getAsArrayType(Elem);
         ++Level, Elem = AT->getElementType(), Zeros += "[0]") {
      if (const auto *CAT = dyn_cast<ConstantArrayType>(AT)) {
        Dims += "[" + std::to_string(CAT->getSize().getZExtValue()) + "]";
        continue;
      }
      if (!isa<VariableArrayType>(AT))
        return false;
      std::string Dim = "fpm_" + N + "_d" + std::to_string(Level);
      Dims += "[" + Dim + "]";
      M << "  int64_t " << Dim << ";\n";
      Set << "  " << Ctx_ << "." << Dim << " = (int64_t)(sizeof(" << N << Zeros
          << ") / sizeof(" << N << Zeros << "[0]));\n";
      Local << "  const int64_t " << Dim << " = fpm_c->" << Dim << ";\n";
    }
    return true;
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
    M << "  void *" << N << ";\n";
    Set << "  " << Ctx_ << "." << N << " = (void *)" << N << ";\n";
    std::string Dims;
    if (!MeasureExtents(N, Elem, 1, "[0]", Dims))
      return CannotOutline(VD, "has an array type fpm cannot pass");
    if (Elem->isVariablyModifiedType())
      return CannotOutline(VD, "has a variably modified type fpm cannot pass");
    Local << "  " << T.type(Elem, "(*" + N + ")" + Dims) << " = ("
          << T.type(Elem, "(*)" + Dims) << ")fpm_c->" << N << ";\n";
  }
  for (const VarDecl *VD : L.Vars.Private) {
    QualType PT = VD->getType().getUnqualifiedType();
    if (usesLocalType(PT))
      return CannotOutline(VD, "has a type declared in the function");
    if (!PT->isVariablyModifiedType()) {
      Local << "  " << T.type(PT, VD->getName()) << ";\n";
      continue;
    }
    // An array of variable size: its extents measured at the call site, the
    // array declared again with them in the outlined body.
    std::string N = VD->getName().str(), Dims;
    QualType Elem = PT;
    if (!MeasureExtents(N, Elem, 0, "", Dims))
      return CannotOutline(VD, "is private and has an array type fpm "
                               "cannot declare");
    if (Elem->isVariablyModifiedType())
      return CannotOutline(VD, "is private and has a variably modified type");
    Local << "  " << T.type(Elem, N + Dims) << ";\n";
  }
  if (usesLocalType(Var->getType()))
    return CannotOutline(Var, "has a type declared in the function");
  // Each reduction variable is the chunk's accumulator, under its own name:
  // a local copy of partials[r] that the body's text accumulates into, and
  // that goes back to partials[r] after the chunk.
  const auto &Reductions = L.Vars.Reductions;
  std::string StoreBack;
  llvm::raw_string_ostream Store(StoreBack);
  for (size_t R = 0; R < Reductions.size(); ++R) {
    const VarDecl *VD = Reductions[R].Var;
    QualType RT = VD->getType().getUnqualifiedType();
    if (usesLocalType(RT))
      RT = RT.getCanonicalType();
    std::string Partial = "fpm_partials[" + std::to_string(R) + "]";
    Local << "  " << T.type(RT, VD->getName()) << " = *(" << T.type(RT, "*")
          << ")" << Partial << ";\n";
    Store << "  *(" << T.type(RT, "*") << ")" << Partial << " = "
          << VD->getName() << ";\n";
  }
  std::string BodyParams =
      Reductions.empty() ? "" : ", void *const *fpm_partials";

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
  D << "static int fpm_body" << S << "(int64_t, int64_t, void *"
    << (Reductions.empty() ? "" : ", void *const *") << ");\n";
  D << T.lineMarker(FnBegin);

  std::string Outlined;
  llvm::raw_string_ostream O(Outlined);
  O << "\n/* fpm-rewrite: the body of loop " << commentSafe(L.Name)
    << ", outlined from " << L.Fn->getName() << " */\n";
  O << "static int fpm_body" << S
    << "(int64_t fpm_begin, int64_t fpm_end, void *fpm_ctx" << BodyParams
    << ") {\n";
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
  O << "\n  }\n" << StoreBack << "  return 0;\n}\n";
  O << T.lineMarker(FnEnd);

  // The call, in place of the pragma and the loop.
  std::string Call;
  llvm::raw_string_ostream C(Call);
  C << "/* fpm-rewrite: " << commentSafe(L.Pragma->Text) << " */\n{\n";
  std::string Reduce = "fpm_reductions" + S;
  emitSetup(C, L, LT, VarType, "{0}",
            "  struct fpm_ctx" + S + " " + Ctx_ + ";\n" +
                (Reductions.empty()
                     ? ""
                     : "  fpm_reduction " + Reduce + "[" +
                           std::to_string(Reductions.size()) + "];\n"),
            T);
  C << "  " << Ctx_ << ".fpm_lower = fpm_lower" << S << ";\n";
  C << "  " << Ctx_ << ".fpm_step = fpm_step" << S << ";\n";
  C << Sets;
  // The enclosing function's own copies of the private variables are no
  // longer used there.
  for (const VarDecl *VD : L.Vars.Private)
    if (VD->isLocalVarDeclOrParm())
      C << "  (void)" << VD->getName() << ";\n";
  for (size_t R = 0; R < Reductions.size(); ++R) {
    const ReductionVar &RV = Reductions[R];
    std::string E = Reduce + "[" + std::to_string(R) + "]";
    C << T.lineDirective(RV.Loc);
    C << "  " << E << ".op = " << reductionOpEnumerator(RV.Op) << "; " << E
      << ".type = " << RV.ScalarType << "; " << E << ".variable = &"
      << RV.Var->getName() << "; /* reduction(" << reductionOpSpelling(RV.Op)
      << ": " << RV.Var->getName() << ") */\n";
  }
  if (!Reductions.empty()) {
    if (L.Kernel)
      emitKernel(C, *L.Kernel, S, /*Cxx=*/false);
    C << "  if (fpm_parallel_reduce(&fpm_info" << S << ", fpm_trip" << S
      << ", fpm_body" << S << ", &" << Ctx_ << ", " << Reduce << ", "
      << Reductions.size() << ", ";
    if (L.Kernel)
      C << "fpm_offload" << S << " ? &fpm_kernel" << S << " : NULL";
    else
      C << "NULL";
    C << ") != FPM_OK) {\n";
  } else if (L.Kernel) {
    emitKernel(C, *L.Kernel, S, /*Cxx=*/false);
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
  clang::Rewriter::RewriteOptions Replaced;
  Replaced.IncludeInsertsAtBeginOfRange = false;
  int Length = Rewrite.getRangeSize(
      CharSourceRange::getCharRange(LT.ReplaceBegin, LT.BodyEnd), Replaced);
  if (Length < 0) {
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot find the text of this loop");
    return false;
  }
  Rewrite.ReplaceText(LT.ReplaceBegin, Length, Call);
  Rewrite.InsertTextBefore(FnBegin, Declared);
  Rewrite.InsertTextBefore(FnEnd, Outlined);
  return true;
}

} // namespace fpm
