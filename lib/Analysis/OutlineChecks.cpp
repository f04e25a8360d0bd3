//===- OutlineChecks.cpp - What a loop's rewrite needs and refuses --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Analysis/OutlineChecks.h"
#include "Analysis/PragmaPlacement.h"

#include "LoopModel.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cassert>

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

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

/// What else than VD the name of VD means in L's body, if anything (a
/// declaration, a member, a label), and where. A macro that makes the name
/// mean VD would change it.
std::optional<std::pair<std::string, SourceLocation>>
nameClash(const LoopModel &L, const VarDecl *VD) {
  using Clash = std::pair<std::string, SourceLocation>;
  StringRef N = VD->getName();
  auto Named = [&](const NamedDecl *D) {
    return D && D->getIdentifier() && D->getName() == N;
  };
  llvm::SmallVector<const Stmt *, 64> Work{L.Loop.For->getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    llvm::append_range(Work, S->children());
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls()) {
        if (Named(dyn_cast<NamedDecl>(D)))
          return Clash{"a declaration in the body", D->getLocation()};
        if (const auto *Record = dyn_cast<RecordDecl>(D))
          for (const FieldDecl *Field : Record->fields())
            if (Named(Field))
              return Clash{"a member", Field->getLocation()};
        if (const auto *Enum = dyn_cast<EnumDecl>(D))
          for (const EnumConstantDecl *EC : Enum->enumerators())
            if (Named(EC))
              return Clash{"a declaration in the body", EC->getLocation()};
      }
    } else if (const auto *Label = dyn_cast<LabelStmt>(S)) {
      if (Named(Label->getDecl()))
        return Clash{"a label", Label->getIdentLoc()};
    } else if (const auto *Member = dyn_cast<MemberExpr>(S)) {
      if (Named(Member->getMemberDecl()))
        return Clash{"a member", Member->getMemberLoc()};
    } else if (const auto *Init = dyn_cast<DesignatedInitExpr>(S)) {
      for (const DesignatedInitExpr::Designator &D : Init->designators())
        if (D.isFieldDesignator() && D.getFieldName() &&
            D.getFieldName()->getName() == N)
          return Clash{"a member", D.getFieldLoc()};
    } else if (const auto *Offset = dyn_cast<OffsetOfExpr>(S)) {
      for (unsigned I = 0; I < Offset->getNumComponents(); ++I)
        if (Offset->getComponent(I).getKind() == OffsetOfNode::Field &&
            Named(Offset->getComponent(I).getField()))
          return Clash{"a member", Offset->getComponent(I).getEndLoc()};
    }
  }
  return std::nullopt;
}

/// The extents of array type Elem, numbered from Dim on, appended to
/// Extents; Elem is left the element type. False at an array type that is
/// neither constant nor variable.
bool arrayExtents(const ASTContext &Ctx, QualType &Elem, unsigned Dim,
                  llvm::SmallVectorImpl<OutlineExtent> &Extents) {
  for (; const ArrayType *AT = Ctx.getAsArrayType(Elem);
       ++Dim, Elem = AT->getElementType()) {
    if (const auto *CAT = dyn_cast<ConstantArrayType>(AT)) {
      Extents.push_back({false, CAT->getSize().getZExtValue(), Dim});
      continue;
    }
    if (!isa<VariableArrayType>(AT))
      return false;
    Extents.push_back({true, 0, Dim});
  }
  return true;
}

