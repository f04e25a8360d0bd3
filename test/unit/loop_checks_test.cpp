//===- loop_checks_test.cpp - Each check of a loop, alone -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The checks of lib/Analysis/Checks.def, each run alone over the walk of a
// small C file's loop (LoopWalk.h): each reports its diagnostic on a loop
// that breaks its rule and stays quiet on one that keeps every rule. The
// table itself is pinned too: its names in checkLoop's order, and a case
// here for each, so that a check added to the table without a test fails.
//
//===----------------------------------------------------------------------===//

#include "Analysis/LoopChecks.h"
#include "unit/snippet_loop.hpp"

#include "clang/Basic/Diagnostic.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace clang;

namespace {

/// What the checks reported: "error: ...", "warning: ...", "note: ...".
class Recorder : public DiagnosticConsumer {
public:
  std::vector<std::string> Lines;

  void HandleDiagnostic(DiagnosticsEngine::Level Level,
                        const Diagnostic &Info) override {
    llvm::SmallString<128> Message;
    Info.FormatDiagnostic(Message);
    const char *Kind = Level == DiagnosticsEngine::Error     ? "error: "
                       : Level == DiagnosticsEngine::Warning ? "warning: "
                       : Level == DiagnosticsEngine::Note    ? "note: "
                                                             : "other: ";
    Lines.push_back(Kind + Message.str().str());
  }
};

/// What the check Name of the table (or, with Name empty, the whole table as
/// checkLoop runs it) reports on Code's loop in f, over its walk.
std::vector<std::string> run(const std::string &Name, const std::string &Code) {
  std::vector<std::string> Lines;
  const fpm::detail::LoopCheckInfo *Info =
      Name.empty() ? nullptr : fpm::detail::findLoopCheck(Name);
  EXPECT_TRUE(Name.empty() || Info) << Name;
  if (!Name.empty() && !Info)
    return Lines;
  const std::string Error =
      fpm::test::withSnippetLoop(Code, [&](const fpm::test::SnippetLoop &L) {
        // The checks report to Record alone while they run.
        DiagnosticsEngine &Diags = L.Ctx.getDiagnostics();
        Recorder Record;
        DiagnosticConsumer *Client = Diags.getClient();
        std::unique_ptr<DiagnosticConsumer> Owner = Diags.takeClient();
        Diags.setClient(&Record, /*ShouldOwnClient=*/false);
        fpm::CanonicalLoop Loop;
        fpm::detail::LoopWalk Walk(L.Ctx, L.Pragma, L.Fn, L.For);
        if (Walk.readHeader(Loop))
          Walk.recordBody();
        fpm::detail::CheckContext Context{Walk, Loop, {}};
        if (Info)
          Info->Create()->run(Context);
        else
          fpm::detail::runLoopChecks(Context);
        Diags.setClient(Client, /*ShouldOwnClient=*/Owner != nullptr);
        Owner.release();
        Lines = std::move(Record.Lines);
      });
  EXPECT_EQ(Error, "") << Code;
  return Lines;
}

/// A loop that keeps every rule: each check is quiet on it.
const char *GoodLoop = "void f(int n, const float *x, float *y) {\n"
                       "  float t;\n"
                       "#pragma fpm partition in(x[i:1]) out(y[i:1]) "
                       "private(t)\n"
                       "  for (int i = 0; i < n; ++i) {\n"
                       "    t = 2 * x[i];\n"
                       "    y[i] = t;\n"
                       "  }\n"
                       "}\n";

/// For each check, a loop that breaks its rule, and the start of the first
/// diagnostic it reports there.
struct BadLoop {
  const char *Code;
  const char *First;
};

const std::map<std::string, BadLoop> &badLoops() {
  static const std::map<std::string, BadLoop> Cases = {
      {"canonical-form",
       {"void f(int n, float *y) {\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; --i)\n"
        "    y[i] = 0;\n"
        "}\n",
        "error: loop not in canonical form: its increment must make 'i' "
        "increase"}},
      {"loop-exits",
       {"void f(int n, float *y) {\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i) {\n"
        "    if (y[i] < 0)\n"
        "      break;\n"
        "    y[i] = 0;\n"
        "  }\n"
        "}\n",
        "error: 'break' leaves the partitioned loop"}},
      {"gotos",
       {"void f(int n, float *y) {\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i) {\n"
        "    if (y[i] < 0)\n"
        "      goto done;\n"
        "    y[i] = 0;\n"
        "  }\n"
        "done:;\n"
        "}\n",
        "error: 'goto' leaves the partitioned loop"}},
      {"local-names",
       {"void f(int n, float *y) {\n"
        "  struct { float a; } s = {1};\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    y[i] = s.a;\n"
        "}\n",
        "error: an unnamed struct declared in function 'f' is used in the "
        "body"}},
      {"invariant-bounds",
       {"void f(int n, float *y) {\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i) {\n"
        "    y[i] = 0;\n"
        "    n = n - 1;\n"
        "  }\n"
        "}\n",
        "error: loop not in canonical form: its bound is not loop-invariant: "
        "'n' is written in the body"}},
      {"private-clause",
       {"void f(int n, float *y) {\n"
        "#pragma fpm partition private(q)\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    y[i] = 0;\n"
        "}\n",
        "error: unknown variable 'q' in 'private(...)'"}},
      {"data-clause-names",
       {"void f(int n, float *y) {\n"
        "  int k = 0;\n"
        "#pragma fpm partition out(k[i:1])\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    y[i] = k;\n"
        "}\n",
        "error: 'k' in 'out(...)' is not an array or a pointer: its type is "
        "'int'"}},
      {"reduction-clause",
       {"void f(int n, const double *x) {\n"
        "  double s = 0;\n"
        "#pragma fpm partition reduction(&: s)\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    s = s + x[i];\n"
        "}\n",
        "error: reduction operator '&' needs a variable of an integer type"}},
      {"shared-writes",
       {"void f(int n, const float *x) {\n"
        "  float s = 0;\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    s += x[i];\n"
        "}\n",
        "error: 's' is declared outside the partitioned loop and updated in "
        "it as a reduction: list it in 'reduction(+: s)'"}},
      {"array-races",
       {"void f(int n, const float *x, float *y) {\n"
        "  float t[4];\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i) {\n"
        "    t[0] = x[i];\n"
        "    y[i] = t[0];\n"
        "  }\n"
        "}\n",
        "error: 't' is declared outside the partitioned loop and every "
        "iteration writes the same elements of it"}},
      {"private-reads",
       {"void f(int n, const float *x, float *y) {\n"
        "  float t = 0;\n"
        "#pragma fpm partition private(t)\n"
        "  for (int i = 0; i < n; ++i) {\n"
        "    y[i] = t;\n"
        "    t = x[i];\n"
        "  }\n"
        "}\n",
        "warning: private variable 't' may be read before it is written in "
        "an iteration"}},
      {"private-after-loop",
       {"void f(int n, const float *x, float *y) {\n"
        "  float t = 0;\n"
        "#pragma fpm partition private(t)\n"
        "  for (int i = 0; i < n; ++i) {\n"
        "    t = x[i];\n"
        "    y[i] = t;\n"
        "  }\n"
        "  y[0] = t;\n"
        "}\n",
        "warning: private variable 't' is written in the partitioned loop "
        "and read after it"}},
      {"dependences",
       {"void f(int n, float *y) {\n"
        "#pragma fpm partition\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    y[i] = y[i + 1];\n"
        "}\n",
        "warning: 'y' is written at 'y[i]' and read at 'y[i + 1]' in the "
        "partitioned loop"}},
      {"data-uses",
       {"void f(int n, const float *x, float *y) {\n"
        "#pragma fpm partition in(x[i:1]) out(y[i:1])\n"
        "  for (int i = 0; i < n; ++i)\n"
        "    y[i] = x[i + 1];\n"
        "}\n",
        "warning: 'x[i + 1]' is outside the section 'x[i:1]' of 'in(...)'"}},
  };
  return Cases;
}

TEST(LoopChecksTest, TableInRunOrder) {
  std::vector<std::string> Names;
  for (const fpm::detail::LoopCheckInfo &Info : fpm::detail::loopChecks()) {
    Names.push_back(Info.Name);
    EXPECT_STRNE(Info.Description, "") << Info.Name;
    EXPECT_EQ(fpm::detail::findLoopCheck(Info.Name), &Info);
  }
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "canonical-form", "loop-exits", "gotos", "local-names",
                       "invariant-bounds", "private-clause",
                       "data-clause-names", "reduction-clause", "shared-writes",
                       "array-races", "private-reads", "private-after-loop",
                       "dependences", "data-uses"}));
  EXPECT_EQ(fpm::detail::findLoopCheck("no-such-check"), nullptr);
  // Only the data clauses' warnings wait for a loop without errors.
  for (const fpm::detail::LoopCheckInfo &Info : fpm::detail::loopChecks())
    EXPECT_EQ(Info.Gate == fpm::detail::CheckGate::NoErrors,
              std::string(Info.Name) == "data-uses")
        << Info.Name;
}

