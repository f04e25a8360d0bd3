//===- sections_test.cpp - fpm_describe_sections and its samples ----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What fpm-rewrite's generated code asks of the runtime for a loop's data
// clauses: the iterations it samples each section at, and the fpm_args the
// samples become when every section is affine in the iteration (all or
// nothing), with `data` at the array's element 0 unless a section reaches
// below it (its origin then says where element 0 is), and no overflow
// whatever the samples hold; and fpm_kernel_fits, the question the
// generated code asks before each call, which says once per loop why the
// answer is no. Sections of several runs (rows a pitch apart: a column, a
// plane of a component-first array) too, and the rectangles every copy of a
// range's section is made of.
//
//===----------------------------------------------------------------------===//

#include "data/sections.hpp"
#include "fpm/fpm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t Min = std::numeric_limits<std::int64_t>::min();

/// Section `lower(k) : length(k)` of `base` sampled as the rewriter does
/// for a loop of `trip` iterations.
fpm_section sampled(int kind, void *base, std::size_t size, std::int64_t trip,
                    const std::function<std::int64_t(std::int64_t)> &lower,
                    const std::function<std::int64_t(std::int64_t)> &length) {
  fpm_section section{};
  section.kind = kind;
  section.base = base;
  section.size = size;
  for (int s = 0; s < 3; ++s) {
    const std::int64_t k = fpm_sample_iteration(trip, s);
    section.lower[s] = lower(k);
    section.length[s] = length(k);
  }
  return section;
}

/// A section given by its three samples directly.
fpm_section samples(std::array<std::int64_t, 3> lower,
                    std::array<std::int64_t, 3> length, void *base,
                    std::size_t size = 4, int kind = FPM_ARG_IN) {
  fpm_section section{};
  section.kind = kind;
  section.base = base;
  section.size = size;
  for (int s = 0; s < 3; ++s) {
    section.lower[s] = lower[s];
    section.length[s] = length[s];
  }
  return section;
}

/// An fpm_loop whose data says it was left alone.
fpm_loop untouched() {
  static const fpm_arg marker{};
  fpm_loop loop{};
  loop.data = &marker;
  loop.data_count = -7;
  return loop;
}

std::int64_t constant(std::int64_t) { return 1; }

TEST(SampleIterationTest, FirstSecondAndLast) {
  EXPECT_EQ(fpm_sample_iteration(10, 0), 0);
  EXPECT_EQ(fpm_sample_iteration(10, 1), 1);
  EXPECT_EQ(fpm_sample_iteration(10, 2), 9);
  EXPECT_EQ(fpm_sample_iteration(2, 1), 1);
  EXPECT_EQ(fpm_sample_iteration(2, 2), 1);
  EXPECT_EQ(fpm_sample_iteration(Max, 2), Max - 1);
}

TEST(SampleIterationTest, OneIterationIsSampledThrice) {
  for (int s = 0; s < 3; ++s)
    EXPECT_EQ(fpm_sample_iteration(1, s), 0) << "sample " << s;
}

TEST(SampleIterationTest, NoIterationOrNoSampleIsZero) {
  EXPECT_EQ(fpm_sample_iteration(0, 2), 0);
  EXPECT_EQ(fpm_sample_iteration(-1, 2), 0);
  EXPECT_EQ(fpm_sample_iteration(10, 3), 0);
  EXPECT_EQ(fpm_sample_iteration(10, -1), 0);
}

TEST(DescribeSectionsTest, AffineRowsAndASharedInput) {
  // in(A[i*n:n], B[0:n*n]) out(C[i*n:n]) with n = 4, i = 0..3.
  float a[16], b[16], c[16];
  const std::int64_t n = 4, trip = 4;
  const std::array sections{sampled(
                                FPM_ARG_IN, a, sizeof a[0], trip,
                                [&](std::int64_t i) { return i * n; },
                                [&](std::int64_t) { return n; }),
                            sampled(
                                FPM_ARG_IN, b, sizeof b[0], trip,
                                [](std::int64_t) { return 0; },
                                [&](std::int64_t) { return n * n; }),
                            sampled(
                                FPM_ARG_OUT, c, sizeof c[0], trip,
                                [&](std::int64_t i) { return i * n; },
                                [&](std::int64_t) { return n; })};
  fpm_loop loop = untouched();
  std::array<fpm_arg, 3> args{};
  ASSERT_EQ(fpm_describe_sections(&loop, args.data(), sections.data(), 3, trip),
            1);
  EXPECT_EQ(loop.data, args.data());
  EXPECT_EQ(loop.data_count, 3);

  EXPECT_EQ(args[0].kind, FPM_ARG_IN);
  EXPECT_EQ(args[0].data, a);
  EXPECT_EQ(args[0].size, sizeof(float));
  EXPECT_EQ(args[0].offset, 0);
  EXPECT_EQ(args[0].stride, 4);
  EXPECT_EQ(args[0].count, 4);
  EXPECT_EQ(args[0].length, 16);

  EXPECT_EQ(args[1].data, b);
  EXPECT_EQ(args[1].stride, 0);
  EXPECT_EQ(args[1].count, 16);
  EXPECT_EQ(args[1].length, 16);

  EXPECT_EQ(args[2].kind, FPM_ARG_OUT);
  EXPECT_EQ(args[2].data, c);
}

