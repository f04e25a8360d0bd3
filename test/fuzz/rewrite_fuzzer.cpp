//===- rewrite_fuzzer.cpp - fpm-rewrite's library on generated sources ----===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The rewriter (lib/: the pragma parser, the loop checks, the emitters) on
// a function whose `#pragma fpm partition` line ends with the input, as
// fpm-rewrite runs it on a file: it may report errors, never crash, hang
// or write anything but its output (here /dev/null). The first byte of the
// input says C or C++ (bit 0), and whether the input brings its own loop
// after its first line (bit 1) or the pragma gets a plain one; with bit 2,
// the input is instead the kernel file "k.cl" of a fixed pragma that names
// it (the parse of every embedded kernel as OpenCL C). The file system is
// in memory and holds only the source and the kernel file beside it; no
// header can be included.
//
//===----------------------------------------------------------------------===//

#include "RewriteAction.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/FileSystemOptions.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace {

const char Prologue[] =
    "typedef long int64_t;\n"
    "struct P { int x; double y; };\n"
    "int g(int);\n"
    "void f(int n, int m, int *a, int *b, float *x, double *d,\n"
    "       double (*grid)[8], struct P *p, int s, unsigned u) {\n"
    "  int i, j, k;\n"
    "  double t = 0;\n"
    "#pragma fpm partition ";

const char PlainLoop[] = "\n  for (i = 0; i < n; i++) a[i] = b[i] + s;\n";

const char Epilogue[] = "\n}\n";

const char Kernel[] =
    "__kernel void k(__global int *a, __global const int *b, int s) {\n"
    "  a[get_global_id(0)] = b[get_global_id(0)] + s;\n"
    "}\n";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size == 0)
    return 0;
  const bool cxx = data[0] & 1, ownLoop = data[0] & 2, ownKernel = data[0] & 4;
  const std::string input(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::string code = Prologue;
  code += ownKernel ? "kernel(\"k.cl\", k, a, b, s) inout(a[i:1]) in(b[i:1])"
                    : input;
  if (!ownLoop || ownKernel)
    code += PlainLoop;
  code += Epilogue;
  const std::string file = cxx ? "/fuzz/x.cpp" : "/fuzz/x.c";

  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  memory->addFile(file, 0, llvm::MemoryBuffer::getMemBufferCopy(code));
  memory->addFile("/fuzz/k.cl", 0,
                  ownKernel ? llvm::MemoryBuffer::getMemBufferCopy(input)
                            : llvm::MemoryBuffer::getMemBuffer(Kernel));
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(
      clang::FileSystemOptions(), memory);
  fpm::RewriteActionFactory factory("/dev/null");
  std::vector<std::string> args = {"fpm-rewrite", "-fsyntax-only", "-nostdinc",
                                   file};
  clang::tooling::ToolInvocation invocation(args, factory.create(),
                                            files.get());
  clang::IgnoringDiagConsumer quiet;
  invocation.setDiagnosticConsumer(&quiet);
  invocation.run();
  return 0;
}
