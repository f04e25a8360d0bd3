//===- profile_store_test.cpp - The profile store -------------------------===//

#include "store/profile_store.hpp"

#include "store/profile_report.hpp"

#include "model/profile.hpp"
#include "support/atomic_file.hpp"

#include <gtest/gtest.h>

#include "support/scoped.hpp"
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace fpm;

namespace {

using fpm::test::ScopedEnv;
using fpm::test::TempDir;
namespace fs = std::filesystem;

std::string thisHost() {
  std::array<char, 256> name{};
  ::gethostname(name.data(), name.size() - 1);
  return name.data();
}

ProfilePoint point(std::int64_t size, double time,
                   std::optional<std::int64_t> reps = std::nullopt,
                   std::optional<double> ci = std::nullopt) {
  ProfilePoint p;
  p.size = size;
  p.time = time;
  p.reps = reps;
  p.ci = ci;
  return p;
}

/// The 95% half-width of `values`, by the textbook formula.
double halfWidth(const std::vector<double> &values) {
  double n = static_cast<double>(values.size());
  double mean = 0;
  for (double x : values)
    mean += x / n;
  double squares = 0;
  for (double x : values)
    squares += (x - mean) * (x - mean);
  return studentT975(static_cast<std::int64_t>(values.size()) - 1) *
         std::sqrt(squares / (n - 1)) / std::sqrt(n);
}

std::size_t lines(const std::string &text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

const ProfilePoint *find(const Profile &profile, std::int64_t size) {
  for (const ProfilePoint &p : profile.points)
    if (p.size == size)
      return &p;
  return nullptr;
}

} // namespace

TEST(ProfileStoreDirectory, FollowsTheVariablesInOrder) {
  ScopedEnv dir("FPM_PROFILE_DIR", "/profiles/here");
  ScopedEnv cache("XDG_CACHE_HOME", "/xdg/cache");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(profileDirectory(), fs::path("/profiles/here"));
  {
    ScopedEnv empty("FPM_PROFILE_DIR", "");
    EXPECT_EQ(profileDirectory(),
              fs::path("/xdg/cache/fpm/profiles") / thisHost());
  }
  ScopedEnv unset("FPM_PROFILE_DIR", std::nullopt);
  EXPECT_EQ(profileDirectory(),
            fs::path("/xdg/cache/fpm/profiles") / thisHost());
  {
    ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");
    EXPECT_EQ(profileDirectory(),
              fs::path("/home/someone/.cache/fpm/profiles") / thisHost());
  }
  ScopedEnv noCache("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(profileDirectory(),
            fs::path("/home/someone/.cache/fpm/profiles") / thisHost());
  EXPECT_NE(profileDirectory().string().find(thisHost()), std::string::npos);
  ScopedEnv noHome("HOME", std::nullopt);
  EXPECT_EQ(profileDirectory(), fs::path());
}

TEST(ProfileStorePath, EncodesEveryNameToItsOwnFile) {
  fs::path dir = "/d";
  EXPECT_EQ(profilePath(dir, "mm.rows", "cpu"),
            fs::path("/d/mm.rows@cpu.json"));
  EXPECT_EQ(profilePath(dir, "a_b-c.1", "opencl0"),
            fs::path("/d/a_b-c.1@opencl0.json"));

  fs::path odd = profilePath(dir, "a/b c", "cpu");
  EXPECT_EQ(odd.parent_path(), dir);
  EXPECT_EQ(odd.filename().string().find('/'), std::string::npos);
  EXPECT_EQ(odd.filename(), "a%2Fb%20c@cpu.json");
  EXPECT_EQ(profilePath(dir, "..", "cpu").parent_path(), dir);

  // '@' and '%' are encoded too, so the split into loop and device, and
  // the decoding, are unambiguous.
  std::vector<std::pair<std::string, std::string>> names = {
      {"a@b", "c"}, {"a", "b@c"},  {"a%40b", "c"}, {"a b", "c"},
      {"a_b", "c"}, {"a/b", "c"},  {"a:b", "c"},   {"\xc3\xa9", "c"},
      {"", "c"},    {"a", "cpu0"}, {"a", "cpu"}};
  std::vector<fs::path> files;
  for (const auto &[loop, device] : names)
    files.push_back(profilePath(dir, loop, device));
  std::sort(files.begin(), files.end());
  EXPECT_EQ(std::adjacent_find(files.begin(), files.end()), files.end());
}

TEST(ProfileStoreSamples, BucketsSizesToTheGrain) {
  Samples samples(64);
  samples.add(64, 1.0);
  samples.add(60, 0.6);    // nearest multiple 64: scaled to 0.64
  samples.add(100, 2.0);   // 1.56 grains: 128, scaled to 2.56
  samples.add(96, 1.5);    // 1.5 grains round up: 128, scaled to 2.0
  samples.add(10, 0.1);    // below half a grain: still one grain
  samples.add(0, 1.0);     // no work: dropped
  samples.add(64, 0.0);    // no time: dropped
  samples.add(64, NAN);    // dropped
  samples.add(64, 5e-324); // an infinite speed: dropped

  std::vector<ProfilePoint> points = samples.summarize();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].size, 64);
  EXPECT_EQ(points[0].reps, 3);
  EXPECT_DOUBLE_EQ(points[0].time, (1.0 + 0.64 + 0.64) / 3);
  EXPECT_EQ(points[1].size, 128);
  EXPECT_EQ(points[1].reps, 2);
  EXPECT_DOUBLE_EQ(points[1].time, (2.56 + 2.0) / 2);
}

