//===- data/sections.cpp - The arrays a loop reads and writes -------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The data sections of data/sections.hpp: their checks, the rectangles a
// range's copies move, and the kernel spec built from fpm_kernel. A little
// over 600 lines: the spec's checks read the same section arithmetic that
// the rectangles use, and one rule must serve both.
//
//===----------------------------------------------------------------------===//

#include "data/sections.hpp"

#include "support/atomic_file.hpp"
#include "support/int_math.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fpm {
namespace {

/// The one rule for every section, of loop data and kernel arguments
/// alike: it has elements, its rows do not overlap, and the sections of
/// iterations [0, tripCount) lie in the array's `length` elements. Throws
/// std::invalid_argument, `where` first.
void checkSection(const std::string &where, const ArgSection &section,
                  std::int64_t length, std::int64_t tripCount) {
  if (section.count <= 0)
    throw std::invalid_argument(where + "a section of " +
                                std::to_string(section.count) + " elements");
  if (section.rows > 1 && section.pitch < section.count)
    throw std::invalid_argument(
        where + "rows of " + std::to_string(section.count) + " elements " +
        std::to_string(section.pitch) + " apart overlap (the pitch must be " +
        "at least the count)");
  // In 128 bits: offset + k * stride + (rows - 1) * pitch cannot overflow
  // there.
  const std::int64_t last = std::max<std::int64_t>(tripCount - 1, 0);
  const __int128 move = static_cast<__int128>(last) * section.stride;
  const __int128 low = section.offset + std::min<__int128>(move, 0);
  const __int128 high =
      section.offset + std::max<__int128>(move, 0) +
      static_cast<__int128>(section.rows - 1) * section.pitch + section.count;
  if (low >= 0 && high <= length)
    return;
  const std::string reach = where + "the sections of iterations 0.." +
                            std::to_string(last) + " reach outside its " +
                            std::to_string(length) + " elements: iteration ";
  if (low < 0)
    throw std::invalid_argument(
        reach + std::to_string(move < 0 ? last : 0) + "'s starts at element " +
        decimal(low) + ", before the array (an element's index is >= 0)");
  throw std::invalid_argument(reach + std::to_string(move > 0 ? last : 0) +
                              "'s ends at element " + decimal(high) +
                              ", past the array");
}

/// The one rule for an array's size, of loop data and kernel arguments
/// alike: its bytes (`length` elements of `size` bytes; for row pointers,
/// rows of `row_length` of them) fit in an int64_t, as every copy, saved
/// section and device buffer counts them.
void checkArrayBytes(const std::string &where, const fpm_arg &arg) {
  const __int128 limit = INT64_MAX;
  const __int128 elements = static_cast<__int128>(arg.length) *
                            std::max<std::int64_t>(arg.row_length, 1);
  if (elements <= limit && elements * static_cast<__int128>(arg.size) <= limit)
    return;
  throw std::invalid_argument(
      where + "the array is too large: " + std::to_string(arg.length) +
      (arg.row_length > 0
           ? " rows of " + std::to_string(arg.row_length) + " elements"
           : std::string(" elements")) +
      " of " + std::to_string(arg.size) + " bytes are more than 2^63 bytes");
}

/// Whether two iterations of a written section may share an element: the
/// iterations' runs interleave in a band per row, each `stride` past the
/// one before, or each iteration's rows lie past the one before's.
bool iterationsOverlap(const ArgSection &section, std::int64_t tripCount) {
  if (tripCount <= 1)
    return false;
  const __int128 apart = section.stride < 0
                             ? -static_cast<__int128>(section.stride)
                             : static_cast<__int128>(section.stride);
  if (apart < section.count)
    return true;
  if (section.rows <= 1)
    return false;
  const bool banded = (tripCount - 1) * apart + section.count <= section.pitch;
  return !banded && apart < section.reach();
}

/// The rule for a section over row pointers (fpm_arg::row_length > 0):
/// one run per iteration, from row 0 up, and rows whose packed bytes fit in
/// int64_t. Throws std::invalid_argument, `where` first.
void checkRowPointers(const std::string &where, const fpm_arg &arg) {
  if (arg.row_length < 0)
    throw std::invalid_argument(where + "row_length " +
                                std::to_string(arg.row_length) + " is < 0");
  if (arg.row_length == 0)
    return;
  if (arg.rows > 1)
    throw std::invalid_argument(where + "a section over row pointers takes " +
                                "whole rows, one run of them per iteration " +
                                "(rows is " + std::to_string(arg.rows) + ")");
  if (arg.origin != 0)
    throw std::invalid_argument(where + "a section over row pointers may not " +
                                "reach below row 0 (origin " +
                                std::to_string(arg.origin) + ")");
}

/// Two rows that `arg`'s written section over row pointers touches in
/// iterations [0, tripCount) and that share bytes in the caller's memory
/// (rows that are views into one block, a row length too long for them),
/// or nothing: a device copies each written row back whole, so one would
/// overwrite the other's elements.
std::optional<std::pair<std::int64_t, std::int64_t>>
overlappingRows(const KernelArg &arg, std::int64_t tripCount) {
  std::vector<std::pair<std::uintptr_t, std::int64_t>> starts;
  auto *const *rowsAt = static_cast<std::byte *const *>(arg.data);
  for (const SectionRect &rect :
       sectionRects(arg.section(), 0, std::max<std::int64_t>(tripCount, 1)))
    for (std::int64_t r = 0; r < rect.rows; ++r)
      for (std::int64_t e = rect.first + r * rect.pitch;
           e < rect.first + r * rect.pitch + rect.width; ++e)
        if (rowsAt[e]) // a null row fails the device when it is copied
          starts.emplace_back(reinterpret_cast<std::uintptr_t>(rowsAt[e]), e);
  std::ranges::sort(starts);
  for (std::size_t i = 1; i < starts.size(); ++i)
    if (starts[i].first - starts[i - 1].first < arg.size)
      return std::pair(starts[i - 1].second, starts[i].second);
  return std::nullopt;
}

KernelArg::Kind kindOf(int kind, const std::string &where) {
  switch (kind) {
  case FPM_ARG_SCALAR:
    return KernelArg::Kind::Scalar;
  case FPM_ARG_IN:
    return KernelArg::Kind::In;
  case FPM_ARG_OUT:
    return KernelArg::Kind::Out;
  case FPM_ARG_INOUT:
    return KernelArg::Kind::InOut;
  case FPM_ARG_LOCAL:
    return KernelArg::Kind::Local;
  case FPM_ARG_REDUCTION:
    return KernelArg::Kind::Reduction;
  case FPM_ARG_ORIGIN:
    return KernelArg::Kind::Origin;
  case FPM_ARG_END:
    return KernelArg::Kind::End;
  case FPM_ARG_MASK:
    return KernelArg::Kind::Mask;
  default:
    throw std::invalid_argument(where + "unknown kind " + std::to_string(kind));
  }
}

/// The most a kernel's source file may hold: more is no kernel.
constexpr std::uintmax_t MaxKernelSourceBytes = std::uintmax_t{16} << 20;

/// The source of a kernel named by its file (fpm_kernel.file): a regular
/// file, as the rewriter takes a kernel(...) file; a FIFO or a device in its
/// place would block the call or never end.
std::string readSource(const char *file, const std::string &what) {
  try {
    return readRegularFile(file, MaxKernelSourceBytes);
  } catch (const std::runtime_error &error) {
    throw std::invalid_argument("cannot read " + what +
                                "'s source: " + error.what());
  }
}

} // namespace

