//===- data/sections.hpp - The arrays a loop reads and writes --*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this folder offers: the one home of a loop's data, as the C API
// passes it (fpm_arg): iteration k reads or writes elements
// [offset + k * stride, offset + k * stride + count) of an array, for any
// stride sign, or `rows` such runs `pitch` apart (a section over later
// dimensions: a column, a plane). Here they are checked (one rule for
// fpm_loop::data and for a kernel's arguments, which add only what a device's
// copies need), their extents computed, and the rewriter's sampled sections
// (fpm_describe_sections) turned into them. The executor and the drivers
// read them; nothing here touches a PE.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fpm/fpm.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fpm {

/// Logical iterations [begin, end).
struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
  friend bool operator==(const Range &, const Range &) = default;
};

/// An fpm_arg's section of one iteration, normalised: stride 0 with count
/// 0 is the whole array; fewer than two rows are one row.
struct ArgSection {
  std::int64_t offset, stride, count;
  std::int64_t rows = 1, pitch = 0;
  ArgSection(std::int64_t offset, std::int64_t stride, std::int64_t count,
             std::int64_t length, std::int64_t rows = 1, std::int64_t pitch = 0)
      : offset(offset), stride(stride), count(count) {
    if (stride == 0 && count == 0) {
      this->offset = 0;
      this->count = length;
    } else if (rows > 1) {
      this->rows = rows;
      this->pitch = pitch;
    }
  }
  explicit ArgSection(const fpm_arg &arg)
      : ArgSection(arg.offset, arg.stride, arg.count, arg.length, arg.rows,
                   arg.pitch) {}
  /// Neighbouring iterations' runs touch or overlap: a range's are runs of
  /// their own (one per row).
  bool contiguous() const { return std::abs(stride) <= count; }
  /// The elements from an iteration's first run's start to its last one's
  /// end.
  std::int64_t reach() const { return (rows - 1) * pitch + count; }
};

/// A rectangle of elements: `rows` runs of `width` elements, each `pitch`
/// past the one before, the first at element `first`.
struct SectionRect {
  std::int64_t first = 0, width = 0, rows = 1, pitch = 0;
  std::int64_t last() const { return first + (rows - 1) * pitch + width; }
  std::int64_t elements() const { return width * rows; }
  friend bool operator==(const SectionRect &, const SectionRect &) = default;
};

/// The rectangles that hold `section`'s elements of iterations
/// [begin, end) (begin < end): as few as the shape allows, each in
/// increasing address order, the rectangles too; disjoint where the
/// section's iterations are (a written one, makeKernelSpec). What a
/// device, a rank or fpm-profile copies of a range.
std::vector<SectionRect> sectionRects(const ArgSection &section,
                                      std::int64_t begin, std::int64_t end);

/// The caller's bytes of `rect`, in the order a packed copy of it lays them
/// out: `use(address, bytes)` for each run of them that is contiguous in the
/// caller's memory. Element e of an array of `size`-byte elements at `data`
/// is at data + e * size; with `rowPointers`, element e is the row that
/// `data`'s pointer e points to (`size` bytes: a whole row), so each element
/// is a run of its own. Throws std::invalid_argument for a null row pointer.
template <class Use>
void forEachHostRun(void *data, std::size_t size, bool rowPointers,
                    const SectionRect &rect, Use &&use) {
  auto *const base = static_cast<std::byte *>(data);
  auto *const *const rowsAt = static_cast<std::byte *const *>(data);
  const auto bytes = static_cast<std::int64_t>(size);
  for (std::int64_t r = 0; r < rect.rows; ++r) {
    const std::int64_t first = rect.first + r * rect.pitch;
    if (!rowPointers) {
      use(base + first * bytes, static_cast<std::size_t>(rect.width) * size);
      continue;
    }
    for (std::int64_t e = first; e < first + rect.width; ++e) {
      if (!rowsAt[e])
        throw std::invalid_argument("row " + std::to_string(e) +
                                    " of an array of row pointers is a null "
                                    "pointer");
      use(rowsAt[e], size);
    }
  }
}

/// The bytes of one element of `arg`'s array as sectionRects counts them:
/// a whole row for an array of row pointers (fpm_arg::row_length).
inline std::size_t elementBytes(const fpm_arg &arg) {
  return arg.row_length > 0
             ? arg.size * static_cast<std::size_t>(arg.row_length)
             : arg.size;
}

/// `rects` cut to elements [from, to): a rectangle that crosses a bound
/// becomes its rows, each cut (the empty ones dropped). What a copy of an
/// over-declared input reads.
std::vector<SectionRect> clipRects(std::span<const SectionRect> rects,
                                   std::int64_t from, std::int64_t to);

