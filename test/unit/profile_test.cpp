//===- profile_test.cpp - The fpm-profile/1 reader and writer -------------===//

#include "model/profile.hpp"

#include <gtest/gtest.h>

#include "support/scoped.hpp"
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace fpm;

namespace {

using fpm::test::TempDir;

const char *ValidProfile = R"({
  "format": "fpm-profile/1", "kernel": "matmul.rows", "device": "cpu",
  "device_name": "test CPU", "host": "node17", "created": "2026-11-21T10:00:00Z",
  "extra": {"unknown": "fields are ignored"},
  "points": [
    {"size": 1, "time": 0.0021},
    {"size": 2, "time": 0.0035, "reps": 10, "ci": 0.00004},
    {"size": 4, "time": 0.0061}
  ]})";

/// The message parseProfile throws for `json`, or "" when it parses.
std::string errorOf(const std::string &json) {
  try {
    parseProfile(json, "bad.json");
  } catch (const ProfileError &error) {
    return error.what();
  }
  return "";
}

} // namespace

TEST(Profile, ReadsEveryField) {
  Profile profile = parseProfile(ValidProfile, "x.json");
  EXPECT_EQ(profile.kernel, "matmul.rows");
  EXPECT_EQ(profile.device, "cpu");
  EXPECT_EQ(profile.deviceName, "test CPU");
  EXPECT_EQ(profile.host, "node17");
  ASSERT_EQ(profile.points.size(), 3u);
  EXPECT_EQ(profile.points[1].size, 2);
  EXPECT_DOUBLE_EQ(profile.points[1].time, 0.0035);
  EXPECT_EQ(profile.points[1].reps, 10);
  EXPECT_DOUBLE_EQ(*profile.points[1].ci, 0.00004);
  EXPECT_FALSE(profile.points[0].reps.has_value());
  EXPECT_DOUBLE_EQ(profile.points[2].speed(), 4 / 0.0061);
}

TEST(Profile, ErrorsNameTheFileAndTheProblem) {
  struct Case {
    const char *json;
    const char *expected;
  } cases[] = {
      {"{", "bad.json: invalid JSON: "},
      {"[]", "bad.json: the top level must be a JSON object"},
      {R"({"kernel":"k","device":"d","points":[{"size":1,"time":1}]})",
       "bad.json: missing required field 'format'"},
      {R"({"format":"fpm-profile/2","kernel":"k","device":"d","points":[]})",
       "bad.json: unsupported format 'fpm-profile/2'"},
      {R"({"format":"fpm-profile/1","device":"d","points":[]})",
       "bad.json: missing required field 'kernel'"},
      {R"({"format":"fpm-profile/1","kernel":"k","points":[]})",
       "bad.json: missing required field 'device'"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d"})",
       "bad.json: missing required field 'points'"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d","points":[]})",
       "bad.json: 'points' must hold at least one point"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":2,"time":1},{"size":2,"time":1}]})",
       "bad.json: sizes must be strictly increasing: points[1].size 2 "
       "follows 2"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":0,"time":1}]})",
       "bad.json: points[0].size must be positive"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":1.5,"time":1}]})",
       "bad.json: points[0].size must be an integer"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":1,"time":0}]})",
       "bad.json: points[0].time must be finite and > 0"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":1,"time":-2}]})",
       "bad.json: points[0].time must be finite and > 0"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":1,"time":1e999}]})",
       "bad.json: invalid JSON: number overflow parsing '1e999'"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"size":1,"time":"fast"}]})",
       "bad.json: points[0].time must be a number"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",
           "points":[{"time":1}]})",
       "bad.json: points[0] has no 'size'"},
      {R"({"format":"fpm-profile/1","kernel":7,"device":"d","points":[]})",
       "bad.json: field 'kernel' must be a string"},
  };
  for (const Case &c : cases) {
    std::string message = errorOf(c.json);
    EXPECT_EQ(message.rfind(c.expected, 0), 0u)
        << "for " << c.json << "\n got: " << message;
  }
}

