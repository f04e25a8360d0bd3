// The OpenCL C emitter on its own: C and C++ loop bodies in, kernel text (or
// the reason there is none) out; every generated kernel must also build on
// the machine's OpenCL device (PoCL in CI), checked in a child process.

#include "Offload/KernelEmitter.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Tooling/Tooling.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <variant>
#include <vector>

using namespace clang;
using namespace clang::ast_matchers;

namespace {

/// What the emitter made of the first partitioned-looking loop of `f`: the
/// outermost `for` in function `f`.
struct Outcome {
  std::string Source;  // the kernel, if there is one
  std::string Refusal; // else why not
  unsigned RefusalLine = 0;
  std::vector<fpm::KernelParam> Params;
};

/// A variable of the loop's reduction clause: its name and operator.
using Reduced = std::pair<std::string, fpm::ReductionOp>;

class EmitAction : public ASTFrontendAction {
public:
  EmitAction(std::vector<fpm::ClauseArray> Arrays,
             std::vector<std::string> Private, std::vector<Reduced> Reductions,
             Outcome &Out)
      : Arrays(std::move(Arrays)), Private(std::move(Private)),
        Reductions(std::move(Reductions)), Out(Out) {}

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    struct Consumer : ASTConsumer {
      EmitAction &Action;
      explicit Consumer(EmitAction &Action) : Action(Action) {}
      void HandleTranslationUnit(ASTContext &Ctx) override { Action.emit(Ctx); }
    };
    return std::make_unique<Consumer>(*this);
  }

  void emit(ASTContext &Ctx) {
    auto Matches = match(forStmt(hasAncestor(functionDecl(hasName("f"))),
                                 unless(hasAncestor(forStmt())))
                             .bind("for"),
                         Ctx);
    ASSERT_FALSE(Matches.empty()) << "no loop in f";
    const auto *For = Matches.front().getNodeAs<ForStmt>("for");
    const VarDecl *Var = nullptr;
    if (const auto *DS = dyn_cast<DeclStmt>(For->getInit()))
      Var = cast<VarDecl>(DS->getSingleDecl());
    else
      Var = cast<VarDecl>(
          cast<DeclRefExpr>(
              cast<BinaryOperator>(For->getInit())->getLHS()->IgnoreParens())
              ->getDecl());
    std::vector<fpm::KernelReduction> KernelReductions;
    for (const auto &[Name, Op] : Reductions) {
      auto Found = match(varDecl(hasName(Name)).bind("var"), Ctx);
      ASSERT_FALSE(Found.empty()) << "no variable " << Name;
      const auto *VD = Found.front().getNodeAs<VarDecl>("var");
      KernelReductions.push_back(
          {Name, Op, VD->getType().getNonReferenceType(), VD->getLocation()});
    }
    // An array of row pointers is the clause's where its variable is the
    // one the clause names (ClauseSema finds it at the loop).
    for (fpm::ClauseArray &A : Arrays)
      if (A.RowPointers && !A.Decl) {
        auto Found = match(varDecl(hasName(A.Name)).bind("var"), Ctx);
        ASSERT_FALSE(Found.empty()) << "no variable " << A.Name;
        A.Decl = Found.front().getNodeAs<VarDecl>("var");
      }
    fpm::KernelRequest Request;
    Request.For = For;
    Request.Var = Var;
    Request.Arrays = Arrays;
    Request.Private = Private;
    Request.Reductions = KernelReductions;
    Request.Name = "k";
    auto Result = fpm::generateKernel(Ctx, Request);
    if (auto *Kernel = std::get_if<fpm::GeneratedKernel>(&Result)) {
      Out.Source = Kernel->Source;
      Out.Params = Kernel->Params;
    } else {
      const auto &Refusal = std::get<fpm::OffloadRefusal>(Result);
      Out.Refusal = Refusal.Reason;
      Out.RefusalLine =
          Ctx.getSourceManager().getPresumedLoc(Refusal.Loc).getLine();
    }
  }

private:
  std::vector<fpm::ClauseArray> Arrays;
  std::vector<std::string> Private;
  std::vector<Reduced> Reductions;
  Outcome &Out;
};

Outcome emit(const std::string &Code, std::vector<fpm::ClauseArray> Arrays,
             bool Cxx = false, std::vector<std::string> Private = {},
             std::vector<Reduced> Reductions = {}) {
  Outcome Out;
  std::vector<std::string> Args = {Cxx ? "-std=c++17" : "-std=c99",
                                   "-resource-dir=" FPM_CLANG_RESOURCE_DIR};
  EXPECT_TRUE(tooling::runToolOnCodeWithArgs(
      std::make_unique<EmitAction>(std::move(Arrays), std::move(Private),
                                   std::move(Reductions), Out),
      Code, Args, Cxx ? "input.cpp" : "input.c"));
  return Out;
}

/// Builds Source for the machine's first OpenCL device, in a child
/// process (see opencl_build_check.cpp): "" or the build log.
std::string buildOnDevice(const std::string &Source) {
  if (Source.empty())
    return "no source";
  llvm::SmallString<64> Path;
  if (llvm::sys::fs::createTemporaryFile("kernel", "cl", Path))
    return "cannot write a temporary file";
  {
    std::ofstream Out(Path.c_str());
    Out << Source;
  }
  std::string Command =
      std::string(FPM_OPENCL_BUILD_CHECK) + " " + Path.c_str() + " 2>&1";
  std::string Log;
  if (FILE *Pipe = popen(Command.c_str(), "r")) {
    char Buffer[512];
    while (size_t N = fread(Buffer, 1, sizeof Buffer, Pipe))
      Log.append(Buffer, N);
    if (pclose(Pipe) == 0)
      Log.clear();
    else if (Log.empty())
      Log = "build failed";
  }
  llvm::sys::fs::remove(Path);
  return Log;
}

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

size_t count(const std::string &Text, const std::string &Part) {
  size_t N = 0;
  for (size_t At = Text.find(Part); At != std::string::npos;
       At = Text.find(Part, At + Part.size()))
    ++N;
  return N;
}

TEST(KernelEmitterTest, RowsOfAMatrixProduct) {
  Outcome Out = emit(R"(
    void f(int n, const float *A, const float *B, float *C) {
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          float s = 0;
          for (int k = 0; k < n; ++k) s += A[i*n + k] * B[k*n + j];
          C[i*n + j] = s;
        }
    })",
                     {{"A", 0, false}, {"B", 1, false}, {"C", 2, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "#pragma OPENCL FP_CONTRACT OFF"))
      << Out.Source;
  EXPECT_FALSE(contains(Out.Source, "cl_khr_fp64"));
  // The launch's end comes last; the work-items past it, which pad the
  // last work-group, return first.
  EXPECT_TRUE(contains(Out.Source,
                       "__kernel void k(const int fpm_lower, const long "
                       "fpm_step, const int n, __global const float *A, "
                       "__global const float *B, __global float *C, const "
                       "ulong fpm_end) {\n"
                       "  if (get_global_id(0) >= fpm_end)\n"
                       "    return; /* the last work-group's padding */\n"
                       "  const int i = "))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(ulong)get_global_id(0)")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "s += A[i * n + k] * B[k * n + j];"))
      << Out.Source;
  ASSERT_EQ(Out.Params.size(), 7u);
  EXPECT_EQ(Out.Params[2].K, fpm::KernelParam::Kind::Scalar);
  EXPECT_EQ(Out.Params[2].HostExpr, "n");
  EXPECT_EQ(Out.Params[5].K, fpm::KernelParam::Kind::Array);
  EXPECT_EQ(Out.Params[5].Section, 2u);
  EXPECT_EQ(Out.Params[6].K, fpm::KernelParam::Kind::End);
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, AnArrayWithAnOriginMovesToItsElementZero) {
  // in(src[i-1:3]): the buffer starts at src[-1] or below; the kernel
  // takes where src[0] is in it and moves its pointer there first.
  Outcome Out = emit(R"(
    void f(int n, const double *src, double *b) {
      for (int i = 0; i < n; ++i) b[i] = src[i - 1] + src[i + 1];
    })",
                     {{"src", 0, false, true}, {"b", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "__global const double *src, const long "
                                   "fpm_origin_src, __global double *b, "))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "padding */\n"
                                   "  src += fpm_origin_src;\n"))
      << Out.Source;
  ASSERT_EQ(Out.Params.size(), 6u);
  EXPECT_EQ(Out.Params[2].K, fpm::KernelParam::Kind::Array);
  EXPECT_EQ(Out.Params[3].K, fpm::KernelParam::Kind::Origin);
  EXPECT_EQ(Out.Params[3].Section, 0u);
  EXPECT_EQ(Out.Params[4].K, fpm::KernelParam::Kind::Array);
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

