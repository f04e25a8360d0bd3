//===- unit/simulated_backend.cpp - A simulated device --------------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "unit/simulated_backend.hpp"

#include "device/backend.hpp"
#include "device/faults.hpp"
#include "trace/trace.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace fpm {
namespace {

/// What a range costs beyond its body, as a kernel launch does: the CPU
/// team's threads, which an OpenMP region may wake late on a busy machine,
/// still find work, as they do beside a real device.
constexpr std::chrono::microseconds Launch{500};

std::atomic<double> slowdownFactor{1};
std::atomic<std::int64_t> iterationsRun{0};
thread_local bool runningBody = false;

/// Marks this thread as sim0's running a body, for its scope.
class OnDevice {
public:
  OnDevice() { runningBody = true; }
  OnDevice(const OnDevice &) = delete;
  OnDevice &operator=(const OnDevice &) = delete;
  ~OnDevice() { runningBody = false; }
};

/// sim0, opened for a loop call.
class SimulatedPe final : public PeDevice {
public:
  SimulatedPe(const FoundDevice &found, std::size_t ordinal, double slowdown)
      : found_(found), ordinal_(static_cast<int>(ordinal)),
        slowdown_(slowdown) {}

  const FoundDevice &found() const override { return found_; }
  std::string profileId() const override { return found_.id; }
  std::string profileName() const override {
    return found_.name + ", 1 compute unit";
  }
  unsigned computeUnits() const override { return 1; }
  /// Not OpenCL's 64: a call's alignment is its devices'.
  std::int64_t alignment() const override { return 16; }
  std::int64_t fill() const override { return 0; }
  std::size_t pipelineDepth() const override { return 1; }
  int lane() const override { return 1000 + ordinal_; }
  int rescueLane() const override { return 4000 + ordinal_; }
  void nameTraceLanes() const override {
    trace::nameLane(lane(), found_.id + " (" + found_.name + ")");
    trace::nameLane(rescueLane(), found_.id + "'s host thread on the CPU");
  }

  /// Its ranges run where the host's arrays are: in a data region the
  /// executor makes the host's copies current for them.
  bool usesHostMemory() const override { return true; }

  bool run(WorkFeed &feed, const DeviceRun &run) override {
    int number = 0;
    std::optional<Range> range;
    try {
      run.faults.at(number, false); // as OpenCL's program build
      while (!feed.stopped()) {
        range = feed.next();
        if (!range)
          return true;
        // A fault at the range's start or while it is waited for fails it
        // before its body runs: what it hands back wrote nothing.
        run.faults.at(++number, false);
        run.faults.at(number, true);
        const auto start = std::chrono::steady_clock::now();
        {
          // Its status is not looked at: as a kernel's range, this one
          // cannot stop the loop; the CPU team's bodies can.
          const OnDevice on;
          run.body(range->begin, range->end, run.context);
        }
        const auto ran = std::chrono::steady_clock::now() - start;
        std::this_thread::sleep_for(ran * (slowdown_ - 1) + Launch);
        const double seconds = std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
        iterationsRun += range->size();
        feed.done(*range, std::max(seconds, 1e-9));
        if (run.trace) {
          const std::int64_t finish = trace::now();
          trace::chunk(
              run.trace->loop, lane(), found_.id, range->begin, range->end,
              finish - static_cast<std::int64_t>(seconds * 1e9), finish);
        }
        range.reset();
      }
    } catch (const FaultError &error) {
      feed.fail(range ? std::span<const Range>(&*range, 1)
                      : std::span<const Range>(),
                error.what());
      return false;
    }
    return true;
  }

private:
  const FoundDevice &found_;
  int ordinal_;
  double slowdown_;
};

class SimulatedBackend final : public Backend {
public:
  std::string_view prefix() const override { return "sim"; }
  std::string_view title() const override { return "simulated"; }
  // It runs the loop's CPU body, whatever the kernel's language.
  bool runs(fpm_kernel_language) const override { return true; }
  std::span<const FoundDevice> devices() override { return devices_; }
  std::span<const std::string> discoveryProblems() override { return {}; }
  std::unique_ptr<PeDevice> open(const OpenRequest &request) override {
    return std::make_unique<SimulatedPe>(
        devices_.at(request.index), request.ordinal, slowdownFactor.load());
  }

private:
  const std::vector<FoundDevice> devices_{
      {"sim0", "simulated device",
       "simulated device (the loop's CPU body, slowed down)", false}};
};

} // namespace

Backend &simulatedBackend() {
  static SimulatedBackend backend;
  return backend;
}

void test::setSimulatedSlowdown(double slowdown) {
  slowdownFactor = std::max(slowdown, 1.0);
}

std::int64_t test::simulatedIterations() { return iterationsRun.load(); }

bool test::onSimulatedDevice() { return runningBody; }

} // namespace fpm