TEST(DescribeSectionsTest, DataIsElementZeroWhenTheSectionStartsPastIt) {
  // out(f[2*i:2]) for i = 3..5: the buffer still starts at f[0], so that a
  // kernel indexes f as the host does.
  int f[12];
  const fpm_section section = sampled(
      FPM_ARG_OUT, f, sizeof f[0], 3,
      [](std::int64_t k) { return 2 * (k + 3); },
      [](std::int64_t) { return 2; });
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 3), 1);
  EXPECT_EQ(arg.data, f);
  EXPECT_EQ(arg.offset, 6);
  EXPECT_EQ(arg.stride, 2);
  EXPECT_EQ(arg.count, 2);
  EXPECT_EQ(arg.length, 12);
  EXPECT_EQ(arg.origin, 0);
}

TEST(DescribeSectionsTest, ArgsKeepTheClause) {
  int f[12];
  fpm_section section = sampled(
      FPM_ARG_OUT, f, sizeof f[0], 3, [](std::int64_t k) { return k; },
      constant);
  section.clause = "out(f[i:1])";
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 3), 1);
  EXPECT_STREQ(arg.clause, "out(f[i:1])");
}

TEST(DescribeSectionsTest, AnArraysExtentGoesWithItsSections) {
  // in(g[i-1:3]) on int g[6], i = 0..5: g[-1] and g[6] are not g's; a
  // device's copies read neither (the extent says where g ends).
  int g[6];
  fpm_section read = sampled(
      FPM_ARG_IN, g, sizeof g[0], 6, [](std::int64_t i) { return i - 1; },
      [](std::int64_t) { return 3; });
  read.extent = 6;
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &read, 1, 6), 1);
  EXPECT_EQ(arg.origin, 1);
  EXPECT_EQ(arg.length, 8);
  EXPECT_EQ(arg.extent, 6);
  // Written there, a device would copy back g[-1] and g[6]: no sections.
  fpm_section written = read;
  written.kind = FPM_ARG_INOUT;
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &written, 1, 6), 0);
  // Inside it, written is fine.
  const fpm_section inside = sampled(
      FPM_ARG_OUT, g, sizeof g[0], 6, [](std::int64_t i) { return i; },
      constant);
  fpm_section known = inside;
  known.extent = 6;
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &known, 1, 6), 1);
  EXPECT_EQ(arg.extent, 6);
}

TEST(DescribeSectionsTest, SaysOncePerLoopWhyItDropsTheSections) {
  // in(x[0:m]) with m = 0 in this run: the loop keeps to the CPU, and
  // says why on its first call only.
  double x[4];
  fpm_section section = samples({0, 0, 0}, {0, 0, 0}, x);
  section.clause = "in(x[0:m])";
  fpm_loop loop{};
  loop.name = "sections.said.once";
  fpm_arg arg{};
  testing::internal::CaptureStderr();
  for (int call = 0; call < 3; ++call)
    EXPECT_EQ(fpm_describe_sections(&loop, &arg, &section, 1, 4), 0);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(said, "fpm: loop 'sections.said.once': runs on the CPU only: "
                  "in(x[0:m]): a section of 0 elements, so the runtime takes "
                  "none of the loop's sections\n");
}

TEST(DescribeSectionsTest, NegativeStride) {
  // out(w[u:1]) for u = 9 down to 2: offset 9, stride -1, from w[0].
  int w[10];
  const fpm_section section = sampled(
      FPM_ARG_OUT, w, sizeof w[0], 8, [](std::int64_t k) { return 9 - k; },
      constant);
  fpm_loop loop{};
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(&loop, &arg, &section, 1, 8), 1);
  EXPECT_EQ(arg.data, w);
  EXPECT_EQ(arg.offset, 9);
  EXPECT_EQ(arg.stride, -1);
  EXPECT_EQ(arg.count, 1);
  EXPECT_EQ(arg.length, 10);
  EXPECT_EQ(loop.data_count, 1);
}

TEST(DescribeSectionsTest, BelowBaseStartsAtTheLowestElement) {
  // in(p[i-1:3]) with p = a + 1, i = 0..5: p[-1] is a[0].
  int a[8];
  int *p = a + 1;
  const fpm_section section = sampled(
      FPM_ARG_IN, p, sizeof p[0], 6, [](std::int64_t i) { return i - 1; },
      [](std::int64_t) { return 3; });
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 6), 1);
  EXPECT_EQ(arg.data, a);
  EXPECT_EQ(arg.offset, 0);
  EXPECT_EQ(arg.stride, 1);
  EXPECT_EQ(arg.count, 3);
  EXPECT_EQ(arg.length, 8);
  EXPECT_EQ(arg.origin, 1); // p[0], where a kernel indexes p from

  // Running down below base: the lowest element is the last iteration's.
  int b[12];
  const fpm_section down = sampled(
      FPM_ARG_INOUT, b + 4, sizeof b[0], 6,
      [](std::int64_t k) { return 1 - k; }, constant);
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &down, 1, 6), 1);
  EXPECT_EQ(arg.data, b);
  EXPECT_EQ(arg.offset, 5);
  EXPECT_EQ(arg.stride, -1);
  EXPECT_EQ(arg.length, 6);
  EXPECT_EQ(arg.origin, 4);
}

TEST(DescribeSectionsTest, OneIterationHasStrideZero) {
  int f[12];
  // Sample 1 is iteration 0 again; whatever it holds, the stride is 0.
  const fpm_section section = samples({10, 10, 10}, {2, 2, 2}, f);
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 1), 1);
  EXPECT_EQ(arg.data, f);
  EXPECT_EQ(arg.offset, 10);
  EXPECT_EQ(arg.stride, 0);
  EXPECT_EQ(arg.count, 2);
  EXPECT_EQ(arg.length, 12);
}

