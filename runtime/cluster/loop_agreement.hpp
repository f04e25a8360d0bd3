//===- cluster/loop_agreement.hpp - What every rank must call alike -*- C++
//-*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What this file offers: the shape of a collective loop call (the loop, its
// trip count, schedule, grain, sections and reductions), its encoding for
// the message each rank sends rank 0 before a cluster loop, and the one
// line that says where two ranks' shapes differ. Plain functions without
// MPI: libfpmrt-mpi (runtime/mpi/) sends the bytes, the unit tests and the
// fuzz target read them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fpm/fpm.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

/// What every rank must pass alike to one collective loop call: ranks that
/// differ in any of it would run different collectives, or send ranges
/// another rank's arrays do not have.
struct LoopShape {
  /// loopLabel's: "loop 'heat' (heat.c:12)".
  std::string label;
  std::int64_t tripCount = 0;
  /// The schedule the call runs by (FPM_SCHEDULE's when set).
  std::string schedule;
  std::int64_t grain = 0;
  /// One per data argument: fpm_arg's fields but `data` and `clause`.
  struct Section {
    std::int64_t kind = 0, elementBytes = 0, length = 0, offset = 0, stride = 0,
                 count = 0, origin = 0, extent = 0, rows = 0, pitch = 0,
                 rowLength = 0;
    bool operator==(const Section &) const = default;
  };
  std::vector<Section> sections;
  struct Reduction {
    std::int64_t op = 0, type = 0;
    bool operator==(const Reduction &) const = default;
  };
  std::vector<Reduction> reductions;
  bool operator==(const LoopShape &) const = default;
};

/// The shape of a call of the loop labelled `label`.
LoopShape loopShape(std::string label, std::int64_t tripCount,
                    std::string schedule, std::int64_t grain,
                    std::span<const fpm_arg> data,
                    std::span<const fpm_reduction> reductions);

/// The bytes of `shape` for another process of the same program.
std::string encodeLoopShape(const LoopShape &shape);

/// The shape `bytes` encode. Throws std::invalid_argument saying what is
/// wrong with a message that is not one encodeLoopShape wrote.
LoopShape decodeLoopShape(std::string_view bytes);

/// Empty when every shape equals the first (rank 0's); else one line naming
/// rank 0's loop, the first thing that differs, its value on rank 0 and on
/// the first rank where it differs: "loop 'heat' called with 1000
/// iterations on rank 0 but 999 on rank 2".
std::string describeDisagreement(std::span<const LoopShape> shapeByRank);

} // namespace fpm