/// A data clause's array whose writes merge through a write mask.
fpm::ClauseArray masked(const char *Name, unsigned Index, bool Origin = false) {
  fpm::ClauseArray A{Name, Index, true, Origin};
  A.Masked = true;
  return A;
}

TEST(KernelEmitterTest, AMaskedArrayMarksEveryElementItWrites) {
  // A symmetric fill: every assignment, compound assignment, ++ and --
  // to an element of c goes through fpm_mark_c, which sets its byte in the
  // mask parameter after c; reads stay plain. With an origin, the mask
  // moves as the array does.
  Outcome Out = emit(R"(
    void f(int n, double c[][8], int *h) {
      for (int i = 0; i < n; ++i)
        for (int j = i; j < n; ++j) {
          c[i][j] = i + j;
          c[j][i] = c[i][j];
          c[j][i] *= 2;
          h[i * n + j]++;
          --h[j * n + i];
          *(h + i) += 1;
        }
    })",
                     {masked("c", 0), masked("h", 1, true)});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source,
                       "static __global double *fpm_mark_c(__global double "
                       "*p, __global uchar *m, __global double *b) {\n"
                       "  m[p - b] = 1;\n  return p;\n}\n"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source,
                       "__global double *c, __global uchar *fpm_mask_c, "
                       "__global int *h, const long fpm_origin_h, __global "
                       "uchar *fpm_mask_h, const ulong fpm_end"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "  h += fpm_origin_h;\n"
                                   "  fpm_mask_h += fpm_origin_h;\n"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(*fpm_mark_c(&(c[i * 8 + j]), fpm_mask_c, "
                                   "c)) = i + j;"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(*fpm_mark_c(&(c[j * 8 + i]), fpm_mask_c, "
                                   "c)) = c[i * 8 + j];"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(*fpm_mark_c(&(c[j * 8 + i]), fpm_mask_c, "
                                   "c)) *= 2;"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(*fpm_mark_h(&(h[i * n + j]), fpm_mask_h, "
                                   "h))++;"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "--(*fpm_mark_h(&(h[j * n + i]), "
                                   "fpm_mask_h, h));"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(*fpm_mark_h(&(*(h + i)), fpm_mask_h, "
                                   "h)) += 1;"))
      << Out.Source;
  EXPECT_EQ(count(Out.Source, "fpm_mark_c(&"), 3u) << Out.Source;
  EXPECT_EQ(count(Out.Source, "fpm_mark_h(&"), 3u) << Out.Source;
  ASSERT_EQ(Out.Params.size(), 9u);
  EXPECT_EQ(Out.Params[4].K, fpm::KernelParam::Kind::Mask);
  EXPECT_EQ(Out.Params[4].Section, 0u);
  EXPECT_EQ(Out.Params[4].HostExpr, "sizeof(c[0][0])");
  EXPECT_EQ(Out.Params[7].K, fpm::KernelParam::Kind::Mask);
  EXPECT_EQ(Out.Params[7].Section, 1u);
  EXPECT_EQ(Out.Params[7].HostExpr, "sizeof(h[0])");
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, WhatAMaskCannotSeeIsRefused) {
  struct Case {
    const char *Code;
    const char *Reason;
    unsigned Line;
  };
  const Case Cases[] = {
      // A helper would write through its pointer unmarked.
      {R"(static void put(double *p, double v) { *p = v; }
    void f(int n, double *y) {
      for (int i = 0; i < n; ++i)
        put(&y[(i * 3) % n], i);
    })",
       "it passes 'y' to 'put', whose parameter 'p' is no pointer to const", 4},
      // A helper that passes a pointer to const on to one that writes.
      {R"(static void put(double *p, double v) { *p = v; }
    static void pass(const double *p, double v) { put(p, v); }
    void f(int n, double *y) {
      for (int i = 0; i < n; ++i)
        pass(&y[(i * 3) % n], i);
    })",
       "it passes a pointer to const to 'put'", 2},
      // The mask marks whole elements.
      {R"(struct pair { double a, b; };
    void f(int n, struct pair *y) {
      for (int i = 0; i < n; ++i)
        y[(i * 3) % n].a = i;
    })",
       "it writes part of an element of 'y'", 4},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Code);
    Outcome Out = emit(C.Code, {masked("y", 0)});
    EXPECT_TRUE(contains(Out.Refusal, C.Reason)) << Out.Refusal;
    EXPECT_EQ(Out.RefusalLine, C.Line);
  }
  // A helper given a pointer to const reads only: offloaded.
  Outcome Reads = emit(R"(
    static double get(const double *p) { return p[1]; }
    void f(int n, double *y) {
      for (int i = 0; i < n; ++i)
        y[(i * 3) % n] = get(y + n);
    })",
                       {masked("y", 0)});
  EXPECT_EQ(Reads.Refusal, "");
}

TEST(KernelEmitterTest, ArraysOfSeveralDimensionsAreFlat) {
  Outcome Out = emit(R"(
    #define N 8
    void f(int n, int m, double A[n][m], double B[N][N]) {
      int i, j;
      for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) B[i][j] = A[i][j] * 2 + A[i][0];
    })",
                     {{"A", 0, false}, {"B", 1, true}}, false, {"j"});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "cl_khr_fp64")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "int j;")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "B[i * 8 + j] = A[i * fpm_d1_A + j] * 2 + "
                                   "A[i * fpm_d1_A + 0];"));
  ASSERT_EQ(Out.Params.end()[-2].K, fpm::KernelParam::Kind::Extent);
  EXPECT_EQ(Out.Params.end()[-2].HostExpr, "(sizeof(A[0]) / sizeof(A[0][0]))");
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

/// A clause array of row pointers (ClauseArray::RowPointers).
fpm::ClauseArray rowPointers(const char *Name, unsigned Index, bool Written) {
  fpm::ClauseArray A{Name, Index, Written};
  A.RowPointers = true;
  return A;
}