// Found by test/fuzz/store_fuzzer.cpp: a grain above 2^62 overflowed
// 2 * (size % grain) (UBSan), and rounding up could pass INT64_MAX.
TEST(ProfileStoreSamples, HugeGrainsRoundWithoutOverflow) {
  constexpr std::int64_t Most = std::numeric_limits<std::int64_t>::max();
  const std::int64_t grain = (std::int64_t{1} << 62) + 1;
  Samples samples(grain);
  samples.add(Most, 1.0);      // 1.99.. grains: up to 2 is past INT64_MAX
  samples.add(grain + 5, 1.0); // 1.00.. grains: one
  samples.add(grain / 2, 1.0); // just below half a grain: still one
  std::vector<ProfilePoint> points = samples.summarize();
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].size, grain);
  EXPECT_EQ(points[0].reps, 3);

  Samples whole(Most);
  whole.add(Most - 1, 1.0);
  whole.add(1, 1.0);
  points = whole.summarize();
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].size, Most);
}

TEST(ProfileStoreSamples, AnOutlierDoesNotMoveTheMean) {
  std::vector<double> times;
  for (int i = 0; i < 20; ++i)
    times.push_back(1.0 + 0.01 * ((i * 7) % 5 - 2)); // 0.98 .. 1.02
  double clean = 0;
  for (double t : times)
    clean += t / static_cast<double>(times.size());

  Samples samples(1);
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (i == 7)
      samples.add(10, 50.0); // a page fault's worth, mid-run
    samples.add(10, times[i]);
  }
  std::vector<ProfilePoint> points = samples.summarize();
  ASSERT_EQ(points.size(), 1u);
  EXPECT_NEAR(points[0].time, clean, 0.01 * clean);
  EXPECT_EQ(points[0].reps, 20);

  // Identical samples have a MAD of 0; the outlier still goes.
  Samples flat(1);
  for (int i = 0; i < 10; ++i)
    flat.add(10, 2.0);
  flat.add(10, 100.0);
  points = flat.summarize();
  EXPECT_DOUBLE_EQ(points[0].time, 2.0);
  EXPECT_EQ(points[0].reps, 10);
  EXPECT_DOUBLE_EQ(*points[0].ci, 0.0);
}

TEST(ProfileStoreSamples, RepsAndCiOfAKnownSet) {
  std::vector<double> times = {1.0, 1.1, 0.9, 1.05, 0.95};
  Samples samples(1);
  for (double t : times)
    samples.add(8, t);
  std::vector<ProfilePoint> points = samples.summarize();
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].reps, 5);
  EXPECT_NEAR(points[0].time, 1.0, 1e-12);
  // s = sqrt(0.025 / 4); t_{0.975,4} = 2.776445.
  EXPECT_NEAR(*points[0].ci,
              2.776445105 * std::sqrt(0.025 / 4) / std::sqrt(5.0), 1e-9);
  EXPECT_NEAR(*points[0].ci, halfWidth(times), 1e-12);

  Samples one(1);
  one.add(8, 0.5);
  points = one.summarize();
  EXPECT_EQ(points[0].reps, 1);
  EXPECT_FALSE(points[0].ci.has_value());
}