std::vector<SectionRect> sectionRects(const ArgSection &section,
                                      std::int64_t begin, std::int64_t end) {
  const std::int64_t lowest =
      section.offset + (section.stride >= 0 ? begin : end - 1) * section.stride;
  const std::int64_t apart = std::abs(section.stride);
  const std::int64_t iterations = section.stride == 0 ? 1 : end - begin;
  // The runs of a row of iterations touch: one run per row, or one in all
  // where the rows' runs reach into each other (an input read wide).
  if (section.contiguous()) {
    const std::int64_t width = (iterations - 1) * apart + section.count;
    if (section.rows > 1 && width > section.pitch)
      return {{lowest, (section.rows - 1) * section.pitch + width, 1, 0}};
    return {{lowest, width, section.rows, section.pitch}};
  }
  // One run per iteration, evenly apart: rows of iterations.
  if (section.rows == 1)
    return {{lowest, section.count, iterations, apart}};
  // Each iteration's rows continue where the one before's end: one pitch.
  if (apart == section.rows * section.pitch)
    return {{lowest, section.count, iterations * section.rows, section.pitch}};
  std::vector<SectionRect> rects;
  rects.reserve(static_cast<std::size_t>(iterations));
  if (apart >= section.reach()) {
    for (std::int64_t k = 0; k < iterations; ++k)
      rects.push_back(
          {lowest + k * apart, section.count, section.rows, section.pitch});
    return rects;
  }
  // The iterations' runs interleave within each row's band: a rectangle per
  // row, one run per iteration.
  for (std::int64_t r = 0; r < section.rows; ++r)
    rects.push_back(
        {lowest + r * section.pitch, section.count, iterations, apart});
  return rects;
}