TEST(KernelEmitterTest, RowPointersAreAFlatMatrixOfTheirRowLength) {
  // in(A[i:1][0:m]) inout(B[i:1][0:m]): the runtime packs each array's
  // rows m apart; the kernel indexes them flat with the length it packed
  // with, and passes a row, or the whole array with its row length, to a
  // helper.
  Outcome Out = emit(R"(
    static double dot(const double *r, const double *v, int m) {
      double s = 0;
      for (int j = 0; j < m; ++j) s += r[j] * v[j];
      return s;
    }
    static double rowdot(double **M, int i, const double *v, int m) {
      return dot(M[i], v, m) + M[i][0];
    }
    void f(int n, int m, double **A, double **B, const double *x, double *y) {
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < m; ++j) B[i][j] = B[i][j] * 2 + A[i][j];
        y[i] = rowdot(A, i, x, m) + dot(B[i], x, m);
      }
    })",
                     {rowPointers("A", 0, false),
                      {"x", 1, false},
                      rowPointers("B", 2, true),
                      {"y", 3, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source,
                       "B[i * fpm_rowlen_B + j] = B[i * fpm_rowlen_B + j] * "
                       "2 + A[i * fpm_rowlen_A + j];"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source,
                       "static double fpm_f_rowdot(__global double *M, const "
                       "long fpm_rowlen_M, int i, __global const double *v, "
                       "int m) {\n"
                       "  return fpm_f_dot((M + i * fpm_rowlen_M), v, m) + "
                       "M[i * fpm_rowlen_M + 0];"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source,
                       "y[i] = fpm_f_rowdot(A, fpm_rowlen_A, i, x, m) + "
                       "fpm_f_dot((B + i * fpm_rowlen_B), x, m);"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "__global const double *A, __global const "
                                   "double *x, __global double *B, __global "
                                   "double *y, const long fpm_rowlen_B, const "
                                   "long fpm_rowlen_A, const ulong fpm_end"))
      << Out.Source;
  // Each row length is the one the runtime packs that array's section with.
  std::set<unsigned> Sections;
  for (const fpm::KernelParam &P : Out.Params)
    if (P.K == fpm::KernelParam::Kind::RowLength)
      Sections.insert(P.Section);
  EXPECT_EQ(Sections, (std::set<unsigned>{0, 2}));
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, RowPointersStayRowsOnTheDevice) {
  struct Case {
    const char *What, *Code, *Reason;
  };
  for (const Case &C :
       {Case{"assigned",
             "void f(int n, int m, double **A, double **B) {\n"
             "  for (int i = 0; i < n; ++i) { A[i] = B[i]; A[i][0] = 1; }\n"
             "}\n",
             "it changes a row pointer of 'A'"},
        Case{"address taken",
             "void f(int n, int m, double **A, double **B) {\n"
             "  for (int i = 0; i < n; ++i) B[i][0] = &A[i] != 0;\n"
             "}\n",
             "it takes the address of a row pointer of 'A'"},
        Case{"a part of it to a helper",
             "static void g(double **p) { p[0][0] = 1; }\n"
             "void f(int n, int m, double **A, double **B) {\n"
             "  for (int i = 0; i < n; ++i) g(&A[i]);\n"
             "}\n",
             "it passes 'g' a pointer to pointers ('p') that is not an "
             "array of row pointers of a data clause"},
        Case{"to a parameter of another type",
             "static void g(void *p) { (void)p; }\n"
             "void f(int n, int m, double **A, double **B) {\n"
             "  for (int i = 0; i < n; ++i) g(A);\n"
             "}\n",
             "whose parameter 'p' is no pointer to pointers"},
        Case{"a helper naming the array",
             "double **G;\n"
             "static double g(int i) { return G[i][0]; }\n"
             "void f(int n, int m, double **A, double **B) {\n"
             "  for (int i = 0; i < n; ++i) B[i][0] = g(i);\n"
             "}\n",
             "reads 'G', an array of row pointers, by its name"},
        Case{"the pointer array used as a value",
             "static double g(double **p) { return p != 0; }\n"
             "void f(int n, int m, double **A, double **B) {\n"
             "  for (int i = 0; i < n; ++i) B[i][0] = g(A);\n"
             "}\n",
             "uses 'p', an array of row pointers, other than through "
             "subscripts"}}) {
    SCOPED_TRACE(C.What);
    std::vector<fpm::ClauseArray> Arrays = {rowPointers("A", 0, true),
                                            rowPointers("B", 1, true)};
    if (contains(C.Code, "double **G"))
      Arrays.push_back(rowPointers("G", 2, false));
    Outcome Out = emit(C.Code, Arrays);
    EXPECT_EQ(Out.Source, "");
    EXPECT_TRUE(contains(Out.Refusal, C.Reason)) << Out.Refusal;
  }
}