TEST(Profile, ATimeSoSmallThatTheSpeedIsInfiniteIsRefused) {
  // 5e-324 is finite and > 0, but size / time is +inf: the plot wrote -inf
  // coordinates and the partitioners computed with NaN.
  EXPECT_EQ(
      errorOf(R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
              R"("points":[{"size":1,"time":1},{"size":2,"time":5e-324}]})"),
      "bad.json: points[1].time 4.94066e-324 is too small: size 2 / "
      "time is not a finite speed");
  EXPECT_NE(errorOf(R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
                    R"("points":[{"size":9000000000000000000,"time":1e-300}]})")
                .find("is not a finite speed"),
            std::string::npos);
  // The smallest times with a finite speed are fine.
  EXPECT_EQ(errorOf(R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
                    R"("points":[{"size":1,"time":1e-308},)"
                    R"({"size":9000000000000000000,"time":1e-280}]})"),
            "");
}

TEST(Profile, UnreadableFileIsNamed) {
  try {
    readProfile("/nonexistent/fpm/profile.json");
    FAIL() << "expected ProfileError";
  } catch (const ProfileError &error) {
    EXPECT_EQ(std::string(error.what()),
              "/nonexistent/fpm/profile.json: cannot open: No such file or "
              "directory");
  }
}

TEST(Profile, WriteThenReadGivesTheSameProfile) {
  TempDir dir;
  Profile profile = parseProfile(ValidProfile, "x.json");
  profile.points[0].time = 0.1 + 0.2; // needs all 17 digits to round-trip
  std::filesystem::path file = dir.path() / "p.json";
  writeProfile(file, profile);
  Profile back = readProfile(file);
  ASSERT_EQ(back.points.size(), profile.points.size());
  for (std::size_t i = 0; i < back.points.size(); ++i) {
    EXPECT_EQ(back.points[i].size, profile.points[i].size);
    EXPECT_EQ(back.points[i].time, profile.points[i].time);
    EXPECT_EQ(back.points[i].reps, profile.points[i].reps);
    EXPECT_EQ(back.points[i].ci, profile.points[i].ci);
  }
  EXPECT_EQ(back.kernel, profile.kernel);
  EXPECT_EQ(back.created, profile.created);
  // Only the file itself is left behind: the temporary was renamed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(Profile, WriteReplacesAtomicallyAndRefusesInvalidProfiles) {
  TempDir dir;
  std::filesystem::path file = dir.path() / "p.json";
  Profile profile = parseProfile(ValidProfile, "x.json");
  writeProfile(file, profile);
  profile.points[0].time = -1;
  EXPECT_THROW(writeProfile(file, profile), ProfileError);
  // The old file is intact and nothing else was left.
  EXPECT_DOUBLE_EQ(readProfile(file).points[0].time, 0.0021);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
  EXPECT_THROW(writeProfile(dir.path() / "missing" / "p.json",
                            parseProfile(ValidProfile, "x.json")),
               ProfileError);
}

TEST(Profile, DeepNestingIsAnErrorNotACrash) {
  // 200,000 levels overflowed the stack of nlohmann's dump(), called to
  // echo the bad value.
  constexpr std::size_t Depth = 200000;
  const std::string nested = std::string(Depth, '[') + std::string(Depth, ']');
  for (const char *field : {"size", "time"}) {
    std::string json = R"({"format":"fpm-profile/1","kernel":"k",)"
                       R"("device":"d","points":[{"size":1,"time":1,")" +
                       std::string(field) + "\":" + nested + "}]}";
    // The duplicate key is the nested one: nlohmann keeps the last.
    std::string message = errorOf(json);
    EXPECT_EQ(message, "bad.json: invalid JSON: arrays and objects nested "
                       "more than 64 deep")
        << field;
  }
  // Deep inside an unknown field, too.
  EXPECT_NE(errorOf(std::string(R"({"extra":)") + nested + "}")
                .find("nested more than 64 deep"),
            std::string::npos);
  // 64 levels are allowed (a valid profile needs 3).
  std::string fine = std::string(R"({"format":"fpm-profile/1","kernel":"k",)"
                                 R"("device":"d","extra":)") +
                     std::string(63, '[') + std::string(63, ']') +
                     R"(,"points":[{"size":1,"time":1}]})";
  EXPECT_EQ(errorOf(fine), "");
}