/// One kernel argument (fpm_arg), checked.
struct KernelArg {
  enum class Kind {
    Scalar,
    In,
    Out,
    InOut,
    Local,
    Reduction,
    Origin,
    End,
    Mask
  };
  Kind kind = Kind::Scalar;
  void *data = nullptr;
  /// Scalar or local bytes; bytes per array element or reduction value.
  std::size_t size = 0;
  std::int64_t length = 0;
  /// A reduction's `offset` is its index in the call's reductions, an
  /// origin's and a mask's the index of its array argument.
  std::int64_t offset = 0, stride = 0, count = 0;
  /// The runs of an iteration's section, and their distance (fpm_arg).
  std::int64_t rows = 1, pitch = 0;
  /// An array's element 0 from `data` (fpm_arg::origin); an origin
  /// argument's value.
  std::int64_t origin = 0;
  /// The elements the array has from its element 0, 0 when unknown
  /// (fpm_arg::extent).
  std::int64_t extent = 0;
  /// > 0: `data` holds pointers to rows of this many elements
  /// (fpm_arg::row_length), and `size` is a row's bytes: the device's buffer
  /// holds the rows packed, row r at byte r * size.
  std::int64_t rowLength = 0;
  /// The array argument whose device buffer this one uses: itself, or the
  /// first argument of the same array (the same data: an array named in
  /// several sections, `in(A[0:n]) inout(A[i:1])`).
  std::size_t buffer = 0;
  /// A written array whose kernel marks what it writes (FPM_ARG_MASK): its
  /// mask argument, else none. A mask argument's `size` is the bytes one
  /// byte of the mask stands for.
  std::optional<std::size_t> mask;

  bool isArray() const {
    return kind == Kind::In || kind == Kind::Out || kind == Kind::InOut;
  }
  bool reads() const { return kind == Kind::In || kind == Kind::InOut; }
  bool writes() const { return kind == Kind::Out || kind == Kind::InOut; }
  /// The same section for every iteration: copied once per device and call.
  bool shared() const { return stride == 0; }
  ArgSection section() const {
    return {offset, stride, count, length, rows, pitch};
  }
  /// The rectangles of the elements iterations [begin, end) touch.
  std::vector<SectionRect> rects(std::int64_t begin, std::int64_t end) const {
    return sectionRects(section(), begin, end);
  }
  /// The part of [first, last) that is the array's, where its extent is
  /// known (elements [origin, origin + extent) of the buffer): what a copy
  /// of an over-declared input reads. Empty when none is.
  std::pair<std::int64_t, std::int64_t> inArray(std::int64_t first,
                                                std::int64_t last) const;
  bool rowPointers() const { return rowLength > 0; }
  /// The bytes of the whole array (its rows, packed, for row pointers).
  std::size_t arrayBytes() const {
    return static_cast<std::size_t>(length) * size;
  }
};

/// Copies to `host` (a masked array's data) the elements of `section`'s
/// rectangles whose byte in `mask` is set, from `staging`, where they lie
/// packed rectangle after rectangle as a download stages them: rectangles
/// count `size`-byte elements, the mask one byte per `unit` bytes of the
/// buffer (unit divides size). What a device's range wrote, and nothing
/// else.
void mergeMasked(std::span<const SectionRect> rects, std::size_t size,
                 std::size_t unit, std::span<const std::uint8_t> mask,
                 const std::byte *staging, std::byte *host);

/// The devices' side of a loop (fpm_kernel), checked.
struct KernelSpec {
  fpm_kernel_language language = FPM_KERNEL_OPENCL_C;
  std::string source;
  std::string name;
  std::string options;
  std::vector<KernelArg> args;
  /// Whether the kernel takes its launch's end (FPM_ARG_END), and so may
  /// be launched past it in whole work-groups.
  bool bounded() const {
    for (const KernelArg &arg : args)
      if (arg.kind == KernelArg::Kind::End)
        return true;
    return false;
  }
};

/// How messages name a kernel of `language`: "OpenCL kernel"; null for a
/// value fpm.h does not define.
const char *kernelTitle(int language);

/// Checks `kernel` for a loop of `tripCount` iterations and reads its
/// source file. Array arguments of the same data share one device buffer
/// (KernelArg::buffer); sections of one array whose buffers would start at
/// different elements are refused. Throws std::invalid_argument naming
/// the argument (by its clause, when it has one) and the problem: a language
/// fpm.h does not define, a section
/// outside its array, a written section that does not move with the iteration
/// (unless the kernel takes its write mask: then it must be the same for
/// every iteration, and no other written section may share its buffer) or
/// overlaps the next one's (with more than one iteration), an array whose
/// element 0 is not its buffer's first and that no origin argument names, an
/// unreadable file.
KernelSpec makeKernelSpec(const fpm_kernel &kernel, std::int64_t tripCount);

/// Elements [first, last) of `arg`'s array that the sections of iterations
/// [begin, end) span (begin < end), for any stride sign, from the first
/// run's start to the last run's end. Stride 0 with count 0 is the whole
/// array.
std::pair<std::int64_t, std::int64_t>
sectionExtent(const fpm_arg &arg, std::int64_t begin, std::int64_t end);

/// Checks fpm_loop::data for a loop of `tripCount` >= 1 iterations: arrays
/// only (in, out, inout), with data, an element size, and every iteration's
/// section inside the array. Throws std::invalid_argument naming the entry.
void checkLoopData(std::span<const fpm_arg> data, std::int64_t tripCount);

/// The fpm_arg that `section`, sampled at iterations 0, min(1, T-1) and T-1
/// of a loop of `tripCount` >= 1 iterations, describes when it is affine in
/// the iteration (fpm_describe_sections), else why not. Only the
/// arithmetic: checkLoopData() checks the rest (kind, base, size). `data` is
/// the base unless the section reaches below it (`origin` says where the
/// base is then); not described either when the elements from there do not
/// fit in int64_t bytes.
struct DescribedSection {
  std::optional<fpm_arg> arg;
  std::string why; ///< when there is no arg
};
DescribedSection describeSection(const fpm_section &section,
                                 std::int64_t tripCount);

} // namespace fpm
