//===- benchmark/leftovers_loops.cpp - A k-means step, pragma'd -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// fpm_rewrite_sources (CMakeLists.txt) turns the pragma'd loop into a call
// of the runtime with a C++ body and an OpenCL C kernel generated from it,
// with the reductions' per-work-group partial results. The serial copy is
// the same body without the pragma.
//
//===----------------------------------------------------------------------===//

#include "leftovers_loops.hpp"

namespace fpm::bench::leftovers {
namespace {

/// The squared distance from point i to centroid c.
float distance(const float *points, const float *centroids, int i, int c) {
  float d = 0.0f;
  for (int j = 0; j < Dims; ++j) {
    const float t = points[i * Dims + j] - centroids[c * Dims + j];
    d += t * t;
  }
  return d;
}

} // namespace

double assign(const float *points, const float *centroids, int *label, int n,
              int k, long long &moved) {
  double inertia = 0;
  long long changed = 0;
#pragma fpm partition name(leftovers.kmeans) in(points[i * Dims : Dims])       \
    in(centroids[0 : k * Dims]) inout(label[i : 1])                            \
        reduction(+ : inertia, changed)
  for (int i = 0; i < n; ++i) {
    int best = 0;
    float nearest = distance(points, centroids, i, 0);
    for (int c = 1; c < k; ++c) {
      const float d = distance(points, centroids, i, c);
      if (d < nearest) {
        nearest = d;
        best = c;
      }
    }
    if (label[i] != best) {
      label[i] = best;
      changed += 1;
    }
    inertia += nearest;
  }
  moved = changed;
  return inertia;
}

double assignSerial(const float *points, const float *centroids, int *label,
                    int n, int k, long long &moved) {
  double inertia = 0;
  long long changed = 0;
  for (int i = 0; i < n; ++i) {
    int best = 0;
    float nearest = distance(points, centroids, i, 0);
    for (int c = 1; c < k; ++c) {
      const float d = distance(points, centroids, i, c);
      if (d < nearest) {
        nearest = d;
        best = c;
      }
    }
    if (label[i] != best) {
      label[i] = best;
      changed += 1;
    }
    inertia += nearest;
  }
  moved = changed;
  return inertia;
}

} // namespace fpm::bench::leftovers
