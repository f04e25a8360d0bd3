//===- trace_test.cpp - The trace recorder and per-loop statistics --------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The recorder is process-wide: each test starts with trace::reset(), and
// still uses loop names of its own.
//
//===----------------------------------------------------------------------===//

#include "trace/trace.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/scoped.hpp"
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace trace = fpm::trace;
using Json = nlohmann::json;

namespace {

using fpm::test::TempDir;

std::string readAll(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The trace's events named `name`, metadata excluded.
std::vector<Json> eventsNamed(const Json &trace, std::string_view name) {
  std::vector<Json> found;
  for (const Json &event : trace.at("traceEvents"))
    if (event.at("ph") != "M" && event.at("name") == name)
      found.push_back(event);
  return found;
}

/// Tracing into a fresh folder, turned off again afterwards so that the
/// test binary writes nothing at exit.
class TraceTest : public testing::Test {
protected:
  void SetUp() override {
    trace::reset();
    trace::setTraceFile(file());
  }
  void TearDown() override { trace::setTraceFile({}); }
  std::filesystem::path file() const { return dir_.path() / "trace.json"; }

  TempDir dir_;
};

/// Merging on, for the CallStats tests only.
class TraceStats : public testing::Test {
protected:
  void SetUp() override {
    trace::reset();
    trace::setVerbose(true);
  }
  void TearDown() override { trace::setVerbose(false); }
};

/// The block of `report` for loop `loop`: its lines up to the next loop's.
std::string blockOf(const std::string &report, const std::string &loop) {
  std::string head = "fpm: loop '" + loop + "': ";
  auto begin = report.find(head);
  if (begin == std::string::npos)
    return "";
  auto end = report.find("fpm: loop '", begin + head.size());
  return report.substr(begin, end == std::string::npos ? end : end - begin);
}

} // namespace

TEST(TraceClock, NowIsSteadyNanoseconds) {
  std::int64_t before = trace::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::int64_t after = trace::now();
  EXPECT_GE(after - before, 2'000'000);
  EXPECT_LT(after - before, 2'000'000'000);
}

TEST_F(TraceTest, ChunkFieldsAreInMicroseconds) {
  ASSERT_TRUE(trace::enabled());
  std::int64_t base = trace::now();
  trace::chunk("trace chunk fields", 3, "opencl0", 10, 20, base + 1'500,
               base + 4'000'250);
  trace::chunk("trace chunk fields", 1, "cpu", 20, 64, base + 2'001'500,
               base + 2'002'500);

  Json json = Json::parse(trace::traceJson());
  EXPECT_EQ(json.at("displayTimeUnit"), "ms");
  auto events = eventsNamed(json, "trace chunk fields");
  ASSERT_EQ(events.size(), 2u);
  const Json &first = events[0];
  EXPECT_EQ(first.at("cat"), "chunk");
  EXPECT_EQ(first.at("ph"), "X");
  EXPECT_EQ(first.at("pid"), static_cast<int>(::getpid()));
  EXPECT_EQ(first.at("tid"), 3);
  EXPECT_DOUBLE_EQ(first.at("dur").get<double>(), 3998.75);
  // "ts" counts from the earliest event, this one.
  EXPECT_DOUBLE_EQ(first.at("ts").get<double>(), 0.0);
  EXPECT_EQ(first.at("args").at("begin"), 10);
  EXPECT_EQ(first.at("args").at("end"), 20);
  EXPECT_EQ(first.at("args").at("device"), "opencl0");

  const Json &second = events[1];
  EXPECT_EQ(second.at("tid"), 1);
  EXPECT_DOUBLE_EQ(second.at("dur").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(second.at("ts").get<double>(), 2000.0);
  EXPECT_EQ(second.at("args").at("device"), "cpu");
}

TEST_F(TraceTest, TransfersAndFailures) {
  std::int64_t base = trace::now();
  trace::transfer("trace xfer", 2, "opencl1", "upload", 1 << 20, base,
                  base + 10'000);
  trace::transfer("trace xfer", 2, "opencl1", "download", 4096, base + 20'000,
                  base + 25'000);
  trace::failure("trace xfer", 2, "opencl1", "CL_OUT_OF_RESOURCES",
                 base + 30'000);

  Json json = Json::parse(trace::traceJson());
  auto uploads = eventsNamed(json, "upload trace xfer");
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_EQ(uploads[0].at("cat"), "upload");
  EXPECT_EQ(uploads[0].at("ph"), "X");
  EXPECT_DOUBLE_EQ(uploads[0].at("dur").get<double>(), 10.0);
  EXPECT_EQ(uploads[0].at("args").at("bytes"), 1 << 20);
  EXPECT_EQ(uploads[0].at("args").at("device"), "opencl1");

  auto downloads = eventsNamed(json, "download trace xfer");
  ASSERT_EQ(downloads.size(), 1u);
  EXPECT_EQ(downloads[0].at("cat"), "download");
  EXPECT_EQ(downloads[0].at("args").at("bytes"), 4096);
  EXPECT_DOUBLE_EQ(downloads[0].at("ts").get<double>() -
                       uploads[0].at("ts").get<double>(),
                   20.0);

  auto failures = eventsNamed(json, "trace xfer");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].at("ph"), "i");
  EXPECT_EQ(failures[0].at("s"), "t");
  EXPECT_EQ(failures[0].at("tid"), 2);
  EXPECT_FALSE(failures[0].contains("dur"));
  EXPECT_EQ(failures[0].at("args").at("what"), "CL_OUT_OF_RESOURCES");
  EXPECT_DOUBLE_EQ(failures[0].at("ts").get<double>() -
                       uploads[0].at("ts").get<double>(),
                   30.0);
}

TEST_F(TraceTest, LanesAndProcessAreNamed) {
  trace::nameLane(41, "opencl0 (Test GPU)");
  trace::nameLane(42, "cpu thread 1");
  Json json = Json::parse(trace::traceJson());
  std::map<int, std::string> lanes;
  bool process = false;
  for (const Json &event : json.at("traceEvents")) {
    if (event.at("ph") != "M")
      continue;
    EXPECT_EQ(event.at("pid"), static_cast<int>(::getpid()));
    if (event.at("name") == "thread_name")
      lanes[event.at("tid").get<int>()] = event.at("args").at("name");
    else if (event.at("name") == "process_name")
      process = event.at("args").at("name") == "fpm";
  }
  EXPECT_TRUE(process);
  EXPECT_EQ(lanes[41], "opencl0 (Test GPU)");
  EXPECT_EQ(lanes[42], "cpu thread 1");
}

TEST_F(TraceTest, AnyLoopNameRoundTrips) {
  const std::string name = "trace \"quoted\" \\back\\ slash\nnew\tline \x01 "
                           "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80";
  std::int64_t base = trace::now();
  trace::chunk(name, 0, "dev\"ice\\", 0, 1, base, base + 1000);
  trace::failure(name, 0, "cpu", "what: \"x\"\n\\", base);
  Json json = Json::parse(trace::traceJson());
  auto events = eventsNamed(json, name);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at("args").at("device"), "dev\"ice\\");
  EXPECT_EQ(events[1].at("args").at("what"), "what: \"x\"\n\\");
}

TEST_F(TraceTest, InvalidUtf8StillMakesValidJson) {
  std::int64_t base = trace::now();
  trace::chunk("trace bad \xff\xfe utf8", 0, "cpu", 0, 1, base, base + 1);
  Json json;
  ASSERT_NO_THROW(json = Json::parse(trace::traceJson()));
  EXPECT_EQ(eventsNamed(json, "trace bad \xef\xbf\xbd\xef\xbf\xbd utf8").size(),
            1u);
}

TEST_F(TraceTest, NothingIsRecordedWhenDisabled) {
  trace::setTraceFile({});
  EXPECT_FALSE(trace::enabled());
  std::int64_t base = trace::now();
  trace::chunk("trace disabled", 0, "cpu", 0, 1, base, base + 1);
  trace::transfer("trace disabled", 0, "cpu", "upload", 1, base, base + 1);
  trace::failure("trace disabled", 0, "cpu", "x", base);
  trace::flush();
  EXPECT_FALSE(std::filesystem::exists(file()));
  trace::setTraceFile(file());
  Json json = Json::parse(trace::traceJson());
  EXPECT_TRUE(eventsNamed(json, "trace disabled").empty());
  EXPECT_TRUE(eventsNamed(json, "upload trace disabled").empty());
}

TEST_F(TraceTest, FlushWritesTheWholeFileAtomically) {
  std::int64_t base = trace::now();
  trace::chunk("trace flushed", 0, "cpu", 0, 8, base, base + 1000);
  trace::flush();
  ASSERT_TRUE(std::filesystem::exists(file()));
  Json first = Json::parse(readAll(file()));
  EXPECT_EQ(eventsNamed(first, "trace flushed").size(), 1u);

  // A later flush rewrites the file with every event so far.
  trace::chunk("trace flushed", 0, "cpu", 8, 16, base + 2000, base + 3000);
  trace::flush();
  Json second = Json::parse(readAll(file()));
  EXPECT_EQ(eventsNamed(second, "trace flushed").size(), 2u);
  EXPECT_EQ(readAll(file()), trace::traceJson());

  // Nothing but the trace in the folder: no temporary left behind.
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir_.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"trace.json"});
}

TEST_F(TraceTest, UnwritableFileIsReportedOnceOnStderr) {
  std::filesystem::path bad = dir_.path() / "missing" / "trace.json";
  trace::setTraceFile(bad);
  std::int64_t base = trace::now();
  trace::chunk("trace unwritable", 0, "cpu", 0, 1, base, base + 1);
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(trace::flush());
  EXPECT_NO_THROW(trace::flush());
  std::string err = testing::internal::GetCapturedStderr();
  std::string head = "fpm: cannot write trace '" + bad.string() + "': ";
  EXPECT_EQ(err.rfind(head, 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_GT(err.size(), head.size() + 1) << "no reason given: " << err;
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST_F(TraceTest, ADeviceIsWrittenNotReplaced) {
  // As root, FPM_TRACE=/dev/null replaced the device node with a regular
  // file, and /dev/full's ENOSPC went unreported.
  struct stat status{};
  ASSERT_EQ(::lstat("/dev/full", &status), 0);
  ASSERT_TRUE(S_ISCHR(status.st_mode));
  trace::setTraceFile("/dev/full");
  std::int64_t base = trace::now();
  trace::chunk("trace full", 0, "cpu", 0, 1, base, base + 1);
  testing::internal::CaptureStderr();
  trace::flush();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "fpm: cannot write trace '/dev/full': cannot write: No space left "
            "on device\n");
  ASSERT_EQ(::lstat("/dev/full", &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode));

  trace::setTraceFile("/dev/null");
  testing::internal::CaptureStderr();
  trace::flush();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(::lstat("/dev/null", &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode));
}

TEST(TraceFileForRank, RankGoesBeforeTheExtension) {
  EXPECT_EQ(trace::fileForRank("out/trace.json", 1), "out/trace.rank1.json");
  EXPECT_EQ(trace::fileForRank("trace", 12), "trace.rank12");
  EXPECT_EQ(trace::fileForRank("/t/a.b.json", 0), "/t/a.b.rank0.json");
  EXPECT_EQ(trace::fileForRank("d.x/.trace", 2), "d.x/.trace.rank2");
}

TEST_F(TraceTest, EachRankWritesItsOwnFileAndADeviceStaysNamed) {
  std::int64_t base = trace::now();
  trace::chunk("trace ranks", 0, "cpu", 0, 1, base, base + 1);
  trace::traceAsRank(2);
  trace::traceAsRank(3); // once per process
  trace::flush();
  EXPECT_TRUE(
      std::filesystem::is_regular_file(dir_.path() / "trace.rank2.json"));
  EXPECT_FALSE(std::filesystem::exists(file()));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "trace.rank3.json"));

  trace::setTraceFile("/dev/null");
  trace::traceAsRank(1);
  testing::internal::CaptureStderr();
  trace::flush();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(std::filesystem::exists("/dev/null.rank1"));
}

TEST_F(TraceTest, ALinkIsFollowedAndKept) {
  const std::filesystem::path target = dir_.path() / "target.json";
  std::filesystem::create_symlink("target.json", dir_.path() / "link.json");
  trace::setTraceFile(dir_.path() / "link.json");
  std::int64_t base = trace::now();
  trace::chunk("trace linked", 0, "cpu", 0, 1, base, base + 1);
  trace::flush();
  EXPECT_TRUE(std::filesystem::is_symlink(dir_.path() / "link.json"));
  EXPECT_EQ(eventsNamed(Json::parse(readAll(target)), "trace linked").size(),
            1u);
}

TEST_F(TraceTest, ConcurrentRecordingLosesNothing) {
  constexpr int Threads = 8, PerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < Threads; ++t)
    threads.emplace_back([t] {
      std::string device = "opencl" + std::to_string(t);
      for (int i = 0; i < PerThread; ++i) {
        std::int64_t start = trace::now();
        trace::chunk("trace concurrent", 100 + t, device, i, i + 1, start,
                     start + 100);
        if (i % 100 == 0)
          trace::transfer("trace concurrent", 100 + t, device, "upload", 8,
                          start, start + 10);
      }
    });
  for (auto &thread : threads)
    thread.join();

