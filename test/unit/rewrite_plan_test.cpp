//===- rewrite_plan_test.cpp - What the analysis leaves the emitters ------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The analysis the emitters read and never second-guess, on small files in
// memory, through the stages as RewriteAction runs them (without ClauseSema
// and Offload): the loop a partition pragma takes (PragmaPlacement.h), the
// data pragmas a region or an update accepts (DataRegionChecks.h), what a
// loop nested in another changes in both (NestedLoops.h), and what the
// rewrite needs and refuses (OutlineChecks.h): each decision as the
// LoopModel records it, each refusal as the error it reports. The refusals
// a lit test pins (error-data-region.test, run-c-addressed.test,
// error-sizeof-array.test, ...) are left to it. Over 600 lines: a test per
// decision and refusal of four analysis units, on one snippet harness.
//
//===----------------------------------------------------------------------===//

#include "Analysis/DataRegionChecks.h"
#include "Analysis/LoopChecker.h"
#include "Analysis/NestedLoops.h"
#include "Analysis/OpenMpRegions.h"
#include "Analysis/OutlineChecks.h"
#include "Analysis/PragmaPlacement.h"
#include "LoopModel.h"
#include "Record/PragmaParser.h"
#include "Record/SourceRecord.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace clang;

namespace fpm {
namespace {

using Kind = OutlinedVar::Kind;

/// One variable of an outlined body: its name, how it travels, and its
/// extents as the declaration's brackets (`[?]` for a measured one).
struct Outlined {
  std::string Name;
  Kind K;
  std::string Extents;
};

/// What the stages decided of one loop, its locations as "line:col" (the
/// source manager is gone once the code is analysed).
struct Planned {
  unsigned Line = 0; ///< the `for`'s
  bool Nested = false;
  std::vector<std::string> Shared;
  bool Rewritable = false; ///< planRewrite's answer
  std::string ReplaceBegin, BodyBegin, BodyEnd;
  std::optional<std::vector<Outlined>> Outline;
  std::string FnBegin, FnEnd;
};

struct Outcome {
  /// The loops placed and checked, in source order.
  std::vector<Planned> Loops;
  /// The data pragmas accepted: "line: region" or "line: update".
  std::vector<std::string> DataPragmas;
  /// Every error and note, as "line:col: error: text".
  std::vector<std::string> Diagnostics;
};

std::string at(const SourceManager &SM, SourceLocation Loc) {
  PresumedLoc P = SM.getPresumedLoc(Loc);
  return P.isValid()
             ? std::to_string(P.getLine()) + ":" + std::to_string(P.getColumn())
             : "invalid";
}

/// Keeps the errors and their notes, where and as printed.
class Collector : public DiagnosticConsumer {
public:
  explicit Collector(std::vector<std::string> &Out) : Out(Out) {}

