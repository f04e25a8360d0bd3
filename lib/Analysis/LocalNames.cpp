//===- LocalNames.cpp - The local names a C body moves without ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The local-names check (LoopChecks.h): in C, the body of a partitioned
// loop moves into a function of its own, which must declare again the
// types, typedefs and enums of the enclosing function that the body uses
// (LoopVariables::LocalTypes); an error where it cannot.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"

#include <functional>

using namespace clang;

namespace fpm::detail {

/// C only: the body moves into a function of its own (CEmitter), where a
/// type, typedef or enumerator the enclosing function declares before the
/// loop is not visible. Collects those declarations (LocalTypes), which the
/// outlined function declares again, and is an error at what cannot be
/// declared again there: a type of variable size, an enumerator or a member
/// computed from a variable, an unnamed type without a typedef. C++ bodies
/// become lambdas in place and see them all.
CheckResult LocalNamesCheck::run(CheckContext &Context) {
  LoopWalk &W = Context.Walk;
  llvm::SmallVectorImpl<const NamedDecl *> &LocalTypes = Context.LocalTypes;
  if (W.Ctx.getLangOpts().CPlusPlus)
    return CheckResult::Pass;
  SourceRange Body = W.For.getBody()->getSourceRange();
  llvm::SmallPtrSet<const Decl *, 4> Seen;
  bool LocalOk = true;
  auto refuse = [&](const NamedDecl *Named, SourceLocation Use, StringRef Why) {
    if (Named->getName().empty()) // an unnamed struct or union
      report(W.Diags, Use, Level::Error,
             "an unnamed %0 declared in function '%1' is used in the body "
             "of a partitioned loop, which moves into a function of its own "
             "in C, where declaring it again would make another type; give "
             "it a tag or a typedef, or declare it at file scope")
          << cast<TagDecl>(Named)->getKindName() << W.Fn.getName();
    else
      report(W.Diags, Use, Level::Error,
             "'%0' is declared in function '%1' and %2: the body of a "
             "partitioned loop moves into a function of its own in C, which "
             "cannot declare it again; declare it at file scope")
          << Named->getName() << W.Fn.getName() << Why;
    report(W.Diags, Named->getLocation(), Level::Note, "it is declared here");
    LocalOk = false;
  };
  std::function<void(QualType, SourceLocation)> checkType;
  std::function<void(const Stmt *, SourceLocation, const NamedDecl *)>
      checkExpr;
  // D, a declaration the body uses at Use, and what it uses in turn.
  auto need = [&](const NamedDecl *D, SourceLocation Use) {
    if (!D || !D->getDeclContext()->isFunctionOrMethod() ||
        W.isInside(D->getLocation(), Body) || !Seen.insert(D).second)
      return;
    if (const auto *TD = dyn_cast<TypedefNameDecl>(D)) {
      QualType Under = TD->getUnderlyingType();
      if (Under->isVariablyModifiedType())
        return refuse(TD, Use, "has a variable size");
      checkType(Under, Use);
    } else if (const auto *Tag = dyn_cast<TagDecl>(D)) {
      // An unnamed struct declared again would be another type; an
      // unnamed enum only brings its enumerators.
      if (!Tag->getIdentifier() && !Tag->getTypedefNameForAnonDecl() &&
          !isa<EnumDecl>(Tag))
        return refuse(Tag, Use, "has no name");
      if (const auto *Record = dyn_cast<RecordDecl>(Tag)) {
        for (const FieldDecl *Field : Record->fields()) {
          if (Field->getType()->isVariablyModifiedType())
            return refuse(Tag, Use, "has a member of variable size");
          checkType(Field->getType(), Use);
          checkExpr(Field->getBitWidth(), Use, Tag);
        }
      } else if (const auto *Enum = dyn_cast<EnumDecl>(Tag)) {
        for (const EnumConstantDecl *EC : Enum->enumerators())
          checkExpr(EC->getInitExpr(), Use, EC);
      }
    }
    LocalTypes.push_back(D);
  };
  // The local types T names, through pointers, arrays and typedefs.
  checkType = [&](QualType T, SourceLocation Use) {
    for (int Depth = 0; !T.isNull() && Depth < 16; ++Depth) {
      if (const auto *TT = T->getAs<TypedefType>())
        need(TT->getDecl(), Use);
      if (const TagDecl *Tag = T->getAsTagDecl())
        need(Tag->getDefinition() ? Tag->getDefinition() : Tag, Use);
      if (T->isPointerType())
        T = T->getPointeeType();
      else if (const ArrayType *AT = W.Ctx.getAsArrayType(T))
        T = AT->getElementType();
      else
        break;
    }
  };
  // What a declaration's expression E (an enumerator's value, a bit-field's
  // width) names: an enumerator of another local enum is needed too; a
  // variable of the function would not be the same one.
  checkExpr = [&](const Stmt *E, SourceLocation Use, const NamedDecl *Owner) {
    llvm::SmallVector<const Stmt *, 16> Work{E};
    while (!Work.empty()) {
      const Stmt *S = Work.pop_back_val();
      if (!S)
        continue;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
        if (const auto *EC = dyn_cast<EnumConstantDecl>(DRE->getDecl()))
          need(cast<EnumDecl>(EC->getDeclContext()), Use);
        else if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
                 VD && VD->getDeclContext()->isFunctionOrMethod())
          return refuse(Owner, Use, "is computed from a variable");
      } else if (const auto *Cast = dyn_cast<ExplicitCastExpr>(S)) {
        checkType(Cast->getTypeAsWritten(), Use);
      } else if (const auto *U = dyn_cast<UnaryExprOrTypeTraitExpr>(S)) {
        if (U->isArgumentType())
          checkType(U->getArgumentType(), Use);
      }
      llvm::append_range(Work, S->children());
    }
  };
  llvm::SmallVector<const Stmt *, 64> Work{W.For.getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const ValueDecl *D = DRE->getDecl();
      if (const auto *EC = dyn_cast<EnumConstantDecl>(D))
        need(cast<EnumDecl>(EC->getDeclContext()), DRE->getLocation());
      else if (isa<VarDecl>(D) && !W.isInside(D->getLocation(), Body))
        checkType(D->getType(), DRE->getLocation());
    } else if (const auto *E = dyn_cast<ExplicitCastExpr>(S)) {
      checkType(E->getTypeAsWritten(), E->getBeginLoc());
    } else if (const auto *E = dyn_cast<UnaryExprOrTypeTraitExpr>(S)) {
      if (E->isArgumentType())
        checkType(E->getArgumentType(), E->getBeginLoc());
    } else if (const auto *E = dyn_cast<CompoundLiteralExpr>(S)) {
      checkType(E->getType(), E->getBeginLoc());
    } else if (const auto *E = dyn_cast<OffsetOfExpr>(S)) {
      checkType(E->getTypeSourceInfo()->getType(), E->getBeginLoc());
    } else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D))
          checkType(VD->getType(), VD->getLocation());
        else if (const auto *TD = dyn_cast<TypedefNameDecl>(D))
          checkType(TD->getUnderlyingType(), TD->getLocation());
    }
    // Children last first, so that the first use in the source is the one
    // reported.
    llvm::SmallVector<const Stmt *, 8> Children(S->children());
    Work.append(Children.rbegin(), Children.rend());
  }
  // The loop variable's type, and those of the variables the clauses
  // name, are written in the outlined body too.
  checkType(W.Var->getType(), W.Var->getLocation());
  llvm::sort(LocalTypes, [&](const Decl *A, const Decl *B) {
    return W.SM.isBeforeInTranslationUnit(A->getBeginLoc(), B->getBeginLoc());
  });
  return LocalOk ? CheckResult::Pass : CheckResult::Errors;
}

} // namespace fpm::detail
