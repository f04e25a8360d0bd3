//===- RewriteAction.cpp - The fpm-rewrite frontend action ----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "RewriteAction.h"

#include "Analysis/ClauseSema.h"
#include "Analysis/DataRegionChecks.h"
#include "Analysis/LoopChecker.h"
#include "Analysis/NestedLoops.h"
#include "Analysis/OpenMpRegions.h"
#include "Analysis/OutlineChecks.h"
#include "Analysis/PragmaPlacement.h"
#include "Emit/DataRegions.h"
#include "Emit/Rewriter.h"
#include "LoopModel.h"
#include "Offload/Offload.h"
#include "Record/PragmaParser.h"
#include "Record/SourceRecord.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

class RewriteConsumer : public ASTConsumer {
public:
  RewriteConsumer(const std::vector<PartitionPragma> &Pragmas,
                  const std::vector<DataPragma> &DataPragmas,
                  const SourceRecord &Record, clang::Rewriter &Rewrite,
                  bool Remarks)
      : Pragmas(Pragmas), DataPragmas(DataPragmas), Record(Record),
        Rewrite(Rewrite), Remarks(Remarks) {}

  /// The analysis runs once the unit is parsed and ParseAST's Parser is
  /// gone: ClauseSema parses with one of its own.
  void HandleTranslationUnit(ASTContext &) override { Parsed = true; }

  /// Checks and rewrites the loops of the parsed unit.
  void run(Sema &S);

private:
  bool Parsed = false;
  const std::vector<PartitionPragma> &Pragmas;
  const std::vector<DataPragma> &DataPragmas;
  const SourceRecord &Record;
  clang::Rewriter &Rewrite;
  bool Remarks;
};

/// The sections ClauseSema read from the derived clauses' text are the ones
/// fpm worked out, bound by bound (a name the text uses means at the pragma
/// what it meant in the body).
bool readsBack(const DerivedClauses &D, const SectionShapes &Shapes) {
  llvm::SmallVector<const DerivedSection *, 4> Sections = D.inOrder();
  if (Sections.size() != Shapes.size())
    return false;
  for (size_t I = 0; I < Sections.size(); ++I) {
    const SectionShape &Shape = Shapes[I];
    const auto &Bounds = Sections[I]->Bounds;
    if (!Shape.Known || Bounds.size() != Shape.Inner.size() + 1 ||
        Shape.Lower != Bounds[0].first || Shape.Length != Bounds[0].second)
      return false;
    for (size_t Dim = 1; Dim < Bounds.size(); ++Dim)
      if (Shape.Inner[Dim - 1].Lower != Bounds[Dim].first ||
          Shape.Inner[Dim - 1].Length != Bounds[Dim].second)
        return false;
  }
  return true;
}

/// Gives Loop, checked with a pragma that has no data clause and may run
/// on OpenCL devices, the clauses fpm works out (deriveDataClauses): they
/// are parsed, read by ClauseSema and checked with the loop again, silently,
/// as if the pragma held them, into a copy of it kept in Derived. Where fpm
/// cannot work them out, Loop says why (planOffload's remark).
void deriveClauses(Sema &S, ClauseSema &Clauses, const FunctionDecl &Fn,
                   const ForStmt &For,
                   ArrayRef<OmpThreadPrivate> ThreadPrivates, LoopModel &Loop,
                   std::deque<PartitionPragma> &Derived) {
  const PartitionPragma &P = *Loop.Pragma;
  if (!P.In.empty() || !P.Out.empty() || !P.InOut.empty() ||
      !P.KernelName.empty() || P.Devices == "cpu")
    return;
  ASTContext &Ctx = S.getASTContext();
  DerivedClauses D = deriveDataClauses(Ctx, P, Fn, For, *Loop.Loop.Var);
  if (!D.Why.empty()) {
    Loop.NotDerived = OffloadRefusal{D.Loc, D.Why};
    return;
  }
  std::string Text = D.text();
  if (Text.empty()) {
    Loop.Derived = Text;
    return;
  }
  // The clauses' tokens, from a buffer of their own, as the pragma handler
  // would have read them.
  Preprocessor &PP = S.getPreprocessor();
  SourceManager &SM = Ctx.getSourceManager();
  FileID Buffer = SM.createFileID(
      llvm::MemoryBuffer::getMemBufferCopy(Text, "<fpm derived clauses>"));
  Lexer Lex(Buffer, SM.getBufferOrFake(Buffer), SM, Ctx.getLangOpts());
  llvm::SmallVector<Token, 32> Tokens;
  for (Token T; !Lex.LexFromRawLexer(T) || T.isNot(tok::eof);) {
    if (T.is(tok::eof))
      break;
    if (T.is(tok::raw_identifier))
      PP.LookUpIdentifierInfo(T);
    Tokens.push_back(T);
  }
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  bool Suppressed = Diags.getSuppressAllDiagnostics();
  Diags.setSuppressAllDiagnostics(true);
  DiagnosticErrorTrap Trap(Diags);
  PartitionPragma Parsed;
  PartitionPragma &Copy = Derived.emplace_back(P);
  LoopModel Checked;
  bool Ok =
      parsePartitionClauses(PP, Tokens, SM.getLocForEndOfFile(Buffer), Parsed);
  if (Ok) {
    // What is said of a section (remarks, the `#line` before its bounds in
    // the rewritten file) is said at the pragma the clauses would stand in.
    for (auto *Sections : {&Parsed.In, &Parsed.Out, &Parsed.InOut})
      for (DataSection &Section : *Sections)
        Section.Loc = P.KeywordLoc;
    Copy.In = std::move(Parsed.In);
    Copy.Out = std::move(Parsed.Out);
    Copy.InOut = std::move(Parsed.InOut);
    llvm::append_range(Copy.Exprs, Parsed.Exprs);
    Ok = Clauses.check(Copy, For, Checked.Shapes) &&
         readsBack(D, Checked.Shapes) &&
         checkLoop(Ctx, Copy, Fn, For, Checked.Loop, Checked.Vars,
                   ThreadPrivates, &Checked.Shapes) &&
         !Trap.hasErrorOccurred();
  }
  Diags.setSuppressAllDiagnostics(Suppressed);
  if (!Ok) {
    Loop.NotDerived = OffloadRefusal{
        P.KeywordLoc,
        "fpm worked out " + Text +
            " but could not check them as the pragma would read them"};
    Derived.pop_back();
    return;
  }
  Loop.Pragma = &Copy;
  Loop.Loop = Checked.Loop;
  Loop.Vars = std::move(Checked.Vars);
  Loop.Shapes = std::move(Checked.Shapes);
  Loop.Derived = Text;
}