TEST(LoopChecksTest, EveryCheckHasABadLoop) {
  for (const fpm::detail::LoopCheckInfo &Info : fpm::detail::loopChecks())
    EXPECT_EQ(badLoops().count(Info.Name), 1u)
        << Info.Name << " has no case in badLoops()";
  EXPECT_EQ(badLoops().size(), fpm::detail::loopChecks().size());
}

class EachCheck : public testing::TestWithParam<std::string> {};

TEST_P(EachCheck, FiresOnABadLoop) {
  const BadLoop &Bad = badLoops().at(GetParam());
  std::vector<std::string> Lines = run(GetParam(), Bad.Code);
  ASSERT_FALSE(Lines.empty()) << Bad.Code;
  EXPECT_EQ(Lines.front().rfind(Bad.First, 0), 0u)
      << Lines.front() << "\nexpected: " << Bad.First;
}

TEST_P(EachCheck, QuietOnAGoodLoop) {
  EXPECT_EQ(run(GetParam(), GoodLoop), std::vector<std::string>{});
}

/// Another check's bad loop: each check reports only what it is for.
TEST_P(EachCheck, QuietOnTheOthersOwnFaults) {
  // Loops that break exactly one other rule, which this check must not
  // report: a shared scalar's write (shared-writes) and a dependence.
  for (const char *Other : {"shared-writes", "dependences"}) {
    if (GetParam() == Other)
      continue;
    std::vector<std::string> Lines = run(GetParam(), badLoops().at(Other).Code);
    EXPECT_EQ(Lines, std::vector<std::string>{}) << "on " << Other << "'s loop";
  }
}