  void HandleDiagnostic(DiagnosticsEngine::Level Level,
                        const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level != DiagnosticsEngine::Note)
      InError = Level >= DiagnosticsEngine::Error;
    if (!InError)
      return;
    llvm::SmallString<256> Text;
    Info.FormatDiagnostic(Text);
    std::string Where = Info.hasSourceManager()
                            ? at(Info.getSourceManager(), Info.getLocation())
                            : "";
    Out.push_back(
        Where + (Level == DiagnosticsEngine::Error ? ": error: " : ": note: ") +
        Text.str().str());
  }

private:
  std::vector<std::string> &Out;
  bool InError = false;
};

class PlanAction : public ASTFrontendAction {
public:
  explicit PlanAction(Outcome &Out) : Out(Out) {}

  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getDiagnostics().setClient(new Collector(Out.Diagnostics),
                                  /*ShouldOwnClient=*/true);
    CI.getPreprocessor().AddPragmaHandler(
        new FpmPragmaHandler(Pragmas, &DataPragmas));
    CI.getPreprocessor().addPPCallbacks(
        makeSourceRecorder(CI.getSourceManager(), CI.getDiagnostics(), Record));
    return true;
  }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    struct Consumer : ASTConsumer {
      PlanAction &Action;
      explicit Consumer(PlanAction &Action) : Action(Action) {}
      void HandleTranslationUnit(ASTContext &Ctx) override { Action.plan(Ctx); }
    };
    return std::make_unique<Consumer>(*this);
  }

  /// The stages, in RewriteAction's order.
  void plan(ASTContext &Ctx) {
    const SourceManager &SM = Ctx.getSourceManager();
    FileStatements Statements = collectStatements(Ctx);
    std::vector<OmpRegion> Regions = findOmpRegions(Record, Ctx);
    std::vector<LoopModel> Loops;
    for (const PartitionPragma &Pragma : Pragmas) {
      std::optional<PlacedLoop> Placed =
          placePartition(Pragma, Statements, Regions, Record, Ctx);
      if (!Placed)
        continue;
      LoopModel Loop;
      Loop.Pragma = &Pragma;
      Loop.Fn = Placed->Fn;
      Loop.PragmaApart = Placed->PragmaApart;
      if (!checkLoop(Ctx, Pragma, *Placed->Fn, *Placed->For, Loop.Loop,
                     Loop.Vars))
        continue;
      Loop.Index = Loops.size();
      Loops.push_back(std::move(Loop));
    }
    linkNestedLoops(Loops, SM);
    std::vector<SourceRange> Partitioned;
    for (const LoopModel &Loop : Loops)
      Partitioned.push_back({Loop.Pragma->HashLoc, Loop.Loop.For->getEndLoc()});
    for (const PlacedDataPragma &Placed :
         checkDataPragmas(Ctx, Record, DataPragmas, Statements, Partitioned))
      Out.DataPragmas.push_back(
          std::to_string(SM.getPresumedLineNumber(Placed.Pragma->HashLoc)) +
          (Placed.Region ? ": region" : ": update"));
    // Innermost and last first, as they are rewritten.
    std::vector<bool> Rewritable(Loops.size());
    for (size_t I = Loops.size(); I-- > 0;)
      Rewritable[I] = planRewrite(Ctx, Loops[I]);
    for (size_t I = 0; I < Loops.size(); ++I) {
      const LoopModel &L = Loops[I];
      Planned &P = Out.Loops.emplace_back();
      P.Line = SM.getPresumedLineNumber(L.Loop.For->getForLoc());
      P.Nested = L.Nested;
      for (const VarDecl *VD : L.Vars.Shared)
        P.Shared.push_back(VD->getName().str());
      P.Rewritable = Rewritable[I];
      P.ReplaceBegin = at(SM, L.ReplaceBegin);
      P.BodyBegin = at(SM, L.BodyBegin);
      P.BodyEnd = at(SM, L.BodyEnd);
      if (!L.Outline)
        continue;
      P.FnBegin = at(SM, L.Outline->FnBegin);
      P.FnEnd = at(SM, L.Outline->FnEnd);
      P.Outline.emplace();
      for (const OutlinedVar &V : L.Outline->Vars) {
        std::string Extents;
        for (const OutlineExtent &E : V.Extents)
          Extents += E.Variable ? "[?]" : "[" + std::to_string(E.Size) + "]";
        P.Outline->push_back({V.Var->getName().str(), V.K, Extents});
      }
    }
  }

private:
  Outcome &Out;
  std::vector<PartitionPragma> Pragmas;
  std::vector<DataPragma> DataPragmas;
  SourceRecord Record;
};

/// The stages' decisions on Code, a C file (C++ where Name ends in .cpp),
/// with Headers beside it.
Outcome plan(const std::string &Code, const std::string &Name = "input.c",
             const tooling::FileContentMappings &Headers = {}) {
  Outcome Out;
  bool Cxx = llvm::StringRef(Name).ends_with(".cpp");
  tooling::runToolOnCodeWithArgs(std::make_unique<PlanAction>(Out), Code,
                                 {Cxx ? "-std=c++17" : "-std=c99",
                                  "-resource-dir=" FPM_CLANG_RESOURCE_DIR},
                                 Name, "fpm-rewrite-unittests",
                                 std::make_shared<PCHContainerOperations>(),
                                 Headers);
  return Out;
}

