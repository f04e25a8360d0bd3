//===- KernelCheck.cpp - OpenCL C kernels parsed at rewrite time ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Offload/KernelCheck.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace clang;

namespace fpm {

/// The declarations of OpenCL C's types and macros that
/// -finclude-default-header reads with -fdeclare-opencl-builtins.
static const char BaseHeaderPath[] =
    FPM_CLANG_RESOURCE_DIR "/include/opencl-c-base.h";

bool parseOpenClKernel(llvm::StringRef Source, llvm::StringRef FileName,
                       llvm::StringRef Options) {
  // A file system of two files in memory: the kernel's text under
  // FileName, and the header of OpenCL C's types Clang reads. Nothing else:
  // a kernel's `#include` finds no file (nor would a device's compiler
  // beside the rewritten program), and none that never ends (a FIFO).
  static const std::unique_ptr<llvm::MemoryBuffer> BaseHeader = [] {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Header =
        llvm::MemoryBuffer::getFile(BaseHeaderPath);
    return Header ? std::move(*Header) : nullptr;
  }();
  if (!BaseHeader)
    return true; // No Clang headers to parse with: the device will tell.
  llvm::SmallString<256> Path(FileName);
  llvm::sys::fs::make_absolute(Path);
  auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  Memory->addFile(Path, 0, llvm::MemoryBuffer::getMemBufferCopy(Source));
  Memory->addFile(
      BaseHeaderPath, 0,
      llvm::MemoryBuffer::getMemBuffer(BaseHeader->getMemBufferRef()));
  auto Files =
      llvm::makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), Memory);

  // OpenCL C 1.2, which every device fpm runs on accepts; SPIR, whose
  // target has every extension a kernel may enable (cl_khr_fp64, ...); the
  // builtins declared by Clang's tables, not its 800 KB header. Warnings
  // are the device compiler's business.
  std::vector<std::string> Args = {"fpm-rewrite",
                                   "-fsyntax-only",
                                   "-x",
                                   "cl",
                                   "-cl-std=CL1.2",
                                   "-target",
                                   "spir64",
                                   "-Xclang",
                                   "-fdeclare-opencl-builtins",
                                   "-Xclang",
                                   "-finclude-default-header",
                                   "-w",
                                   "-resource-dir=" FPM_CLANG_RESOURCE_DIR};
  llvm::SmallVector<llvm::StringRef, 8> Words;
  Options.split(Words, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Word : Words)
    if (Word.starts_with("-D") || Word.starts_with("-U") ||
        Word.starts_with("-cl-std="))
      Args.push_back(Word.str());
  Args.push_back(Path.str().str());

  auto DiagOpts = llvm::makeIntrusiveRefCnt<DiagnosticOptions>();
  TextDiagnosticPrinter Printer(llvm::errs(), DiagOpts.get());
  tooling::ToolInvocation Invocation(Args, std::make_unique<SyntaxOnlyAction>(),
                                     Files.get());
  Invocation.setDiagnosticConsumer(&Printer);
  return Invocation.run() && Printer.getNumErrors() == 0;
}

} // namespace fpm