TEST(KernelEmitterTest, TypesAreSpelledAsOpenClSpellsThem) {
  Outcome Out = emit(R"(
    #include <stdint.h>
    #include <stddef.h>
    typedef double real;
    enum { Scale = 3 };
    void f(int64_t n, size_t m, unsigned char *bytes, real *x) {
      for (int64_t i = 0; i < n; ++i) {
        long long wide = (long long)i * 3LL;
        x[i] = (real)(wide + m + bytes[i]) * Scale + sizeof(real);
      }
    })",
                     {{"bytes", 0, false}, {"x", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(
      Out.Source, "const long fpm_lower, const long fpm_step, const ulong m"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "__global const uchar *bytes"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "long wide = (long)i * 3L;")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(double)(wide + m + bytes[i]) * 3 + 8UL"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, MathFunctionsGetTheCArgumentTypes) {
  Outcome Out = emit(R"(
    #include <math.h>
    #include <stdlib.h>
    void f(int n, float *x, int *k) {
      for (int i = 0; i < n; ++i) {
        x[i] = sqrtf(x[i]) + (float)exp(x[i]) + fmaxf(x[i], 1);
        k[i] = abs(k[i] - 5);
      }
    })",
                     {{"x", 0, true}, {"k", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "sqrt(x[i])")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "exp((double)(x[i]))")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "fmax(x[i], (float)(1))")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "k[i] = (int)abs(k[i] - 5);")) << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, HelpersComeFirstWithTheirArgumentsAddressSpaces) {
  Outcome Out = emit(R"(
    static double sq(double v) { return v * v; }
    static double sum(const double *row, int n) {
      double s = 0;
      for (int j = 0; j < n; ++j) s += sq(row[j]);
      return s;
    }
    void f(int n, const double *A, double *out) {
      for (int i = 0; i < n; ++i) {
        double local[4] = {1, 2, 3, 4};
        out[i] = sum(&A[i * n], n) + sum(local, 4);
      }
    })",
                     {{"A", 0, false}, {"out", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  size_t Sq = Out.Source.find("static double fpm_f_sq(double v)");
  size_t Global = Out.Source.find(
      "static double fpm_f_sum(__global const double *row, int n)");
  size_t Private =
      Out.Source.find("static double fpm_f_sum_p(const double *row, int n)");
  size_t Kernel = Out.Source.find("__kernel");
  ASSERT_NE(Sq, std::string::npos) << Out.Source;
  ASSERT_NE(Global, std::string::npos) << Out.Source;
  ASSERT_NE(Private, std::string::npos) << Out.Source;
  EXPECT_LT(Sq, Global);
  EXPECT_LT(Global, Kernel);
  EXPECT_LT(Private, Kernel);
  EXPECT_TRUE(
      contains(Out.Source, "fpm_f_sum(&A[i * n], n) + fpm_f_sum_p(local_, 4)"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, ContinueEndsTheWorkItem) {
  Outcome Out = emit(R"(
    void f(int n, int *x) {
      for (int i = 0; i < n; ++i) {
        if (x[i] < 0) continue;
        for (int j = 0; j < 3; ++j) { if (j == 1) continue; x[i] += j; }
      }
    })",
                     {{"x", 0, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "if (x[i] < 0) {\n    return;"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "if (j == 1) {\n      continue;"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, BoolValuesComeAsBytes) {
  Outcome Out = emit(R"(
    #include <stdbool.h>
    void f(int n, bool twice, float *x) {
      for (int i = 0; i < n; ++i) x[i] = twice ? 2 * x[i] : x[i];
    })",
                     {{"x", 0, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "const uchar fpm_bool_twice")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "const bool twice = fpm_bool_twice;"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, ReservedNamesAreRenamed) {
  Outcome Out = emit(R"(
    void f(int n, float *global, float *x) {
      for (int i = 0; i < n; ++i) { float half = global[i] / 2; x[i] = half; }
    })",
                     {{"global", 0, false}, {"x", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "__global const float *global_"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "float half_ = global_[i] / 2;"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, UserNamesMeetNoOpenClNameNorEachOther) {
  // A name OpenCL C gives a meaning gets a `_`, and so does each such name
  // already followed by `_`s; a generated name's (fpm_) or the
  // implementation's (__x, _X) gets a `u`, and so does each such name
  // already after `u`s.
  EXPECT_EQ(fpm::kernelIdentifier("x"), "x");
  EXPECT_EQ(fpm::kernelIdentifier("_x"), "_x");
  EXPECT_EQ(fpm::kernelIdentifier("maximum"), "maximum");
  EXPECT_EQ(fpm::kernelIdentifier("max"), "max_");
  EXPECT_EQ(fpm::kernelIdentifier("max_"), "max__");
  EXPECT_EQ(fpm::kernelIdentifier("get_global_id"), "get_global_id_");
  EXPECT_EQ(fpm::kernelIdentifier("convert_int4_sat"), "convert_int4_sat_");
  EXPECT_EQ(fpm::kernelIdentifier("float4"), "float4_");
  EXPECT_EQ(fpm::kernelIdentifier("global"), "global_");
  EXPECT_EQ(fpm::kernelIdentifier("INFINITY"), "INFINITY_");
  EXPECT_EQ(fpm::kernelIdentifier("M_PI"), "M_PI_");
  EXPECT_EQ(fpm::kernelIdentifier("fpm_l"), "ufpm_l");
  EXPECT_EQ(fpm::kernelIdentifier("ufpm_l"), "uufpm_l");
  EXPECT_EQ(fpm::kernelIdentifier("__FILE_"), "u__FILE_");
  EXPECT_EQ(fpm::kernelIdentifier("_Max"), "u_Max");
  EXPECT_EQ(fpm::kernelIdentifier("u"), "u");
  EXPECT_EQ(fpm::kernelIdentifier("uint"), "uint_");
  // No two names meet, and none is a built-in's or a generated one.
  std::vector<std::string> Names;
  for (const char *Base :
       {"x", "max", "dot", "sign", "fpm_l", "fpm_f_sq", "__x", "_X", "_x", "u",
        "uint", "int4", "as_int", "NAN", "barrier", "fpm", "size_t"})
    for (const char *Before : {"", "u", "uu"})
      for (const char *After : {"", "_", "__"})
        Names.push_back(std::string(Before) + Base + After);
  std::set<std::string> Seen;
  for (const std::string &Name : Names) {
    std::string Kernel = fpm::kernelIdentifier(Name);
    EXPECT_TRUE(Seen.insert(Kernel).second) << Name << " -> " << Kernel;
    EXPECT_FALSE(llvm::StringRef(Kernel).starts_with("fpm_")) << Name;
    for (const char *Builtin : {"max", "dot", "sign", "barrier", "uint", "int4",
                                "as_int", "NAN", "size_t", "__x"})
      EXPECT_NE(Kernel, Builtin) << Name;
  }
}

TEST(KernelEmitterTest, HelpersOfOneNameGetNamesOfTheirOwn) {
  // Overloads, a template's instantiations, functions of one name in two
  // namespaces: each emitted once, each call to its own.
  Outcome Out = emit(R"(
    float lerp(float a, float b, float t) { return a + t * (b - a); }
    double lerp(double a, double b, double t) { return a + t * (b - a) + 1; }
    template <class T> T sq(T x) { return x * x + sizeof(T); }
    namespace a { double f(double x) { return x + 1; } }
    namespace b { double f(double x) { return a::f(x) * 3; } }
    void f(int n, const double *x, double *y, float *z) {
      for (int i = 0; i < n; ++i) {
        y[i] = lerp(x[i], 2.0, 0.5) + sq(x[i]) + a::f(x[i]) + b::f(x[i]);
        z[i] = lerp((float)x[i], 2.0f, 0.5f) + sq((float)x[i]);
      }
    })",
                     {{"x", 0, false}, {"y", 1, true}, {"z", 2, true}}, true);
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"static double fpm_f_lerp(double a, double b, double t)",
        "static double fpm_f_sq(double x) {\n  return x * x + 8UL;",
        "static double fpm_f_f(double x) {\n  return x + 1;",
        "static double fpm_f_f_2(double x) {\n  return fpm_f_f(x) * 3;",
        "static float fpm_f_lerp_2(float a, float b, float t)",
        "static float fpm_f_sq_2(float x) {\n  return x * x + 4UL;",
        "y[i] = fpm_f_lerp(x[i], 2.0, 0.5) + fpm_f_sq(x[i]) + fpm_f_f(x[i]) + "
        "fpm_f_f_2(x[i]);",
        "z[i] = fpm_f_lerp_2((float)(x[i]), 2.0f, 0.5f) + "
        "fpm_f_sq_2((float)(x[i]));",
        "/* b::f */\nstatic double fpm_f_f_2(", "/* sq<float> */\n"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  // Each once: six functions.
  EXPECT_EQ(count(Out.Source, "static "), 6u) << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, HelpersNamedAsBuiltinsAreRenamed) {
  // A function named as an OpenCL C built-in must not be the built-in; its
  // arguments are converted as C converts them (sign(x[i]) truncates).
  Outcome Out = emit(R"(
    static int sign(int v) { return v > 0 ? 7 : -7; }
    static int max(int a, int b) { return a > b ? a + 1 : b - 1; }
    static double clamp(double v, double lo, double hi) {
      return v < lo ? lo : v > hi ? hi : v;
    }
    static double select(double a, double b, int c) { return c ? a : b; }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i)
        y[i] = sign(x[i]) + max(i, 3) + clamp(x[i], 0, 1) + select(1, 2, i);
    })",
                     {{"x", 0, false}, {"y", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"static int fpm_f_sign(int v)", "static int fpm_f_max(int a, int b)",
        "static double fpm_f_clamp(double v, double lo, double hi)",
        "static double fpm_f_select(double a, double b, int c)",
        "y[i] = fpm_f_sign((int)(x[i])) + fpm_f_max(i, 3) + "
        "fpm_f_clamp(x[i], (double)(0), (double)(1)) + "
        "fpm_f_select((double)(1), (double)(2), i);"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, VariablesNamedAsBuiltinsAreRenamed) {
  // Names the kernel's own code calls (get_global_id, barrier, abs),
  // OpenCL C's macros (INFINITY) and generated names (fpm_l): a scalar, a
  // reduction variable, an array, locals, a helper's parameter.
  Outcome Out = emit(R"(
    #include <stdlib.h>
    static double twice(double dot) { double length = dot * 2; return length; }
    double f(int n, int get_global_id, const double *min, long *y) {
      double barrier = 0;
      for (int i = 0; i < n; ++i) {
        double INFINITY = 0.5, fpm_l = 2;
        int abs = i % 7;
        y[i] = labs((long)min[i]) + abs;
        barrier += twice(min[i]) + INFINITY + fpm_l + get_global_id;
      }
      return barrier;
    })",
                     {{"min", 0, false}, {"y", 1, true}}, false, {},
                     {{"barrier", fpm::ReductionOp::Add}});
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"static double fpm_f_twice(double dot_) {\n"
        "  double length_ = dot_ * 2;",
        "const int get_global_id_, __global const double *min_, __global long "
        "*y, __global double *fpm_partial_barrier_, const ulong fpm_end)",
        "double barrier_ = 0; /* reduction(+: barrier) */",
        "double INFINITY_ = 0.5; double ufpm_l = 2;", "int abs_ = i % 7;",
        "y[i] = (long)abs((long)(min_[i])) + abs_;",
        "barrier_ += fpm_f_twice(min_[i]) + INFINITY_ + ufpm_l + "
        "get_global_id_;",
        "barrier(CLK_LOCAL_MEM_FENCE);"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  ASSERT_EQ(Out.Params.size(), 7u);
  EXPECT_EQ(Out.Params[2].HostExpr, "get_global_id");
  EXPECT_EQ(Out.Params[3].HostExpr, "min");
  EXPECT_EQ(Out.Params[5].HostExpr, "barrier");
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, AbsOfEveryType) {
  // std::abs of a floating type is fabs (OpenCL's abs takes integers); of
  // an integer type OpenCL's abs, its unsigned result converted back.
  Outcome Out = emit(R"(
    #include <cmath>
    #include <cstdlib>
    void f(int n, const double *x, const int *k, double *y, float *z,
           long *w) {
      for (int i = 0; i < n; ++i) {
        y[i] = std::abs(x[i]) + std::fabs(k[i]) + std::fmin(x[i], 1.5f);
        z[i] = std::abs((float)x[i]) + fabsf((float)x[i]) +
               std::fmax((float)x[i], 2.0f);
        w[i] = std::abs(k[i]) + std::abs(k[i] * 3L) + labs(k[i]) +
               llabs(k[i]);
      }
    })",
                     {{"x", 0, false},
                      {"k", 1, false},
                      {"y", 2, true},
                      {"z", 3, true},
                      {"w", 4, true}},
                     true);
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"y[i] = fabs(x[i]) + fabs((double)(k[i])) + fmin(x[i], "
        "(double)(1.5f));",
        "z[i] = fabs((float)(x[i])) + fabs((float)(x[i])) + "
        "fmax((float)(x[i]), 2.0f);",
        "w[i] = (int)abs(k[i]) + (long)abs(k[i] * 3L) + "
        "(long)abs((long)(k[i])) "
        "+ (long)abs((long)(k[i]));"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, StaticMemberFunctionsAreHelpers) {
  // A static member function is a function like another (no object): the
  // comment above it says which.
  Outcome Out = emit(R"(
    struct S { static double f(double x) { return x / 4; } };
    namespace a { double f(double x) { return S::f(x) + 1; } }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i) y[i] = S::f(x[i]) + a::f(x[i]);
    })",
                     {{"x", 0, false}, {"y", 1, true}}, true);
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"/* S::f */\nstatic double fpm_f_f(double x) {\n  return x / 4;",
        "/* a::f */\nstatic double fpm_f_f_2(double x) {\n"
        "  return fpm_f_f(x) + 1;",
        "y[i] = fpm_f_f(x[i]) + fpm_f_f_2(x[i]);"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");

  // Called through an object, the object is an expression the kernel
  // would drop.
  Out = emit(R"(
    struct S { static double f(double x) { return x / 4; } };
    S s;
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i)
        y[i] = s.f(x[i]);
    })",
             {{"x", 0, false}, {"y", 1, true}}, true);
  EXPECT_TRUE(contains(Out.Refusal,
                       "calls the static member function 'f' through an "
                       "object"))
      << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, 6u);
}