/// The outlined variable named Name of Loop, if any.
std::optional<Outlined> outlined(const Planned &Loop, const std::string &Name) {
  if (!Loop.Outline)
    return std::nullopt;
  for (const Outlined &V : *Loop.Outline)
    if (V.Name == Name)
      return V;
  return std::nullopt;
}

// --- OutlineChecks: what the C emitter prints, decided ---------------------

TEST(OutlinePlan, RecordsHowEachVariableReachesTheOutlinedBody) {
  Outcome Out = plan(R"(
typedef struct { double v[8]; double scale; } Vec;
static void put(Vec *p, int i, double x) { p->v[i] = x * p->scale; }
void f(int n, int m, double *y, Vec q, double (*g)[m]) {
  struct P { int x; };
  struct P local = { 2 };
  double a[8], w[n];
  double t[m];
  int i, k;
  for (i = 0; i < 8; i++) a[i] = i;
#pragma fpm partition private(t, k)
  for (i = 0; i < n; i++) {
    for (k = 0; k < m; k++) t[k] = g[i][k];
    put(&q, i % 8, t[0]);
    y[i] = a[i % 8] + w[i] + local.x;
  }
}
)");
  ASSERT_EQ(Out.Diagnostics, std::vector<std::string>{});
  ASSERT_EQ(Out.Loops.size(), 1u);
  const Planned &L = Out.Loops[0];
  EXPECT_TRUE(L.Rewritable);
  ASSERT_TRUE(L.Outline);
  // A pointer and an array the body only reads: copies (the array's
  // element 0's address).
  EXPECT_EQ(outlined(L, "y")->K, Kind::Value);
  EXPECT_EQ(outlined(L, "a")->K, Kind::Value);
  // A struct whose address the body takes: reached through its address.
  EXPECT_EQ(outlined(L, "q")->K, Kind::Reference);
  // A variable of a struct type local to the function: its address travels,
  // the outlined body copies it.
  EXPECT_EQ(outlined(L, "local")->K, Kind::LocalValue);
  // A VLA the body reads, and a pointer to rows of variable length: the
  // address, with the extents below the first measured at the call.
  EXPECT_EQ(outlined(L, "w")->K, Kind::Value);
  std::optional<Outlined> G = outlined(L, "g");
  ASSERT_TRUE(G);
  EXPECT_EQ(G->K, Kind::VariableArray);
  EXPECT_EQ(G->Extents, "[?]");
  // A private VLA: declared again with its extent measured; a private
  // scalar: declared again.
  std::optional<Outlined> T = outlined(L, "t");
  ASSERT_TRUE(T);
  EXPECT_EQ(T->K, Kind::PrivateVariableArray);
  EXPECT_EQ(T->Extents, "[?]");
  EXPECT_EQ(outlined(L, "k")->K, Kind::Private);
  // The context goes before the function's first line, the outlined body
  // after its '}'; the call replaces the text from the pragma's '#' to the
  // body's '}'.
  EXPECT_EQ(L.FnBegin, "4:1");
  EXPECT_EQ(L.FnEnd, "17:2");
  EXPECT_EQ(L.ReplaceBegin, "11:1");
  EXPECT_EQ(L.BodyBegin, "12:27");
  EXPECT_EQ(L.BodyEnd, "16:4");
}

TEST(OutlinePlan, AnArrayOfALocalTypeTravelsAsItsAddress) {
  Outcome Out = plan(R"(
void f(int n, int *s) {
  struct P { int x; } ps[4] = { {1}, {2}, {3}, {4} };
  int i;
#pragma fpm partition
  for (i = 0; i < n; i++)
    s[i] = ps[i % 4].x;
}
)");
  ASSERT_EQ(Out.Diagnostics, std::vector<std::string>{});
  ASSERT_EQ(Out.Loops.size(), 1u);
  std::optional<Outlined> Ps = outlined(Out.Loops[0], "ps");
  ASSERT_TRUE(Ps);
  EXPECT_EQ(Ps->K, Kind::ArrayAddress);
  // A statement that is not a block ends after its ';'.
  EXPECT_EQ(Out.Loops[0].BodyEnd, "7:24");
}