std::vector<SectionRect> clipRects(std::span<const SectionRect> rects,
                                   std::int64_t from, std::int64_t to) {
  std::vector<SectionRect> clipped;
  for (const SectionRect &rect : rects) {
    if (rect.first >= from && rect.last() <= to) {
      clipped.push_back(rect);
      continue;
    }
    for (std::int64_t r = 0; r < rect.rows; ++r) {
      const std::int64_t start = rect.first + r * rect.pitch;
      const std::int64_t first = std::max(start, from);
      const std::int64_t last = std::min(start + rect.width, to);
      if (first < last)
        clipped.push_back({first, last - first, 1, 0});
    }
  }
  return clipped;
}

std::pair<std::int64_t, std::int64_t>
KernelArg::inArray(std::int64_t first, std::int64_t last) const {
  if (extent <= 0)
    return {first, last};
  const std::int64_t from = std::max(first, origin);
  return {from, std::max(from, std::min(last, origin + extent))};
}

const char *kernelTitle(int language) {
  switch (language) {
  case FPM_KERNEL_OPENCL_C:
    return "OpenCL kernel";
  default:
    return nullptr;
  }
}

KernelSpec makeKernelSpec(const fpm_kernel &kernel, std::int64_t tripCount) {
  KernelSpec spec;
  const char *title = kernelTitle(kernel.language);
  if (!title)
    throw std::invalid_argument(
        "fpm_kernel: language " + std::to_string(kernel.language) +
        " is not one fpm.h defines (FPM_KERNEL_OPENCL_C)");
  spec.language = static_cast<fpm_kernel_language>(kernel.language);
  if (!kernel.name || !*kernel.name)
    throw std::invalid_argument(std::string("the ") + title + " has no name");
  spec.name = kernel.name;
  const std::string what = std::string(title) + " '" + spec.name + "'";
  if (kernel.source)
    spec.source = kernel.source;
  else if (kernel.file && *kernel.file)
    spec.source = readSource(kernel.file, what);
  else
    throw std::invalid_argument(what + " has neither source nor file");
  if (kernel.options)
    spec.options = kernel.options;
  if (kernel.arg_count < 0 || (kernel.arg_count > 0 && !kernel.args))
    throw std::invalid_argument(what + ": bad argument list");

  // An argument as the program names it: an array by its clause, when it
  // has one.
  auto where = [&](int a) {
    const char *clause = kernel.args[a].clause;
    return (clause && *clause ? std::string(clause)
                              : what + ", argument " + std::to_string(a)) +
           ": ";
  };
  // The arrays whose kernel marks what it writes: the mask arguments come
  // after them, and a masked section may stay the same for every iteration.
  std::vector<bool> masked(static_cast<std::size_t>(kernel.arg_count), false);
  for (int a = 0; a < kernel.arg_count; ++a)
    if (const fpm_arg &in = kernel.args[a]; in.kind == FPM_ARG_MASK &&
                                            in.offset >= 0 &&
                                            in.offset < kernel.arg_count)
      masked[static_cast<std::size_t>(in.offset)] = true;
  for (int a = 0; a < kernel.arg_count; ++a) {
    const fpm_arg &in = kernel.args[a];
    KernelArg arg;
    arg.kind = kindOf(in.kind, where(a));
    arg.data = in.data;
    arg.size = in.size;
    if (arg.kind == KernelArg::Kind::Mask) {
      // Its array comes first: checked below.
      arg.offset = in.offset;
      if (arg.size == 0)
        throw std::invalid_argument(where(a) + "a mask's unit is 0 bytes");
      spec.args.push_back(arg);
      continue;
    }
    if (arg.kind == KernelArg::Kind::Origin) {
      // Its array may come later: checked below, its value taken there.
      arg.offset = in.offset;
      arg.size = sizeof(std::int64_t);
      spec.args.push_back(arg);
      continue;
    }
    if (arg.kind == KernelArg::Kind::End) {
      // Set at every launch.
      arg.size = sizeof(std::uint64_t);
      spec.args.push_back(arg);
      continue;
    }
    if (arg.size == 0)
      throw std::invalid_argument(where(a) + "size is 0");
    if (arg.kind == KernelArg::Kind::Scalar && !arg.data)
      throw std::invalid_argument(where(a) + "a scalar needs its value");
    if (arg.kind == KernelArg::Kind::Reduction) {
      if (in.offset < 0)
        throw std::invalid_argument(where(a) + "reduction index " +
                                    std::to_string(in.offset) + " is < 0");
      arg.offset = in.offset; // checked against the call's reductions
    }
    if (arg.isArray()) {
      if (!arg.data || in.length <= 0)
        throw std::invalid_argument(where(a) +
                                    "an array needs data and a length "
                                    "> 0");
      const ArgSection section(in);
      checkSection(where(a), section, in.length, tripCount);
      checkArrayBytes(where(a), in);
      checkRowPointers(where(a), in);
      // The device sees a row as one element: its bytes, packed.
      arg.rowLength = in.row_length;
      arg.size = elementBytes(in);
      arg.length = in.length;
      arg.offset = section.offset;
      arg.stride = section.stride;
      arg.count = section.count;
      arg.rows = section.rows;
      arg.pitch = section.pitch;
      if (in.origin < 0 || in.extent < 0)
        throw std::invalid_argument(where(a) + "origin " +
                                    std::to_string(in.origin) + " or extent " +
                                    std::to_string(in.extent) + " is < 0");
      arg.origin = in.origin;
      arg.extent = in.extent;
      // A device copies a written section back whole: not one that holds
      // elements that are not the array's.
      if (const auto [first, last] =
              sectionExtent(in, 0, std::max<std::int64_t>(tripCount, 1));
          arg.writes() &&
          arg.inArray(first, last) !=
              std::pair<std::int64_t, std::int64_t>{first, last})
        throw std::invalid_argument(
            where(a) + "the written sections reach outside the array's " +
            std::to_string(arg.extent) + " elements (elements " +
            std::to_string(first - arg.origin) + " to " +
            std::to_string(last - arg.origin - 1) + ")");
      // What a device's copies add: each iteration's written elements are
      // its own, so that chunks on different PEs never write the same. One
      // iteration has no neighbour to meet. A masked section is the same
      // for every iteration, and a device copies back only what it wrote.
      const bool masks = masked[static_cast<std::size_t>(a)];
      if (masks && (!arg.writes() || arg.stride != 0))
        throw std::invalid_argument(
            where(a) + "a write mask goes with a written section that is "
                       "the same for every iteration (stride 0)");
      // The merge writes the marked elements into one block of memory.
      if (masks && arg.rowPointers())
        throw std::invalid_argument(
            where(a) + "a write mask cannot go with an array of row "
                       "pointers: the merge writes one block of elements");
      if (arg.writes() && arg.stride == 0 && tripCount > 1 && !masks)
        throw std::invalid_argument(
            where(a) + "a written section must move with the iteration: with "
                       "the same section for every iteration, two PEs would "
                       "each copy back all of it (unless the kernel marks "
                       "what it writes in a mask, FPM_ARG_MASK)");
      if (arg.writes() && !masks && iterationsOverlap(section, tripCount))
        throw std::invalid_argument(
            where(a) +
            (arg.rows > 1 ? "written sections of different iterations overlap "
                          : "written sections of neighbouring iterations "
                            "overlap ") +
            "(they start " + std::to_string(std::abs(arg.stride)) + " element" +
            (std::abs(arg.stride) == 1 ? "" : "s") + " apart and have " +
            std::to_string(arg.count) +
            (arg.rows > 1 ? " in each of " + std::to_string(arg.rows) +
                                " rows " + std::to_string(arg.pitch) + " apart"
                          : std::string()) +
            "), and a device copies a written section back whole");
      if (arg.writes() && arg.rowPointers())
        if (const auto rows = overlappingRows(arg, tripCount))
          throw std::invalid_argument(
              where(a) + "rows " + std::to_string(rows->first) + " and " +
              std::to_string(rows->second) +
              " share memory (their pointers are less than a row of " +
              std::to_string(arg.rowLength) +
              " elements apart), and a device copies each written row back "
              "whole");
    }
    spec.args.push_back(arg);
  }
  // Sections of one array: one buffer, the first argument's. Their
  // buffers must start at the same element for that: not where one reaches
  // below the array's element 0 and the other does not.
  auto elementZero = [](const KernelArg &arg) {
    return static_cast<const std::byte *>(arg.data) +
           arg.origin * static_cast<std::int64_t>(arg.size);
  };
  for (std::size_t a = 0; a < spec.args.size(); ++a) {
    KernelArg &arg = spec.args[a];
    arg.buffer = a;
    for (std::size_t b = 0; arg.isArray() && b < a; ++b) {
      // The same array may be counted in rows by one section and in
      // scalars by another: their bytes are the array's either way.
      const KernelArg &other = spec.args[b];
      if (!other.isArray())
        continue;
      if (other.data == arg.data) {
        if (other.rowLength != arg.rowLength)
          throw std::invalid_argument(
              where(static_cast<int>(a)) +
              "a section of the same array as argument " + std::to_string(b) +
              " with rows of another length (" + std::to_string(arg.rowLength) +
              " against " + std::to_string(other.rowLength) +
              " elements): a device packs the rows of one array one way");
        arg.buffer = b;
        break;
      }
      if (elementZero(other) == elementZero(arg))
        throw std::invalid_argument(
            where(static_cast<int>(a)) +
            "a section of the same array as argument " + std::to_string(b) +
            " whose buffer would start at another element (one reaches "
            "below the array's element 0): a device gives the sections of "
            "one array one buffer");
    }
  }
  // Masks: each names a masked array (checked above) whose elements its
  // unit divides, once; and no other written section shares that array's
  // buffer, whose copy back would overwrite what other PEs wrote.
  for (std::size_t a = 0; a < spec.args.size(); ++a) {
    const KernelArg &mask = spec.args[a];
    if (mask.kind != KernelArg::Kind::Mask)
      continue;
    if (mask.offset < 0 || mask.offset >= std::ssize(spec.args) ||
        !spec.args[static_cast<std::size_t>(mask.offset)].isArray())
      throw std::invalid_argument(
          where(static_cast<int>(a)) + "the write mask of argument " +
          std::to_string(mask.offset) + ", which is no array");
    KernelArg &array = spec.args[static_cast<std::size_t>(mask.offset)];
    if (array.mask)
      throw std::invalid_argument(where(static_cast<int>(a)) +
                                  "a second write mask of argument " +
                                  std::to_string(mask.offset));
    if (array.size % mask.size != 0)
      throw std::invalid_argument(
          where(static_cast<int>(a)) + "a mask byte per " +
          std::to_string(mask.size) + " bytes does not divide the " +
          std::to_string(array.size) + "-byte elements of argument " +
          std::to_string(mask.offset));
    array.mask = a;
  }
  for (std::size_t a = 0; a < spec.args.size(); ++a) {
    const KernelArg &arg = spec.args[a];
    if (!arg.mask)
      continue;
    for (std::size_t b = 0; b < spec.args.size(); ++b)
      if (b != a && spec.args[b].isArray() && spec.args[b].writes() &&
          spec.args[b].buffer == arg.buffer)
        throw std::invalid_argument(
            where(static_cast<int>(b)) +
            "another written section of the array whose writes argument " +
            std::to_string(a) +
            " merges through a write mask: a device would copy it back "
            "over what other PEs wrote (name the array in one written "
            "section)");
  }
  // Origins: each names an array, and an array whose element 0 is not its
  // buffer's first needs one (a kernel without one would index it from the
  // buffer's start: every element off by the origin).
  std::vector<bool> located(spec.args.size(), false);
  for (std::size_t a = 0; a < spec.args.size(); ++a) {
    KernelArg &arg = spec.args[a];
    if (arg.kind != KernelArg::Kind::Origin)
      continue;
    if (arg.offset < 0 || arg.offset >= std::ssize(spec.args) ||
        !spec.args[static_cast<std::size_t>(arg.offset)].isArray())
      throw std::invalid_argument(
          where(static_cast<int>(a)) + "the origin of argument " +
          std::to_string(arg.offset) + ", which is no array");
    arg.origin = spec.args[static_cast<std::size_t>(arg.offset)].origin;
    located[static_cast<std::size_t>(arg.offset)] = true;
  }
  for (int a = 0; a < kernel.arg_count; ++a) {
    const KernelArg &arg = spec.args[static_cast<std::size_t>(a)];
    if (arg.isArray() && arg.origin != 0 &&
        !located[static_cast<std::size_t>(a)])
      throw std::invalid_argument(
          where(a) + "the section reaches " + std::to_string(arg.origin) +
          " element" + (arg.origin == 1 ? "" : "s") +
          " below the array's element 0: " + what +
          " gets a buffer that starts at the section's lowest element, and "
          "no FPM_ARG_ORIGIN argument that says where element 0 is in it");
  }
  return spec;
}