TEST(Profile, ErrorsEchoOnlyTheStartOfABadValue) {
  // A megabyte-long value made a megabyte-long error line.
  const std::string big(1 << 20, '7');
  struct Case {
    std::string json, start;
  } cases[] = {
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
       R"("points":[{"size":")" +
           big + R"(","time":1}]})",
       "bad.json: points[0].size must be an integer, got \"7777"},
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
       R"("points":[{"size":1,"time":[)" +
           [] {
             std::string items;
             for (int i = 0; i < 100000; ++i)
               items += "1,";
             return items;
           }() +
           "1]}]}",
       "bad.json: points[0].time must be a number, got [1,1,1,"},
      // nlohmann's own message quotes the token it stopped at.
      {R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
       R"("points":[{"size":1,"time":)" +
           std::string(100000, '1') + "}]}",
       "bad.json: invalid JSON: number overflow parsing '1111"},
      {R"({"format":")" + big +
           R"(","kernel":"k","device":"d","points":[{"size":1,"time":1}]})",
       "bad.json: unsupported format '7777"},
  };
  for (const Case &c : cases) {
    std::string message = errorOf(c.json);
    EXPECT_EQ(message.rfind(c.start, 0), 0u) << message.substr(0, 200);
    EXPECT_LT(message.size(), 160u) << message.substr(0, 200);
    EXPECT_NE(message.find("..."), std::string::npos) << message;
  }
  // A short value is echoed whole.
  EXPECT_EQ(errorOf(R"({"format":"fpm-profile/1","kernel":"k","device":"d",)"
                    R"("points":[{"size":1.5,"time":1}]})"),
            "bad.json: points[0].size must be an integer, got 1.5");
}

namespace {

/// The message readProfile throws for `path`, or "" when it reads.
std::string readErrorOf(const std::filesystem::path &path) {
  try {
    readProfile(path);
  } catch (const ProfileError &error) {
    return error.what();
  }
  return "";
}

} // namespace

TEST(Profile, OnlyRegularFilesAreRead) {
  // A FIFO named like a profile hung its reader (waiting for a writer), and
  // /dev/zero never ends.
  TempDir dir;
  const std::filesystem::path fifo = dir.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(readErrorOf(fifo), fifo.string() + ": not a regular file (a FIFO)");
  EXPECT_EQ(readErrorOf("/dev/zero"),
            "/dev/zero: not a regular file (a character device)");
  // A folder read as empty JSON ("unexpected end of input").
  EXPECT_EQ(readErrorOf(dir.path()), dir.path().string() + ": is a directory");

  // A link to a profile is followed; one to a FIFO is not read.
  const std::filesystem::path file = dir.path() / "p.json";
  writeProfile(file, parseProfile(ValidProfile, "x.json"));
  std::filesystem::create_symlink(file, dir.path() / "link.json");
  EXPECT_EQ(readProfile(dir.path() / "link.json").points.size(), 3u);
  std::filesystem::create_symlink(fifo, dir.path() / "fifo-link.json");
  EXPECT_EQ(readErrorOf(dir.path() / "fifo-link.json"),
            (dir.path() / "fifo-link.json").string() +
                ": not a regular file (a FIFO)");
}

TEST(Profile, AFileLargerThanAProfileIsNotRead) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "big.json";
  {
    std::ofstream out(file);
    out << std::string(MaxProfileBytes + 1, ' ');
  }
  EXPECT_EQ(readErrorOf(file), file.string() + ": larger than " +
                                   std::to_string(MaxProfileBytes) + " bytes");
}

TEST(Profile, ManyPointsParseInLinearTime) {
  // A valid profile of 400,000 points (12 MB, under the 16 MiB cap): the
  // reader's callback mode once took minutes (each point's end scanned
  // every point before it); CTest bounds it (test/unit/CMakeLists.txt).
  constexpr std::size_t count = 400000;
  std::string json = R"({"format":"fpm-profile/1","kernel":"k",)"
                     R"("device":"d","points":[)";
  for (std::size_t i = 1; i <= count; ++i)
    json += (i > 1 ? "," : "") + std::string(R"({"size":)") +
            std::to_string(i) + R"(,"time":)" + std::to_string(i) + "}";
  json += "]}";
  ASSERT_LE(json.size(), MaxProfileBytes);
  const Profile profile = parseProfile(json, "many.json");
  ASSERT_EQ(profile.points.size(), count);
  EXPECT_EQ(profile.points.front().size, 1);
  EXPECT_EQ(profile.points.back().size, static_cast<std::int64_t>(count));
  EXPECT_EQ(profile.points.back().time, static_cast<double>(count));
}