  Json json = Json::parse(trace::traceJson());
  auto events = eventsNamed(json, "trace concurrent");
  ASSERT_EQ(events.size(), std::size_t{Threads} * PerThread);
  std::set<std::pair<int, std::int64_t>> seen;
  for (const Json &event : events) {
    int lane = event.at("tid");
    EXPECT_EQ(event.at("args").at("device"),
              "opencl" + std::to_string(lane - 100));
    seen.emplace(lane, event.at("args").at("begin").get<std::int64_t>());
  }
  EXPECT_EQ(seen.size(), std::size_t{Threads} * PerThread);
  EXPECT_EQ(eventsNamed(json, "upload trace concurrent").size(),
            std::size_t{Threads} * (PerThread / 100));
}

TEST_F(TraceStats, MergesCallsIntoUtilisationAndImbalance) {
  ASSERT_TRUE(trace::verbose());
  {
    trace::CallStats call("trace stats mm");
    call.busy("cpu", 0.6, 120);
    call.busy("opencl0", 0.25, 50);
    call.busy("cpu", 0.0, 0); // the same PE again: merged, not a new row
    call.finish(0.5);
  }
  {
    trace::CallStats call("trace stats mm");
    call.busy("opencl0", 0.25, 50);
    call.busy("cpu", 0.4, 80);
    call.finish(0.5);
  }
  EXPECT_EQ(blockOf(trace::verboseReport(), "trace stats mm"),
            "fpm: loop 'trace stats mm': 2 calls, 1.000 s\n"
            "fpm:   cpu       busy 1.000 s  utilisation 100.0%  (200 "
            "iterations)\n"
            "fpm:   opencl0   busy 0.500 s  utilisation  50.0%  (100 "
            "iterations)\n"
            "fpm:   imbalance 33.3%\n");
}

