//===- cluster/loop_agreement.cpp - What every rank must call alike -------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "cluster/loop_agreement.hpp"

#include <array>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace fpm {
namespace {

using Section = LoopShape::Section;

/// A section's fields, named as messages name them.
constexpr std::array<std::pair<const char *, std::int64_t Section::*>, 11>
    SectionFields{{{"kind", &Section::kind},
                   {"element size", &Section::elementBytes},
                   {"length", &Section::length},
                   {"offset", &Section::offset},
                   {"stride", &Section::stride},
                   {"count", &Section::count},
                   {"origin", &Section::origin},
                   {"extent", &Section::extent},
                   {"rows", &Section::rows},
                   {"pitch", &Section::pitch},
                   {"row length", &Section::rowLength}}};

void appendInteger(std::string &out, std::int64_t value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out.append(bytes, sizeof value);
}

void appendText(std::string &out, std::string_view text) {
  appendInteger(out, static_cast<std::int64_t>(text.size()));
  out += text;
}

/// Reads what append* wrote, front to back.
class Reader {
public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  std::int64_t integer() {
    std::int64_t value = 0;
    if (bytes_.size() < sizeof value)
      fail("it ends early");
    std::memcpy(&value, bytes_.data(), sizeof value);
    bytes_.remove_prefix(sizeof value);
    return value;
  }

  std::string text() {
    const std::int64_t size = integer();
    if (size < 0 || static_cast<std::uint64_t>(size) > bytes_.size())
      fail("a text runs past its end");
    std::string value(bytes_.substr(0, static_cast<std::size_t>(size)));
    bytes_.remove_prefix(static_cast<std::size_t>(size));
    return value;
  }

  /// The length of a list of entries of `entryBytes` each, which must all
  /// be there (a count alone never makes the reader allocate).
  std::size_t listLength(std::size_t entryBytes) {
    const std::int64_t size = integer();
    if (size < 0 ||
        static_cast<std::uint64_t>(size) > bytes_.size() / entryBytes)
      fail("a list of " + std::to_string(size) + " entries runs past its end");
    return static_cast<std::size_t>(size);
  }

  void expectEnd() const {
    if (!bytes_.empty())
      fail(std::to_string(bytes_.size()) + " bytes past its end");
  }

  [[noreturn]] static void fail(const std::string &what) {
    throw std::invalid_argument("a loop agreement message that fpm did not "
                                "write: " +
                                what);
  }

private:
  std::string_view bytes_;
};

/// "with X on rank 0 but Y on rank R" for one field.
std::string differs(const LoopShape &first, std::string_view what,
                    const std::string &here, const std::string &there,
                    std::size_t rank) {
  return first.label + " called with " + std::string(what) + here +
         " on rank 0 but " + there + " on rank " + std::to_string(rank);
}

/// Where `shape` (rank `rank`'s) differs from `first` (rank 0's), or empty.
std::string difference(const LoopShape &first, const LoopShape &shape,
                       std::size_t rank) {
  if (shape.label != first.label)
    return "ranks called different loops at once: " + first.label +
           " on rank 0 but " + shape.label + " on rank " + std::to_string(rank);
  if (shape.tripCount != first.tripCount)
    return differs(first, "", std::to_string(first.tripCount) + " iterations",
                   std::to_string(shape.tripCount), rank);
  if (shape.schedule != first.schedule)
    return differs(first, "schedule ", "'" + first.schedule + "'",
                   "'" + shape.schedule + "'", rank);
  if (shape.grain != first.grain)
    return differs(first, "grain ", std::to_string(first.grain),
                   std::to_string(shape.grain), rank);
  if (shape.sections.size() != first.sections.size())
    return differs(first, "",
                   std::to_string(first.sections.size()) + " data arguments",
                   std::to_string(shape.sections.size()), rank);
  for (std::size_t s = 0; s < first.sections.size(); ++s)
    for (const auto &[name, field] : SectionFields)
      if (shape.sections[s].*field != first.sections[s].*field)
        return differs(
            first, "data argument " + std::to_string(s) + "'s " + name + " ",
            std::to_string(first.sections[s].*field),
            std::to_string(shape.sections[s].*field), rank);
  if (shape.reductions.size() != first.reductions.size())
    return differs(first, "",
                   std::to_string(first.reductions.size()) + " reductions",
                   std::to_string(shape.reductions.size()), rank);
  for (std::size_t r = 0; r < first.reductions.size(); ++r)
    if (shape.reductions[r] != first.reductions[r])
      return differs(
          first, "reduction " + std::to_string(r) + " ",
          "(op " + std::to_string(first.reductions[r].op) + ", type " +
              std::to_string(first.reductions[r].type) + ")",
          "(op " + std::to_string(shape.reductions[r].op) + ", type " +
              std::to_string(shape.reductions[r].type) + ")",
          rank);
  return {};
}

} // namespace

LoopShape loopShape(std::string label, std::int64_t tripCount,
                    std::string schedule, std::int64_t grain,
                    std::span<const fpm_arg> data,
                    std::span<const fpm_reduction> reductions) {
  LoopShape shape{
      std::move(label), tripCount, std::move(schedule), grain, {}, {}};
  for (const fpm_arg &arg : data)
    shape.sections.push_back({arg.kind, static_cast<std::int64_t>(arg.size),
                              arg.length, arg.offset, arg.stride, arg.count,
                              arg.origin, arg.extent, arg.rows, arg.pitch,
                              arg.row_length});
  for (const fpm_reduction &reduction : reductions)
    shape.reductions.push_back({reduction.op, reduction.type});
  return shape;
}

std::string encodeLoopShape(const LoopShape &shape) {
  std::string out;
  appendText(out, shape.label);
  appendInteger(out, shape.tripCount);
  appendText(out, shape.schedule);
  appendInteger(out, shape.grain);
  appendInteger(out, static_cast<std::int64_t>(shape.sections.size()));
  for (const Section &section : shape.sections)
    for (const auto &[name, field] : SectionFields)
      appendInteger(out, section.*field);
  appendInteger(out, static_cast<std::int64_t>(shape.reductions.size()));
  for (const LoopShape::Reduction &reduction : shape.reductions) {
    appendInteger(out, reduction.op);
    appendInteger(out, reduction.type);
  }
  return out;
}

LoopShape decodeLoopShape(std::string_view bytes) {
  Reader in(bytes);
  LoopShape shape;
  shape.label = in.text();
  shape.tripCount = in.integer();
  shape.schedule = in.text();
  shape.grain = in.integer();
  shape.sections.resize(
      in.listLength(SectionFields.size() * sizeof(std::int64_t)));
  for (Section &section : shape.sections)
    for (const auto &[name, field] : SectionFields)
      section.*field = in.integer();
  shape.reductions.resize(in.listLength(2 * sizeof(std::int64_t)));
  for (LoopShape::Reduction &reduction : shape.reductions) {
    reduction.op = in.integer();
    reduction.type = in.integer();
  }
  in.expectEnd();
  return shape;
}

std::string describeDisagreement(std::span<const LoopShape> shapeByRank) {
  for (std::size_t rank = 1; rank < shapeByRank.size(); ++rank)
    if (std::string line = difference(shapeByRank[0], shapeByRank[rank], rank);
        !line.empty())
      return line;
  return {};
}

} // namespace fpm