TEST(ProfileStoreSamples, KeepsTheLatestSamplesOfABucket) {
  Samples samples(1, 4);
  for (int i = 1; i <= 10; ++i)
    samples.add(5, static_cast<double>(i));
  std::vector<ProfilePoint> points = samples.summarize();
  EXPECT_EQ(points[0].reps, 4);
  EXPECT_DOUBLE_EQ(points[0].time, (7.0 + 8 + 9 + 10) / 4);
  samples.clear();
  EXPECT_TRUE(samples.empty());
  EXPECT_TRUE(samples.summarize().empty());
}

TEST(ProfileStoreStudentT, TableAndExpansion) {
  EXPECT_DOUBLE_EQ(studentT975(1), 12.706204736);
  EXPECT_DOUBLE_EQ(studentT975(30), 2.042272456);
  EXPECT_NEAR(studentT975(31), 2.039513446, 1e-5);
  EXPECT_NEAR(studentT975(60), 2.000297822, 1e-6);
  EXPECT_NEAR(studentT975(1000000000), 1.959963985, 1e-8); // the normal
  EXPECT_EQ(studentT975(0), 0.0);
}

TEST(ProfileStoreMerge, PoolsPointsOfEqualSize) {
  Profile stored;
  stored.kernel = "k";
  stored.device = "cpu";
  double s1 = 0.1;
  stored.points = {point(32, 0.5),
                   point(64, 1.0, 3, studentT975(2) * s1 / std::sqrt(3.0))};
  ProfilePoint fresh[] = {point(128, 4.0, 2, 0.01), point(64, 2.0, 1),
                          point(16, 0.25)};

  Profile merged = mergeProfiles(stored, fresh);
  EXPECT_EQ(validate(merged), "");
  EXPECT_EQ(merged.kernel, "k");
  ASSERT_EQ(merged.points.size(), 4u);
  EXPECT_EQ(merged.points[0].size, 16);
  EXPECT_EQ(merged.points[1].size, 32);
  EXPECT_EQ(merged.points[2].size, 64);
  EXPECT_EQ(merged.points[3].size, 128);
  EXPECT_FALSE(merged.points[1].reps.has_value()); // untouched

  const ProfilePoint &pooled = merged.points[2];
  EXPECT_EQ(pooled.reps, 4);
  EXPECT_DOUBLE_EQ(pooled.time, (3 * 1.0 + 2.0) / 4);
  // Within: 2 s1^2; between: 3 (1 - 1.25)^2 + (2 - 1.25)^2.
  double squares = 2 * s1 * s1 + 3 * 0.0625 + 0.5625;
  EXPECT_NEAR(*pooled.ci, studentT975(3) * std::sqrt(squares / 3) / 2, 1e-12);

  // A point without reps counts as one.
  ProfilePoint again[] = {point(32, 1.5)};
  Profile twice = mergeProfiles(merged, again);
  EXPECT_EQ(twice.points[1].reps, 2);
  EXPECT_DOUBLE_EQ(twice.points[1].time, 1.0);
  EXPECT_EQ(validate(twice), "");

  ProfilePoint invalid[] = {point(8, 0.0)};
  EXPECT_THROW(mergeProfiles(stored, invalid), std::invalid_argument);
  // A time whose speed is infinite could not be read back.
  ProfilePoint tiny[] = {point(8, 5e-324)};
  EXPECT_THROW(mergeProfiles(stored, tiny), std::invalid_argument);
  // Nor could reps below 1 or a ci that is negative or not finite (found
  // by test/fuzz/store_fuzzer.cpp: merge wrote them, load refused them).
  for (ProfilePoint bad :
       {point(8, 1.0, 0), point(8, 1.0, -3), point(8, 1.0, 2, -0.5),
        point(8, 1.0, 2, NAN), point(8, 1.0, 2, INFINITY)}) {
    ProfilePoint one[] = {bad};
    EXPECT_THROW(mergeProfiles(stored, one), std::invalid_argument);
  }
}

TEST(ProfileStoreMerge, PoolingSummariesEqualsSummarizingAllSamples) {
  std::vector<double> first = {1.0, 1.2, 0.9, 1.1};
  std::vector<double> second = {1.3, 1.15, 1.05};
  Samples a(1), b(1);
  for (double t : first)
    a.add(4, t);
  for (double t : second)
    b.add(4, t);
  Profile stored;
  stored.kernel = "k";
  stored.device = "cpu";
  stored.points = a.summarize();
  std::vector<ProfilePoint> fresh = b.summarize();
  Profile merged = mergeProfiles(stored, fresh);

  std::vector<double> all = first;
  all.insert(all.end(), second.begin(), second.end());
  double mean = 0;
  for (double t : all)
    mean += t / static_cast<double>(all.size());
  ASSERT_EQ(merged.points.size(), 1u);
  EXPECT_EQ(merged.points[0].reps, 7);
  EXPECT_NEAR(merged.points[0].time, mean, 1e-12);
  EXPECT_NEAR(*merged.points[0].ci, halfWidth(all), 1e-12);
}