TEST(OutlinePlan, CxxLoopsAreNotOutlined) {
  Outcome Out = plan(R"(
void f(int n, double *y) {
#pragma fpm partition
  for (int i = 0; i < n; i++)
    y[i] = i;
}
)",
                     "input.cpp");
  ASSERT_EQ(Out.Diagnostics, std::vector<std::string>{});
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_TRUE(Out.Loops[0].Rewritable);
  EXPECT_FALSE(Out.Loops[0].Outline);
  EXPECT_EQ(Out.Loops[0].BodyEnd, "5:14");
}

TEST(OutlinePlan, PreprocessorLinesBeforeTheLoopStay) {
  Outcome Out = plan(R"(
void f(int n, double *y) {
  int i;
#pragma fpm partition
#ifdef NEVER
#endif
  for (i = 0; i < n; i++)
    y[i] = i;
}
)");
  ASSERT_EQ(Out.Diagnostics, std::vector<std::string>{});
  ASSERT_EQ(Out.Loops.size(), 1u);
  // The call replaces the text from the `for` on.
  EXPECT_EQ(Out.Loops[0].ReplaceBegin, "7:3");
}

TEST(OutlineRefusal, AVariablyModifiedVariableOfALocalType) {
  Outcome Out = plan(R"(
void f(int n, int *s) {
  struct P { int x; };
  struct P ps[n];
  int i;
  for (i = 0; i < n; i++) ps[i].x = i;
#pragma fpm partition
  for (i = 0; i < n; i++)
    s[i] = ps[i].x;
}
)");
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_FALSE(Out.Loops[0].Rewritable);
  EXPECT_FALSE(Out.Loops[0].Outline);
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "7:13: error: cannot outline the loop's body: 'ps' has a "
                "variably modified type and is written in the body or its "
                "address taken",
                "4:12: note: 'ps' is declared here"}));
}

TEST(OutlineRefusal, APointerToAPointerToRowsOfVariableLength) {
  Outcome Out = plan(R"(
void f(int n, double (**pp)[n], double *s) {
  int i;
#pragma fpm partition
  for (i = 0; i < n; i++)
    s[i] = (*pp)[i][0];
}
)");
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_FALSE(Out.Loops[0].Rewritable);
  EXPECT_FALSE(Out.Loops[0].Outline);
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "4:13: error: cannot outline the loop's body: 'pp' has a "
                "variably modified type fpm cannot pass",
                "2:25: note: 'pp' is declared here"}));
}

TEST(OutlineRefusal, APrivatePointerToARowOfVariableLength) {
  Outcome Out = plan(R"(
void f(int n, double (*a)[n], double *s) {
  int i;
  double (*row)[n];
#pragma fpm partition private(row)
  for (i = 0; i < n; i++) {
    row = a + i;
    s[i] = (*row)[0];
  }
}
)");
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_FALSE(Out.Loops[0].Rewritable);
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "5:13: error: cannot outline the loop's body: 'row' is "
                "private and has a variably modified type",
                "4:12: note: 'row' is declared here"}));
}

TEST(OutlineRefusal, AFunctionThatEndsInAHeader) {
  Outcome Out = plan(R"(
void f(int n, double *a) {
  int i;
#pragma fpm partition
  for (i = 0; i < n; i++) {
    a[i] = 0;
#include "tail.h"
)",
                     "input.c", {{"tail.h", "  }\n}\n"}});
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_FALSE(Out.Loops[0].Rewritable);
  EXPECT_FALSE(Out.Loops[0].Outline);
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{"4:13: error: cannot outline the "
                                      "loop's body: cannot find where 'f' "
                                      "ends"}));
}

