//===- KernelCheck.h - OpenCL C kernels parsed at rewrite time --*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every kernel the rewritten file embeds, the user's (`kernel("file.cl",
// ...)`) and each one generated from a loop's body, is parsed here with
// Clang's OpenCL C front end, as a device's compiler will parse it at run
// time: an error then shows at rewrite time, at its line in the .cl file,
// rather than as a device dropping out of the loop when the program runs.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_KERNELCHECK_H
#define FPM_LIB_KERNELCHECK_H

#include "llvm/ADT/StringRef.h"

namespace fpm {

/// Parses Source as OpenCL C 1.2 for a SPIR target (every extension a
/// device may have, the builtins declared), named FileName in diagnostics
/// (an `#include` in it finds nothing); Options are
/// the kernel's build options (-D, -U and -cl-std= are passed on). Errors
/// go to standard error as Clang prints them; returns whether there were
/// none.
bool parseOpenClKernel(llvm::StringRef Source, llvm::StringRef FileName,
                       llvm::StringRef Options);

} // namespace fpm

#endif