/// Reports each sizeof, alignof or __builtin_object_size of an array the
/// loop shares: the outlined body sees a pointer. Returns whether there
/// was none.
bool checkArraySizes(ASTContext &Ctx, const LoopModel &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  llvm::SmallPtrSet<const VarDecl *, 8> Arrays;
  for (const VarDecl *VD : L.Vars.Shared)
    if (VD->getType()->isArrayType())
      Arrays.insert(VD);
  bool Measured = false;
  forEachArraySizeQuery(
      L.Loop.For->getBody(), Arrays, SM, Ctx.getLangOpts(),
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
  return !Measured;
}

/// Fills L.Outline: how the outlined C body reaches each of L's variables
/// and where it goes. Reports an error and returns false for what it
/// cannot outline.
bool planOutline(ASTContext &Ctx, LoopModel &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  OutlinePlan Plan;
  auto CannotOutline = [&](const VarDecl *VD, StringRef Why) {
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot outline the loop's body: '%0' %1")
        << VD->getName() << Why;
    report(Diags, VD->getLocation(), Level::Note, "'%0' is declared here")
        << VD->getName();
    return false;
  };
  for (const VarDecl *VD : L.Vars.Shared) {
    OutlinedVar &Var = Plan.Vars.emplace_back();
    Var.Var = VD;
    QualType Declared = VD->getType();
    bool Addressed = llvm::is_contained(L.Vars.Addressed, VD);
    if (Addressed || usesLocalType(Declared)) {
      if (Declared->isVariablyModifiedType())
        return CannotOutline(VD, "has a variably modified type and is "
                                 "written in the body or its address taken");
      if (Addressed) {
        if (auto Clash = nameClash(L, VD)) {
          StringRef N = VD->getName();
          report(Diags, SM.getExpansionLoc(Clash->second), Level::Error,
                 "cannot outline the loop's body: it writes into '%0' or "
                 "takes its address, so the outlined body must reach '%0' "
                 "through its address, and the body also uses the name '%0' "
                 "for %1 here; rename one of them")
              << N << Clash->first;
          report(Diags, VD->getLocation(), Level::Note, "'%0' is declared here")
              << N;
          return false;
        }
      }
      Var.K = Declared->isArrayType() ? OutlinedVar::Kind::ArrayAddress
              : Addressed             ? OutlinedVar::Kind::Reference
                                      : OutlinedVar::Kind::LocalValue;
      continue;
    }
    QualType Passed =
        Declared->isArrayType() ? Ctx.getArrayDecayedType(Declared) : Declared;
    if (!Passed->isVariablyModifiedType())
      continue;
    // A VLA or a pointer to one.
    const auto *Ptr = Passed->getAs<PointerType>();
    if (!Ptr)
      return CannotOutline(VD, "has a variably modified type fpm cannot pass");
    Var.K = OutlinedVar::Kind::VariableArray;
    Var.Elem = Ptr->getPointeeType();
    if (!arrayExtents(Ctx, Var.Elem, 1, Var.Extents))
      return CannotOutline(VD, "has an array type fpm cannot pass");
    if (Var.Elem->isVariablyModifiedType())
      return CannotOutline(VD, "has a variably modified type fpm cannot pass");
  }
  for (const VarDecl *VD : L.Vars.Private) {
    OutlinedVar &Var = Plan.Vars.emplace_back();
    Var.Var = VD;
    Var.K = OutlinedVar::Kind::Private;
    QualType PT = VD->getType().getUnqualifiedType();
    if (!PT->isVariablyModifiedType())
      continue;
    Var.K = OutlinedVar::Kind::PrivateVariableArray;
    Var.Elem = PT;
    if (!arrayExtents(Ctx, Var.Elem, 0, Var.Extents))
      return CannotOutline(VD, "is private and has an array type fpm "
                               "cannot declare");
    if (Var.Elem->isVariablyModifiedType())
      return CannotOutline(VD, "is private and has a variably modified type");
  }
  // The context struct and the body's prototype go before the function,
  // from the start of its first line; the body's definition right after it.
  SourceLocation FnBegin = SM.getExpansionLoc(L.Fn->getBeginLoc());
  Plan.FnBegin = FnBegin.getLocWithOffset(
      -static_cast<int>(SM.getExpansionColumnNumber(FnBegin) - 1));
  SourceLocation FnEnd = SM.getExpansionRange(L.Fn->getEndLoc()).getEnd();
  Plan.FnEnd = Lexer::getLocForEndOfToken(FnEnd, 0, SM, Ctx.getLangOpts());
  if (Plan.FnEnd.isInvalid() || !SM.isWrittenInMainFile(Plan.FnEnd)) {
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot outline the loop's body: cannot find where '%0' ends")
        << L.Fn->getName();
    return false;
  }
  L.Outline = std::move(Plan);
  return true;
}

} // namespace

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

bool planRewrite(ASTContext &Ctx, LoopModel &L) {
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  const ForStmt *For = L.Loop.For;
  assert(For->getForLoc().isFileID() &&
         SM.isWrittenInMainFile(For->getForLoc()) &&
         "placePartition takes only a `for` written in the main file");
  if (L.BodyBegin.isInvalid())
    L.BodyBegin = SM.getExpansionLoc(For->getBody()->getBeginLoc());
  std::optional<SourceLocation> End =
      statementEnd(For->getBody(), SM, Ctx.getLangOpts());
  if (!End) {
    report(Diags, SM.getExpansionLoc(For->getBody()->getBeginLoc()),
           Level::Error, "cannot find where the body of this loop ends");
    return false;
  }
  L.BodyEnd = *End;
  L.ReplaceBegin =
      L.PragmaApart ? SM.getExpansionLoc(For->getForLoc()) : L.Pragma->HashLoc;
  // Both emitters edit the text from the pragma to the body's end (the C
  // one replaces it as the nested loops' calls left it, the C++ one closes
  // the lambda at its end): one range of the main file, which is all that
  // is written back.
  const auto TextOfTheLoop = [&] {
    if (L.ReplaceBegin.isFileID() && L.BodyEnd.isFileID() &&
        SM.getFileID(L.ReplaceBegin) == SM.getFileID(L.BodyEnd))
      return true;
    report(Diags, L.Pragma->KeywordLoc, Level::Error,
           "cannot find the text of this loop");
    return false;
  };
  if (Ctx.getLangOpts().CPlusPlus)
    return TextOfTheLoop();
  return checkArraySizes(Ctx, L) && planOutline(Ctx, L) && TextOfTheLoop();
}

} // namespace fpm