TEST(KernelEmitterTest, DefaultArgumentsArePassed) {
  Outcome Out = emit(R"(
    enum { Three = 3 };
    double scale(double x, double by = 2, int plus = Three) {
      return x * by + plus;
    }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i) y[i] = scale(x[i]) + scale(x[i], 4);
    })",
                     {{"x", 0, false}, {"y", 1, true}}, true);
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source,
                       "y[i] = fpm_f_scale(x[i], (double)(2), (int)(3)) + "
                       "fpm_f_scale(x[i], (double)(4), (int)(3));"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");

  // A default argument that reads a variable names it where the callee
  // is, not where the loop is.
  Out = emit(R"(
    namespace cfg { double by = 2; }
    double scale(double x, double k = cfg::by) { return x * k; }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i)
        y[i] = scale(x[i]);
    })",
             {{"x", 0, false}, {"y", 1, true}}, true);
  EXPECT_TRUE(contains(Out.Refusal, "default argument that reads a variable"))
      << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, 6u);
}

TEST(KernelEmitterTest, HostVariablesNamedWithAQualifier) {
  // cfg::scale where a local scale hides it at the loop: the host passes
  // ::cfg::scale, and the kernel names it fpm_v_scale, which the body's own
  // scale (declared after the host's scale is read) does not hide.
  Outcome Out = emit(R"(
    namespace cfg { double scale = 2; }
    namespace other { double scale = 3; }
    struct S { static double w; };
    double S::w = 5;
    void f(int n, const double *x, double *y) {
      double scale = 10;
      for (int i = 0; i < n; ++i) {
        y[i] = x[i] * cfg::scale + other::scale + scale + S::w;
        double scale = 7;
        y[i] += scale * ::cfg::scale;
      }
    })",
                     {{"x", 0, false}, {"y", 1, true}}, true);
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"const double fpm_v_scale, const double fpm_v_scale_2, const double "
        "scale, const double fpm_v_w,",
        "  {\n    y[i] = x[i] * fpm_v_scale + fpm_v_scale_2 + scale + "
        "fpm_v_w;\n    double scale = 7;\n"
        "    y[i] += scale * fpm_v_scale;\n  }\n"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  ASSERT_EQ(Out.Params.size(), 9u);
  EXPECT_EQ(Out.Params[2].HostExpr, "::cfg::scale");
  EXPECT_EQ(Out.Params[3].HostExpr, "::other::scale");
  EXPECT_EQ(Out.Params[4].HostExpr, "scale");
  EXPECT_EQ(Out.Params[5].HostExpr, "::S::w");
  EXPECT_EQ(buildOnDevice(Out.Source), "");

  // The clauses' x is the loop's; cfg::x may be another array.
  Out = emit(R"(
    namespace cfg { double x[8]; }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i)
        y[i] = cfg::x[i];
    })",
             {{"x", 0, false}, {"y", 1, true}}, true);
  EXPECT_TRUE(contains(Out.Refusal, "names 'cfg::x' with a qualifier, and the "
                                    "pragma's clauses name a 'x'"))
      << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, 5u);
}

TEST(KernelEmitterTest, HelpersTakeTheGlobalsTheyRead) {
  // NPB's exact_solution: a helper reads a table and a scalar of the file,
  // through another helper too. Each helper takes what it reads, after its
  // own parameters; the kernel gets the scalar's value and the table whole.
  Outcome Out = emit(R"(
    static double ce[5][13];
    static int nx0;
    static double term(int m, double xi) { return ce[m][1] * xi; }
    static double exact(int m, int i) {
      double xi = (double)i / (nx0 - 1);
      return ce[m][0] + term(m, xi);
    }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i) {
        int nx0 = i % 5; /* hides the global in the body, not in exact */
        y[i] = x[i] + exact(nx0, i);
      }
    })",
                     {{"x", 0, false}, {"y", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"static double fpm_f_term(int m, double xi, __global const double "
        "*fpm_v_ce) {\n  return fpm_v_ce[m * 13 + 1] * xi;\n}\n",
        "static double fpm_f_exact(int m, int i, const int fpm_v_nx0, "
        "__global const double *fpm_v_ce) {\n",
        "return fpm_v_ce[m * 13 + 0] + fpm_f_term(m, xi, fpm_v_ce);",
        "__kernel void k(const int fpm_lower, const long fpm_step, const int "
        "fpm_v_nx0, __global const double *x, __global double *y, __global "
        "const double *fpm_v_ce, const ulong fpm_end)",
        "y[i] = x[i] + fpm_f_exact(nx0, i, fpm_v_nx0, fpm_v_ce);"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  ASSERT_EQ(Out.Params.size(), 7u);
  EXPECT_EQ(Out.Params[2].K, fpm::KernelParam::Kind::Scalar);
  EXPECT_EQ(Out.Params[2].HostExpr, "nx0");
  EXPECT_EQ(Out.Params[5].K, fpm::KernelParam::Kind::Whole);
  EXPECT_EQ(Out.Params[5].HostExpr, "ce");
  EXPECT_EQ(Out.Params[5].Name, "in(ce[0:5])");
  EXPECT_EQ(buildOnDevice(Out.Source), "");

  // A clause that names the global: the helper gets the clause's buffer.
  // Without a ClauseArray::Decl, the emitter cannot tell it is the same.
  const char *Named = R"(
    static double *tbl;
    static double get(int i) { return tbl[i % 4]; }
    void f(int n, const double *x, double *y) {
      for (int i = 0; i < n; ++i)
        y[i] = x[i] + get(i);
    })";
  Out = emit(Named, {{"x", 0, false}, {"tbl", 1, false}, {"y", 2, true}});
  EXPECT_TRUE(contains(Out.Refusal, "function 'get' reads 'tbl', declared "
                                    "outside it, and the pragma's clauses "
                                    "name a 'tbl' that may be another"))
      << Out.Refusal;
  Out = emit(Named, {{"x", 0, false}, {"y", 2, true}});
  EXPECT_TRUE(contains(Out.Refusal, "add in(tbl[0:n]) to the pragma"))
      << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, 3u);
}