TEST(DescribeSectionsTest, TwoIterations) {
  int x[8];
  const fpm_section section = samples({3, 5, 5}, {1, 1, 1}, x);
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 2), 1);
  EXPECT_EQ(arg.offset, 3);
  EXPECT_EQ(arg.stride, 2);
  EXPECT_EQ(arg.length, 6);
}

TEST(DescribeSectionsTest, NotAffineDropsEverySection) {
  // in(x[i:1]) out(sq[i*i:1]), i = 0..3: the second is not affine, and the
  // loop gets no list at all.
  double x[4];
  int sq[16];
  const std::array sections{sampled(
                                FPM_ARG_IN, x, sizeof x[0], 4,
                                [](std::int64_t i) { return i; }, constant),
                            sampled(
                                FPM_ARG_OUT, sq, sizeof sq[0], 4,
                                [](std::int64_t i) { return i * i; },
                                constant)};
  fpm_loop loop = untouched();
  std::array<fpm_arg, 2> args{};
  EXPECT_EQ(fpm_describe_sections(&loop, args.data(), sections.data(), 2, 4),
            0);
  EXPECT_EQ(loop.data, nullptr);
  EXPECT_EQ(loop.data_count, 0);
}

TEST(DescribeSectionsTest, AVaryingOrEmptyLengthIsNotAffine) {
  double x[10];
  fpm_arg arg{};
  // in(x[0:i+1]): the length grows with i.
  const fpm_section grows = sampled(
      FPM_ARG_IN, x, sizeof x[0], 10, [](std::int64_t) { return 0; },
      [](std::int64_t i) { return i + 1; });
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &grows, 1, 10), 0);
  // The same at 0 and T-1, another at 1: not one length.
  const fpm_section middle = samples({0, 1, 9}, {1, 2, 1}, x);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &middle, 1, 10), 0);
  // Empty and negative lengths.
  const fpm_section empty = samples({0, 1, 9}, {0, 0, 0}, x);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &empty, 1, 10), 0);
  const fpm_section negative = samples({0, 1, 9}, {-1, -1, -1}, x);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &negative, 1, 10), 0);
}

TEST(DescribeSectionsTest, NoIterationGivesNoList) {
  int f[4];
  const fpm_section section = samples({0, 0, 0}, {1, 1, 1}, f);
  fpm_loop loop = untouched();
  fpm_arg arg{};
  EXPECT_EQ(fpm_describe_sections(&loop, &arg, &section, 1, 0), 0);
  EXPECT_EQ(loop.data, nullptr);
  EXPECT_EQ(loop.data_count, 0);
  loop = untouched();
  EXPECT_EQ(fpm_describe_sections(&loop, &arg, &section, 1, -1), 0);
  EXPECT_EQ(loop.data, nullptr);
}

TEST(DescribeSectionsTest, BadListsAndSectionsGiveNoList) {
  int f[4];
  fpm_arg arg{};
  const fpm_section good = samples({0, 1, 3}, {1, 1, 1}, f);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &good, 1, 4), 1);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &good, 0, 4), 0);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &good, -1, 4), 0);
  EXPECT_EQ(fpm_describe_sections(nullptr, nullptr, &good, 1, 4), 0);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, nullptr, 1, 4), 0);
  // Not an array: a scalar or local kind, no base, no element size.
  for (const int kind : std::array<int, 3>{FPM_ARG_SCALAR, FPM_ARG_LOCAL, 17}) {
    const fpm_section section = samples({0, 1, 3}, {1, 1, 1}, f, 4, kind);
    EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 4), 0)
        << "kind " << kind;
  }
  const fpm_section noBase = samples({0, 1, 3}, {1, 1, 1}, nullptr);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &noBase, 1, 4), 0);
  const fpm_section noSize = samples({0, 1, 3}, {1, 1, 1}, f, 0);
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &noSize, 1, 4), 0);
}

TEST(DescribeSectionsTest, HugeValuesNeverOverflow) {
  // The arithmetic is exact: wrapping 64-bit arithmetic would call these
  // affine, or compute nonsense lengths.
  char bytes[16];
  fpm_arg arg{};
  auto describe = [&](const fpm_section &section, std::int64_t trip) {
    return fpm_describe_sections(nullptr, &arg, &section, 1, trip);
  };
  // A stride that is not an int64_t: Max - Min.
  EXPECT_EQ(describe(samples({Min, Max, Max}, {1, 1, 1}, bytes, 1), 2), 0);
  // lower[0] + (T-1)*stride wraps around to lower[2] in 64 bits:
  // 0 + (2^62 + 1) * 4 = 2^64 + 4 == 4 (mod 2^64).
  const std::int64_t trip = (std::int64_t{1} << 62) + 2;
  EXPECT_EQ(describe(samples({0, 4, 4}, {1, 1, 1}, bytes, 1), trip), 0);
  // Affine, but the last section ends past INT64_MAX elements.
  EXPECT_EQ(describe(samples({0, 1, Max}, {2, 2, 2}, bytes, 1), Max), 0);
  // Exactly INT64_MAX elements of one byte: fits.
  EXPECT_EQ(describe(samples({0, 1, Max - 1}, {1, 1, 1}, bytes, 1), Max), 1);
  EXPECT_EQ(arg.length, Max);
  EXPECT_EQ(arg.stride, 1);
  // The same elements, 2 bytes each: more bytes than int64_t holds.
  EXPECT_EQ(describe(samples({0, 1, Max - 1}, {1, 1, 1}, bytes, 2), Max), 0);
  // A huge length, or huge lower bounds either side of the base.
  EXPECT_EQ(describe(samples({0, 0, 0}, {Max, Max, Max}, bytes, 1), 1), 1);
  EXPECT_EQ(arg.length, Max);
  EXPECT_EQ(describe(samples({1, 1, 1}, {Max, Max, Max}, bytes, 1), 1), 0);
  // Elements so far below the base that their address would wrap around.
  EXPECT_EQ(describe(samples({Min, Min, Min}, {1, 1, 1}, bytes, 1), 1), 0);
  EXPECT_EQ(describe(samples({Min, Min + 1, Max}, {1, 1, 1}, bytes, 1), 2), 0);
  // An element size that alone is too large.
  EXPECT_EQ(describe(samples({0, 0, 0}, {1, 1, 1}, bytes,
                             static_cast<std::size_t>(Max) + 1),
                     1),
            0);
}

