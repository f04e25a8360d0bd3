//===- store/profile_report.hpp - The profile store, for people -*- C++ -*-===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The read-only side of the profile store, as the fpm-profile tool shows it:
// list the profiles a folder holds (by their file names, which encode the
// loop and the PE), print one loop's profiles as text tables, and plot
// speed against size as an SVG figure.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "model/profile.hpp"

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fpm {

/// The loop and PE a profile file's name stands for.
struct ProfileFileName {
  std::string loop;
  std::string device;
  /// A name was too long for a file name and was shortened: the whole
  /// names are only in the file (and loop/device hold what is readable).
  bool shortened = false;
};

/// Parses a file name written by profilePath() back: `<loop>@<device>.json`
/// with %XX decoded. nullopt for any other name, including one that
/// profilePath() would not write (a raw byte it encodes, lower-case hex),
/// since the runtime would never find that file.
std::optional<ProfileFileName> parseProfileFileName(std::string_view name);

/// The profiles of one loop, one per PE, by device id.
struct LoopProfiles {
  std::string loop;
  std::vector<Profile> profiles;
};

/// What a folder holds.
struct ProfileListing {
  std::vector<LoopProfiles> loops;   ///< by loop name, bytewise
  std::vector<std::string> problems; ///< "FILE: problem", one per bad file
};

/// Reads the profiles in `dir`, or only those of `loop`. Hidden files (the
/// temporaries writeFileAtomically leaves while it writes) and files not
/// ending in ".json" (FILE.lock, FILE.corrupt) are not profiles and are
/// skipped silently. A ".json" file whose name is not the store's
/// (<loop>@<device>.json: profiles gathered by hand, as in
/// examples/profiles) is listed by the loop and PE it holds. A ".json"
/// file that cannot be read, that holds another loop's or PE's profile
/// than its store name says, or the same loop and PE as a file before it,
/// is skipped and listed in `problems`. A missing folder holds nothing.
/// Throws ProfileError("DIR: problem") when `dir` cannot be listed.
ProfileListing listProfiles(const std::filesystem::path &dir,
                            std::optional<std::string_view> loop = {});

/// One loop's profiles as text: a line `loop 'NAME'`, then per PE a header
/// line (device, device_name, host) and an aligned table of its points:
/// size, time (s), speed (iterations/s), reps and ci, blank when absent.
std::string formatLoopTables(const LoopProfiles &loop);

/// A self-contained SVG 1.1 figure with one panel per loop: speed against
/// size, one polyline with point markers per PE, and a legend.
std::string renderSpeedPlot(std::span<const LoopProfiles> loops);

} // namespace fpm