TEST(KernelEmitterTest, BodyRedeclaringAKernelNameGetsABlock) {
  // C lets the body declare, at its top, a name it has just read from the
  // host (or the loop variable's): the kernel's top block has the
  // parameters, so the body gets a block of its own.
  Outcome Out = emit(R"(
    void f(int n, double s, const double *x, double *y) {
      for (int i = 0; i < n; ++i) {
        y[i] = x[i] * s;
        double s = 2;
        int i = 3;
        y[i] += s;
      }
    })",
                     {{"x", 0, false}, {"y", 1, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "  {\n    y[i] = x[i] * s;\n"
                                   "    double s = 2;\n    int i = 3;\n"
                                   "    y[i] += s;\n  }\n}\n"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, CxxTemplateInstanceAndStdFunctions) {
  Outcome Out = emit(R"(
    #include <algorithm>
    #include <cmath>
    void f(int n, const float *x, float *y) {
      for (int i = 0; i < n; ++i) {
        auto v = std::sqrt(x[i]);
        y[i] = std::max(v, 1.0f) + static_cast<float>(std::pow(x[i], 2));
      }
    })",
                     {{"x", 0, false}, {"y", 1, true}}, true);
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "float v = sqrt(x[i]);")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "fpm_std_max_float(v, 1.0f)")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "(float)(pow((double)(x[i]), (double)(2)))"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, ReductionsAccumulatePerWorkItemAndPerGroup) {
  // A dot product: each work-item accumulates into its own `s`, set to 0;
  // work-item 0 combines the group's in work-item order and stores the
  // group's partial result at get_group_id(0). The work-items past the
  // launch's end skip the body, keep the identity and still reach the
  // barrier.
  Outcome Out = emit(R"(
    double f(int n, const double *x, const double *y) {
      double s = 1;
      for (int i = 0; i < n; ++i)
        s += x[i] * y[i];
      return s;
    })",
                     {{"x", 0, false}, {"y", 1, false}}, false, {},
                     {{"s", fpm::ReductionOp::Add}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "__global const double *y, __global double "
                                   "*fpm_partial_s, const ulong fpm_end) {"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source,
                       "  __local double fpm_group_s[64];\n"
                       "  double s = 0; /* reduction(+: s) */\n"
                       "  if (get_global_id(0) < fpm_end) { /* past "
                       "the end: the identity */\n"
                       "    s += x[i] * y[i];\n"
                       "  }\n"
                       "  const size_t fpm_l = get_local_id(0);\n"
                       "  fpm_group_s[fpm_l] = s;\n"
                       "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                       "  if (fpm_l == 0) {\n"
                       "    for (size_t fpm_j = 1; fpm_j < "
                       "get_local_size(0); ++fpm_j) {\n"
                       "      s = s + fpm_group_s[fpm_j];\n"
                       "    }\n"
                       "    fpm_partial_s[get_group_id(0)] = s;\n"
                       "  }\n"
                       "}\n"))
      << Out.Source;
  EXPECT_FALSE(contains(Out.Source, "return;")) << Out.Source;
  ASSERT_EQ(Out.Params.size(), 6u);
  EXPECT_EQ(Out.Params[4].K, fpm::KernelParam::Kind::Reduction);
  EXPECT_EQ(Out.Params[4].HostExpr, "s");
  EXPECT_EQ(Out.Params[4].Reduction, 0u);
  EXPECT_EQ(Out.Params[5].K, fpm::KernelParam::Kind::End);
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, EachOperatorStartsFromItsIdentity) {
  // The identity per operator and type (infinities for a floating min and
  // max, the integer limits otherwise), the combination as fpm's runtime
  // combines partial results, and a bool kept in bytes where OpenCL C
  // allows no bool (a buffer, __local memory).
  Outcome Out = emit(R"(
    #include <stdbool.h>
    void f(int n, const int *v) {
      int least = 0; unsigned top = 0; float ftop = 0, prod = 1;
      long mask = -1; short sh = 0; bool all = true; unsigned char any = 0;
      unsigned bits = 0, flip = 0;
      for (int i = 0; i < n; ++i) {
        if (v[i] < least) least = v[i];
        if ((unsigned)v[i] > top) top = (unsigned)v[i];
        ftop = v[i] > ftop ? v[i] : ftop;
        prod *= 2;
        mask &= v[i];
        sh = v[i] > sh ? v[i] : sh;
        all = all && v[i] > 0;
        any = any || v[i] == 3;
        bits |= v[i];
        flip ^= v[i];
      }
    })",
                     {{"v", 0, false}}, false, {},
                     {{"least", fpm::ReductionOp::Min},
                      {"top", fpm::ReductionOp::Max},
                      {"ftop", fpm::ReductionOp::Max},
                      {"prod", fpm::ReductionOp::Mul},
                      {"mask", fpm::ReductionOp::BitAnd},
                      {"sh", fpm::ReductionOp::Max},
                      {"all", fpm::ReductionOp::And},
                      {"any", fpm::ReductionOp::Or},
                      {"bits", fpm::ReductionOp::BitOr},
                      {"flip", fpm::ReductionOp::BitXor}});
  ASSERT_EQ(Out.Refusal, "");
  for (const char *Part :
       {"int least = INT_MAX;",
        "uint top = 0;",
        "float ftop = -INFINITY;",
        "float prod = 1;",
        "long mask = (long)~0;",
        "short sh = SHRT_MIN;",
        "bool all_ = 1;",
        "uchar any_ = 0;",
        "uint bits = 0;",
        "uint flip = 0;",
        "least = fpm_group_least[fpm_j] < least ? fpm_group_least[fpm_j] : "
        "least;",
        "top = top < fpm_group_top[fpm_j] ? fpm_group_top[fpm_j] : top;",
        "prod = prod * fpm_group_prod[fpm_j];",
        "mask = mask & fpm_group_mask[fpm_j];",
        "all_ = all_ && fpm_group_all_[fpm_j];",
        "any_ = any_ || fpm_group_any_[fpm_j];",
        "bits = bits | fpm_group_bits[fpm_j];",
        "flip = flip ^ fpm_group_flip[fpm_j];",
        "__local uchar fpm_group_all_[64];",
        "__global uchar *fpm_partial_all_",
        "__global uchar *fpm_partial_any_"})
    EXPECT_TRUE(contains(Out.Source, Part)) << Part << "\n" << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, ContinueReachesTheReduction) {
  // With a reduction, every work-item must reach the work-group's barrier:
  // the loop's own `continue` leaves a do-while(0) around the body instead
  // of returning; a nested loop's stays as it is.
  Outcome Out =
      emit(R"(
    long f(int n, const int *x) {
      long count = 0;
      for (int i = 0; i < n; ++i) {
        if (x[i] < 0) continue;
        for (int j = 0; j < 3; ++j) { if (j == 1) continue; count += j; }
      }
      return count;
    })",
           {{"x", 0, false}}, false, {}, {{"count", fpm::ReductionOp::Add}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_FALSE(contains(Out.Source, "return;")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "    do {\n      if (x[i] < 0) {\n"
                                   "        continue;\n      }\n"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "    } while (0);\n  }\n"
                                   "  const size_t fpm_l = get_local_id(0);"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "if (j == 1) {\n          continue;"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, LongDoubleReductionStaysOnTheCpu) {
  Outcome Out =
      emit(R"(
    long double f(int n, const double *x) {
      long double s = 0;
      for (int i = 0; i < n; ++i)
        s += x[i];
      return s;
    })",
           {{"x", 0, false}}, false, {}, {{"s", fpm::ReductionOp::Add}});
  EXPECT_EQ(Out.Source, "");
  EXPECT_TRUE(contains(Out.Refusal, "reduction variable 's' is a long double"))
      << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, 3u);
}

TEST(KernelEmitterTest, StructsComeWithTheHostsLayout) {
  // Arrays of structs in and inout, a nested struct, an array member, a
  // struct of the host by value, a private struct local and a helper taking
  // a struct by value and by pointer.
  Outcome Out = emit(R"(
    typedef struct { double re, im; } cplx;
    struct vec { double v[3]; };
    struct body { struct vec pos, vel; float mass; int id; };
    struct params { double dt; int steps; };
    static cplx mul(cplx a, cplx b) {
      cplx c = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
      return c;
    }
    static void kick(struct body *b, double dt) {
      for (int k = 0; k < 3; ++k) b->vel.v[k] += dt * b->mass;
    }
    void f(int n, const cplx *w, cplx *z, struct body *bs, struct params p) {
      for (int i = 0; i < n; ++i) {
        cplx t = mul(w[i], z[i]);
        z[i] = t;
        z[i].im += p.dt;
        kick(&bs[i], p.dt);
        bs[i].id = p.steps;
      }
    })",
                     {{"w", 0, false}, {"z", 1, true}, {"bs", 2, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "typedef struct {\n  double re;\n  double "
                                   "im;\n} fpm_t_cplx;\n"
                                   "typedef char fpm_check_cplx[sizeof("
                                   "fpm_t_cplx) == 16 && __builtin_offsetof("
                                   "fpm_t_cplx, im) == 8 ? 1 : -1];\n"))
      << Out.Source;
  // Each struct once, a nested one before the struct that holds it.
  EXPECT_EQ(count(Out.Source, "} fpm_t_vec;"), 1u) << Out.Source;
  EXPECT_LT(Out.Source.find("} fpm_t_vec;"), Out.Source.find("} fpm_t_body;"));
  EXPECT_TRUE(contains(Out.Source, "  double v[3];\n")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "sizeof(fpm_t_body) == 56 && "
                                   "__builtin_offsetof(fpm_t_body, vel) == 24 "
                                   "&& __builtin_offsetof(fpm_t_body, mass) == "
                                   "48 && __builtin_offsetof(fpm_t_body, id) "
                                   "== 52 ? 1 : -1];"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "static fpm_t_cplx fpm_f_mul(fpm_t_cplx a, "
                                   "fpm_t_cplx b)"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "static void fpm_f_kick(__global "
                                   "fpm_t_body *b, double dt)"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "b->vel.v[k] += dt * b->mass;"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "const fpm_t_params p, __global const "
                                   "fpm_t_cplx *w, __global fpm_t_cplx *z, "
                                   "__global fpm_t_body *bs"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "fpm_t_cplx t = fpm_f_mul(w[i], z[i]);"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "z[i].im += p.dt;")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "fpm_f_kick(&bs[i], p.dt);")) << Out.Source;
  ASSERT_GE(Out.Params.size(), 3u);
  EXPECT_EQ(Out.Params[2].K, fpm::KernelParam::Kind::Scalar);
  EXPECT_EQ(Out.Params[2].HostExpr, "p");
  EXPECT_EQ(buildOnDevice(Out.Source), "");
}