TEST_F(TraceStats, IdlePesDoNotCountTowardsImbalance) {
  trace::CallStats call("trace stats idle");
  call.busy("cpu", 2.0, 10);
  call.busy("opencl-long-name", 2.0, 10);
  call.busy("opencl1", 0.0, 0);
  call.finish(4.0);
  EXPECT_EQ(blockOf(trace::verboseReport(), "trace stats idle"),
            "fpm: loop 'trace stats idle': 1 call, 4.000 s\n"
            "fpm:   cpu              busy 2.000 s  utilisation  50.0%  (10 "
            "iterations)\n"
            "fpm:   opencl-long-name busy 2.000 s  utilisation  50.0%  (10 "
            "iterations)\n"
            "fpm:   opencl1          busy 0.000 s  utilisation   0.0%  (0 "
            "iterations)\n"
            "fpm:   imbalance        0.0%\n");
}

TEST_F(TraceStats, LoopsAreReportedInTheOrderTheyFirstFinished) {
  for (const char *loop : {"trace order b", "trace order a", "trace order b"}) {
    trace::CallStats call(loop);
    call.busy("cpu", 0.1, 1);
    call.finish(0.1);
  }
  std::string report = trace::verboseReport();
  auto b = report.find("'trace order b'");
  auto a = report.find("'trace order a'");
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(b, a);
  EXPECT_NE(blockOf(report, "trace order b").find("2 calls"),
            std::string::npos);
}