TEST(ProfileStoreLoad, MissingFileIsSilent) {
  TempDir dir;
  ProfileStore store(dir.path());
  testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load("loop", "cpu").has_value());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(ProfileStoreLoad, ReadsAValidProfile) {
  TempDir dir;
  ProfileStore store(dir.path());
  Profile profile;
  profile.kernel = "mm.rows";
  profile.device = "opencl0";
  profile.points = {point(1, 0.5), point(2, 0.75, 4, 0.01)};
  writeProfile(profilePath(dir.path(), "mm.rows", "opencl0"), profile);
  std::optional<Profile> loaded = store.load("mm.rows", "opencl0");
  ASSERT_TRUE(loaded.has_value());
  ASSERT_EQ(loaded->points.size(), 2u);
  EXPECT_EQ(loaded->points[1].reps, 4);
}

TEST(ProfileStoreLoad, ReportsEachBadFileOnce) {
  TempDir dir;
  ProfileStore store(dir.path());
  Profile other;
  other.kernel = "other";
  other.device = "cpu";
  other.points = {point(1, 0.5)};

  struct Case {
    std::string loop, device, text, problem;
  } cases[] = {
      {"corrupt", "cpu", "{\"format\": ", "invalid JSON"},
      {"format", "cpu",
       R"({"format": "fpm-profile/2", "kernel": "format", "device": "cpu",
           "points": [{"size": 1, "time": 1}]})",
       "unsupported format 'fpm-profile/2'"},
      {"kernel", "cpu", formatProfile(other), "its kernel is 'other'"},
      {"other", "opencl0", formatProfile(other), "its device is 'cpu'"},
  };
  for (const Case &c : cases) {
    fs::path file = profilePath(dir.path(), c.loop, c.device);
    writeFileAtomically(file, c.text);
    testing::internal::CaptureStderr();
    EXPECT_FALSE(store.load(c.loop, c.device).has_value()) << c.loop;
    EXPECT_FALSE(ProfileStore(dir.path()).load(c.loop, c.device).has_value());
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(lines(err), 1u) << err;
    EXPECT_EQ(err.rfind("fpm: " + file.string() + ": ", 0), 0u) << err;
    EXPECT_NE(err.find(c.problem), std::string::npos) << err;
    EXPECT_NE(err.find("; ignoring it\n"), std::string::npos) << err;
  }
}

TEST(ProfileStorePath, LongNamesAreShortenedToFilesOfTheirOwn) {
  TempDir tmp;
  ProfileStore store(tmp.path());
  // Longer than a file name may be once encoded, differing only at the
  // end; a multi-byte one whose cut must not split a %XX.
  const std::string common(300, 'x');
  std::string accents;
  for (int i = 0; i < 60; ++i)
    accents += "\xc3\xa9";
  const std::vector<std::pair<std::string, std::string>> names = {
      {common + "1", "cpu"},
      {common + "2", "cpu"},
      {common + "1", "opencl0." + std::string(200, 'u') + "cu"},
      {accents, "cpu"},
      {"short", "cpu"}};
  std::vector<fs::path> files;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto &[loop, device] = names[i];
    const ProfilePoint points[] = {point(64, 1.0 + static_cast<double>(i))};
    ASSERT_NO_THROW(store.merge(loop, device, "", points)) << i;
    const fs::path file = profilePath(tmp.path(), loop, device);
    EXPECT_LT(file.filename().string().size(), 255u - 12u) << i;
    files.push_back(file);
    const std::optional<Profile> loaded = store.load(loop, device);
    ASSERT_TRUE(loaded) << i;
    EXPECT_EQ(loaded->kernel, loop);
    EXPECT_DOUBLE_EQ(loaded->points[0].time, 1.0 + static_cast<double>(i));
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(std::adjacent_find(files.begin(), files.end()), files.end());
  // A shortened name keeps its readable beginning and is marked by '~'.
  EXPECT_TRUE(profilePath(tmp.path(), common + "1", "cpu")
                  .filename()
                  .string()
                  .starts_with(std::string(80, 'x') + "~"));
  EXPECT_EQ(profilePath(tmp.path(), accents, "cpu").filename().string()[78],
            '~'); // 26 whole %C3%A9 pairs, not a split one

  // fpm-profile --show finds them by their whole names.
  const ProfileListing all = listProfiles(tmp.path(), std::nullopt);
  EXPECT_TRUE(all.problems.empty());
  ASSERT_EQ(all.loops.size(), 4u);
  const ProfileListing one = listProfiles(tmp.path(), common + "1");
  ASSERT_EQ(one.loops.size(), 1u);
  EXPECT_EQ(one.loops[0].loop, common + "1");
  EXPECT_EQ(one.loops[0].profiles.size(), 2u);

  // A shortened file holding another loop's profile is a problem, as a
  // misnamed short one is.
  fs::copy_file(profilePath(tmp.path(), common + "2", "cpu"),
                tmp.path() /
                    (std::string(80, 'x') + "~0123456789abcdef@cpu.json"));
  const ProfileListing bad = listProfiles(tmp.path(), std::nullopt);
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_NE(bad.problems[0].find("not the one its name says"),
            std::string::npos)
      << bad.problems[0];
}