void RewriteConsumer::run(Sema &S) {
  if (!Parsed || (Pragmas.empty() && DataPragmas.empty()))
    return;
  ASTContext &Ctx = S.getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  FileStatements Statements = collectStatements(Ctx);

  std::string Stem;
  if (OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID()))
    Stem = llvm::sys::path::stem(Main->getName()).str();
  // Made an identifier, so that every default name can be written in
  // name(...): `2mm-omp` -> `_2mm_omp`.
  for (char &C : Stem)
    if (!llvm::isAlnum(C) && C != '_')
      C = '_';
  if (Stem.empty() || llvm::isDigit(Stem.front()))
    Stem.insert(0, "_");

  // OpenMP's parallel regions: a partitioned loop in one would run once per
  // thread of the team.
  std::vector<OmpRegion> Regions = findOmpRegions(Record, Ctx);
  // OpenMP's threadprivate variables: shared in a partitioned loop unless
  // private, which the checks' diagnostics about them say.
  std::vector<OmpThreadPrivate> ThreadPrivates =
      findOmpThreadPrivates(Record, Ctx);

  // Match each pragma with the `for` right after it (PragmaPlacement.h), and
  // check the clauses' expressions (not after a fatal error: nothing is
  // reported then) and the loop.
  std::optional<ClauseSema> Clauses;
  if (!Diags.hasFatalErrorOccurred())
    Clauses.emplace(S);
  std::vector<LoopModel> Loops;
  // The pragmas with the data clauses fpm worked out, which Loops point to.
  std::deque<PartitionPragma> Derived;
  llvm::DenseMap<const FunctionDecl *, unsigned> Ordinals;
  llvm::StringMap<const PartitionPragma *> Names;
  for (const PartitionPragma &Pragma : Pragmas) {
    std::optional<PlacedLoop> Placed =
        placePartition(Pragma, Statements, Regions, Record, Ctx);
    if (!Placed)
      continue;
    auto [For, Fn, PragmaApart] = *Placed;
    LoopModel Loop;
    if (Clauses && !Clauses->check(Pragma, *For, Loop.Shapes))
      continue;
    Loop.Pragma = &Pragma;
    Loop.PragmaApart = PragmaApart;
    Loop.Fn = Fn;
    unsigned K = Ordinals[Fn]++;
    Loop.Name = !Pragma.Name.empty() ? Pragma.Name
                                     : Stem + "." + Fn->getNameAsString() +
                                           "." + std::to_string(K);
    // The name keys the loop's stored profiles: two loops sharing one would
    // mix them.
    auto [Named, First] = Names.try_emplace(Loop.Name, &Pragma);
    if (!First) {
      PresumedLoc At = SM.getPresumedLoc(Named->second->HashLoc);
      report(Diags, Pragma.HashLoc, Level::Warning,
             "loop name '%0' is already used by the loop at %1:%2:%3; their "
             "profiles would mix; give one a distinct name(...)")
          << Loop.Name << At.getFilename() << At.getLine() << At.getColumn();
      report(Diags, Named->second->HashLoc, Level::Note,
             "the loop first named '%0' is here")
          << Loop.Name;
    }
    if (!checkLoop(Ctx, Pragma, *Fn, *For, Loop.Loop, Loop.Vars, ThreadPrivates,
                   &Loop.Shapes))
      continue;
    if (Clauses)
      deriveClauses(S, *Clauses, *Fn, *For, ThreadPrivates, Loop, Derived);
    Loop.Index = Loops.size();
    Loops.push_back(std::move(Loop));
  }

  // A partitioned loop inside another changes both loops' models.
  linkNestedLoops(Loops, SM);
  if (Diags.hasErrorOccurred())
    return;
  // Kernels first, in source order, so that remarks come in that order.
  for (LoopModel &Loop : Loops)
    planOffload(Ctx, Loop, Remarks);
  if (Diags.hasErrorOccurred())
    return;

  // Rewrite innermost and last first, so that edits at one place nest.
  llvm::sort(Loops, [&](const LoopModel &A, const LoopModel &B) {
    return SM.isBeforeInTranslationUnit(B.Loop.For->getForLoc(),
                                        A.Loop.For->getForLoc());
  });
  // Data regions first: their edits sit around the loops' (after a block's
  // '{', before its '}'), and none may open in a partitioned loop.
  std::vector<SourceRange> Partitioned;
  for (const LoopModel &Loop : Loops)
    Partitioned.push_back(
        {Loop.Pragma->HashLoc,
         SM.getExpansionRange(Loop.Loop.For->getEndLoc()).getEnd()});
  std::vector<PlacedDataPragma> DataRegions =
      checkDataPragmas(Ctx, Record, DataPragmas, Statements, Partitioned);
  if (Diags.hasErrorOccurred())
    return;
  // What the rewrite itself needs, in the order the loops are rewritten.
  for (LoopModel &Loop : Loops)
    planRewrite(Ctx, Loop);
  if (Diags.hasErrorOccurred())
    return;

  // Emission: text only, from the models.
  std::vector<LoopRegionEnd> LoopRegionEnds;
  const bool DataRewritten =
      emitDataRegions(Rewrite, DataRegions, LoopRegionEnds);
  LoopRewriter Rewriter(Ctx, S.getPreprocessor(), Rewrite);
  for (const LoopModel &Loop : Loops)
    Rewriter.rewrite(Loop);
  closeLoopRegions(Rewrite, LoopRegionEnds);
  Rewriter.finish(DataRewritten);
}