TEST(TraceStatsQuiet, NothingIsMergedWithoutVerbose) {
  trace::reset();
  trace::setVerbose(false);
  trace::CallStats call("trace stats quiet");
  call.busy("cpu", 1.0, 1);
  call.finish(1.0);
  EXPECT_EQ(trace::verboseReport().find("trace stats quiet"),
            std::string::npos);
}

// Set in the forked child below: it holds copies of the parent's threads'
// thread-local data (OpenMP workers' plan caches) without the threads, so
// LeakSanitizer, which scans only live threads, would report them at exit.
static bool inForkedChild = false;

// LeakSanitizer's documented hook (sanitizer/lsan_interface.h), asked before
// its check at exit in the sanitizer build; unused elsewhere.
extern "C" int __lsan_is_turned_off() { return inForkedChild ? 1 : 0; }

// The file and the report are written by the exit hook, so a child process
// records and exits; a thread still recording while it exits must not stop
// the write.
TEST(TraceAtExit, ChildWritesTraceAndReportAtExit) {
  TempDir dir;
  std::filesystem::path file = dir.path() / "exit.json";
  std::filesystem::path err = dir.path() / "stderr.txt";
  // Output buffered now would otherwise be written twice.
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    inForkedChild = true;
    if (!std::freopen(err.c_str(), "w", stderr))
      std::_Exit(3);
    trace::setTraceFile(file);
    trace::setVerbose(true);
    std::int64_t base = trace::now();
    trace::nameLane(5, "opencl0 (child)");
    trace::chunk("trace at exit", 5, "opencl0", 0, 99, base, base + 7'000);
    trace::CallStats call("trace at exit");
    call.busy("opencl0", 0.007, 99);
    call.finish(0.007);
    // Still recording while exit() runs; paced so the file stays small.
    std::thread([] {
      for (;;) {
        trace::chunk("trace late", 6, "cpu", 0, 1, trace::now(), trace::now());
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::exit(0);
  }

  int status = 0;
  pid_t done = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((done = ::waitpid(child, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL() << "the child did not exit: a deadlock at exit";
  }
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << readAll(err);

  ASSERT_TRUE(std::filesystem::exists(file));
  Json json = Json::parse(readAll(file));
  auto events = eventsNamed(json, "trace at exit");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("pid"), static_cast<int>(child));
  EXPECT_EQ(events[0].at("args").at("end"), 99);
  EXPECT_DOUBLE_EQ(events[0].at("dur").get<double>(), 7.0);

  std::string report = readAll(err);
  EXPECT_NE(report.find("fpm: loop 'trace at exit': 1 call, 0.007 s\n"),
            std::string::npos)
      << report;
}