TEST(ProfileStoreMerge, CreatesTheFolderAndPoolsWithTheStoredFile) {
  TempDir tmp;
  fs::path dir = tmp.path() / "cache" / "fpm" / "profiles";
  ProfileStore store(dir);
  ProfilePoint first[] = {point(64, 1.0, 2, 0.1), point(128, 2.0, 1)};
  store.merge("mm.rows", "cpu", "test CPU", first);
  fs::path file = profilePath(dir, "mm.rows", "cpu");
  ASSERT_TRUE(fs::exists(file));

  Profile written = readProfile(file);
  EXPECT_EQ(written.kernel, "mm.rows");
  EXPECT_EQ(written.device, "cpu");
  EXPECT_EQ(written.deviceName, "test CPU");
  EXPECT_EQ(written.host, thisHost());
  ASSERT_EQ(written.created.size(), 20u); // 2026-11-21T10:00:00Z
  EXPECT_EQ(written.created.back(), 'Z');

  ProfilePoint second[] = {point(64, 4.0, 2, 0.1), point(256, 3.0, 1)};
  store.merge("mm.rows", "cpu", "", second);
  std::optional<Profile> loaded = store.load("mm.rows", "cpu");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->deviceName, "test CPU"); // kept when not given
  EXPECT_EQ(loaded->created, written.created);
  ASSERT_EQ(loaded->points.size(), 3u);
  EXPECT_EQ(loaded->points[0].reps, 4);
  EXPECT_DOUBLE_EQ(loaded->points[0].time, 2.5);
  EXPECT_EQ(loaded->points[1].reps, 1);
  EXPECT_EQ(loaded->points[2].size, 256);
}

// Found by test/fuzz/store_fuzzer.cpp: a name that is not UTF-8 (a loop
// in a file named in Latin-1, a driver's device name) made formatProfile
// throw nlohmann's type_error, which ended the program.
TEST(ProfileStoreMerge, NamesThatAreNotUtf8AreStoredAndFoundAgain) {
  TempDir dir;
  ProfileStore store(dir.path());
  const std::string loop = "caf\xe9.c:12", device = "opencl\xff";
  const ProfilePoint points[] = {point(64, 1.0, 2, 0.1)};
  store.merge(loop, device, "GPU \xc3", points);
  store.merge(loop, device, "", points);
  const std::optional<Profile> loaded = store.load(loop, device);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->kernel, "caf\uFFFD.c:12");
  EXPECT_EQ(loaded->device, "opencl\uFFFD");
  EXPECT_EQ(loaded->deviceName, "GPU \uFFFD");
  EXPECT_EQ(loaded->points[0].reps, 4);
  EXPECT_EQ(storedText(loop), loaded->kernel);
  EXPECT_EQ(storedText("plain"), "plain");
  // Another name that reads the same is still a file of its own.
  EXPECT_FALSE(store.load("caf\xe8.c:12", device));
}

TEST(ProfileStoreMerge, ReplaceDropsTheStoredPoints) {
  TempDir dir;
  ProfileStore store(dir.path());
  const ProfilePoint old[] = {point(64, 1.0, 5, 0.1), point(128, 2.0, 5)};
  store.merge("loop", "cpu", "old CPU", old);
  const ProfilePoint fresh[] = {point(64, 3.0, 2, 0.2), point(256, 4.0, 1)};
  store.merge("loop", "cpu", "", fresh, /*replace=*/true);
  const std::optional<Profile> loaded = store.load("loop", "cpu");
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->points.size(), 2u);
  EXPECT_EQ(loaded->points[0].reps, 2);
  EXPECT_DOUBLE_EQ(loaded->points[0].time, 3.0);
  EXPECT_EQ(loaded->points[1].size, 256);
  // Nothing replaces a profile with nothing.
  store.merge("loop", "cpu", "", {}, true);
  EXPECT_EQ(store.load("loop", "cpu")->points.size(), 2u);
}