void mergeMasked(std::span<const SectionRect> rects, std::size_t size,
                 std::size_t unit, std::span<const std::uint8_t> mask,
                 const std::byte *staging, std::byte *host) {
  for (const SectionRect &rect : rects) {
    const std::size_t units =
        static_cast<std::size_t>(rect.width) * size / unit;
    for (std::int64_t r = 0; r < rect.rows; ++r) {
      const std::size_t start =
          static_cast<std::size_t>(rect.first + r * rect.pitch) * size;
      const std::uint8_t *marks = mask.data() + start / unit;
      // Runs of marked elements, each one copy.
      for (std::size_t u = 0; u < units;) {
        if (!marks[u]) {
          ++u;
          continue;
        }
        std::size_t v = u + 1;
        while (v < units && marks[v])
          ++v;
        std::memcpy(host + start + u * unit, staging + u * unit,
                    (v - u) * unit);
        u = v;
      }
      staging += units * unit;
    }
  }
}

std::pair<std::int64_t, std::int64_t>
sectionExtent(const fpm_arg &arg, std::int64_t begin, std::int64_t end) {
  const ArgSection section(arg);
  const std::int64_t first = section.offset + begin * section.stride;
  const std::int64_t last = section.offset + (end - 1) * section.stride;
  return {std::min(first, last), std::max(first, last) + section.reach()};
}