TEST(KernelEmitterTest, ALayoutTheDeviceDoesNotShareFailsToBuild) {
  // What a device that laid the struct out otherwise would see: the host's
  // size in the check no longer matches, and the kernel does not build.
  Outcome Out = emit(R"(
    typedef struct { double re, im; } cplx;
    void f(int n, cplx *z) {
      for (int i = 0; i < n; ++i) z[i].im = -z[i].re;
    })",
                     {{"z", 0, true}});
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_EQ(buildOnDevice(Out.Source), "");
  std::string Other = Out.Source;
  size_t At = Other.find("sizeof(fpm_t_cplx) == 16");
  ASSERT_NE(At, std::string::npos) << Other;
  Other.replace(At, 25, "sizeof(fpm_t_cplx) == 24");
  EXPECT_TRUE(contains(buildOnDevice(Other), "fpm_check_cplx"));
  Other = Out.Source;
  At = Other.find("__builtin_offsetof(fpm_t_cplx, im) == 8");
  ASSERT_NE(At, std::string::npos) << Other;
  Other.replace(At, 39, "__builtin_offsetof(fpm_t_cplx, im) == 4");
  EXPECT_TRUE(contains(buildOnDevice(Other), "fpm_check_cplx"));
}

TEST(KernelEmitterTest, CxxStructsAreCopiedAsInC) {
  // A plain C++ aggregate: copied, assigned, built from a braced list and
  // returned as one; members and structs named as OpenCL C's get a `_`;
  // two structs of one name get names of their own.
  Outcome Out =
      emit(R"(
    namespace a { struct P { double half; int global; }; }
    namespace b { struct P { float x; }; }
    static a::P twice(a::P p) { return {2 * p.half, p.global}; }
    void f(int n, const a::P *in, a::P *out, b::P *q) {
      for (int i = 0; i < n; ++i) {
        a::P t = in[i];
        a::P u;
        u = twice(t);
        out[i] = u;
        q[i] = b::P{q[i].x + 1};
      }
    })",
           {{"in", 0, false}, {"out", 1, true}, {"q", 2, true}}, true);
  ASSERT_EQ(Out.Refusal, "");
  EXPECT_TRUE(contains(Out.Source, "/* a::P */\ntypedef struct {\n  double "
                                   "half_;\n  int global_;\n} fpm_t_P;\n"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "/* b::P */\ntypedef struct {\n  float "
                                   "x;\n} fpm_t_P_2;\n"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "return (fpm_t_P){2 * p.half_, "
                                   "p.global_};"))
      << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "fpm_t_P t = in[i];")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "fpm_t_P u;\n")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "u = fpm_f_twice(t);")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "out[i] = u;")) << Out.Source;
  EXPECT_TRUE(contains(Out.Source, "q[i] = (fpm_t_P_2){q[i].x + 1};"))
      << Out.Source;
  EXPECT_EQ(buildOnDevice(Out.Source), "");

  // A struct holding another of its name: each keeps a name of its own.
  Outcome Nested = emit(R"(
    namespace a { struct P { float x; }; }
    namespace b { struct P { a::P in; double y; }; }
    void f(int n, b::P *q) {
      for (int i = 0; i < n; ++i) q[i].y += q[i].in.x;
    })",
                        {{"q", 0, true}}, true);
  ASSERT_EQ(Nested.Refusal, "");
  EXPECT_TRUE(contains(Nested.Source, "/* a::P */\ntypedef struct {\n  float "
                                      "x;\n} fpm_t_P_2;\n"))
      << Nested.Source;
  EXPECT_TRUE(contains(Nested.Source, "  fpm_t_P_2 in;\n  double y;\n} "
                                      "fpm_t_P;\n"))
      << Nested.Source;
  EXPECT_EQ(buildOnDevice(Nested.Source), "");
}

TEST(KernelEmitterTest, StructInitialisers) {
  // C99's designators name the kernel's members; a struct of one member is
  // initialised with braces; C++'s empty braces and a class template's
  // instance (named as the template, with a comment).
  Outcome C = emit(R"(
    struct one { double max; };
    struct pt { double x, y; int tag[2]; };
    void f(int n, struct pt *p) {
      for (int i = 0; i < n; ++i) {
        struct one m = {p[i].x};
        struct pt q = {.y = m.max, .tag[1] = 3, .x = 1};
        p[i] = q;
      }
    })",
                   {{"p", 0, true}});
  ASSERT_EQ(C.Refusal, "");
  EXPECT_TRUE(contains(C.Source, "fpm_t_one m = {p[i].x};")) << C.Source;
  EXPECT_TRUE(
      contains(C.Source, "fpm_t_pt q = {.y = m.max_, .tag[1] = 3, .x = 1};"))
      << C.Source;
  EXPECT_EQ(buildOnDevice(C.Source), "");

  Outcome Cxx = emit(R"(
    template <typename T> struct vec { T v[2]; };
    void f(int n, vec<float> *p) {
      for (int i = 0; i < n; ++i) {
        vec<float> z{};
        z.v[0] = p[i].v[1];
        p[i] = z;
      }
    })",
                     {{"p", 0, true}}, true);
  ASSERT_EQ(Cxx.Refusal, "");
  EXPECT_TRUE(contains(Cxx.Source, "/* vec<float> */\ntypedef struct {\n  "
                                   "float v[2];\n} fpm_t_vec;\n"))
      << Cxx.Source;
  EXPECT_TRUE(contains(Cxx.Source, "fpm_t_vec z = {};")) << Cxx.Source;
  EXPECT_EQ(buildOnDevice(Cxx.Source), "");
}

TEST(KernelEmitterTest, CxxDefaultMemberInitialisersStayOnTheCpu) {
  // `P q{x[i]}` sets q.w to 2; the list as written would leave it 0.
  Outcome Out = emit(R"(
    struct P { double v; double w = 2; };
    void f(int n, const double *x, P *y) {
      for (int i = 0; i < n; ++i) {
        P q{x[i]};
        y[i] = q;
      }
    })",
                     {{"x", 0, false}, {"y", 1, true}}, true);
  EXPECT_EQ(Out.Source, "");
  EXPECT_TRUE(contains(Out.Refusal, "leaves a member of 'P' to its default "
                                    "member initialiser"))
      << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, 5u);
}