TEST(ProfileStoreMerge, ReplacesACorruptFileAndKeepsIt) {
  TempDir dir;
  ProfileStore store(dir.path());
  fs::path file = profilePath(dir.path(), "loop", "cpu");
  writeFileAtomically(file, "{ not json");

  ProfilePoint fresh[] = {point(8, 0.5, 1)};
  testing::internal::CaptureStderr();
  store.merge("loop", "cpu", "", fresh);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines(err), 1u) << err;
  EXPECT_NE(err.find("invalid JSON"), std::string::npos) << err;
  EXPECT_NE(err.find(".corrupt"), std::string::npos) << err;

  EXPECT_EQ(readFile(fs::path(file) += ".corrupt"), "{ not json");
  Profile replaced = readProfile(file);
  ASSERT_EQ(replaced.points.size(), 1u);
  EXPECT_EQ(replaced.points[0].reps, 1);

  // A file of another kernel under this name is no use either.
  Profile other = replaced;
  other.kernel = "other";
  writeProfile(file, other);
  testing::internal::CaptureStderr();
  store.merge("loop", "cpu", "", fresh);
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(readProfile(file).kernel, "loop");
  EXPECT_EQ(readProfile(file).points[0].reps, 1);
  EXPECT_EQ(readProfile(fs::path(file) += ".corrupt").kernel, "other");
}

TEST(ProfileStoreMerge, AnUnwritableFolderThrowsNamingTheFile) {
  TempDir tmp;
  fs::path blocker = tmp.path() / "file";
  writeFileAtomically(blocker, "not a folder");
  ProfileStore store(blocker / "profiles");
  ProfilePoint fresh[] = {point(8, 0.5)};
  try {
    store.merge("loop", "cpu", "", fresh);
    FAIL() << "no exception";
  } catch (const ProfileError &error) {
    EXPECT_NE(std::string(error.what()).find("loop@cpu.json"),
              std::string::npos)
        << error.what();
  }
  ProfileStore nothing(tmp.path());
  EXPECT_NO_THROW(nothing.merge("loop", "cpu", "", {}));
  EXPECT_FALSE(fs::exists(profilePath(tmp.path(), "loop", "cpu")));
}

// flock(2) locks belong to the open file description, so two descriptors
// that one process opened separately exclude each other: threads are held
// off by flock alone (the store adds a mutex for NFS, where they are not).
TEST(ProfileStoreLock, FlockExcludesTwoDescriptorsOfOneProcess) {
  TempDir dir;
  fs::path lockFile = dir.path() / "x.lock";
  int a = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  int b = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_EQ(::flock(a, LOCK_EX), 0);
  EXPECT_EQ(::flock(b, LOCK_EX | LOCK_NB), -1);
  EXPECT_EQ(errno, EWOULDBLOCK);
  ::close(a); // closing releases the lock
  EXPECT_EQ(::flock(b, LOCK_EX | LOCK_NB), 0);
  ::close(b);
}

TEST(ProfileStoreConcurrency, ProcessesMergingAtOnceLoseNothing) {
  TempDir dir;
  constexpr int Children = 4, Merges = 50;
  std::vector<pid_t> children;
  for (int child = 0; child < Children; ++child) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        ProfileStore store(dir.path());
        ProfilePoint fresh[] = {point(64, 0.1 * (child + 1), 1),
                                point(1000 + child, 1.0, 1)};
        for (int i = 0; i < Merges; ++i)
          store.merge("shared", "cpu", "", fresh);
      } catch (...) {
        status = 1;
      }
      ::_exit(status); // no gtest teardown or atexit handlers in the child
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  Profile merged = readProfile(profilePath(dir.path(), "shared", "cpu"));
  ASSERT_EQ(merged.points.size(), 1u + Children);
  EXPECT_EQ(merged.points[0].size, 64);
  EXPECT_EQ(merged.points[0].reps, Children * Merges);
  EXPECT_NEAR(merged.points[0].time, 0.25, 1e-12); // mean of 0.1 .. 0.4
  for (int child = 0; child < Children; ++child) {
    const ProfilePoint *own = find(merged, 1000 + child);
    ASSERT_NE(own, nullptr) << child;
    EXPECT_EQ(own->reps, Merges);
  }
}

