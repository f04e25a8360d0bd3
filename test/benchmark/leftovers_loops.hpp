//===- benchmark/leftovers_loops.hpp - A k-means step, pragma'd -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A k-means assignment step as a `#pragma fpm partition` loop with two
// reductions, rewritten by the build (leftovers_loops.cpp), and the same
// loop serially for the reference.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fpm::bench::leftovers {

/// Coordinates per point and centroid.
constexpr int Dims = 4;

/// Gives each of points [0, n) (n x Dims floats) the label of its nearest
/// centroid of k (the first of equals); returns the sum of the squared
/// distances, and in `moved` how many labels changed. Through fpm (its
/// schedule and devices from FPM_SCHEDULE and FPM_DEVICES), and serially.
double assign(const float *points, const float *centroids, int *label, int n,
              int k, long long &moved);
double assignSerial(const float *points, const float *centroids, int *label,
                    int n, int k, long long &moved);

} // namespace fpm::bench::leftovers