std::vector<std::string> checkNames() {
  std::vector<std::string> Names;
  for (const fpm::detail::LoopCheckInfo &Info : fpm::detail::loopChecks())
    Names.push_back(Info.Name);
  return Names;
}

INSTANTIATE_TEST_SUITE_P(Table, EachCheck, testing::ValuesIn(checkNames()),
                         [](const testing::TestParamInfo<std::string> &P) {
                           std::string Name = P.param;
                           for (char &C : Name)
                             if (C == '-')
                               C = '_';
                           return Name;
                         });

/// The table run whole stops at canonical-form's error: nothing else reads
/// a header it cannot read.
TEST(LoopChecksTest, CanonicalFormStopsTheRest) {
  std::vector<std::string> Lines = run("", "void f(int n, float *y) {\n"
                                           "  float s = 0;\n"
                                           "#pragma fpm partition private(q)\n"
                                           "  for (int i = 0; i < n; --i)\n"
                                           "    s = y[i];\n"
                                           "}\n");
  ASSERT_EQ(Lines.size(), 2u);
  EXPECT_EQ(Lines[0].rfind("error: loop not in canonical form", 0), 0u);
  EXPECT_EQ(Lines[1], "note: the step must be positive because of this test");
}

/// The data clauses' warnings wait for a loop without errors; the other
/// checks all run, in the table's order.
TEST(LoopChecksTest, DataUsesOnlyWithoutErrors) {
  std::vector<std::string> Lines =
      run("", "void f(int n, const float *x, float *y) {\n"
              "  float s = 0;\n"
              "#pragma fpm partition in(x[i:1]) out(y[i:1]) private(q)\n"
              "  for (int i = 0; i < n; ++i) {\n"
              "    y[i] = x[i + 1];\n"
              "    s = y[i + 1];\n"
              "  }\n"
              "}\n");
  ASSERT_EQ(Lines.size(), 4u) << llvm::join(Lines, "\n");
  EXPECT_EQ(Lines[0].rfind("error: unknown variable 'q'", 0), 0u);
  EXPECT_EQ(Lines[1].rfind("error: 's' is declared outside", 0), 0u);
  EXPECT_EQ(Lines[2].rfind("warning: 'y' is written at 'y[i]'", 0), 0u);
  EXPECT_EQ(Lines[3].rfind("note: 'y[i]' is written here", 0), 0u);
}

} // namespace