TEST(DescribeSectionsTest, EveryIterationsSectionLiesInTheBuffer) {
  // For a few affine shapes, every iteration's [offset + k*stride, +count)
  // lies in [0, length), and addresses the elements the section names.
  struct Shape {
    std::int64_t first, step, count, trip;
  };
  std::vector<int> array(200);
  int *base = array.data() + 100;
  for (const Shape shape :
       {Shape{0, 1, 1, 10}, Shape{5, 3, 2, 7}, Shape{-4, 2, 3, 5},
        Shape{20, -3, 1, 9}, Shape{-1, -1, 4, 6}, Shape{7, 0, 5, 4}}) {
    const fpm_section section = sampled(
        FPM_ARG_IN, base, sizeof(int), shape.trip,
        [&](std::int64_t k) { return shape.first + k * shape.step; },
        [&](std::int64_t) { return shape.count; });
    fpm_arg arg{};
    ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, shape.trip), 1);
    EXPECT_EQ(arg.stride, shape.step);
    EXPECT_EQ(arg.count, shape.count);
    const int *data = static_cast<const int *>(arg.data);
    std::int64_t low = arg.length, high = 0;
    for (std::int64_t k = 0; k < shape.trip; ++k) {
      const std::int64_t at = arg.offset + k * arg.stride;
      EXPECT_EQ(data + at, base + shape.first + k * shape.step);
      low = std::min(low, at);
      high = std::max(high, at + arg.count);
    }
    EXPECT_GE(low, 0);
    EXPECT_EQ(high, arg.length);
    // The buffer starts at base, or at the lowest element below it.
    const std::int64_t lowest =
        std::min(shape.first, shape.first + (shape.trip - 1) * shape.step);
    EXPECT_EQ(data, lowest >= 0 ? base : base + lowest);
  }
}

/// A kernel of one array argument, `arg`, and whatever follows it.
struct OneArrayKernel {
  std::vector<fpm_arg> args;
  fpm_kernel kernel{};
  explicit OneArrayKernel(const fpm_arg &arg, std::vector<fpm_arg> more = {})
      : args{arg} {
    // kernel.args points into args: not copied, not moved.
    args.insert(args.end(), more.begin(), more.end());
    kernel.source = "__kernel void k(__global int *a) {}";
    kernel.name = "k";
    kernel.args = args.data();
    kernel.arg_count = static_cast<int>(args.size());
  }
  OneArrayKernel(const OneArrayKernel &) = delete;
  OneArrayKernel &operator=(const OneArrayKernel &) = delete;
};

fpm_arg array(int kind, void *data, std::int64_t length, std::int64_t offset,
              std::int64_t stride, std::int64_t count,
              std::int64_t origin = 0) {
  fpm_arg arg{};
  arg.kind = kind;
  arg.data = data;
  arg.size = sizeof(int);
  arg.length = length;
  arg.offset = offset;
  arg.stride = stride;
  arg.count = count;
  arg.origin = origin;
  return arg;
}

TEST(KernelFitsTest, OneIterationMayWriteASectionThatDoesNotMove) {
  // out(f[2*i:2]) for i = 5..5: stride 0, and no neighbour to overlap.
  int f[12];
  const OneArrayKernel once(array(FPM_ARG_OUT, f, 12, 10, 0, 2));
  EXPECT_EQ(fpm_kernel_fits(nullptr, &once.kernel, 1), 1) << fpm_last_error();
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &once.kernel, 2), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error()).find("must move with the iteration"),
            std::string::npos)
      << fpm_last_error();
  // Overlapping written sections too.
  const OneArrayKernel overlap(array(FPM_ARG_INOUT, f, 12, 0, 1, 2));
  EXPECT_EQ(fpm_kernel_fits(nullptr, &overlap.kernel, 1), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &overlap.kernel, 3), 0);
  testing::internal::GetCapturedStderr();
}