TEST(OutlineRefusal, ABodyThatEndsInAHeader) {
  // In C++ too: its emitter closes the lambda at the body's end.
  for (const char *File : {"input.c", "input.cpp"}) {
    SCOPED_TRACE(File);
    Outcome Out = plan(R"(
void f(int n, double *a) {
  int i;
#pragma fpm partition
  for (i = 0; i < n; i++) {
    a[i] = 0;
#include "tail.h"
}
)",
                       File, {{"tail.h", "  }\n"}});
    ASSERT_EQ(Out.Loops.size(), 1u);
    EXPECT_FALSE(Out.Loops[0].Rewritable);
    EXPECT_EQ(Out.Diagnostics,
              (std::vector<std::string>{
                  "4:13: error: cannot find the text of this loop"}));
  }
}

TEST(OutlineRefusal, ABodyWhoseEndIsInAMacro) {
  Outcome Out = plan(R"(
#define ZERO(a, i) a[i] = 0;
void f(int n, double *a) {
  int i;
#pragma fpm partition
  for (i = 0; i < n; i++)
    ZERO(a, i)
}
)");
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_FALSE(Out.Loops[0].Rewritable);
  EXPECT_EQ(Out.Loops[0].BodyEnd, "invalid");
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "7:5: error: cannot find where the body of this loop ends"}));
}

// --- PragmaPlacement --------------------------------------------------------

TEST(PragmaPlacement, ALoopFromAMacro) {
  // Only a `for` written after the pragma is its loop: the emitters never
  // see a loop from a macro's expansion.
  Outcome Out = plan(R"(
#define FOR for
void f(int n, double *a) {
  int i;
#pragma fpm partition
  FOR (i = 0; i < n; i++)
    a[i] = 0;
}
)");
  EXPECT_EQ(Out.Loops.size(), 0u);
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "6:3: error: '#pragma fpm partition' must be followed by a "
                "'for' loop",
                "5:13: note: the pragma is here"}));
}

TEST(PragmaPlacement, ALoopInALambdaOutsideAnyFunction) {
  Outcome Out = plan(R"(
auto f = [](int n, double *a) {
#pragma fpm partition
  for (int i = 0; i < n; i++)
    a[i] = 0;
};
)",
                     "input.cpp");
  EXPECT_EQ(Out.Loops.size(), 0u);
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "4:3: error: cannot rewrite this loop: it is not a 'for' "
                "statement of a function body"}));
}

TEST(PragmaPlacement, ALoopInALambdaInAFunction) {
  Outcome Out = plan(R"(
void g(int n, double *a) {
  auto f = [&]() {
#pragma fpm partition
    for (int i = 0; i < n; i++)
      a[i] = 0;
  };
  f();
}
)",
                     "input.cpp");
  EXPECT_EQ(Out.Diagnostics, std::vector<std::string>{});
  ASSERT_EQ(Out.Loops.size(), 1u);
  EXPECT_EQ(Out.Loops[0].Line, 5u);
}

// --- NestedLoops ------------------------------------------------------------

TEST(NestedLoops, TheOuterBodyDeclaresWhatTheInnerClausesName) {
  Outcome Out = plan(R"(
void f(int n, double *a, double *b) {
  int i, j;
#pragma fpm partition
  for (i = 0; i < n; i++)
#pragma fpm partition in(b[j:1]) out(a[i*n + j:1])
    for (j = 0; j < n; j++)
      a[i*n + j] = b[j];
}
)");
  ASSERT_EQ(Out.Diagnostics, std::vector<std::string>{});
  ASSERT_EQ(Out.Loops.size(), 2u);
  const Planned &Outer = Out.Loops[0], &Inner = Out.Loops[1];
  EXPECT_FALSE(Outer.Nested);
  EXPECT_TRUE(Inner.Nested);
  // The inner loop's pragma is the outer body: its text starts there.
  EXPECT_EQ(Outer.BodyBegin, "6:1");
  EXPECT_EQ(Inner.BodyBegin, "8:7");
  // b: named only by the inner clauses, declared again in the outer body.
  EXPECT_TRUE(llvm::is_contained(Outer.Shared, "b"));
  EXPECT_TRUE(llvm::is_contained(Outer.Shared, "a"));
}

// --- DataRegionChecks -------------------------------------------------------