/// Every file the preprocessor enters, system headers included.
class EnteredFiles : public DependencyCollector {
  bool needSystemDependencies() override { return true; }
};

class RewriteAction : public ASTFrontendAction {
public:
  RewriteAction(std::string OutputFile, bool Remarks,
                std::string DependencyFile)
      : OutputFile(std::move(OutputFile)), Remarks(Remarks),
        DependencyFile(std::move(DependencyFile)) {}

protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 StringRef) override {
    Rewrite.setSourceMgr(CI.getSourceManager(), CI.getLangOpts());
    CI.getPreprocessor().AddPragmaHandler(
        new FpmPragmaHandler(Pragmas, &DataPragmas));
    CI.getPreprocessor().addPPCallbacks(
        makeSourceRecorder(CI.getSourceManager(), CI.getDiagnostics(), Record));
    if (!DependencyFile.empty()) {
      Entered = std::make_shared<EnteredFiles>();
      Entered->attachToPreprocessor(CI.getPreprocessor());
    }
    auto Consumer = std::make_unique<RewriteConsumer>(Pragmas, DataPragmas,
                                                      Record, Rewrite, Remarks);
    this->Consumer = Consumer.get();
    return Consumer;
  }

  void ExecuteAction() override {
    ASTFrontendAction::ExecuteAction();
    CompilerInstance &CI = getCompilerInstance();
    if (Consumer && CI.hasSema())
      Consumer->run(CI.getSema());
  }

  void EndSourceFileAction() override;

private:
  std::string OutputFile;
  bool Remarks;
  std::string DependencyFile;
  std::vector<PartitionPragma> Pragmas;
  std::vector<DataPragma> DataPragmas;
  SourceRecord Record;
  clang::Rewriter Rewrite;
  std::shared_ptr<EnteredFiles> Entered;
  /// Owned by the CompilerInstance.
  RewriteConsumer *Consumer = nullptr;
};