TEST(KernelFitsTest, AnArrayBelowElementZeroNeedsItsOrigin) {
  // in(p[i-1:3]), p = a + 1: the buffer starts at a[0], p[0] is element 1.
  int a[8];
  const fpm_arg below = array(FPM_ARG_IN, a, 8, 0, 1, 3, 1);
  const OneArrayKernel located(below, {fpm_origin_arg(0)});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &located.kernel, 6), 1)
      << fpm_last_error();
  EXPECT_EQ(located.args[1].kind, FPM_ARG_ORIGIN);
  EXPECT_EQ(located.args[1].offset, 0);

  // Without one, a kernel would index p from a[0].
  fpm_arg named = below;
  named.clause = "in(p[i - 1:3])";
  const OneArrayKernel lost(named);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &lost.kernel, 6), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::string(fpm_last_error())
                .rfind("in(p[i - 1:3]): the section reaches 1 element below "
                       "the array's element 0",
                       0),
            0u)
      << fpm_last_error();

  // An origin names an array argument.
  const int n = 3;
  const OneArrayKernel scalar(
      below,
      {fpm_origin_arg(0), fpm_scalar_arg(&n, sizeof n), fpm_origin_arg(2)});
  const OneArrayKernel past(below, {fpm_origin_arg(5)});
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &scalar.kernel, 6), 0);
  EXPECT_EQ(fpm_kernel_fits(nullptr, &past.kernel, 6), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error()).find("which is no array"),
            std::string::npos)
      << fpm_last_error();
  // A negative origin is no element of the buffer.
  const OneArrayKernel negative(array(FPM_ARG_IN, a, 8, 0, 1, 3, -1),
                                {fpm_origin_arg(0)});
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &negative.kernel, 6), 0);
  testing::internal::GetCapturedStderr();
}

TEST(KernelFitsTest, TheEndIsALongTheRuntimeSets) {
  // fpm_end_arg(): no value of the caller's; the spec says the kernel may
  // run past a range's end, in whole work-groups.
  int a[8];
  const OneArrayKernel bounded(array(FPM_ARG_INOUT, a, 8, 0, 1, 1),
                               {fpm_end_arg()});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &bounded.kernel, 8), 1)
      << fpm_last_error();
  EXPECT_EQ(bounded.args[1].kind, FPM_ARG_END);
  const fpm::KernelSpec spec = fpm::makeKernelSpec(bounded.kernel, 8);
  EXPECT_TRUE(spec.bounded());
  EXPECT_EQ(spec.args[1].kind, fpm::KernelArg::Kind::End);
  EXPECT_EQ(spec.args[1].size, sizeof(std::uint64_t));
  const OneArrayKernel unbounded(array(FPM_ARG_INOUT, a, 8, 0, 1, 1));
  EXPECT_FALSE(fpm::makeKernelSpec(unbounded.kernel, 8).bounded());
}

TEST(KernelFitsTest, AWrittenSectionStaysInItsArraysExtent) {
  // The buffer of in(g[i-1:3]) on an array g of 6, i = 0..5: g[-1] ..
  // g[6]; then written by 3 a row: g[-1] .. g[16].
  int g[18];
  fpm_arg read = array(FPM_ARG_IN, g, 8, 0, 1, 3, 1);
  read.extent = 6;
  const OneArrayKernel reads(read, {fpm_origin_arg(0)});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &reads.kernel, 6), 1) << fpm_last_error();
  fpm_arg written = read;
  written.kind = FPM_ARG_INOUT;
  written.stride = 3;
  written.length = 18;
  const OneArrayKernel writes(written, {fpm_origin_arg(0)});
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &writes.kernel, 6), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error())
                .find("the written sections reach outside the array's 6 "
                      "elements (elements -1 to 16)"),
            std::string::npos)
      << fpm_last_error();
}

TEST(KernelFitsTest, SaysOncePerLoopWhyItRunsOnTheCpu) {
  int f[12];
  fpm_arg overlap = array(FPM_ARG_OUT, f, 12, 0, 1, 2);
  overlap.clause = "out(f[i * k:m])";
  const OneArrayKernel kernel(overlap);
  fpm_loop loop{};
  loop.name = "kernel.fits.said.once";
  loop.file = "x.c";
  loop.line = 7;
  testing::internal::CaptureStderr();
  for (int call = 0; call < 3; ++call)
    EXPECT_EQ(fpm_kernel_fits(&loop, &kernel.kernel, 10), 0);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(said,
            "fpm: loop 'kernel.fits.said.once' (x.c:7): runs on the CPU only: "
            "out(f[i * k:m]): written sections of neighbouring iterations "
            "overlap (they start 1 element apart and have 2), and a device "
            "copies a written section back whole\n");
}

TEST(DescribeSectionsTest, RowsGoWithTheSection) {
  // in(a[0:4][j:1]) of a 4 x 6 matrix, j = 1..5: a column a pitch of 6
  // apart; the buffer reaches the last row's element.
  int a[24];
  fpm_section column = sampled(
      FPM_ARG_INOUT, a, sizeof a[0], 5, [](std::int64_t j) { return j + 1; },
      constant);
  column.rows = 4;
  column.pitch = 6;
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &column, 1, 5), 1);
  EXPECT_EQ(arg.data, a);
  EXPECT_EQ(arg.offset, 1);
  EXPECT_EQ(arg.stride, 1);
  EXPECT_EQ(arg.count, 1);
  EXPECT_EQ(arg.rows, 4);
  EXPECT_EQ(arg.pitch, 6);
  EXPECT_EQ(arg.length, 24);
  // Rows that overlap describe nothing.
  column.pitch = 0;
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &column, 1, 5), 0);
  // A written column past a known extent neither.
  column.pitch = 6;
  column.extent = 23;
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &column, 1, 5), 0);
}

