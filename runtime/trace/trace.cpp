//===- trace/trace.cpp - What ran where -----------------------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One process-wide recorder: events are small fixed-size structs whose
// strings (loop, device and direction names, failure messages) are interned
// into a table, so recording a chunk allocates only when the event vector
// grows or a name is new. The JSON is produced at write time: every
// interned string is escaped once by nlohmann::json, numbers are printed
// by hand.
//
//===----------------------------------------------------------------------===//

#include "trace/trace.hpp"

#include "support/atomic_file.hpp"
#include "support/environment.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

namespace fpm::trace {
namespace {

/// Keeps a T alive for the whole process: its destructor never runs. The
/// recorder must outlive everything that may still record at exit (static
/// objects of the runtime and of the user destroyed after our exit hook ran,
/// threads still running while exit() runs), so it is deliberately never
/// destroyed; the OS reclaims its memory.
template <class T> union NoDestroy {
  T value;
  NoDestroy() : value() {}
  ~NoDestroy() {}
};

enum class Kind : std::uint8_t { Chunk, Transfer, Failure };

/// One recorded event; strings are indices into Recorder::strings.
struct Event {
  Kind kind;
  int lane;
  std::uint32_t loop;
  std::uint32_t device;
  std::uint32_t text; // Transfer: direction; Failure: what
  std::int64_t begin; // Chunk: logical iteration range
  std::int64_t end;   // Chunk: end; Transfer: bytes
  std::int64_t start; // ns of Clock
  std::int64_t finish;
};

/// A PE's busy time in a loop, over all its calls.
struct PeTotal {
  std::string device;
  double seconds = 0;
  std::int64_t iterations = 0;
};

/// A loop's merged CallStats.
struct LoopTotal {
  std::string loop;
  std::int64_t calls = 0;
  double wallSeconds = 0;
  std::vector<PeTotal> pes; // in the order PEs first appeared
};

struct Recorder {
  Recorder();

  std::atomic<bool> tracing{false};
  std::atomic<bool> verbose{false};

  // Guards everything below. Never held while writing a file or stderr, so
  // a thread still recording during exit cannot deadlock the exit hook.
  std::mutex mutex;
  std::filesystem::path file;
  bool failureReported = false; // for `file`: report a bad path once
  bool namedForRank = false;    // traceAsRank renamed `file` already
  // Interned strings: the deque keeps each string at a stable address, so
  // the index can key on string_views of them.
  std::deque<std::string> strings;
  std::unordered_map<std::string_view, std::uint32_t> index;
  std::vector<Event> events;
  std::map<int, std::string> lanes;
  std::vector<LoopTotal> loops; // in the order loops first finished

  // Serialises whole writes, so an older snapshot never replaces a newer
  // one; recording does not take it.
  std::mutex writing;

