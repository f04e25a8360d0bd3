//===- CxxEmitter.cpp - A partitioned loop as a C++ lambda ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Emit/Emitters.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace fpm {

void emitCxx(ASTContext &Ctx, clang::Rewriter &Rewrite, const LoopModel &L,
             const LoopText &LT) {
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
  emitSetup(OS, L, LT, Alias, "{}", "", T);
  if (L.Kernel)
    emitKernel(OS, L, S, /*Cxx=*/true);
  // With reductions, fpm::parallelReduce: the lambda's parameters, named as
  // the variables, are the chunk's accumulators.
  const auto &Reductions = L.Vars.Reductions;
  OS << "  ::fpm::" << (Reductions.empty() ? "parallelFor" : "parallelReduce")
     << "(fpm_info" << S << ", fpm_trip" << S;
  if (L.Kernel)
    OS << ", fpm_offload" << S << " ? &fpm_kernel" << S << " : nullptr";
  else if (!Reductions.empty())
    OS << ", nullptr";
  OS << ", [&](std::int64_t fpm_begin, std::int64_t fpm_end";
  for (const ReductionVar &R : Reductions) {
    QualType RT = R.Var->getType().getNonReferenceType();
    OS << ", "
       << (RT->isDependentType()
               ? "decltype(" + R.Var->getName().str() + ") &" +
                     R.Var->getName().str()
               : T.type(RT.getUnqualifiedType(), "&" + R.Var->getName().str()));
  }
  OS << ") {\n";
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
  After << "\n    }\n  }";
  if (!Reductions.empty()) {
    After << ",\n" << T.lineDirective(Reductions.front().Loc) << " ";
    for (const ReductionVar &R : Reductions)
      After << " ::fpm::reduce(" << reductionOpEnumerator(R.Op) << ", "
            << R.Var->getName() << ")" << (&R == &Reductions.back() ? "" : ",");
  }
  After << ");\n";
  if (!Loop.DeclaredInInit)
    After << "  " << LT.VarName << " = (" << Alias << ")((" << LT.U64
          << ")fpm_lower" << S << " + (" << LT.U64 << ")fpm_trip" << S << " * ("
          << LT.U64 << ")fpm_step" << S << ");\n  (void)" << LT.VarName
          << ";\n";
  After << "}\n" << LT.AfterLine;

  unsigned Length =
      SM.getFileOffset(L.BodyBegin) - SM.getFileOffset(L.ReplaceBegin);
  Rewrite.ReplaceText(L.ReplaceBegin, Length, Prefix);
  Rewrite.InsertTextAfter(L.BodyEnd, Suffix);
}

} // namespace fpm