void RewriteAction::EndSourceFileAction() {
  CompilerInstance &CI = getCompilerInstance();
  DiagnosticsEngine &Diags = CI.getDiagnostics();
  // Nothing is written for a file with an error.
  if (Diags.hasErrorOccurred())
    return;
  const SourceManager &SM = CI.getSourceManager();
  FileID Main = SM.getMainFileID();
  std::string Path =
      OutputFile.empty() ? defaultOutputPath(getCurrentFile()) : OutputFile;
  // The output in place of the input (`-o x.c`, or a link to it) would
  // lose the user's source.
  if (bool Same = false;
      !llvm::sys::fs::equivalent(Path, getCurrentFile(), Same) && Same) {
    report(Diags, SourceLocation(), Level::Error,
           "will not write the output file '%0': it is the input file '%1'; "
           "write the rewritten file elsewhere (by default, beside it as "
           "'%2')")
        << Path << getCurrentFile() << defaultOutputPath(getCurrentFile());
    return;
  }
  // A dependency file that cannot be written stops the rewrite before its
  // output is written.
  if (llvm::Error Error =
          checkOutputFile(DependencyFile, "the dependency file")) {
    report(Diags, SourceLocation(), Level::Error, "%0")
        << llvm::toString(std::move(Error));
    return;
  }
  if (llvm::Error Error =
          writeOutputFile(Path, "the output file", [&](llvm::raw_ostream &OS) {
            if (const auto *Buffer = Rewrite.getRewriteBufferFor(Main))
              Buffer->write(OS);
            else
              OS << SM.getBufferData(Main);
          })) {
    report(Diags, SourceLocation(), Level::Error, "%0")
        << llvm::toString(std::move(Error));
    return;
  }

  // What the output depends on, for the build system: only after a
  // rewrite that succeeded.
  if (DependencyFile.empty())
    return;
  for (const PartitionPragma &Pragma : Pragmas)
    if (!Pragma.KernelPath.empty())
      Entered->maybeAddDependency(Pragma.KernelPath, /*FromModule=*/false,
                                  /*IsSystem=*/false, /*IsModuleFile=*/false,
                                  /*IsMissing=*/false);
  if (llvm::Error Error = writeOutputFile(
          DependencyFile, "the dependency file", [&](llvm::raw_ostream &OS) {
            OS << makeDependencies(Path, Entered->getDependencies());
          }))
    report(Diags, SourceLocation(), Level::Error, "%0")
        << llvm::toString(std::move(Error));
}

/// Path in Make's syntax, as Clang writes it in a dependency file.
void printMakePath(llvm::raw_ostream &OS, StringRef Path) {
  for (size_t I = 0; I < Path.size(); ++I) {
    if (Path[I] == '#') {
      OS << '\\';
    } else if (Path[I] == ' ') {
      // The backslashes before a space are doubled, and the space escaped.
      OS << '\\';
      for (size_t J = I; J > 0 && Path[J - 1] == '\\'; --J)
        OS << '\\';
    } else if (Path[I] == '$') {
      OS << '$';
    }
    OS << Path[I];
  }
}

} // namespace

std::string makeDependencies(StringRef Target, ArrayRef<std::string> Deps) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printMakePath(OS, Target);
  OS << ":";
  for (const std::string &Dep : Deps) {
    OS << " \\\n  ";
    printMakePath(OS, Dep);
  }
  OS << "\n";
  return Text;
}

llvm::Error checkOutputFile(StringRef Path, StringRef What) {
  llvm::sys::fs::file_status Status;
  if (Path.empty() || Path == "-" ||
      llvm::sys::fs::status(Path, Status, /*Follow=*/false) ||
      Status.type() == llvm::sys::fs::file_type::regular_file)
    return llvm::Error::success();
  return llvm::createStringError(
      std::errc::file_exists,
      "will not write %s '%s': it exists and is not a regular file",
      What.str().c_str(), Path.str().c_str());
}

llvm::Error
writeOutputFile(StringRef Path, StringRef What,
                llvm::function_ref<void(llvm::raw_ostream &)> Write) {
  if (llvm::Error Error = checkOutputFile(Path, What))
    return Error;
  if (llvm::Error Error = llvm::writeToOutput(Path, [&](llvm::raw_ostream &OS) {
        Write(OS);
        return llvm::Error::success();
      }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write %s '%s': %s",
                                   What.str().c_str(), Path.str().c_str(),
                                   llvm::toString(std::move(Error)).c_str());
  return llvm::Error::success();
}

std::string defaultOutputPath(StringRef Input) {
  llvm::SmallString<256> Path(Input);
  std::string Extension = llvm::sys::path::extension(Input).str();
  llvm::sys::path::replace_extension(Path, ".fpm" + Extension);
  return std::string(Path);
}

std::unique_ptr<FrontendAction> RewriteActionFactory::create() {
  return std::make_unique<RewriteAction>(OutputFile, Remarks, DependencyFile);
}

} // namespace fpm