  /// The index of `text` in `strings`. Call with `mutex` held.
  std::uint32_t intern(std::string_view text) {
    if (auto it = index.find(text); it != index.end())
      return it->second;
    auto id = static_cast<std::uint32_t>(strings.size());
    strings.emplace_back(text);
    index.emplace(strings.back(), id);
    return id;
  }
};

void atExit();

Recorder &recorder() {
  static NoDestroy<Recorder> instance;
  return instance.value;
}

Recorder::Recorder() {
  if (const char *path = textFromEnvironment("FPM_TRACE")) {
    file = path;
    tracing = true;
  }
  // Read as every call reads it; a malformed value is the calls' error to
  // report, and reports nothing here.
  try {
    verbose = flagFromEnvironment("FPM_VERBOSE").value_or(false);
  } catch (const std::invalid_argument &) {
    verbose = false;
  }
  // Registered once, when the recorder first exists: a process that never
  // traces anything pays nothing at exit.
  std::atexit(atExit);
}

/// Appends `ns` nanoseconds as microseconds, exactly (three decimals).
void appendMicros(std::string &out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns; // times are far from INT64_MIN
  }
  char buffer[48];
  int n = std::snprintf(buffer, sizeof buffer, "%" PRId64 ".%03" PRId64,
                        ns / 1000, ns % 1000);
  out.append(buffer, static_cast<std::size_t>(n));
}

void appendInteger(std::string &out, std::int64_t value) {
  char buffer[24];
  int n = std::snprintf(buffer, sizeof buffer, "%" PRId64, value);
  out.append(buffer, static_cast<std::size_t>(n));
}

/// A JSON string literal for `text`. Invalid UTF-8 becomes U+FFFD rather
/// than an exception, so any name makes a valid file.
std::string jsonString(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// A copy of what the JSON needs, taken under the mutex.
struct Snapshot {
  std::vector<std::string> strings;
  std::vector<Event> events;
  std::map<int, std::string> lanes;
};

Snapshot snapshot(Recorder &r) {
  std::lock_guard lock(r.mutex);
  return {std::vector<std::string>(r.strings.begin(), r.strings.end()),
          r.events, r.lanes};
}

std::string render(const Snapshot &s) {
  std::vector<std::string> names;
  names.reserve(s.strings.size());
  for (const auto &text : s.strings)
    names.push_back(jsonString(text));
  std::string pid;
  appendInteger(pid, static_cast<std::int64_t>(::getpid()));

  std::int64_t origin = 0;
  if (!s.events.empty())
    origin = std::min_element(s.events.begin(), s.events.end(),
                              [](const Event &a, const Event &b) {
                                return a.start < b.start;
                              })
                 ->start;

  std::string out;
  out.reserve(256 + 200 * s.events.size());
  out += "{\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid +
         ",\"tid\":0,\"args\":{\"name\":\"fpm\"}}";
  for (const auto &[lane, name] : s.lanes) {
    out += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid +
           ",\"tid\":";
    appendInteger(out, lane);
    out += ",\"args\":{\"name\":" + jsonString(name) + "}}";
  }
  for (const Event &e : s.events) {
    out += ",\n{\"name\":";
    switch (e.kind) {
    case Kind::Chunk:
      out += names[e.loop];
      out += ",\"cat\":\"chunk\",\"ph\":\"X\"";
      break;
    case Kind::Transfer:
      out += jsonString(s.strings[e.text] + ' ' + s.strings[e.loop]);
      out += ",\"cat\":" + names[e.text] + ",\"ph\":\"X\"";
      break;
    case Kind::Failure:
      out += names[e.loop];
      out += ",\"cat\":\"failure\",\"ph\":\"i\",\"s\":\"t\"";
      break;
    }
    out += ",\"ts\":";
    appendMicros(out, e.start - origin);
    if (e.kind != Kind::Failure) {
      out += ",\"dur\":";
      appendMicros(out, e.finish - e.start);
    }
    out += ",\"pid\":" + pid + ",\"tid\":";
    appendInteger(out, e.lane);
    out += ",\"args\":{";
    switch (e.kind) {
    case Kind::Chunk:
      out += "\"begin\":";
      appendInteger(out, e.begin);
      out += ",\"end\":";
      appendInteger(out, e.end);
      out += ',';
      break;
    case Kind::Transfer:
      out += "\"bytes\":";
      // Stored in an int64 slot; bytes never reach 2^63.
      appendInteger(out, e.end);
      out += ',';
      break;
    case Kind::Failure:
      out += "\"what\":" + names[e.text] + ',';
      break;
    }
    out += "\"device\":" + names[e.device] + "}}";
  }
  out += "\n],\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

void writeTrace(Recorder &r) {
  std::lock_guard writing(r.writing);
  std::filesystem::path file;
  {
    std::lock_guard lock(r.mutex);
    file = r.file;
  }
  if (file.empty())
    return;
  std::string reason;
  try {
    writeUserFile(file, render(snapshot(r)));
    return;
  } catch (const std::exception &error) {
    reason = error.what();
    // writeUserFile's messages start with the path; ours already
    // names it.
    if (std::string prefix = file.string() + ": "; reason.starts_with(prefix))
      reason.erase(0, prefix.size());
  } catch (...) {
    reason = "unknown error";
  }
  {
    std::lock_guard lock(r.mutex);
    if (r.failureReported || r.file != file)
      return;
    r.failureReported = true;
  }
  std::fprintf(stderr, "fpm: cannot write trace '%s': %s\n", file.c_str(),
               reason.c_str());
}

std::string formatSeconds(double seconds) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.3f s", seconds);
  return buffer;
}

std::string report(const std::vector<LoopTotal> &loops) {
  std::string out;
  char buffer[64];
  for (const LoopTotal &loop : loops) {
    out += "fpm: loop '" + loop.loop + "': ";
    appendInteger(out, loop.calls);
    out += loop.calls == 1 ? " call, " : " calls, ";
    out += formatSeconds(loop.wallSeconds) + '\n';

    // Columns: device names padded to one width ("imbalance" included),
    // busy times right-aligned to one width.
    std::size_t nameWidth = std::string_view("imbalance").size();
    std::size_t busyWidth = 0;
    for (const PeTotal &pe : loop.pes) {
      nameWidth = std::max(nameWidth, pe.device.size());
      busyWidth = std::max(busyWidth, formatSeconds(pe.seconds).size());
    }
    double maxBusy = 0, sumBusy = 0;
    int working = 0;
    for (const PeTotal &pe : loop.pes) {
      std::string busy = formatSeconds(pe.seconds);
      double utilisation =
          loop.wallSeconds > 0 ? 100 * pe.seconds / loop.wallSeconds : 0;
      out += "fpm:   " + pe.device;
      out.append(nameWidth - pe.device.size() + 1, ' ');
      out += "busy ";
      out.append(busyWidth - busy.size(), ' ');
      out += busy;
      std::snprintf(buffer, sizeof buffer, "  utilisation %5.1f%%  (",
                    utilisation);
      out += buffer;
      appendInteger(out, pe.iterations);
      out += " iterations)\n";
      if (pe.seconds > 0) {
        maxBusy = std::max(maxBusy, pe.seconds);
        sumBusy += pe.seconds;
        ++working;
      }
    }
    double imbalance = working > 0 ? maxBusy / (sumBusy / working) - 1 : 0;
    out += "fpm:   imbalance";
    out.append(nameWidth - std::string_view("imbalance").size() + 1, ' ');
    std::snprintf(buffer, sizeof buffer, "%.1f%%\n", 100 * imbalance);
    out += buffer;
  }
  return out;
}

/// The exit hook: the verbose report, then the trace file. Nothing may
/// escape it, and it must not wait on a recording thread for long: both
/// take a copy under the mutex and write outside it.
void atExit() {
  Recorder &r = recorder();
  try {
    if (r.verbose) {
      std::string text = verboseReport();
      std::fputs(text.c_str(), stderr);
    }
  } catch (...) {
    // Out of memory at exit: nothing better to do than skip the report.
  }
  try {
    if (r.tracing)
      writeTrace(r);
  } catch (...) {
    // writeTrace() reports its own failures; this is only bad_alloc.
  }
}

} // namespace

std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

bool enabled() { return recorder().tracing.load(std::memory_order_relaxed); }

bool verbose() { return recorder().verbose.load(std::memory_order_relaxed); }

void setTraceFile(const std::filesystem::path &file) {
  Recorder &r = recorder();
  std::lock_guard lock(r.mutex);
  r.file = file;
  r.failureReported = false;
  r.namedForRank = false;
  r.tracing = !file.empty();
}

std::filesystem::path fileForRank(const std::filesystem::path &file, int rank) {
  std::filesystem::path named = file;
  named.replace_filename(file.stem().string() + ".rank" + std::to_string(rank) +
                         file.extension().string());
  return named;
}

void traceAsRank(int rank) {
  Recorder &r = recorder();
  std::lock_guard lock(r.mutex);
  if (r.file.empty() || r.namedForRank)
    return;
  r.namedForRank = true;
  struct stat status{};
  if (::stat(r.file.c_str(), &status) == 0 && !S_ISREG(status.st_mode))
    return;
  r.file = fileForRank(r.file, rank);
  r.failureReported = false;
}

void setVerbose(bool on) { recorder().verbose = on; }

void reset() {
  Recorder &r = recorder();
  std::lock_guard lock(r.mutex);
  r.strings.clear();
  r.index.clear();
  r.events.clear();
  r.lanes.clear();
  r.loops.clear();
}

void nameLane(int lane, std::string_view name) {
  // Recorded even when not tracing: lanes are few, and are usually named
  // before a tool turns tracing on.
  Recorder &r = recorder();
  std::lock_guard lock(r.mutex);
  r.lanes.insert_or_assign(lane, std::string(name));
}

void chunk(std::string_view loop, int lane, std::string_view device,
           std::int64_t begin, std::int64_t end, std::int64_t start,
           std::int64_t finish) {
  Recorder &r = recorder();
  if (!r.tracing.load(std::memory_order_relaxed))
    return;
  std::lock_guard lock(r.mutex);
  r.events.push_back({Kind::Chunk, lane, r.intern(loop), r.intern(device), 0,
                      begin, end, start, finish});
}

void transfer(std::string_view loop, int lane, std::string_view device,
              std::string_view direction, std::uint64_t bytes,
              std::int64_t start, std::int64_t finish) {
  Recorder &r = recorder();
  if (!r.tracing.load(std::memory_order_relaxed))
    return;
  std::lock_guard lock(r.mutex);
  r.events.push_back({Kind::Transfer, lane, r.intern(loop), r.intern(device),
                      r.intern(direction), 0, static_cast<std::int64_t>(bytes),
                      start, finish});
}

void failure(std::string_view loop, int lane, std::string_view device,
             std::string_view what, std::int64_t at) {
  Recorder &r = recorder();
  if (!r.tracing.load(std::memory_order_relaxed))
    return;
  std::lock_guard lock(r.mutex);
  r.events.push_back({Kind::Failure, lane, r.intern(loop), r.intern(device),
                      r.intern(what), 0, 0, at, at});
}

void flush() {
  Recorder &r = recorder();
  if (r.tracing.load(std::memory_order_relaxed))
    writeTrace(r);
}

std::string traceJson() { return render(snapshot(recorder())); }

std::string verboseReport() {
  Recorder &r = recorder();
  std::vector<LoopTotal> loops;
  {
    std::lock_guard lock(r.mutex);
    loops = r.loops;
  }
  return report(loops);
}

CallStats::CallStats(std::string loop) : loop_(std::move(loop)) {}

void CallStats::busy(std::string_view device, double seconds,
                     std::int64_t iterations) {
  auto pe = std::find_if(pes_.begin(), pes_.end(),
                         [&](const Pe &p) { return p.device == device; });
  if (pe == pes_.end()) {
    pes_.push_back({std::string(device), 0, 0});
    pe = pes_.end() - 1;
  }
  pe->seconds += seconds;
  pe->iterations += iterations;
}

void CallStats::teamBusy(std::string_view device, double summedSeconds,
                         std::int64_t iterations, int threads) {
  busy(device, summedSeconds / std::max(threads, 1), iterations);
}

void CallStats::finish(double wallSeconds) {
  Recorder &r = recorder();
  if (!r.verbose.load(std::memory_order_relaxed))
    return;
  std::lock_guard lock(r.mutex);
  auto loop = std::find_if(r.loops.begin(), r.loops.end(),
                           [&](const LoopTotal &l) { return l.loop == loop_; });
  if (loop == r.loops.end()) {
    r.loops.push_back({loop_, 0, 0, {}});
    loop = r.loops.end() - 1;
  }
  ++loop->calls;
  loop->wallSeconds += wallSeconds;
  for (const Pe &pe : pes_) {
    auto total =
        std::find_if(loop->pes.begin(), loop->pes.end(),
                     [&](const PeTotal &t) { return t.device == pe.device; });
    if (total == loop->pes.end()) {
      loop->pes.push_back({pe.device, 0, 0});
      total = loop->pes.end() - 1;
    }
    total->seconds += pe.seconds;
    total->iterations += pe.iterations;
  }
}

} // namespace fpm::trace
