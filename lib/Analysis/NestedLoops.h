//===- NestedLoops.h - Partitioned loops inside one another -----*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What a partitioned loop inside the body of another changes in both
// models. In C++ the lambdas nest and nothing moves. In C the inner loop is
// rewritten first and its call moves with the outer one's outlined body,
// which must then also declare the names the inner one's data clauses use
// (they become shared variables of the outer loop), and the inner call
// reaches what the outer body reaches through its address under the names
// the outer body gives it. The outer body's text starts at the inner
// loop's pragma when that loop is the body.
//
//===----------------------------------------------------------------------===//

#ifndef FPM_LIB_NESTEDLOOPS_H
#define FPM_LIB_NESTEDLOOPS_H

#include <vector>

namespace clang {
class SourceManager;
} // namespace clang

namespace fpm {

struct LoopModel;

/// Sets, for each loop of Loops (checked, in source order) inside another's
/// body, LoopModel::Nested and EnclosingAddressed, and for the outer one
/// BodyBegin (where the inner one's pragma is the body) and the variables
/// of the inner one's data clauses declared outside it, as shared.
void linkNestedLoops(std::vector<LoopModel> &Loops,
                     const clang::SourceManager &SM);

} // namespace fpm

#endif // FPM_LIB_NESTEDLOOPS_H