TEST(DataRegionChecks, RecordsEachRegionWithItsBlockAndEachUpdate) {
  Outcome Out = plan(R"(
void f(double *a, int n) {
#pragma fpm data inout(a[0:n])
  {
    a[0] = 1;
#pragma fpm update host(a[0:n])
  }
}
)");
  EXPECT_EQ(Out.Diagnostics, std::vector<std::string>{});
  EXPECT_EQ(Out.DataPragmas,
            (std::vector<std::string>{"3: region", "6: update"}));
}

TEST(DataRegionChecks, AGotoOutOfACRegion) {
  Outcome Out = plan(R"(
void f(double *a, int n) {
#pragma fpm data inout(a[0:n])
  {
    if (n < 1)
      goto out;
    a[0] = 1;
  }
out:;
}
)");
  EXPECT_EQ(Out.DataPragmas, std::vector<std::string>{});
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "6:7: error: this 'goto' leaves the data region without its "
                "end, which follows the region's statement: the devices' "
                "copies would stay and the host's would be stale; leave the "
                "statement at its end",
                "3:13: note: the data region starts here"}));
}

TEST(DataRegionChecks, ARegionOnALoopKeepsItsOwnBreaks) {
  // A while, a do and a for take a region as a block does (OpenMP's
  // structured block); their own break and continue stay in them, and a
  // goto out of one leaves it.
  Outcome Out = plan(R"(
void f(double *a, int n) {
#pragma fpm data inout(a[0:n])
  while (n > 0) {
    if (a[n - 1] > 9)
      break;
    n--;
  }
#pragma fpm data inout(a[0:n])
  do
    n++;
  while (n < 5);
#pragma fpm data inout(a[0:n])
  for (;;) {
    if (n-- < 0)
      goto out;
    continue;
  }
out:;
}
)");
  EXPECT_EQ(Out.DataPragmas,
            (std::vector<std::string>{"3: region", "9: region"}));
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "16:7: error: this 'goto' leaves the data region without its "
                "end, which follows the region's statement: the devices' "
                "copies would stay and the host's would be stale; leave the "
                "statement at its end",
                "13:13: note: the data region starts here"}));
}

TEST(DataRegionChecks, ALoopWhoseBodyIsAPartitionedLoopNeedsBraces) {
  // The region's end would fall where the partitioned loop's rewrite
  // ends; with braces it has a place of its own.
  Outcome Out = plan(R"(
void f(double *a, int n) {
  int i, t;
#pragma fpm data inout(a[0:n])
  for (t = 0; t < 3; t++)
#pragma fpm partition inout(a[i:1])
    for (i = 0; i < n; i++)
      a[i] += t;
#pragma fpm data inout(a[0:n])
  for (t = 0; t < 3; t++) {
#pragma fpm partition inout(a[i:1])
    for (i = 0; i < n; i++)
      a[i] += t;
  }
}
)");
  EXPECT_EQ(Out.DataPragmas, std::vector<std::string>{"9: region"});
  EXPECT_EQ(Out.Diagnostics,
            (std::vector<std::string>{
                "5:3: error: the body of this loop ends where the partitioned "
                "loop in it does, and the data region's end must follow it: "
                "put the body in braces '{ ... }'",
                "4:13: note: the pragma is here"}));
}

TEST(DataRegionChecks, AGotoInsideARegionAndAnExitInCxx) {
  // A goto to a label in the block stays in it; in C++ the region is an
  // object that any exit ends.
  Outcome C = plan(R"(
void f(double *a, int n) {
#pragma fpm data inout(a[0:n])
  {
    if (n < 1)
      goto done;
    a[0] = 1;
  done:;
  }
}
)");
  EXPECT_EQ(C.Diagnostics, std::vector<std::string>{});
  EXPECT_EQ(C.DataPragmas, std::vector<std::string>{"3: region"});
  Outcome Cxx = plan(R"(
int f(double *a, int n) {
#pragma fpm data inout(a[0:n])
  {
    if (n < 1)
      return 1;
  }
  return 0;
}
)",
                     "input.cpp");
  EXPECT_EQ(Cxx.Diagnostics, std::vector<std::string>{});
  EXPECT_EQ(Cxx.DataPragmas, std::vector<std::string>{"3: region"});
}

} // namespace
} // namespace fpm
