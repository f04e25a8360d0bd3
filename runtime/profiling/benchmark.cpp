//===- profiling/benchmark.cpp - fpm-profile inside the program -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "profiling/benchmark.hpp"

#include "data/sections.hpp"
#include "exec/coexec.hpp"
#include "exec/loop_pes.hpp"
#include "exec/loop_state.hpp"
#include "residency/residency.hpp"
#include "store/online_profiles.hpp"
#include "store/profile_store.hpp"
#include "support/text.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>

namespace fpm {

//===----------------------------------------------------------------------===//
// Settings.
//===----------------------------------------------------------------------===//

namespace {

double parseNumber(std::string_view field, std::string_view text) {
  const std::string value(text);
  char *end = nullptr;
  errno = 0;
  const double number = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno != 0 || !std::isfinite(number))
    throw std::invalid_argument(std::string(field) + ": '" + excerpt(value) +
                                "' is not a number");
  return number;
}

int parseCount(std::string_view field, std::string_view text, int low) {
  const double number = parseNumber(field, text);
  if (number != std::floor(number) || number < low || number > 1e6)
    throw std::invalid_argument(std::string(field) + ": '" + excerpt(text) +
                                "' is not an integer from " +
                                std::to_string(low) + " to 1000000");
  return static_cast<int>(number);
}

} // namespace

BenchmarkSettings BenchmarkSettings::parse(std::string_view text) {
  BenchmarkSettings settings;
  if (text == "1")
    return settings;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      throw std::invalid_argument("expected field=value, got '" +
                                  excerpt(item) + "'");
    const std::string_view field = item.substr(0, equals);
    const std::string_view value = item.substr(equals + 1);
    if (field == "points") {
      settings.points = parseCount(field, value, 1);
    } else if (field == "error") {
      settings.error = parseNumber(field, value);
      if (!(settings.error > 0 && settings.error < 1))
        throw std::invalid_argument("error: '" + excerpt(value) +
                                    "' is not between 0 and 1");
    } else if (field == "reps") {
      const std::size_t colon = value.find(':');
      if (colon == std::string_view::npos)
        throw std::invalid_argument("reps: expected MIN:MAX, got '" +
                                    excerpt(value) + "'");
      settings.minReps = parseCount(field, value.substr(0, colon), 1);
      settings.maxReps = parseCount(field, value.substr(colon + 1), 1);
      if (settings.minReps > settings.maxReps)
        throw std::invalid_argument("reps: MIN is above MAX in '" +
                                    excerpt(value) + "'");
    } else if (field == "time" || field == "budget") {
      const double seconds = parseNumber(field, value);
      if (!(seconds >= 0) || (field == "time" && seconds == 0))
        throw std::invalid_argument(std::string(field) + ": '" +
                                    excerpt(value) +
                                    "' is not a positive number of seconds");
      (field == "time" ? settings.seconds : settings.budget) = seconds;
    } else if (field == "fresh") {
      if (value != "0" && value != "1")
        throw std::invalid_argument("fresh: '" + excerpt(value) +
                                    "' is not 0 or 1");
      settings.fresh = value == "1";
    } else {
      throw std::invalid_argument(
          "unknown field '" + excerpt(field) +
          "' (expected points, error, reps, time, budget or fresh)");
    }
  }
  return settings;
}

std::string BenchmarkSettings::format() const {
  // Each number in its shortest form that reads back as the same double:
  // a stream's six digits would turn error=0.123456789 into 0.123457.
  auto number = [](double value) {
    char text[32];
    const auto [end, error] = std::to_chars(text, text + sizeof text, value);
    return error == std::errc() ? std::string(text, end) : std::string("nan");
  };
  return "points=" + std::to_string(points) + ",error=" + number(error) +
         ",reps=" + std::to_string(minReps) + ':' + std::to_string(maxReps) +
         ",time=" + number(seconds) + ",budget=" + number(budget) +
         ",fresh=" + (fresh ? "1" : "0");
}