TEST(KernelEmitterTest, GlobalStructsAreReadNotWritten) {
  // A helper reads a global struct (passed on by value); one that writes
  // a member of it, or a body that writes a member of a struct of the
  // host's, keeps the loop on the CPU: the device would write its copy.
  const std::string Globals = "struct cfg { double scale; double w[3]; };\n"
                              "static struct cfg g;\n"
                              "static double weigh(double v) {\n"
                              "  return v * g.scale + g.w[1]; }\n"
                              "static void bump(double v) { g.w[0] += v; }\n";
  Outcome Read = emit(Globals + "void f(int n, const double *x, double *y) {\n"
                                "  for (int i = 0; i < n; ++i)\n"
                                "    y[i] = weigh(x[i]);\n}\n",
                      {{"x", 0, false}, {"y", 1, true}});
  ASSERT_EQ(Read.Refusal, "");
  EXPECT_TRUE(contains(Read.Source, "static double fpm_f_weigh(double v, "
                                    "const fpm_t_cfg fpm_v_g)"))
      << Read.Source;
  EXPECT_EQ(buildOnDevice(Read.Source), "");

  Outcome Helper = emit(Globals + "void f(int n, const double *x) {\n"
                                  "  for (int i = 0; i < n; ++i)\n"
                                  "    bump(x[i]);\n}\n",
                        {{"x", 0, false}});
  EXPECT_TRUE(contains(Helper.Refusal, "function 'bump' writes 'g'"))
      << Helper.Refusal;
  EXPECT_EQ(Helper.RefusalLine, 5u);

  Outcome Body = emit(Globals + "void f(int n, const double *x) {\n"
                                "  struct cfg h = g;\n"
                                "  for (int i = 0; i < 3; ++i)\n"
                                "    h.w[i] = x[i] * h.scale;\n}\n",
                      {{"x", 0, false}});
  EXPECT_TRUE(contains(Body.Refusal, "it writes into 'h', declared outside "
                                     "the loop, which a device gets as a copy"))
      << Body.Refusal;
  EXPECT_EQ(Body.RefusalLine, 9u);
}

struct StructRefusal {
  const char *What;
  const char *Declaration;
  const char *Reason;
  bool Cxx = false;
};

class StructRefusalTest : public testing::TestWithParam<StructRefusal> {};

TEST_P(StructRefusalTest, NamesTheMemberAndWhy) {
  const StructRefusal &Case = GetParam();
  std::string Code = std::string(Case.Declaration) +
                     "\nvoid f(int n, struct S *s, double *y) {\n"
                     "  for (int i = 0; i < n; ++i)\n"
                     "    y[i] = s[i].x;\n}\n";
  Outcome Out = emit(Code, {{"s", 0, false}, {"y", 1, true}}, Case.Cxx);
  EXPECT_EQ(Out.Source, "");
  EXPECT_TRUE(contains(Out.Refusal, Case.Reason))
      << Case.What << ": " << Out.Refusal;
  // At the use, the line after the loop's.
  EXPECT_EQ(Out.RefusalLine, count(Case.Declaration, "\n") + 4) << Case.What;
}

INSTANTIATE_TEST_SUITE_P(
    Members, StructRefusalTest,
    testing::Values(
        StructRefusal{"bit-field", "struct S { double x; unsigned f : 3; };",
                      "'S', whose member 'f' is a bit-field"},
        StructRefusal{"pointer", "struct S { double x; double *p; };",
                      "whose member 'p' is a pointer"},
        StructRefusal{"long double", "struct S { double x; long double w; };",
                      "whose member 'w' is a long double"},
        StructRefusal{"bool", "struct S { double x; _Bool b; };",
                      "whose member 'b' is a bool"},
        StructRefusal{"union member",
                      "union U { int i; float f; };\n"
                      "struct S { double x; union U u; };",
                      "whose member 'u' is a union"},
        StructRefusal{"flexible array", "struct S { double x; int n[]; };",
                      "whose member 'n' is an array of no constant size"},
        StructRefusal{"packed",
                      "struct __attribute__((packed)) S { char c; double x; "
                      "};",
                      "whose member 'x' is at byte 1 on the host and would "
                      "be at byte 8"},
        StructRefusal{"aligned",
                      "struct __attribute__((aligned(32))) S { double x; };",
                      "whose size is 32 bytes on the host and would be 8"},
        StructRefusal{"nested",
                      "struct In { int *p; };\n"
                      "struct S { double x; struct In in; };",
                      "struct 'In', whose member 'p' is a pointer"},
        StructRefusal{"private member",
                      "struct S { double x; private: double y; };",
                      "whose member 'y' is not public", true},
        StructRefusal{"base",
                      "struct B { int k; };\nstruct S : B { double x; };",
                      "which has a base class", true},
        StructRefusal{"virtual", "struct S { double x; virtual ~S() {} };",
                      "which has virtual functions", true},
        StructRefusal{"constructor",
                      "struct S { double x; S(double v) : x(v) {} };",
                      "which is not a plain aggregate", true}),
    [](const testing::TestParamInfo<StructRefusal> &Info) {
      std::string Name = Info.param.What;
      for (char &C : Name)
        if (!isalnum(static_cast<unsigned char>(C)))
          C = '_';
      return Name;
    });

struct RefusalCase {
  const char *What;
  const char *Code;
  const char *Reason;
  unsigned Line;
};

class KernelRefusalTest : public testing::TestWithParam<RefusalCase> {};

TEST_P(KernelRefusalTest, SaysWhyAtTheConstruct) {
  const RefusalCase &Case = GetParam();
  std::string Code = std::string("#include <stdio.h>\n"
                                 "struct P { double x; };\n"
                                 "double ext(double);\n"
                                 "static int fact(int k) { return k < 2 ? 1 : "
                                 "k * fact(k - 1); }\n") +
                     Case.Code;
  Outcome Out = emit(Code, {{"x", 0, false}, {"y", 1, true}});
  EXPECT_EQ(Out.Source, "");
  EXPECT_TRUE(contains(Out.Refusal, Case.Reason))
      << Case.What << ": " << Out.Refusal;
  EXPECT_EQ(Out.RefusalLine, Case.Line) << Case.What;
}

INSTANTIATE_TEST_SUITE_P(
    Constructs, KernelRefusalTest,
    testing::Values(
        RefusalCase{"printf",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    printf(\"%f\", x[i]);\n}\n",
                    "calls 'printf', which has no body", 7},
        RefusalCase{"no body",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    y[i] = ext(x[i]);\n}\n",
                    "calls 'ext', which has no body", 7},
        RefusalCase{"union",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    union { double d; long k; } u = {x[i]}; y[i] = u.d; "
                    "}\n}\n",
                    "fpm offloads no unions", 7},
        RefusalCase{"array without a clause",
                    "void f(int n, double *x, double *y, double *z) {\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    y[i] = x[i] + z[i];\n}\n",
                    "'z', which no data clause names", 7},
        RefusalCase{"helper writing a global",
                    "static double g[64];\n"
                    "static void put(int i, double v) { g[i % 64] = v; }\n"
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    put(i, x[i]); y[i] = x[i]; }\n}\n",
                    "function 'put' writes 'g', declared outside it", 6},
        RefusalCase{"helper reading a thread-local global",
                    "static _Thread_local double t;\n"
                    "static double get(void) { return t; }\n"
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    y[i] = x[i] * get();\n}\n",
                    "reads 't', declared outside it as thread-local", 6},
        RefusalCase{"body writing a global no clause names",
                    "static double g[64];\n"
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    g[i % 64] = x[i]; y[i] = x[i]; }\n}\n",
                    "writes the array 'g', which no data clause names", 8},
        RefusalCase{"extern declaration in the body",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    extern double g; y[i] = x[i] * g; }\n}\n",
                    "declares 'g' extern inside a function", 7},
        RefusalCase{"local pointer",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    double *p = &y[i]; *p = x[i]; }\n}\n",
                    "pointer that is not an array of a data clause", 7},
        RefusalCase{"recursion",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i)\n"
                    "    y[i] = fact(i);\n}\n",
                    "recursive", 4},
        RefusalCase{"long double",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    long double w = x[i]; y[i] = w; }\n}\n",
                    "no type 'long double'", 7},
        RefusalCase{"goto",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    if (x[i] > 0) goto skip; y[i] = 1; skip:; }\n}\n",
                    "'goto'", 7},
        RefusalCase{"static local",
                    "void f(int n, double *x, double *y) {\n"
                    "  for (int i = 0; i < n; ++i) {\n"
                    "    static int calls; y[i] = x[i]; }\n}\n",
                    "static variable 'calls'", 7}),
    [](const testing::TestParamInfo<RefusalCase> &Info) {
      std::string Name = Info.param.What;
      for (char &C : Name)
        if (!isalnum(static_cast<unsigned char>(C)))
          C = '_';
      return Name;
    });

} // namespace
