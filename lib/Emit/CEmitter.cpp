//===- CEmitter.cpp - A partitioned loop as an outlined C body ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The C emitter (Emitters.h): a loop's body outlined into a function of its
// own, with its context struct, and the call that replaces the loop, as
// the analysis planned them (OutlinePlan, Analysis/OutlineChecks.h): it
// prints, and refuses nothing.
//
//===----------------------------------------------------------------------===//

#include "Emit/Emitters.h"
#include "Record/SourceRecord.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace clang;

namespace fpm {
namespace {

/// The name of VD's member in the context struct: its own, unless an
/// outer partitioned loop's outlined body, where this loop's call stands,
/// defines that name as a macro (it reaches VD through its address).
std::string memberName(const LoopModel &L, const VarDecl *VD) {
  std::string N = VD->getName().str();
  return llvm::is_contained(L.EnclosingAddressed, VD) ? "fpm_m_" + N : N;
}

/// A macro's definition as written after `#define `: name, parameters and
/// replacement.
std::string macroText(const MacroInfo &MI, const SourceManager &SM,
                      const LangOptions &LO) {
  return Lexer::getSourceText(
             CharSourceRange::getTokenRange(MI.getDefinitionLoc(),
                                            MI.getDefinitionEndLoc()),
             SM, LO)
      .str();
}

/// The directives around an outlined body.
struct MacroFixes {
  /// Before it: the macros its text sees where it is written.
  std::string Before;
  /// After it: the macros of the place it goes to (Outlined) again.
  std::string After;
};

/// The outlined body goes after the enclosing function (Outlined), where a
/// macro the function defines, undefines or redefines after the loop
/// (`#define A(i, j) ...` before it, `#undef A` after it) has another
/// state than where the text of Ranges is written. For each identifier of
/// that text (directives included) whose macro differs there, and each of
/// the macros those expand to in turn, the state at the text is set before
/// the body and the one at Outlined restored after it.
MacroFixes macroFixes(Preprocessor &PP, ArrayRef<CharSourceRange> Ranges,
                      SourceLocation Outlined) {
  const SourceManager &SM = PP.getSourceManager();
  const LangOptions &LO = PP.getLangOpts();
  llvm::SmallVector<std::pair<IdentifierInfo *, SourceLocation>, 32> Work;
  for (const CharSourceRange &Range : Ranges) {
    Lexer Lex = rawLexerAt(Range.getBegin(), SM, LO);
    Token Tok;
    for (Lex.LexFromRawLexer(Tok);
         Tok.isNot(tok::eof) &&
         SM.isBeforeInTranslationUnit(Tok.getLocation(), Range.getEnd());
         Lex.LexFromRawLexer(Tok))
      if (Tok.is(tok::raw_identifier))
        if (IdentifierInfo *II = PP.getIdentifierInfo(Tok.getRawIdentifier());
            II->hadMacroDefinition())
          Work.push_back({II, Tok.getLocation()});
  }
  MacroFixes Fixes;
  llvm::SmallPtrSet<IdentifierInfo *, 16> Done;
  while (!Work.empty()) {
    auto [II, At] = Work.pop_back_val();
    if (!Done.insert(II).second)
      continue;
    const MacroInfo *Want = PP.getMacroDefinitionAtLoc(II, At).getMacroInfo();
    const MacroInfo *There =
        PP.getMacroDefinitionAtLoc(II, Outlined).getMacroInfo();
    if (Want)
      for (const Token &Tok : Want->tokens())
        if (IdentifierInfo *Next = Tok.getIdentifierInfo();
            Next && Next->hadMacroDefinition())
          Work.push_back({Next, At});
    if (Want == There || (Want && Want->isBuiltinMacro()) ||
        (There && There->isBuiltinMacro()))
      continue;
    std::string Name = II->getName().str();
    Fixes.Before += "#undef " + Name + "\n";
    if (Want)
      Fixes.Before += "#define " + macroText(*Want, SM, LO) + "\n";
    Fixes.After += "#undef " + Name + "\n";
    if (There)
      Fixes.After += "#define " + macroText(*There, SM, LO) + "\n";
  }
  return Fixes;
}

/// The `#define` and `#undef` lines of Range that the preprocessor ran
/// (none of a skipped block), as written: the body they stand in moves out
/// of the function, and the function's code after the loop must still see
/// what they did.
std::string macroDirectives(Preprocessor &PP, CharSourceRange Range) {
  const SourceManager &SM = PP.getSourceManager();
  const LangOptions &LO = PP.getLangOpts();
  std::string Lines;
  Lexer Lex = rawLexerAt(Range.getBegin(), SM, LO);
  Token Tok;
  Lex.LexFromRawLexer(Tok);
  while (Tok.isNot(tok::eof) &&
         SM.isBeforeInTranslationUnit(Tok.getLocation(), Range.getEnd())) {
    if (Tok.isNot(tok::hash) || !Tok.isAtStartOfLine()) {
      Lex.LexFromRawLexer(Tok);
      continue;
    }
    // The directive's tokens, to the end of its line.
    llvm::SmallVector<Token, 8> Line{Tok};
    for (Lex.LexFromRawLexer(Tok);
         Tok.isNot(tok::eof) && !Tok.isAtStartOfLine();
         Lex.LexFromRawLexer(Tok))
      Line.push_back(Tok);
    if (Line.size() < 3 || Line[1].isNot(tok::raw_identifier) ||
        Line[2].isNot(tok::raw_identifier) ||
        (Line[1].getRawIdentifier() != "define" &&
         Line[1].getRawIdentifier() != "undef"))
      continue;
    // Ran: the macro's history has a directive at the name.
    const Token &Name = Line[2];
    IdentifierInfo *II = PP.getIdentifierInfo(Name.getRawIdentifier());
    bool Ran = false;
    for (const MacroDirective *MD = PP.getLocalMacroDirectiveHistory(II); MD;
         MD = MD->getPrevious())
      Ran |= MD->getLocation() == Name.getLocation();
    if (Ran)
      Lines += Lexer::getSourceText(
                   CharSourceRange::getCharRange(Line.front().getLocation(),
                                                 Line.back().getEndLoc()),
                   SM, LO)
                   .str() +
               "\n";
  }
  return Lines;
}

} // namespace

void emitC(ASTContext &Ctx, Preprocessor &PP, clang::Rewriter &Rewrite,
           const LoopModel &L, const LoopText &LT) {
  const SourceManager &SM = Ctx.getSourceManager();
  const CanonicalLoop &Loop = L.Loop;
  const VarDecl *Var = Loop.Var;
  const OutlinePlan &Plan = *L.Outline;
  Text T(Ctx);
  const std::string &S = LT.Suffix;
  std::string VarType = T.type(Var->getType().getUnqualifiedType());
  std::string Ctx_ = "fpm_c" + S;

  // What the context carries, how the call site fills it and how the
  // outlined function declares the body's names from it (OutlineChecks.h).
  std::string Members, Sets, Locals;
  llvm::raw_string_ostream M(Members), Set(Sets), Local(Locals);
  // The extents of an array of variable size, as its declaration's
  // brackets: each variable one becomes a context member, measured with
  // sizeof at the call site and copied into a const local of the outlined
  // body.
  auto Extents = [&](const std::string &N, const OutlinedVar &OV) {
    std::string Dims;
    for (const OutlineExtent &E : OV.Extents) {
      if (!E.Variable) {
        Dims += "[" + std::to_string(E.Size) + "]";
        continue;
      }
      std::string Zeros;
      for (unsigned I = 0; I < E.Dim; ++I)
        Zeros += "[0]";
      std::string Dim = "fpm_" + N + "_d" + std::to_string(E.Dim);
      Dims += "[" + Dim + "]";
      M << "  int64_t " << Dim << ";\n";
      Set << "  " << Ctx_ << "." << Dim << " = (int64_t)(sizeof(" << N << Zeros
          << ") / sizeof(" << N << Zeros << "[0]));\n";
      Local << "  const int64_t " << Dim << " = fpm_c->" << Dim << ";\n";
    }
    return Dims;
  };
  // The body's text names a variable the enclosing function writes into or
  // takes the address of through a macro that means the variable itself,
  // reached through its address: `#define r (*fpm_ref_r)`.
  std::string Aliases, Unaliases;
  for (const OutlinedVar &OV : Plan.Vars) {
    const VarDecl *VD = OV.Var;
    std::string N = VD->getName().str();
    std::string Member = memberName(L, VD);
    QualType Declared = VD->getType();
    switch (OV.K) {
    case OutlinedVar::Kind::Value: {
      QualType Passed = Declared->isArrayType()
                            ? Ctx.getArrayDecayedType(Declared)
                            : Declared;
      M << "  " << T.type(Passed.getUnqualifiedType(), Member) << ";\n";
      Set << "  " << Ctx_ << "." << Member << " = " << N << ";\n";
      Local << "  " << T.type(Declared->isArrayType() ? Passed : Declared, N)
            << " = fpm_c->" << Member << ";\n";
      break;
    }
    case OutlinedVar::Kind::ArrayAddress: {
      QualType Passed = Ctx.getArrayDecayedType(Declared);
      M << "  void *" << Member << ";\n";
      Set << "  " << Ctx_ << "." << Member << " = (void *)" << N << ";\n";
      Local << "  " << T.type(Passed, N) << " = (" << T.type(Passed)
            << ")fpm_c->" << Member << ";\n";
      break;
    }
    case OutlinedVar::Kind::Reference:
      M << "  void *" << Member << ";\n";
      Set << "  " << Ctx_ << "." << Member << " = (void *)&" << N << ";\n";
      Local << "  " << T.type(Declared, "*const fpm_ref_" + N) << " = ("
            << T.type(Declared, "*") << ")fpm_c->" << Member << ";\n";
      Aliases += "#define " + N + " (*fpm_ref_" + N + ")\n";
      Unaliases += "#undef " + N + "\n";
      break;
    case OutlinedVar::Kind::LocalValue:
      M << "  void *" << Member << ";\n";
      Set << "  " << Ctx_ << "." << Member << " = (void *)&" << N << ";\n";
      Local << "  " << T.type(Declared, N) << " = *("
            << T.type(Declared.getUnqualifiedType(), "*") << ")fpm_c->"
            << Member << ";\n";
      break;
    case OutlinedVar::Kind::VariableArray: {
      M << "  void *" << Member << ";\n";
      Set << "  " << Ctx_ << "." << Member << " = (void *)" << N << ";\n";
      std::string Dims = Extents(N, OV);
      Local << "  " << T.type(OV.Elem, "(*" + N + ")" + Dims) << " = ("
            << T.type(OV.Elem, "(*)" + Dims) << ")fpm_c->" << Member << ";\n";
      break;
    }
    case OutlinedVar::Kind::Private:
      Local << "  " << T.type(Declared.getUnqualifiedType(), N) << ";\n";
      break;
    case OutlinedVar::Kind::PrivateVariableArray: {
      // Declared again with its extents measured at the call site.
      std::string Dims = Extents(N, OV);
      Local << "  " << T.type(OV.Elem, N + Dims) << ";\n";
      break;
    }
    }
  }
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
  SourceLocation FnBegin = Plan.FnBegin, FnEnd = Plan.FnEnd;

  std::string Declared;
  llvm::raw_string_ostream D(Declared);
  D << "/* fpm-rewrite: the context of loop " << commentSafe(L.Name)
    << ", outlined from " << L.Fn->getName() << " */\n";
  D << "struct fpm_ctx" << S << " {\n";
  D << "  "
    << (usesLocalType(Var->getType())
            ? T.type(Var->getType().getCanonicalType().getUnqualifiedType())
            : VarType)
    << " fpm_lower;\n  int64_t fpm_step;\n"
    << Members;
  D << "};\n";
  D << "static int fpm_body" << S << "(int64_t, int64_t, void *"
    << (Reductions.empty() ? "" : ", void *const *") << ");\n";
  D << T.lineMarker(FnBegin);

  // The text the outlined body copies, and the macros it must see there.
  llvm::SmallVector<CharSourceRange, 4> Copied{
      CharSourceRange::getCharRange(L.BodyBegin, L.BodyEnd)};
  llvm::SmallVector<const NamedDecl *, 4> CopiedTypes;
  for (const NamedDecl *D : L.Vars.LocalTypes) {
    // `typedef struct P {...} P_t;`: P's text is in P_t's.
    bool InAnother = llvm::any_of(L.Vars.LocalTypes, [&](const NamedDecl *O) {
      return O != D &&
             !SM.isBeforeInTranslationUnit(
                 SM.getExpansionLoc(D->getBeginLoc()),
                 SM.getExpansionLoc(O->getBeginLoc())) &&
             !SM.isBeforeInTranslationUnit(
                 SM.getExpansionRange(O->getEndLoc()).getEnd(),
                 SM.getExpansionRange(D->getEndLoc()).getEnd());
    });
    if (InAnother)
      continue;
    CopiedTypes.push_back(D);
    Copied.push_back(SM.getExpansionRange(D->getSourceRange()));
  }
  MacroFixes Fixes = macroFixes(PP, Copied, FnEnd);

  std::string Outlined;
  llvm::raw_string_ostream O(Outlined);
  O << "\n" << Fixes.Before;
  O << "/* fpm-rewrite: the body of loop " << commentSafe(L.Name)
    << ", outlined from " << L.Fn->getName() << " */\n";
  O << "static int fpm_body" << S
    << "(int64_t fpm_begin, int64_t fpm_end, void *fpm_ctx" << BodyParams
    << ") {\n";
  O << "  struct fpm_ctx" << S << " *fpm_c = (struct fpm_ctx" << S
    << " *)fpm_ctx;\n";
  // The function's types the body uses, declared again (LoopChecker made
  // sure they can be).
  for (const NamedDecl *D : CopiedTypes)
    O << T.lineMarker(D->getBeginLoc()) << T.of(D->getSourceRange()) << ";\n";
  O << Locals;
  O << "  int64_t fpm_k;\n";
  O << "  for (fpm_k = fpm_begin; fpm_k < fpm_end; ++fpm_k) {\n";
  O << "    " << VarType << " " << LT.VarName << " = (" << VarType
    << ")((uint64_t)fpm_c->fpm_lower + (uint64_t)fpm_k * "
       "(uint64_t)fpm_c->fpm_step);\n";
  O << "    (void)" << LT.VarName << ";\n";
  if (!Aliases.empty())
    O << Aliases;
  O << LT.BodyLine;
  // The body as rewritten so far: the calls of the partitioned loops nested
  // in it, rewritten before it, move with it. Their names read the same in
  // the outlined body, which declares the body's names again.
  O << Rewrite.getRewrittenText(
      CharSourceRange::getCharRange(L.BodyBegin, L.BodyEnd));
  O << "\n" << Unaliases << "  }\n" << StoreBack << "  return 0;\n}\n";
  O << Fixes.After << T.lineMarker(FnEnd);

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
      emitKernel(C, L, S, /*Cxx=*/false);
    C << "  if (fpm_parallel_reduce(&fpm_info" << S << ", fpm_trip" << S
      << ", fpm_body" << S << ", &" << Ctx_ << ", " << Reduce << ", "
      << Reductions.size() << ", ";
    if (L.Kernel)
      C << "fpm_offload" << S << " ? &fpm_kernel" << S << " : NULL";
    else
      C << "NULL";
    C << ") != FPM_OK) {\n";
  } else if (L.Kernel) {
    emitKernel(C, L, S, /*Cxx=*/false);
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
  C << "}\n"
    << macroDirectives(PP,
                       CharSourceRange::getCharRange(L.BodyBegin, L.BodyEnd))
    << LT.AfterLine;

  // The length of the text replaced, as rewritten so far (with the nested
  // loops' calls).
  clang::Rewriter::RewriteOptions Replaced;
  Replaced.IncludeInsertsAtBeginOfRange = false;
  int Length = Rewrite.getRangeSize(
      CharSourceRange::getCharRange(L.ReplaceBegin, L.BodyEnd), Replaced);
  assert(Length >= 0 && "planRewrite found the loop's text in one file");
  Rewrite.ReplaceText(L.ReplaceBegin, Length, Call);
  Rewrite.InsertTextBefore(FnBegin, Declared);
  Rewrite.InsertTextBefore(FnEnd, Outlined);
}

} // namespace fpm