TEST(KernelFitsTest, WrittenRowsOfDifferentIterationsMustNotMeet) {
  int f[64];
  // A column per iteration of an 8 x 8 matrix: 8 iterations fit in a row.
  fpm_arg column = array(FPM_ARG_INOUT, f, 64, 0, 1, 1);
  column.rows = 8;
  column.pitch = 8;
  const OneArrayKernel columns(column);
  EXPECT_EQ(fpm_kernel_fits(nullptr, &columns.kernel, 8), 1)
      << fpm_last_error();
  // Two columns per iteration, one apart: neighbours share one.
  fpm_arg pairs = column;
  pairs.count = 2;
  pairs.length = 64;
  const OneArrayKernel wide(pairs);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &wide.kernel, 7), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error()).find("overlap"), std::string::npos)
      << fpm_last_error();
  // Blocks of 2 x 2 a row of blocks apart (A[2*b:2][4:2] of an 8 x 8
  // matrix): each iteration's rows lie past the one before's.
  fpm_arg blocks = array(FPM_ARG_OUT, f, 64, 4, 16, 2);
  blocks.rows = 2;
  blocks.pitch = 8;
  const OneArrayKernel tiled(blocks);
  EXPECT_EQ(fpm_kernel_fits(nullptr, &tiled.kernel, 4), 1) << fpm_last_error();
  // Rows past the array.
  blocks.rows = 3;
  const OneArrayKernel past(blocks);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &past.kernel, 4), 0);
  testing::internal::GetCapturedStderr();
}

TEST(KernelFitsTest, SectionsOfOneArrayMustShareTheirBuffersStart) {
  // in(a[0:16]) inout(a[i:1]): one buffer from a[0].
  int a[18];
  const OneArrayKernel same(array(FPM_ARG_IN, a, 16, 0, 0, 16),
                            {array(FPM_ARG_INOUT, a, 16, 0, 1, 1)});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &same.kernel, 16), 1) << fpm_last_error();
  // in(p[i-1:3]) out(p[i:1]) with p = a + 1: the first buffer starts at
  // a[0], the second at a[1].
  const OneArrayKernel apart(
      array(FPM_ARG_IN, a, 18, 0, 1, 3, 1),
      {fpm_origin_arg(0), array(FPM_ARG_OUT, a + 1, 16, 0, 1, 1)});
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &apart.kernel, 16), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error()).find("one buffer"), std::string::npos)
      << fpm_last_error();
}

TEST(DescribeSectionsTest, RowPointersCountRows) {
  // inout(rows[i:1][0:5]) for i = 2..9 over 10 row pointers: rows, the
  // pointer array as data, and the row length carried.
  double block[50];
  double *rows[10];
  for (int r = 0; r < 10; ++r)
    rows[r] = block + 5 * r;
  fpm_section section = sampled(
      FPM_ARG_INOUT, rows, sizeof(double), 8,
      [](std::int64_t k) { return k + 2; }, constant);
  section.row_length = 5;
  section.extent = 10;
  fpm_arg arg{};
  ASSERT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 8), 1)
      << fpm_last_error();
  EXPECT_EQ(arg.data, static_cast<void *>(rows));
  EXPECT_EQ(arg.size, sizeof(double));
  EXPECT_EQ(arg.row_length, 5);
  EXPECT_EQ(arg.offset, 2);
  EXPECT_EQ(arg.stride, 1);
  EXPECT_EQ(arg.count, 1);
  EXPECT_EQ(arg.length, 10);
  EXPECT_EQ(arg.origin, 0);
  EXPECT_EQ(fpm::elementBytes(arg), 5 * sizeof(double));
  // Below row 0: the device would follow a pointer the array does not have.
  fpm_section below = sampled(
      FPM_ARG_IN, rows, sizeof(double), 8, [](std::int64_t k) { return k - 1; },
      [](std::int64_t) { return 3; });
  below.row_length = 5;
  testing::internal::CaptureStderr();
  fpm_loop loop{};
  loop.name = "sections.rowptr.below";
  EXPECT_EQ(fpm_describe_sections(&loop, &arg, &below, 1, 8), 0);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("below row 0"),
            std::string::npos);
  // A row length below 0 describes nothing.
  section.row_length = -1;
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_describe_sections(nullptr, &arg, &section, 1, 8), 0);
  testing::internal::GetCapturedStderr();
}

TEST(KernelFitsTest, RowPointersArePackedOneWayPerArray) {
  double block[64];
  double *rows[8];
  for (int r = 0; r < 8; ++r)
    rows[r] = block + 8 * r;
  auto section = [&](int kind, std::int64_t stride, std::int64_t length) {
    fpm_arg arg = array(kind, rows, 8, 0, stride, 1);
    arg.size = sizeof(double);
    arg.row_length = length;
    return arg;
  };
  // in(rows[0:8][0:8]) inout(rows[i:1][0:8]): one buffer of 8 x 8.
  fpm_arg whole = section(FPM_ARG_IN, 0, 8);
  whole.count = 8;
  const OneArrayKernel same(whole, {section(FPM_ARG_INOUT, 1, 8)});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &same.kernel, 8), 1) << fpm_last_error();
  // Rows of 8 in one section and of 4 in another: two layouts of one buffer.
  const OneArrayKernel mixed(whole, {section(FPM_ARG_INOUT, 1, 4)});
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &mixed.kernel, 8), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error()).find("rows of another length"),
            std::string::npos)
      << fpm_last_error();
  // Written rows that share memory (views into one block, 4 apart, taken
  // as rows of 8): a device would copy each back whole over the next.
  double *views[8];
  for (int r = 0; r < 8; ++r)
    views[r] = block + 4 * r;
  fpm_arg overlapping = section(FPM_ARG_INOUT, 1, 8);
  overlapping.data = views;
  const OneArrayKernel shared(overlapping);
  testing::internal::CaptureStderr();
  EXPECT_EQ(fpm_kernel_fits(nullptr, &shared.kernel, 8), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string(fpm_last_error()).find("share memory"),
            std::string::npos)
      << fpm_last_error();
  // Read, they may: nothing is copied back.
  overlapping.kind = FPM_ARG_IN;
  const OneArrayKernel read(overlapping);
  EXPECT_EQ(fpm_kernel_fits(nullptr, &read.kernel, 8), 1) << fpm_last_error();
  // Runs of rows, an origin or a negative length are no rows to follow.
  for (auto change : {+[](fpm_arg &arg) { arg.rows = 2, arg.pitch = 4; },
                      +[](fpm_arg &arg) { arg.origin = 1; },
                      +[](fpm_arg &arg) { arg.row_length = -3; }}) {
    fpm_arg arg = section(FPM_ARG_IN, 1, 8);
    arg.length = 4;
    change(arg);
    const OneArrayKernel bad(arg);
    testing::internal::CaptureStderr();
    EXPECT_EQ(fpm_kernel_fits(nullptr, &bad.kernel, 2), 0);
    testing::internal::GetCapturedStderr();
  }
}