TEST(ProfileStoreConcurrency, ThreadsMergingAtOnceLoseNothing) {
  TempDir dir;
  constexpr int Threads = 8, Merges = 50;
  std::atomic<int> failures = 0;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < Threads; ++thread)
    threads.emplace_back([&dir, &failures, thread] {
      try {
        ProfileStore store(dir.path()); // each its own, as separate loops'
        ProfilePoint fresh[] = {point(64, 0.5, 1),
                                point(1000 + thread, 1.0, 1)};
        for (int i = 0; i < Merges; ++i)
          store.merge("shared", "cpu", "", fresh);
      } catch (...) {
        ++failures;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures, 0);

  Profile merged = readProfile(profilePath(dir.path(), "shared", "cpu"));
  ASSERT_EQ(merged.points.size(), 1u + Threads);
  EXPECT_EQ(merged.points[0].reps, Threads * Merges);
  for (int thread = 0; thread < Threads; ++thread) {
    const ProfilePoint *own = find(merged, 1000 + thread);
    ASSERT_NE(own, nullptr) << thread;
    EXPECT_EQ(own->reps, Merges);
  }
}

TEST(ProfileStoreLoad, ADeeplyNestedFileIsReportedNotACrash) {
  TempDir dir;
  ProfileStore store(dir.path());
  constexpr std::size_t Depth = 200000;
  writeFileAtomically(profilePath(dir.path(), "deep", "cpu"),
                      R"({"format":"fpm-profile/1","kernel":"deep",)"
                      R"("device":"cpu","points":[{"size":1,"time":)" +
                          std::string(Depth, '[') + std::string(Depth, ']') +
                          "}]}");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load("deep", "cpu").has_value());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("nested more than 64 deep; ignoring it"),
            std::string::npos)
      << err;
  EXPECT_LT(err.size(), 300u);
}

TEST(ProfileStore, AFifoNamedLikeAProfileIsReportedNotWaitedOn) {
  // The runtime hung at exit (CPU loops) or at the first call (OpenCL)
  // opening a FIFO of a profile's name for reading.
  TempDir dir;
  ProfileStore store(dir.path());
  const fs::path file = profilePath(dir.path(), "fifo", "cpu");
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load("fifo", "cpu").has_value());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "fpm: " + file.string() +
                     ": not a regular file (a FIFO); ignoring it\n");
  // A merge reports it, keeps it aside and writes the measurements.
  testing::internal::CaptureStderr();
  const std::array fresh{point(4, 1.0)};
  store.merge("fifo", "cpu", "", fresh);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not a regular file (a FIFO); replacing it"),
            std::string::npos)
      << err;
  EXPECT_EQ(readProfile(file).points.size(), 1u);
}

TEST(ProfileStoreMerge, SaturatesRatherThanWriteWhatItsReaderRefuses) {
  // Merging into reps 2^63 - 1 wrote -2^63, and a ci of 1e308 became
  // null: the next run moved the whole profile aside.
  constexpr std::int64_t Most = std::numeric_limits<std::int64_t>::max();
  constexpr double Largest = std::numeric_limits<double>::max();
  TempDir dir;
  ProfileStore store(dir.path());
  Profile stored;
  stored.kernel = "k";
  stored.device = "cpu";
  stored.points = {point(1, 1.0, Most, 1e308), point(2, Largest, 2, 1e308)};
  writeProfile(profilePath(dir.path(), "k", "cpu"), stored);
  const std::array fresh{point(1, 2.0, 5, 0.5), point(2, Largest / 2, 3, 1.0)};
  testing::internal::CaptureStderr();
  store.merge("k", "cpu", "", fresh);
  std::optional<Profile> loaded = store.load("k", "cpu");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(loaded.has_value());
  ASSERT_EQ(loaded->points.size(), 2u);
  EXPECT_EQ(loaded->points[0].reps, Most);
  EXPECT_DOUBLE_EQ(loaded->points[0].time, 1.0);
  EXPECT_EQ(loaded->points[0].ci, Largest);
  EXPECT_EQ(loaded->points[1].reps, 5);
  // (2 * Largest + 3 * Largest / 2) / 5 without overflowing.
  EXPECT_DOUBLE_EQ(loaded->points[1].time, 0.7 * Largest);
  EXPECT_EQ(loaded->points[1].ci, Largest);
}

