//===- pragma_parser_test.cpp - '#pragma fpm partition' as parsed ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the rewriter's PragmaParser records of a pragma, on code in memory:
// the kernel clause's file, name and arguments (each an expression as
// written, with where it starts; commas inside parentheses, brackets and
// braces belong to the argument), and the kernel file, found beside the
// source file and read; every schedule of include/fpm/schedules.def, with
// the runtime's rule for its argument; the reduction clause's variables and
// each of its operators. The tool's messages for malformed
// clauses are covered by the lit tests (error-kernel.test).
//
//===----------------------------------------------------------------------===//

#include "Record/PragmaParser.h"
#include "fpm/schedules.hpp"

#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fpm {
namespace {

/// A pragma as recorded, with its locations as "line:col" (the source
/// manager is gone once the code is parsed).
struct Recorded {
  PartitionPragma Pragma;
  std::string FileAt, NameAt;
  std::vector<std::string> ArgsAt;
};

class RecordPragmas : public clang::SyntaxOnlyAction {
public:
  explicit RecordPragmas(std::vector<Recorded> &Out) : Out(Out) {}

protected:
  bool BeginSourceFileAction(clang::CompilerInstance &CI) override {
    CI.getPreprocessor().AddPragmaHandler(new FpmPragmaHandler(Pragmas));
    return true;
  }

