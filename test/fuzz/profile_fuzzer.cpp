//===- profile_fuzzer.cpp - The fpm-profile/1 reader on any bytes ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// parseProfile() on any bytes: a ProfileError of bounded length (it echoes
// excerpts, never the input), or a valid profile that formatProfile()
// writes and parseProfile() reads back unchanged, and whose merge with
// itself (mergeProfiles(), as the store writes) the reader accepts too.
//
//===----------------------------------------------------------------------===//

#include "fuzz_check.hpp"

#include "model/profile.hpp"
#include "store/profile_store.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

using namespace fpm;

namespace {

bool samePoints(const Profile &a, const Profile &b) {
  if (a.points.size() != b.points.size())
    return false;
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    const ProfilePoint &p = a.points[i], &q = b.points[i];
    if (p.size != q.size || std::memcmp(&p.time, &q.time, sizeof p.time) != 0 ||
        p.reps != q.reps || p.ci.has_value() != q.ci.has_value() ||
        (p.ci && std::memcmp(&*p.ci, &*q.ci, sizeof *p.ci) != 0))
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  Profile profile;
  try {
    profile = parseProfile(text, "fuzz.json");
  } catch (const ProfileError &error) {
    const std::string message = error.what();
    FUZZ_CHECK(message.starts_with("fuzz.json: "), message);
    FUZZ_CHECK(message.size() <= fuzz::MaxMessageBytes,
               "a message of " + std::to_string(message.size()) + " bytes");
    return 0;
  }
  FUZZ_CHECK(validate(profile).empty(), validate(profile));

  // What the writer writes, the reader reads back unchanged.
  const std::string written = formatProfile(profile);
  Profile again;
  try {
    again = parseProfile(written, "written.json");
  } catch (const ProfileError &error) {
    FUZZ_CHECK(false, std::string("formatProfile wrote what parseProfile "
                                  "refuses: ") +
                          error.what());
  }
  FUZZ_CHECK(again.kernel == profile.kernel && again.device == profile.device &&
                 again.deviceName == profile.deviceName &&
                 again.host == profile.host && again.created == profile.created,
             "the names changed on the way back");
  FUZZ_CHECK(samePoints(profile, again), "the points changed on the way back");

  // What the store would write after merging the points in again.
  Profile merged = mergeProfiles(profile, profile.points);
  FUZZ_CHECK(validate(merged).empty(),
             "mergeProfiles made an invalid profile: " + validate(merged));
  try {
    parseProfile(formatProfile(merged), "merged.json");
  } catch (const ProfileError &error) {
    FUZZ_CHECK(false,
               std::string("the merged profile is refused: ") + error.what());
  }
  return 0;
}