std::optional<BenchmarkSettings> benchmarkSettings(std::string_view text) {
  if (text.empty() || text == "0")
    return std::nullopt;
  try {
    return BenchmarkSettings::parse(text);
  } catch (const std::invalid_argument &error) {
    static std::once_flag once;
    std::call_once(once, [&] {
      std::fprintf(stderr,
                   "fpm: FPM_BENCHMARK=\"%s\": %s; no loop is benchmarked\n",
                   std::string(text).c_str(), error.what());
    });
    return std::nullopt;
  }
}

namespace {

/// A copy of what the written sections of iterations [0, iterations) hold,
/// to put back after each benchmark run. Sections with gaps between
/// iterations (|stride| > count) are copied section by section, so that
/// elements the loop does not write are never touched: another thread of
/// the program may own them.
class SavedSections {
public:
  SavedSections(std::vector<fpm_arg> written, std::int64_t iterations)
      : written_(std::move(written)) {
    for (const fpm_arg &arg : written_) {
      // In a data region: the current values, wherever they are.
      if (residency::active() && arg.row_length == 0)
        residency::acquireHost(arg.data, arg.size,
                               sectionRects(ArgSection(arg), 0, iterations));
      std::vector<std::byte> &copy = copies_.emplace_back();
      forEachRange(arg, iterations, [&](std::byte *at, std::size_t bytes) {
        copy.insert(copy.end(), at, at + bytes);
      });
    }
  }

  /// Puts back the sections of iterations [0, iterations).
  void restore(std::int64_t iterations) const {
    for (std::size_t a = 0; a < written_.size(); ++a) {
      const std::byte *from = copies_[a].data();
      forEachRange(written_[a], iterations,
                   [&](std::byte *at, std::size_t bytes) {
                     std::memcpy(at, from, bytes);
                     from += bytes;
                   });
      // What a run wrote on a device is undone on the host alone.
      if (residency::active() && written_[a].row_length == 0)
        residency::hostWrote(
            written_[a].data, written_[a].size,
            sectionRects(ArgSection(written_[a]), 0, iterations));
    }
  }

private:
  template <class Use>
  static void forEachRange(const fpm_arg &arg, std::int64_t iterations,
                           Use &&use) {
    // Through the row pointers for an array of them: the rows, never the
    // pointers, are what the loop writes.
    for (const SectionRect &rect : sectionRects(ArgSection(arg), 0, iterations))
      forEachHostRun(arg.data, elementBytes(arg), arg.row_length > 0, rect,
                     use);
  }