  void EndSourceFileAction() override {
    const clang::SourceManager &SM = getCompilerInstance().getSourceManager();
    auto At = [&](clang::SourceLocation Loc) {
      clang::PresumedLoc P = SM.getPresumedLoc(Loc);
      return P.isValid() ? std::to_string(P.getLine()) + ":" +
                               std::to_string(P.getColumn())
                         : std::string("none");
    };
    for (PartitionPragma &Pragma : Pragmas) {
      Recorded R;
      R.FileAt = At(Pragma.KernelFileLoc);
      R.NameAt = At(Pragma.KernelNameLoc);
      for (const KernelArgument &Arg : Pragma.KernelArgs)
        R.ArgsAt.push_back(At(Arg.Loc));
      R.Pragma = std::move(Pragma);
      Out.push_back(std::move(R));
    }
  }

private:
  std::vector<PartitionPragma> Pragmas;
  std::vector<Recorded> &Out;
};

/// Parses Code as /src/x.c, with Files beside it; the pragmas recorded.
std::vector<Recorded> parse(const std::string &Code,
                            const clang::tooling::FileContentMappings &Files,
                            bool &Ok) {
  std::vector<Recorded> Out;
  Ok = clang::tooling::runToolOnCodeWithArgs(
      std::make_unique<RecordPragmas>(Out), Code, {"-std=c99"}, "/src/x.c",
      "pragma-parser-test", std::make_shared<clang::PCHContainerOperations>(),
      Files);
  return Out;
}

std::vector<std::string> texts(const PartitionPragma &Pragma) {
  std::vector<std::string> Out;
  for (const KernelArgument &Arg : Pragma.KernelArgs)
    Out.push_back(Arg.Text);
  return Out;
}

const char *const Kernel = "/* scales */\n"
                           "__kernel void vadd(__global float *c, float s) {\n"
                           "  c[get_global_id(0)] *= s;\n"
                           "}\n";

TEST(PragmaParserTest, KernelArgumentsAsWritten) {
  bool Ok = false;
  std::vector<Recorded> Pragmas = parse(
      "float g(float a, float b);\n"
      "void f(int n, float *c) {\n"
      "#pragma fpm partition out(c[i:1]) kernel(\"k/vadd.cl\", vadd, c, \\\n"
      "    g(1, 2),  n * (2 + 3), c[0], (n, 1))\n"
      "  for (int i = 0; i < n; i++) c[i] *= g(1, 2);\n"
      "}\n",
      {{"/src/k/vadd.cl", Kernel}}, Ok);
  ASSERT_TRUE(Ok);
  ASSERT_EQ(Pragmas.size(), 1u);
  const PartitionPragma &P = Pragmas[0].Pragma;
  EXPECT_EQ(P.KernelFile, "k/vadd.cl");
  EXPECT_EQ(P.KernelName, "vadd");
  EXPECT_EQ(texts(P), (std::vector<std::string>{"c", "g(1, 2)", "n * (2 + 3)",
                                                "c[0]", "(n, 1)"}));
  EXPECT_EQ(Pragmas[0].FileAt, "3:42");
  EXPECT_EQ(Pragmas[0].NameAt, "3:55");
  EXPECT_EQ(Pragmas[0].ArgsAt,
            (std::vector<std::string>{"3:61", "4:5", "4:15", "4:28", "4:34"}));
  // Found beside the source file and read.
  EXPECT_EQ(P.KernelPath, "/src/k/vadd.cl");
  EXPECT_EQ(P.KernelSource, Kernel);
}

TEST(PragmaParserTest, KernelWithoutArgumentsAndWithEscapes) {
  bool Ok = false;
  std::vector<Recorded> Pragmas = parse(
      "void f(int n, float *c) {\n"
      "#pragma fpm partition kernel(\"k\\x2fvadd.cl\", vadd) out(c[i:1])\n"
      "  for (int i = 0; i < n; i++) c[i] = 0;\n"
      "#pragma fpm partition out(c[i:1])\n"
      "  for (int i = 0; i < n; i++) c[i] = 0;\n"
      "}\n",
      {{"/src/k/vadd.cl", Kernel}}, Ok);
  ASSERT_TRUE(Ok);
  ASSERT_EQ(Pragmas.size(), 2u);
  EXPECT_EQ(Pragmas[0].Pragma.KernelFile, "k/vadd.cl");
  EXPECT_TRUE(Pragmas[0].Pragma.KernelArgs.empty());
  EXPECT_EQ(Pragmas[0].Pragma.KernelSource, Kernel);
  // No clause: nothing read.
  EXPECT_TRUE(Pragmas[1].Pragma.KernelName.empty());
  EXPECT_TRUE(Pragmas[1].Pragma.KernelPath.empty());
  EXPECT_TRUE(Pragmas[1].Pragma.KernelSource.empty());
}

TEST(PragmaParserTest, KernelFileThatCannotBeReadIsNotRecorded) {
  bool Ok = true;
  std::vector<Recorded> Pragmas =
      parse("void f(int n, float *c) {\n"
            "#pragma fpm partition kernel(\"missing.cl\", vadd)\n"
            "  for (int i = 0; i < n; i++) c[i] = 0;\n"
            "#pragma fpm partition kernel(\"k/vadd.cl\", other)\n"
            "  for (int i = 0; i < n; i++) c[i] = 0;\n"
            "}\n",
            {{"/src/k/vadd.cl", Kernel}}, Ok);
  EXPECT_FALSE(Ok);
  EXPECT_TRUE(Pragmas.empty());
}

TEST(PragmaParserTest, ReductionVariablesWithTheirOperator) {
  bool Ok = false;
  std::vector<Recorded> Pragmas =
      parse("void f(int n, float *c) {\n"
            "  float s = 0, m = 0;\n"
            "#pragma fpm partition name(r) reduction(max : s,m) out(c[i:1])\n"
            "  for (int i = 0; i < n; i++) { c[i] = 0; s = m = c[i]; }\n"
            "}\n",
            {}, Ok);
  ASSERT_TRUE(Ok);
  ASSERT_EQ(Pragmas.size(), 1u);
  const PartitionPragma &P = Pragmas[0].Pragma;
  ASSERT_EQ(P.Reductions.size(), 2u);
  EXPECT_EQ(P.Reductions[0].Name, "s");
  EXPECT_EQ(P.Reductions[1].Name, "m");
  EXPECT_EQ(P.Reductions[0].Op, ReductionOp::Max);
  EXPECT_EQ(P.Reductions[1].Op, ReductionOp::Max);
  EXPECT_EQ(P.Reductions[0].OpLoc, P.Reductions[1].OpLoc);
  EXPECT_EQ(P.Out.size(), 1u);
}

/// The operator `#pragma fpm partition reduction(Clause)` records, if the
/// pragma is accepted.
std::optional<ReductionOp> reductionOf(const std::string &Clause) {
  bool Ok = false;
  std::vector<Recorded> Pragmas =
      parse("void f(int n, int *c) {\n"
            "  int s = 0;\n"
            "#pragma fpm partition reduction(" +
                Clause +
                ")\n"
                "  for (int i = 0; i < n; i++) s += c[i];\n"
                "}\n",
            {}, Ok);
  if (!Ok || Pragmas.size() != 1 || Pragmas[0].Pragma.Reductions.size() != 1)
    return std::nullopt;
  return Pragmas[0].Pragma.Reductions[0].Op;
}

TEST(PragmaParserTest, EveryReductionOperator) {
  // The spec's nine, with fpm.h's values and spellings.
  const std::pair<const char *, ReductionOp> Operators[] = {
      {"+", ReductionOp::Add},    {"*", ReductionOp::Mul},
      {"min", ReductionOp::Min},  {"max", ReductionOp::Max},
      {"&", ReductionOp::BitAnd}, {"|", ReductionOp::BitOr},
      {"^", ReductionOp::BitXor}, {"&&", ReductionOp::And},
      {"||", ReductionOp::Or}};
  int Value = 0;
  for (const auto &[Spelling, Op] : Operators) {
    SCOPED_TRACE(Spelling);
    EXPECT_EQ(reductionOf(std::string(Spelling) + ": s"), Op);
    EXPECT_EQ(reductionOf(std::string(Spelling) + ":s"), Op);
    EXPECT_STREQ(reductionOpSpelling(Op), Spelling);
    EXPECT_EQ(static_cast<int>(Op), Value++);
  }
  EXPECT_STREQ(reductionOpEnumerator(ReductionOp::Add), "FPM_REDUCE_ADD");
  EXPECT_STREQ(reductionOpEnumerator(ReductionOp::Or), "FPM_REDUCE_OR");
  // Malformed: refused, nothing recorded (the messages: lit's
  // error-reduction.test).
  for (const char *Bad : {"-: s", "+ s", "+:", "+: s,", "+: s s", "+: s, s",
                          "minimum: s", "s", "", "+: 1", "&&&: s"}) {
    SCOPED_TRACE(Bad);
    EXPECT_EQ(reductionOf(Bad), std::nullopt);
  }
}

/// Whether `#pragma fpm partition schedule(Clause)` is accepted, and the
/// schedule it records.
std::optional<std::string> scheduleOf(const std::string &Clause) {
  bool Ok = false;
  std::vector<Recorded> Pragmas =
      parse("void f(int n, float *c) {\n"
            "#pragma fpm partition schedule(" +
                Clause +
                ")\n"
                "  for (int i = 0; i < n; i++) c[i] = 0;\n"
                "}\n",
            {}, Ok);
  if (!Ok || Pragmas.size() != 1)
    return std::nullopt;
  return Pragmas[0].Pragma.Schedule;
}

TEST(PragmaParserTest, EveryScheduleOfTheTable) {
  // Each line of include/fpm/schedules.def, as the pragma writes it ('_'
  // for '-'), with its argument in the spec's form where it takes one, and
  // the argument's values that the runtime refuses refused here too
  // (schedules_test.cpp: the same table, the runtime's readers).
  struct Line {
    std::string_view Name;
    ScheduleArgument Argument;
  };
  const Line Table[] = {
#define FPM_SCHEDULE(Name, Kind, Argument, Summary)                            \
  Line{Name, ScheduleArgument::Argument},
#include "fpm/schedules.def"
  };
  for (const Line &L : Table) {
    const std::string Name = pragmaSpelling(L.Name);
    SCOPED_TRACE(Name);
    switch (L.Argument) {
    case ScheduleArgument::NoArgument:
      EXPECT_EQ(scheduleOf(Name), Name);
      EXPECT_EQ(scheduleOf(Name + ", 3"), std::nullopt);
      break;
    case ScheduleArgument::RequiredChunk:
      EXPECT_EQ(scheduleOf(Name + "(4)"), Name + "(4)");
      EXPECT_EQ(scheduleOf(Name), std::nullopt);
      EXPECT_EQ(scheduleOf(Name + "(0)"), std::nullopt);
      EXPECT_EQ(scheduleOf(Name + "(0x10)"), std::nullopt);
      break;
    case ScheduleArgument::OptionalBacktrack:
    case ScheduleArgument::OptionalAlpha:
      EXPECT_EQ(scheduleOf(Name), Name);
      EXPECT_EQ(scheduleOf(Name + ", 3"), Name + ", 3");
      EXPECT_EQ(scheduleOf(Name + ", 0"), std::nullopt);
      EXPECT_EQ(scheduleOf(Name + ", 100001"), std::nullopt);
      break;
    }
    if (Name != L.Name) // The table's spelling is no identifier.
      EXPECT_EQ(scheduleOf(std::string(L.Name)), std::nullopt);
  }
  EXPECT_EQ(scheduleOf("wdah, 100000"), "wdah, 100000");
  EXPECT_EQ(scheduleOf("gss, 100"), "gss, 100");
  EXPECT_EQ(scheduleOf("gss, 100.5"), std::nullopt);
}

} // namespace
} // namespace fpm