void checkLoopData(std::span<const fpm_arg> data, std::int64_t tripCount) {
  for (std::size_t a = 0; a < data.size(); ++a) {
    const fpm_arg &arg = data[a];
    const std::string where = "fpm_loop data " + std::to_string(a) + ": ";
    if (arg.kind != FPM_ARG_IN && arg.kind != FPM_ARG_OUT &&
        arg.kind != FPM_ARG_INOUT)
      throw std::invalid_argument(where + "kind " + std::to_string(arg.kind) +
                                  " is not FPM_ARG_IN, FPM_ARG_OUT or "
                                  "FPM_ARG_INOUT");
    if (!arg.data || arg.size == 0 || arg.length <= 0)
      throw std::invalid_argument(where + "an array needs data, an element "
                                          "size and a length > 0");
    checkSection(where, ArgSection(arg), arg.length, tripCount);
    checkArrayBytes(where, arg);
    checkRowPointers(where, arg);
  }
}

DescribedSection describeSection(const fpm_section &section,
                                 std::int64_t tripCount) {
  // In 128 bits: every value below is a sum of a few products of two
  // int64_t or size_t values, far from 2^127.
  using Wide = __int128;
  const std::int64_t count = section.length[0];
  auto no = [](std::string why) {
    return DescribedSection{std::nullopt, std::move(why)};
  };
  if (tripCount < 1 || !section.base)
    return no("no array, or no iteration");
  if (count <= 0)
    return no("a section of " + std::to_string(count) + " elements");
  if (section.length[1] != count || section.length[2] != count)
    return no("its length changes with the iteration (" +
              std::to_string(count) + " at iteration 0, " +
              std::to_string(section.length[2] != count ? section.length[2]
                                                        : section.length[1]) +
              " at iteration " +
              std::to_string(fpm_sample_iteration(
                  tripCount, section.length[2] != count ? 2 : 1)) +
              ")");
  const Wide first = section.lower[0];
  const Wide stride = tripCount > 1 ? section.lower[1] - first : 0;
  const Wide last = first + static_cast<Wide>(tripCount - 1) * stride;
  if (stride < INT64_MIN || stride > INT64_MAX || last != section.lower[2])
    return no("it does not move by the same number of elements from one "
              "iteration to the next");
  const std::int64_t rows = std::max<std::int64_t>(section.rows, 1);
  if (rows > 1 && section.pitch < count)
    return no("its " + std::to_string(rows) + " rows of " +
              std::to_string(count) + " elements are " +
              std::to_string(section.pitch) + " apart: they overlap");
  // Rows through their pointers: whole rows from row 0, one run each.
  if (section.row_length < 0)
    return no("its rows have " + std::to_string(section.row_length) +
              " elements");
  if (section.row_length > 0 && rows > 1)
    return no("it takes rows of row pointers in several runs");
  if (section.row_length > 0 && std::min(first, last) < 0)
    return no("its rows reach below row 0 (row " +
              decimal(std::min(first, last)) +
              "), and a device follows the row pointers from row 0");
  // From the first run's start to the last one's end.
  const Wide reach = static_cast<Wide>(rows - 1) * section.pitch + count;
  // The buffer starts at element 0, or at the lowest element below it.
  const Wide origin = std::min<Wide>({first, last, 0});
  const Wide length = std::max(first, last) + reach - origin;
  // An address below the base must not wrap around.
  const Wide below = -origin * static_cast<Wide>(section.size);
  const Wide rowElements = std::max<Wide>(section.row_length, 1);
  if (length > INT64_MAX ||
      length * rowElements * static_cast<Wide>(section.size) >
          static_cast<Wide>(INT64_MAX) ||
      below > static_cast<Wide>(reinterpret_cast<std::uintptr_t>(section.base)))
    return no("its elements do not fit in the address space");
  // A written section outside the array: a device would copy back, and
  // fpm-profile restore, elements that are not the array's.
  if (section.extent > 0 && section.kind != FPM_ARG_IN &&
      (std::min(first, last) < 0 ||
       std::max(first, last) + reach > section.extent))
    return no("its sections reach elements " + decimal(std::min(first, last)) +
              " to " + decimal(std::max(first, last) + reach - 1) +
              " of an array of " + std::to_string(section.extent) +
              " elements");
  fpm_arg arg{};
  arg.kind = section.kind;
  arg.data = static_cast<std::byte *>(section.base) -
             static_cast<std::ptrdiff_t>(below);
  arg.size = section.size;
  arg.length = static_cast<std::int64_t>(length);
  arg.offset = static_cast<std::int64_t>(first - origin);
  arg.stride = static_cast<std::int64_t>(stride);
  arg.count = count;
  arg.rows = rows;
  arg.pitch = rows > 1 ? section.pitch : 0;
  arg.origin = static_cast<std::int64_t>(-origin);
  arg.extent = std::max<std::int64_t>(section.extent, 0);
  arg.clause = section.clause;
  arg.row_length = section.row_length;
  return {arg, {}};
}

} // namespace fpm