  std::vector<fpm_arg> written_;
  std::vector<std::vector<std::byte>> copies_;
};

/// What the loop writes: fpm_loop::data's out and inout sections, else the
/// kernel's written arguments. Empty when it does not say.
std::vector<fpm_arg> writtenSections(const LoopCall &call) {
  std::vector<fpm_arg> written;
  for (const fpm_arg &arg : call.data)
    if (arg.kind == FPM_ARG_OUT || arg.kind == FPM_ARG_INOUT)
      written.push_back(arg);
  if (!call.data.empty() || !call.kernel)
    return written;
  for (const KernelArg &arg : call.kernel->args)
    if (arg.writes())
      written.push_back(
          {FPM_ARG_INOUT, arg.data,
           arg.rowPointers()
               ? arg.size / static_cast<std::size_t>(arg.rowLength)
               : arg.size,
           arg.length, arg.offset, arg.stride, arg.count, arg.origin,
           arg.extent, nullptr, arg.rows, arg.pitch, arg.rowLength});
  return written;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The progress line on stderr: redrawn in place on a terminal, one line
/// per PE otherwise (a log file gets no carriage returns).
class Progress {
public:
  Progress(std::string label, std::string pe, std::size_t sizes)
      : label_(std::move(label)), pe_(std::move(pe)), sizes_(sizes),
        terminal_(isatty(STDERR_FILENO) == 1) {}

  void point(std::size_t done, std::int64_t size, const ProfilePoint &last) {
    if (!terminal_)
      return;
    constexpr std::size_t Width = 24;
    const std::size_t filled = sizes_ ? done * Width / sizes_ : Width;
    std::string bar(filled, '#');
    bar.resize(Width, '.');
    std::fprintf(stderr,
                 "\rfpm-profile: %s on %s [%s] %zu/%zu sizes, %lld "
                 "iterations: %.3g s x %lld\033[K",
                 label_.c_str(), pe_.c_str(), bar.c_str(), done, sizes_,
                 static_cast<long long>(size), last.time,
                 static_cast<long long>(last.reps.value_or(1)));
    std::fflush(stderr);
  }

  void done(std::size_t points, std::int64_t runs, double seconds,
            std::string_view why) {
    std::fprintf(stderr,
                 "%sfpm-profile: %s on %s: %zu sizes, %lld runs, %.2g s%s%s\n",
                 terminal_ ? "\r\033[K" : "", label_.c_str(), pe_.c_str(),
                 points, static_cast<long long>(runs), seconds,
                 why.empty() ? "" : "; ", std::string(why).c_str());
  }

private:
  std::string label_, pe_;
  std::size_t sizes_;
  bool terminal_;
};

/// One benchmark run of `size` iterations per thread on the CPU team:
/// `threads` threads each run their own iterations at once (as they do
/// when the loop runs, sharing caches and memory bandwidth). Returns the
/// mean of their times, or nothing when a body asked to stop.
std::optional<double> runOnCpu(const LoopCall &call, int threads,
                               std::int64_t size) {
  std::vector<double> seconds(static_cast<std::size_t>(threads), 0.0);
  bool stopped = false;
#pragma omp parallel num_threads(threads) reduction(|| : stopped)
  {
    const int t = omp_get_thread_num();
    const std::int64_t begin = t * size;
#pragma omp barrier
    const Clock::time_point start = Clock::now();
    stopped = call.body(begin, begin + size, call.context) != 0;
    seconds[static_cast<std::size_t>(t)] = secondsSince(start);
  }
  if (stopped)
    return std::nullopt;
  double sum = 0;
  for (double s : seconds)
    sum += s;
  return sum / threads;
}

/// One benchmark run of iterations [0, size) on the device PE `pe` alone,
/// through the executor (uploads, kernel, downloads: what a chunk costs).
std::optional<double> runOnDevice(const LoopCall &call, const LoopPe &pe,
                                  std::int64_t size) {
  LoopCall one = call;
  one.name = {}; // neither recorded online nor remembered as the loop's
  one.schedule = "equal";
  one.part = Range{0, size};
  one.verbose = false;
  one.note = {};
  const Clock::time_point start = Clock::now();
  if (runOnOnePe(one, pe.id) == LoopStatus::Stopped)
    return std::nullopt;
  return secondsSince(start);
}

} // namespace

std::vector<std::int64_t> benchmarkSizes(std::int64_t grain,
                                         std::int64_t maxSize, int points) {
  std::vector<std::int64_t> sizes;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t top = maxSize / grain;
  if (top < 1 || points < 1)
    return sizes;
  // Granule counts 1 .. top, geometric: small sizes are where speed
  // functions bend (caches), so they get as many points as large ones.
  for (int p = 0; p < points; ++p) {
    const double fraction = points == 1 ? 1.0 : double(p) / (points - 1);
    const auto granules = static_cast<std::int64_t>(
        std::llround(std::pow(static_cast<double>(top), fraction)));
    const std::int64_t size =
        std::clamp<std::int64_t>(granules, 1, top) * grain;
    if (sizes.empty() || size > sizes.back())
      sizes.push_back(size);
  }
  return sizes;
}

void benchmarkLoop(const LoopCall &call, const BenchmarkSettings &settings) {
  if (call.tripCount < 1)
    return;
  const std::string label = call.name.empty()
                                ? "the loop at " + std::string(call.file) +
                                      ":" + std::to_string(call.line)
                                : loopLabel(call);
  bool before = false;
  withLoopState(loopKey(call), [&](LoopState &state) {
    before = std::exchange(state.benchmarked, true);
  });
  if (before)
    return;
  if (call.name.empty()) {
    std::fprintf(stderr,
                 "fpm-profile: %s has no name, so its profiles could not be "
                 "found again; it is not benchmarked\n",
                 label.c_str());
    return;
  }
  std::vector<fpm_arg> written = writtenSections(call);
  // A loop that writes nothing but its reductions may run again and again:
  // its benchmark runs' partial results are never applied.
  if (written.empty() && !call.reductions) {
    std::fprintf(
        stderr,
        "fpm-profile: %s does not say what it writes in a way the runtime "
        "can save and restore (out or inout sections that move linearly "
        "with the loop variable, over an array of values or of row "
        "pointers whose rows it takes whole from their element 0): running "
        "it more than once could change the program's results, so it is not "
        "benchmarked; its runs are profiled online instead\n",
        label.c_str());
    return;
  }

  try {
    std::vector<LoopPe> pes;
    if (call.kernel && call.devices.wantsDevices())
      pes = coexecutionPes(call);
    if (pes.empty() && (call.devices.cpu || !call.kernel))
      pes.push_back({std::string(CpuProfileId), std::string(CpuProfileName),
                     cpuThreads()});
    const std::int64_t grain = std::max<std::int64_t>(call.grain, 1);
    const SavedSections saved(std::move(written), call.tripCount);
    ProfileStore store(profileDirectory());

    for (const LoopPe &pe : pes) {
      const bool cpu = pe.id == CpuProfileId;
      const int threads = cpu ? std::max(pe.threads, 1) : 1;
      const std::vector<std::int64_t> sizes =
          benchmarkSizes(grain, call.tripCount / threads, settings.points);
      Progress progress(label, pe.id, sizes.size());
      std::vector<ProfilePoint> points;
      std::int64_t runs = 0;
      bool stopped = false; // a body asked the loop to stop
      std::string why;
      const Clock::time_point started = Clock::now();
      for (std::int64_t size : sizes) {
        Samples samples(grain, static_cast<std::size_t>(settings.maxReps));
        const Clock::time_point pointStart = Clock::now();
        std::optional<ProfilePoint> point;
        for (int rep = 1; rep <= settings.maxReps; ++rep) {
          std::optional<double> seconds;
          try {
            seconds = cpu ? runOnCpu(call, threads, size)
                          : runOnDevice(call, pe, size);
          } catch (...) {
            saved.restore(call.tripCount);
            throw;
          }
          saved.restore(size * threads);
          ++runs;
          if (!seconds) {
            stopped = true;
            why = "a body stopped the loop";
            break;
          }
          samples.add(size, *seconds);
          point = samples.summarize().front();
          const bool precise = rep >= settings.minReps && point->ci &&
                               *point->ci <= settings.error * point->time;
          if (precise || secondsSince(pointStart) >= settings.seconds)
            break;
        }
        if (stopped)
          break;
        points.push_back(*point);
        progress.point(points.size(), size, *point);
        if (settings.budget > 0 && secondsSince(started) >= settings.budget) {
          why = "stopped at its time budget";
          break;
        }
      }
      progress.done(points.size(), runs, secondsSince(started), why);
      if (!points.empty())
        store.merge(call.name, pe.id, pe.name, points, settings.fresh);
      if (stopped)
        break;
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "fpm-profile: %s: benchmarking failed: %s\n",
                 label.c_str(), error.what());
  }
}

} // namespace fpm