TEST(HostRunsTest, RowPointersAreFollowedRowByRow) {
  // Rectangle: 2 rows of 2 elements, 4 apart, from element 1.
  const fpm::SectionRect rect{1, 2, 2, 4};
  double block[8][3];
  double *rows[8];
  for (int r = 0; r < 8; ++r)
    rows[r] = block[7 - r]; // not in address order
  std::vector<std::pair<void *, std::size_t>> runs;
  auto record = [&](std::byte *at, std::size_t bytes) {
    runs.emplace_back(at, bytes);
  };
  fpm::forEachHostRun(rows, 3 * sizeof(double), true, rect, record);
  EXPECT_EQ(runs,
            (std::vector<std::pair<void *, std::size_t>>{
                {rows[1], 24}, {rows[2], 24}, {rows[5], 24}, {rows[6], 24}}));
  // A flat array: one run per row of the rectangle.
  runs.clear();
  fpm::forEachHostRun(block, sizeof(double), false, rect, record);
  EXPECT_EQ(runs, (std::vector<std::pair<void *, std::size_t>>{
                      {&block[0][1], 16}, {&block[1][2], 16}}));
  // A null row is an error, never a copy.
  rows[5] = nullptr;
  runs.clear();
  EXPECT_THROW(fpm::forEachHostRun(rows, 24, true, rect, record),
               std::invalid_argument);
}

/// The elements of `section`'s iterations [begin, end), one by one.
std::multiset<std::int64_t> touched(const fpm::ArgSection &section,
                                    std::int64_t begin, std::int64_t end) {
  std::multiset<std::int64_t> elements;
  for (std::int64_t k = section.stride == 0 ? 0 : begin;
       k < (section.stride == 0 ? 1 : end); ++k)
    for (std::int64_t r = 0; r < section.rows; ++r)
      for (std::int64_t e = 0; e < section.count; ++e)
        elements.insert(section.offset + k * section.stride +
                        r * section.pitch + e);
  return elements;
}

TEST(SectionRectsTest, HoldExactlyTheElementsOfTheRange) {
  std::mt19937_64 random(7);
  auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(random);
  };
  for (int trial = 0; trial < 4000; ++trial) {
    const std::int64_t count = pick(1, 5), rows = pick(1, 4);
    const std::int64_t pitch = rows > 1 ? pick(count, 30) : 0;
    const std::int64_t stride = pick(-12, 12);
    const std::int64_t begin = pick(0, 6), end = begin + pick(1, 7);
    const fpm::ArgSection section(200, stride, count, 1000, rows, pitch);
    SCOPED_TRACE(testing::Message() << "stride " << stride << " count " << count
                                    << " rows " << rows << " pitch " << pitch
                                    << " range " << begin << ".." << end);
    const std::vector<fpm::SectionRect> rects =
        fpm::sectionRects(section, begin, end);
    std::set<std::int64_t> covered;
    std::int64_t copied = 0;
    for (std::size_t i = 0; i < rects.size(); ++i) {
      const fpm::SectionRect &rect = rects[i];
      ASSERT_GE(rect.width, 1);
      ASSERT_GE(rect.rows, 1);
      // What clEnqueue*BufferRect takes: a row no longer than its pitch.
      if (rect.rows > 1)
        ASSERT_LE(rect.width, rect.pitch);
      if (i > 0)
        ASSERT_LT(rects[i - 1].first, rect.first);
      for (std::int64_t r = 0; r < rect.rows; ++r)
        for (std::int64_t e = 0; e < rect.width; ++e)
          covered.insert(rect.first + r * rect.pitch + e);
      copied += rect.width * rect.rows;
    }
    const std::multiset<std::int64_t> elements = touched(section, begin, end);
    ASSERT_EQ(covered,
              std::set<std::int64_t>(elements.begin(), elements.end()));
    // Where no two iterations share an element (what a written section
    // must satisfy), nothing is copied twice.
    if (std::set<std::int64_t>(elements.begin(), elements.end()).size() ==
        elements.size())
      EXPECT_EQ(copied, std::ssize(elements));
  }
}

