//===- benchmark/starpu_pragma.hpp - Matmul rows from one pragma -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

/// C = A * B for n x n row-major floats: one `#pragma fpm partition` loop
/// over the rows (loop name starpu.matmul_pragma), auto on every PE.
void pragmaMatmulRows(const float *a, const float *b, float *c, int n);