namespace {

/// A random point the format allows, extremes often: sizes up to 2^63 - 1,
/// times from 1e-280 (any size then has a finite speed) to the largest
/// double, reps up to 2^63 - 1 and ci up to the largest double.
ProfilePoint randomPoint(std::mt19937_64 &random, std::int64_t size) {
  constexpr std::int64_t Most = std::numeric_limits<std::int64_t>::max();
  constexpr double Largest = std::numeric_limits<double>::max();
  auto pick = [&](int choices) {
    return std::uniform_int_distribution<int>(0, choices - 1)(random);
  };
  auto logUniform = [&](double low, double high) {
    return std::exp(std::uniform_real_distribution<double>(
        std::log(low), std::log(high))(random));
  };
  ProfilePoint p;
  p.size = size;
  switch (pick(5)) {
  case 0:
    p.time = Largest;
    break;
  case 1:
    p.time = 1e308;
    break;
  case 2:
    p.time = 1e-280;
    break;
  default:
    p.time = std::min(logUniform(1e-280, 1e308), Largest);
  }
  switch (pick(6)) {
  case 0:
    break; // no reps
  case 1:
    p.reps = 1;
    break;
  case 2:
    p.reps = Most;
    break;
  case 3:
    p.reps = Most - std::uniform_int_distribution<std::int64_t>(0, 10)(random);
    break;
  default:
    p.reps = std::uniform_int_distribution<std::int64_t>(1, Most)(random);
  }
  switch (pick(5)) {
  case 0:
    break; // no ci
  case 1:
    p.ci = 0.0;
    break;
  case 2:
    p.ci = Largest;
    break;
  case 3:
    p.ci = 1e308;
    break;
  default:
    p.ci = logUniform(1e-300, 1e308);
  }
  return p;
}

/// 1..4 points of distinct sizes, drawn from a few small and huge sizes so
/// that stored and fresh points often meet.
std::vector<ProfilePoint> randomPoints(std::mt19937_64 &random) {
  const std::int64_t sizes[] = {1,
                                2,
                                3,
                                1000,
                                std::numeric_limits<std::int64_t>::max() - 1,
                                std::numeric_limits<std::int64_t>::max()};
  std::vector<std::int64_t> chosen(std::begin(sizes), std::end(sizes));
  std::shuffle(chosen.begin(), chosen.end(), random);
  chosen.resize(std::uniform_int_distribution<std::size_t>(1, 4)(random));
  std::sort(chosen.begin(), chosen.end());
  std::vector<ProfilePoint> points;
  for (std::int64_t size : chosen)
    points.push_back(randomPoint(random, size));
  return points;
}

} // namespace

TEST(ProfileStoreMerge, WhateverMergeWritesLoadAccepts) {
  std::mt19937_64 random(20261121);
  // In memory: what merge would write, read back as load reads it.
  for (int i = 0; i < 20000; ++i) {
    Profile stored;
    stored.kernel = "k";
    stored.device = "cpu";
    stored.points = randomPoints(random);
    ASSERT_EQ(validate(stored), "") << "iteration " << i;
    std::vector<ProfilePoint> fresh = randomPoints(random);
    Profile merged = mergeProfiles(stored, fresh);
    ASSERT_EQ(validate(merged), "") << "iteration " << i;
    Profile back;
    ASSERT_NO_THROW(back = parseProfile(formatProfile(merged), "m.json"))
        << "iteration " << i << ":\n"
        << formatProfile(merged);
    ASSERT_EQ(back.points.size(), merged.points.size());
    for (std::size_t k = 0; k < back.points.size(); ++k) {
      EXPECT_EQ(back.points[k].time, merged.points[k].time);
      EXPECT_EQ(back.points[k].reps, merged.points[k].reps);
      EXPECT_EQ(back.points[k].ci, merged.points[k].ci);
    }
  }
  // Through the store itself: merge under its lock, then load.
  TempDir dir;
  ProfileStore store(dir.path());
  for (int i = 0; i < 200; ++i) {
    const std::string loop = "loop" + std::to_string(i % 20);
    std::vector<ProfilePoint> fresh = randomPoints(random);
    testing::internal::CaptureStderr();
    store.merge(loop, "cpu", "", fresh);
    std::optional<Profile> loaded = store.load(loop, "cpu");
    std::string err = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(loaded.has_value()) << "iteration " << i << ": " << err;
    ASSERT_EQ(err, "") << "iteration " << i;
  }
}