TEST(SectionRectsTest, ClippedToTheArray) {
  // Rows 10 apart of 4 elements from element -2, cut to [0, 25).
  const std::vector<fpm::SectionRect> rects{{-2, 4, 3, 10}};
  EXPECT_EQ(fpm::clipRects(rects, 0, 25),
            (std::vector<fpm::SectionRect>{
                {0, 2, 1, 0}, {8, 4, 1, 0}, {18, 4, 1, 0}}));
  EXPECT_EQ(fpm::clipRects(rects, -2, 30), rects);
  EXPECT_TRUE(fpm::clipRects(rects, 40, 50).empty());
}

} // namespace

TEST(KernelFitsTest, AMaskedSectionMayStayTheSameForEveryIteration) {
  // out(y[0:16]) written at scattered elements: with its write mask, the
  // section needs not move.
  int y[16], z[16];
  const OneArrayKernel masked(array(FPM_ARG_OUT, y, 16, 0, 0, 0),
                              {fpm_mask_arg(0, sizeof(int))});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &masked.kernel, 100), 1)
      << fpm_last_error();
  const fpm::KernelSpec spec = fpm::makeKernelSpec(masked.kernel, 100);
  ASSERT_TRUE(spec.args[0].mask.has_value());
  EXPECT_EQ(*spec.args[0].mask, 1u);
  EXPECT_FALSE(spec.args[1].mask.has_value());
  // Refused: a mask of an input, of a section that moves, of no array, a
  // unit that does not divide the element, two masks, and a second written
  // section of the masked array (its copy back would overwrite others').
  struct Case {
    const char *what;
    std::vector<fpm_arg> args;
    const char *problem;
  };
  const Case cases[] = {
      {"input",
       {array(FPM_ARG_IN, y, 16, 0, 0, 0), fpm_mask_arg(0, sizeof(int))},
       "a write mask goes with a written section"},
      {"moving",
       {array(FPM_ARG_INOUT, y, 16, 0, 1, 1), fpm_mask_arg(0, sizeof(int))},
       "a write mask goes with a written section"},
      {"no array",
       {array(FPM_ARG_INOUT, y, 16, 0, 1, 1), fpm_scalar_arg(y, sizeof(int)),
        fpm_mask_arg(1, sizeof(int))},
       "which is no array"},
      {"unit",
       {array(FPM_ARG_INOUT, y, 16, 0, 0, 0), fpm_mask_arg(0, 3)},
       "does not divide"},
      {"two masks",
       {array(FPM_ARG_INOUT, y, 16, 0, 0, 0), fpm_mask_arg(0, sizeof(int)),
        fpm_mask_arg(0, sizeof(int))},
       "a second write mask"},
      {"shared buffer",
       {array(FPM_ARG_INOUT, y, 16, 0, 0, 0), fpm_mask_arg(0, sizeof(int)),
        array(FPM_ARG_OUT, y, 16, 0, 1, 1)},
       "another written section"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    const OneArrayKernel kernel(
        c.args[0], std::vector<fpm_arg>(c.args.begin() + 1, c.args.end()));
    testing::internal::CaptureStderr();
    EXPECT_EQ(fpm_kernel_fits(nullptr, &kernel.kernel, 16), 0);
    testing::internal::GetCapturedStderr();
    EXPECT_NE(std::string(fpm_last_error()).find(c.problem), std::string::npos)
        << fpm_last_error();
  }
  // An input of the masked array may share its buffer.
  const OneArrayKernel read(
      array(FPM_ARG_INOUT, z, 16, 0, 0, 0),
      {fpm_mask_arg(0, sizeof(int)), array(FPM_ARG_IN, z, 16, 0, 1, 1)});
  EXPECT_EQ(fpm_kernel_fits(nullptr, &read.kernel, 16), 1) << fpm_last_error();
}

TEST(MergeMaskedTest, CopiesExactlyTheMarkedElements) {
  // Rows of 3 elements of 8 bytes, 5 apart, a mask byte per 4 bytes: only
  // the marked halves reach the host, from their places in the packed
  // staging area.
  const std::size_t size = 8, unit = 4;
  const fpm::SectionRect rect{1, 3, 2, 5};
  std::vector<std::byte> host(12 * size, std::byte{0xee});
  std::vector<std::byte> staging(6 * size);
  for (std::size_t b = 0; b < staging.size(); ++b)
    staging[b] = static_cast<std::byte>(b);
  std::vector<std::uint8_t> mask(host.size() / unit, 0);
  mask[2] = mask[3] = 1; // element 1, whole: staging bytes 0..7
  mask[5] = 1;           // element 2, second half: staging 12..15
  mask[13] = 1;          // element 6, second half: staging 28..31
  mask[8] = 1;           // element 4, between the rows: not the section's
  fpm::mergeMasked(std::span(&rect, 1), size, unit, mask, staging.data(),
                   host.data());
  for (std::size_t b = 0; b < host.size(); ++b) {
    std::optional<std::size_t> from;
    if (b >= 8 && b < 16)
      from = b - 8;
    else if (b >= 20 && b < 24)
      from = b - 8;
    else if (b >= 52 && b < 56)
      from = 28 + (b - 52);
    const std::byte want =
        from ? static_cast<std::byte>(*from) : std::byte{0xee};
    ASSERT_EQ(host[b], want) << "byte " << b;
  }
  // Nothing marked: nothing copied.
  std::vector<std::byte> untouched(12 * size, std::byte{0x5a});
  const std::vector<std::uint8_t> none(host.size() / unit, 0);
  fpm::mergeMasked(std::span(&rect, 1), size, unit, none, staging.data(),
                   untouched.data());
  for (std::byte b : untouched)
    ASSERT_EQ(b, std::byte{0x5a});
}
