//===- exec/coexec.cpp - One loop over CPU threads and devices ------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A call finds its PEs (the CPU team, less one host thread per OpenCL
// device), fills a WorkPool by its schedule and the speeds the loop has
// measured so far, and runs one OpenMP region in which threads
// 0 .. devices-1 feed one device each and the others run the CPU body.
// A loop called again and again with `auto` or `numerical` is split by
// partial FPMs of what its PEs ran in the calls before (balance/).
//
// A device's host thread keeps two chunks in flight on three in-order
// queues (upload, compute, download), so that the next chunk's upload
// overlaps this one's kernel. When anything on a device fails, the host
// thread waits for what it had enqueued, keeps the chunks that completed,
// hands the rest back to the pool, and from then on runs CPU chunks
// itself: whatever happens, a thread is left to run the recovered work.
//
//===----------------------------------------------------------------------===//

#include "exec/coexec.hpp"

#include "balance/balance.hpp"
#include "device/opencl.hpp"
#include "exec/schedule_string.hpp"
#include "exec/work_pool.hpp"
#include "partition/partition.hpp"
#include "store/online_profiles.hpp"
#include "support/environment.hpp"
#include "trace/trace.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace fpm {
namespace {

// Trace lanes: CPU threads from 1, each device's kernels, uploads and
// downloads, and a failed device's host thread running CPU chunks.
constexpr int CpuLane = 1;
constexpr int KernelLane = 1000;
constexpr int UploadLane = 2000;
constexpr int DownloadLane = 3000;
constexpr int RescueLane = 4000;

/// Chunks start at multiples of this many iterations (or of the grain, if
/// larger), so that a device runs them as whole work-groups of this size.
/// An implementation left to choose the work-group size picks a divisor
/// of each global size (1 for a prime one), and PoCL compiles the kernel
/// again for every new work-group size: tens of milliseconds each.
constexpr std::int64_t WorkGroupSize = 64;

double seconds(std::int64_t nanoseconds) {
  return static_cast<double>(nanoseconds) * 1e-9;
}

//===----------------------------------------------------------------------===//
// Faults injected for tests: FPM_INJECT_FAULT=pe:k[:wait][,pe:k...]
//===----------------------------------------------------------------------===//

struct InjectedFault {
  std::string pe;
  int chunk = 0;       ///< 0: the program build; k: the k-th chunk
  bool atWait = false; ///< fail when waiting for chunk k, not enqueuing it
};

/// Thrown for an injected fault; handled like an OpenCL error.
class FaultError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<InjectedFault> injectedFaults() {
  const char *text = textFromEnvironment("FPM_INJECT_FAULT");
  std::vector<InjectedFault> faults;
  if (!text)
    return faults;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item.empty())
      continue;
    const std::size_t colon = item.find(':');
    InjectedFault fault;
    bool good = colon != std::string::npos && colon > 0;
    if (good) {
      fault.pe = item.substr(0, colon);
      std::string rest = item.substr(colon + 1);
      if (rest.ends_with(":wait")) {
        fault.atWait = true;
        rest.resize(rest.size() - 5);
      }
      good = !rest.empty() && rest.size() < 9 &&
             std::all_of(
                 rest.begin(), rest.end(),
                 [](char c) { return c >= '0' && c <= '9'; });
      if (good)
        fault.chunk = std::stoi(rest);
      good = good && !(fault.atWait && fault.chunk == 0);
    }
    if (!good)
      throw std::invalid_argument(
          std::string("FPM_INJECT_FAULT \"") + text + "\": expected pe:k or " +
          "pe:k:wait (k >= 0; 0 is the program build), such as opencl0:3");
    faults.push_back(std::move(fault));
  }
  // A fault for a PE the run does not have injects nothing, and a fault
  // test would pass without testing anything.
  const std::vector<opencl::DeviceInfo> &found = opencl::devices();
  for (const InjectedFault &fault : faults)
    if (std::none_of(found.begin(), found.end(),
                     [&](const opencl::DeviceInfo &info) {
                       return info.id == fault.pe;
                     })) {
      std::string known;
      for (const opencl::DeviceInfo &info : found)
        known += (known.empty() ? "" : ", ") + info.id;
      throw std::invalid_argument(
          std::string("FPM_INJECT_FAULT \"") + text + "\": there is no PE '" +
          fault.pe + "' to fail in this run (" +
          (known.empty() ? std::string("no OpenCL device was found")
                         : "its OpenCL devices: " + known) +
          ")");
    }
  return faults;
}

//===----------------------------------------------------------------------===//
// What each loop measured, and which devices failed it.
//===----------------------------------------------------------------------===//

struct PeRecord {
  // Per worker thread: a CPU PE's speed is this times its threads.
  std::int64_t iterations = 0;
  double seconds = 0;
};

struct LoopRecord {
  std::map<std::string, PeRecord, std::less<>> pes;
  int calls = 0; ///< finished in this process
  std::set<std::string, std::less<>> failed;
  std::set<std::string, std::less<>> described; ///< verbose lines printed
  /// The partial FPMs of `auto` and `numerical` calls, per set of PEs
  /// (their ids): another set of PEs is another balancing problem.
  std::map<std::string, LoadBalancer, std::less<>> balancers;
};

std::mutex recordsMutex;

LoopRecord &recordFor(const std::string &key) {
  static std::map<std::string, LoopRecord> records;
  return records[key];
}

std::string loopKey(const LoopCall &call) {
  if (!call.name.empty())
    return std::string(call.name);
  if (!call.file.empty())
    return std::string(call.file) + ":" + std::to_string(call.line);
  return "kernel " + call.kernel->name;
}

//===----------------------------------------------------------------------===//
// The PEs of a call.
//===----------------------------------------------------------------------===//

struct DevicePe {
  std::size_t index = 0; ///< in opencl::devices()
  opencl::Device *device = nullptr;
  std::size_t pipeline = 1; ///< chunks it keeps in flight

  /// Its id in the profile store: a CPU device narrowed to k compute
  /// units is another PE than the whole device ("opencl0.1cu").
  std::string profileId() const {
    const opencl::DeviceInfo &info = device->info();
    if (info.isCpu && device->computeUnits() < info.computeUnits)
      return info.id + "." + std::to_string(device->computeUnits()) + "cu";
    return info.id;
  }
  std::string profileName() const {
    return device->info().name + ", " + std::to_string(device->computeUnits()) +
           " compute unit" + (device->computeUnits() == 1 ? "" : "s");
  }
};

/// Chunks a device keeps in flight: FPM_OPENCL_PIPELINE, else 2 for a
/// device with memory of its own (the next chunk's upload overlaps this
/// one's kernel) and 1 for a CPU device: its copies run on the cores its
/// kernels run on (PoCL with one compute unit runs them one after the
/// other), so a second chunk gains nothing and only holds back work that
/// others could take at the end (fpm-bench-coexec's stencil: fss went from
/// 1.13 to 1.00 of the oracle).
std::size_t pipelineDepth(const opencl::DeviceInfo &info) {
  if (std::optional<long> depth =
          integerFromEnvironment("FPM_OPENCL_PIPELINE", 1, 4))
    return static_cast<std::size_t>(*depth);
  return info.isCpu ? 1 : 2;
}

/// The compute units a CPU OpenCL device may use: FPM_OPENCL_CPU_UNITS, or
/// the cores the CPU team leaves free (seed 004, 4.1: it must not take the
/// cores the team runs on), shared among the CPU devices.
unsigned cpuDeviceUnits(int teamThreads, int cpuDevices) {
  if (std::optional<long> units =
          integerFromEnvironment("FPM_OPENCL_CPU_UNITS", 1, 1 << 20))
    return static_cast<unsigned>(*units);
  const int free = std::max(omp_get_num_procs() - teamThreads, 1);
  return static_cast<unsigned>(std::max(free / std::max(cpuDevices, 1), 1));
}

/// Prints, once per process, the OpenCL devices found.
void describeDevicesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::ostringstream out;
    const std::vector<opencl::DeviceInfo> &found = opencl::devices();
    if (found.empty())
      out << "fpm: OpenCL: no devices found\n";
    for (const opencl::DeviceInfo &info : found)
      out << "fpm: OpenCL: " << info.id << " = " << info.name << " ("
          << info.platformName << ", " << (info.isCpu ? "CPU" : "GPU/other")
          << ", " << info.computeUnits << " compute units, driver "
          << info.driverVersion << ")\n";
    for (const std::string &problem : opencl::discoveryProblems())
      out << "fpm: OpenCL: " << problem << "\n";
    std::fputs(out.str().c_str(), stderr);
  });
}

//===----------------------------------------------------------------------===//
// Sections and transfers.
//===----------------------------------------------------------------------===//

/// Where a staged download lands before it is copied to the caller.
struct Staging {
  std::size_t arg = 0;
  std::vector<std::byte> bytes;
};

/// Enqueues the copy of `arg`'s section of `range` between the caller's
/// array (or `staging`, packed) and `buffer`.
cl_event copySection(cl_command_queue queue, cl_mem buffer,
                     const KernelArg &arg, Range range, bool toDevice,
                     std::byte *staging, std::span<const cl_event> waitFor,
                     std::uint64_t &bytes) {
  const auto size = static_cast<std::int64_t>(arg.size);
  auto *host = static_cast<std::byte *>(arg.data);
  const auto waits = static_cast<cl_uint>(waitFor.size());
  const cl_event *waitList = waitFor.empty() ? nullptr : waitFor.data();
  cl_event event = nullptr;
  if (arg.shared() || arg.contiguous()) {
    const auto [first, last] =
        arg.shared() ? std::pair{arg.offset, arg.offset + arg.count}
                     : arg.span(range.begin, range.end);
    const auto offset = static_cast<std::size_t>(first * size);
    const auto length = static_cast<std::size_t>((last - first) * size);
    bytes += length;
    std::byte *at = staging ? staging : host + offset;
    opencl::check(
        toDevice ? clEnqueueWriteBuffer(queue, buffer, CL_FALSE, offset, length,
                                        at, waits, waitList, &event)
                 : clEnqueueReadBuffer(queue, buffer, CL_FALSE, offset, length,
                                       at, waits, waitList, &event),
        toDevice ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
    return event;
  }
  // `count` elements every |stride|: a rectangle, one row per iteration,
  // rows in the order of their addresses.
  const auto start =
      static_cast<std::size_t>(arg.firstRow(range.begin, range.end) * size);
  const auto rowBytes = static_cast<std::size_t>(arg.count * size);
  const auto pitch = static_cast<std::size_t>(std::abs(arg.stride) * size);
  const auto rows = static_cast<std::size_t>(range.size());
  bytes += rowBytes * rows;
  const std::size_t bufferOrigin[3] = {start, 0, 0};
  const std::size_t hostOrigin[3] = {staging ? 0 : start, 0, 0};
  const std::size_t region[3] = {rowBytes, rows, 1};
  const std::size_t hostPitch = staging ? rowBytes : pitch;
  std::byte *base = staging ? staging : host;
  opencl::check(
      toDevice
          ? clEnqueueWriteBufferRect(queue, buffer, CL_FALSE, bufferOrigin,
                                     hostOrigin, region, pitch, 0, hostPitch, 0,
                                     base, waits, waitList, &event)
          : clEnqueueReadBufferRect(queue, buffer, CL_FALSE, bufferOrigin,
                                    hostOrigin, region, pitch, 0, hostPitch, 0,
                                    base, waits, waitList, &event),
      toDevice ? "clEnqueueWriteBufferRect" : "clEnqueueReadBufferRect");
  return event;
}

/// The bytes of `arg`'s section of `range`, packed as copySection() lays a
/// staged download out.
std::size_t stagedBytes(const KernelArg &arg, Range range) {
  if (arg.contiguous()) {
    const auto [first, last] = arg.span(range.begin, range.end);
    return static_cast<std::size_t>(last - first) * arg.size;
  }
  return static_cast<std::size_t>(arg.count * range.size()) * arg.size;
}

/// Copies a staged download to the caller's array.
void unstage(const KernelArg &arg, Range range, const std::byte *staging) {
  auto *host = static_cast<std::byte *>(arg.data);
  const auto size = static_cast<std::int64_t>(arg.size);
  if (arg.contiguous()) {
    const auto [first, last] = arg.span(range.begin, range.end);
    std::memcpy(host + first * size, staging,
                static_cast<std::size_t>(last - first) * arg.size);
    return;
  }
  const std::size_t row = static_cast<std::size_t>(arg.count) * arg.size;
  const std::int64_t first = arg.firstRow(range.begin, range.end);
  const std::int64_t pitch = std::abs(arg.stride);
  for (std::int64_t r = 0; r < range.size(); ++r, staging += row)
    std::memcpy(host + (first + r * pitch) * size, staging, row);
}

/// How an array argument's device buffer is created.
cl_mem_flags flags(const KernelArg &arg) {
  return arg.kind == KernelArg::Kind::In    ? CL_MEM_READ_ONLY
         : arg.kind == KernelArg::Kind::Out ? CL_MEM_WRITE_ONLY
                                            : CL_MEM_READ_WRITE;
}

/// The bytes of an array argument's whole array.
std::size_t bytes(const KernelArg &arg) {
  return static_cast<std::size_t>(arg.length) * arg.size;
}

//===----------------------------------------------------------------------===//
// One call.
//===----------------------------------------------------------------------===//

/// What one worker thread did, merged after the region.
struct WorkerLog {
  std::string device; ///< the PE its busy time counts for
  double busy = 0;
  std::int64_t iterations = 0;
  // The first chunk apart: it pays one-time costs, and is left out of the
  // speed the next call starts from when there are others.
  int chunks = 0;
  double firstBusy = 0;
  std::int64_t firstIterations = 0;

  /// Every chunk's size and time, for the profile store; kept only for a
  /// named loop (the store's key), so others allocate nothing per chunk.
  bool profiling = false;
  std::vector<Sample> samples;

  void add(std::int64_t size, double seconds) {
    if (profiling)
      samples.emplace_back(size, seconds);
    if (chunks++ == 0) {
      firstBusy = seconds;
      firstIterations = size;
    }
    busy += seconds;
    iterations += size;
  }
  /// Iterations and seconds to learn speed from.
  std::pair<std::int64_t, double> measured() const {
    if (chunks >= 2 && busy > firstBusy)
      return {iterations - firstIterations, busy - firstBusy};
    return {iterations, busy};
  }
  std::string rescueDevice; ///< set when a failed device's thread ran CPU work
  double rescueBusy = 0;
  std::int64_t rescueIterations = 0;
};

/// What each of the `live` PEs ran in a call and how long it was busy, for
/// the partial FPMs: logs `0 .. devices-1` are the devices', the rest the
/// CPU team's threads (pool PE `devices`), whose time is their mean busy
/// time, as they run side by side. Tail stealing may have moved part of a
/// share: what a PE ran is what counts. With `probe` > 0 (a loop's first
/// call in this process) each worker's first chunk is left out of the
/// speed, as it pays compiles and cold caches, and a PE that ran fewer
/// iterations than `probe` teaches nothing (as for PeRecord).
std::vector<Observation> observations(std::span<const WorkerLog> logs,
                                      std::span<const PoolPe> pes,
                                      std::span<const std::size_t> live,
                                      std::int64_t probe) {
  const std::size_t cpuPe = pes.size() - 1;
  std::vector<std::int64_t> ran(pes.size(), 0), timed(pes.size(), 0);
  std::vector<double> busy(pes.size(), 0);
  for (std::size_t w = 0; w < logs.size(); ++w) {
    const std::size_t pe = std::min(w, cpuPe);
    const auto [iterations, seconds] =
        probe > 0 ? logs[w].measured()
                  : std::pair{logs[w].iterations, logs[w].busy};
    ran[pe] += logs[w].iterations;
    timed[pe] += iterations;
    busy[pe] += seconds;
  }
  std::vector<Observation> result;
  for (std::size_t pe : live) {
    Observation observation;
    if (timed[pe] > 0 && busy[pe] > 0 && ran[pe] >= probe) {
      const double seconds = busy[pe] / std::max(pes[pe].workers, 1);
      observation = {ran[pe], seconds * static_cast<double>(ran[pe]) /
                                  static_cast<double>(timed[pe])};
    }
    result.push_back(observation);
  }
  return result;
}

class Call {
public:
  Call(const LoopCall &call, const KernelSpec &kernel, std::string key,
       std::vector<DevicePe> devices, int cpuWorkers, WorkPool &pool,
       std::vector<InjectedFault> faults)
      : call_(call), kernel_(kernel), key_(std::move(key)),
        label_(loopLabel(call)), devices_(std::move(devices)),
        cpuWorkers_(cpuWorkers), pool_(pool), faults_(std::move(faults)),
        tracing_(trace::enabled()),
        logs_(devices_.size() + static_cast<std::size_t>(cpuWorkers)) {
    for (WorkerLog &log : logs_)
      log.profiling = !call.name.empty();
  }

  /// Runs on every thread of the region.
  void work(int thread) {
    const auto deviceCount = static_cast<int>(devices_.size());
    try {
      if (thread < deviceCount)
        feedDevice(static_cast<std::size_t>(thread));
      else if (thread - deviceCount < cpuWorkers_)
        runCpu(cpuPe(), CpuLane + thread - deviceCount,
               logs_[static_cast<std::size_t>(thread)], false);
    } catch (...) {
      // Not a device failure (those are handled where they happen): stop
      // the loop and hand the error to the caller.
      const std::lock_guard<std::mutex> lock(errorMutex_);
      if (!error_)
        error_ = std::current_exception();
      stop();
    }
  }

  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  std::exception_ptr error() const { return error_; }
  const std::vector<WorkerLog> &logs() const { return logs_; }
  const std::vector<std::string> &failedDevices() const { return failed_; }

  /// The pool's PE index of the CPU team (after the devices).
  std::size_t cpuPe() const { return devices_.size(); }

private:
  void stop() {
    stop_.store(true, std::memory_order_relaxed);
    pool_.stop();
  }

  /// Runs CPU chunks from the pool as PE `pe` until none is left, logged
  /// as `log`'s own work or (a failed device's thread) its rescue work.
  void runCpu(std::size_t pe, int lane, WorkerLog &log, bool rescue) {
    const std::string_view device = "cpu";
    while (!stopped()) {
      const std::optional<Grant> grant = pool_.next(pe);
      if (!grant)
        return;
      const Range range = grant->range;
      const std::int64_t start = trace::now();
      const int status = call_.body(range.begin, range.end, call_.context);
      const std::int64_t finish = trace::now();
      pool_.done(pe, range, seconds(finish - start));
      if (rescue) {
        log.rescueBusy += seconds(finish - start);
        log.rescueIterations += range.size();
      } else {
        log.add(range.size(), seconds(finish - start));
      }
      if (tracing_)
        trace::chunk(call_.name.empty() ? key_ : call_.name, lane, device,
                     range.begin, range.end, start, finish);
      if (status != 0) {
        stop();
        return;
      }
    }
  }

  struct Inflight {
    Range range;
    std::vector<opencl::EventRef> uploads;
    opencl::EventRef kernel;      ///< the last launch
    opencl::EventRef firstKernel; ///< the first, when there are two
    std::vector<opencl::EventRef> downloads;
    std::vector<Staging> staging;
    std::uint64_t uploadBytes = 0;
    std::uint64_t downloadBytes = 0;
    int number = 0; ///< the device's chunk count, from 1
  };

  const InjectedFault *faultAt(std::string_view id, int chunk,
                               bool atWait) const {
    for (const InjectedFault &fault : faults_)
      if (fault.pe == id && fault.chunk == chunk && fault.atWait == atWait)
        return &fault;
    return nullptr;
  }

  [[noreturn]] static void injected(std::string_view id, int chunk,
                                    bool atWait) {
    throw FaultError("injected fault (FPM_INJECT_FAULT=" + std::string(id) +
                     ":" + std::to_string(chunk) + (atWait ? ":wait" : "") +
                     ")");
  }

  /// Feeds device `d` until the pool is empty; on failure, hands its work
  /// back and runs CPU chunks instead.
  void feedDevice(std::size_t d) {
    opencl::Device &device = *devices_[d].device;
    const std::string &id = device.info().id;
    const int lane = static_cast<int>(devices_[d].index);
    WorkerLog &log = logs_[d];
    log.device = id;
    std::deque<Inflight> inflight;
    int chunks = 0;
    std::int64_t busyUntil = 0; // the last completed chunk's end
    // Whole arrays on the device, indexed as on the host; given back to
    // the device for the next call when this function returns, after
    // every command that uses them has completed or been waited for.
    struct Buffers {
      opencl::Device &device;
      const KernelSpec &spec;
      std::vector<opencl::MemRef> buffers;
      ~Buffers() {
        for (std::size_t a = 0; a < buffers.size(); ++a)
          device.releaseBuffer(flags(spec.args[a]), bytes(spec.args[a]),
                               std::move(buffers[a]));
      }
    } owned{device, kernel_, std::vector<opencl::MemRef>(kernel_.args.size())};
    std::vector<opencl::MemRef> &buffers = owned.buffers;
    try {
      if (faultAt(id, 0, false))
        injected(id, 0, false);
      // Given back for the next call whatever happens below.
      struct Lease {
        opencl::Device &device;
        const KernelSpec &spec;
        opencl::KernelRef kernel;
        ~Lease() {
          device.recycle(spec.source, spec.options, spec.name,
                         std::move(kernel));
        }
      } lease{device, kernel_,
              device.kernel(kernel_.source, kernel_.options, kernel_.name)};
      const opencl::KernelRef &kernel = lease.kernel;
      // A reused kernel keeps its last arguments: one the loop leaves out
      // would silently run with a stale buffer.
      cl_uint parameters = 0;
      opencl::check(clGetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS,
                                    sizeof parameters, &parameters, nullptr),
                    "clGetKernelInfo");
      if (parameters != kernel_.args.size())
        throw opencl::Error("kernel '" + kernel_.name + "' takes " +
                                std::to_string(parameters) +
                                " arguments, the loop gives " +
                                std::to_string(kernel_.args.size()) + ": " +
                                opencl::errorName(CL_INVALID_KERNEL_ARGS),
                            CL_INVALID_KERNEL_ARGS);
      std::vector<opencl::EventRef> sharedUploads;
      std::uint64_t sharedBytes = 0;
      for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
        const KernelArg &arg = kernel_.args[a];
        const auto index = static_cast<cl_uint>(a);
        if (arg.kind == KernelArg::Kind::Scalar) {
          opencl::check(clSetKernelArg(kernel.get(), index, arg.size, arg.data),
                        "clSetKernelArg");
          continue;
        }
        if (arg.kind == KernelArg::Kind::Local) {
          opencl::check(clSetKernelArg(kernel.get(), index, arg.size, nullptr),
                        "clSetKernelArg");
          continue;
        }
        buffers[a] = device.acquireBuffer(flags(arg), bytes(arg));
        opencl::check(
            clSetKernelArg(kernel.get(), index, sizeof(cl_mem), &buffers[a]),
            "clSetKernelArg");
      }
      // Shared inputs go over once per call, with the first chunk: a
      // device that gets no chunk copies nothing.
      auto uploadShared = [&] {
        for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
          const KernelArg &arg = kernel_.args[a];
          if (arg.isArray() && arg.shared() && arg.reads())
            sharedUploads.emplace_back(
                copySection(device.uploadQueue(), buffers[a].get(), arg, {},
                            true, nullptr, {}, sharedBytes));
        }
      };
      const std::int64_t setUp = trace::now();
      // WorkGroupSize, or the largest power of two the kernel allows.
      std::size_t groupSize = 1;
      std::size_t largest = 0;
      opencl::check(clGetKernelWorkGroupInfo(kernel.get(), device.device(),
                                             CL_KERNEL_WORK_GROUP_SIZE,
                                             sizeof largest, &largest, nullptr),
                    "clGetKernelWorkGroupInfo");
      while (groupSize * 2 <= std::min<std::size_t>(largest, WorkGroupSize))
        groupSize *= 2;

      while (true) {
        while (inflight.size() < devices_[d].pipeline && !stopped()) {
          const std::optional<Grant> grant = pool_.next(d);
          if (!grant)
            break;
          Inflight chunk;
          chunk.range = grant->range;
          chunk.number = ++chunks;
          inflight.push_back(std::move(chunk));
          if (faultAt(id, chunks, false))
            injected(id, chunks, false);
          if (chunks == 1)
            uploadShared();
          enqueue(device, kernel.get(), groupSize, buffers, sharedUploads,
                  inflight.back());
        }
        if (inflight.empty())
          break;
        Inflight &front = inflight.front();
        if (faultAt(id, front.number, true))
          injected(id, front.number, true);
        std::vector<cl_event> waits;
        for (const opencl::EventRef &event : front.downloads)
          waits.push_back(event.get());
        waits.push_back(front.kernel.get());
        opencl::check(
            clWaitForEvents(static_cast<cl_uint>(waits.size()), waits.data()),
            "clWaitForEvents");
        finish(device, lane, front, busyUntil, log);
        inflight.pop_front();
      }
      // Every chunk waited for its uploads, but a stopped loop may leave
      // shared ones in flight: none may read the caller's arrays after
      // the call returns.
      std::vector<cl_event> shared;
      for (const opencl::EventRef &event : sharedUploads)
        shared.push_back(event.get());
      if (!shared.empty())
        opencl::check(
            clWaitForEvents(static_cast<cl_uint>(shared.size()), shared.data()),
            "clWaitForEvents");
      if (tracing_ && sharedBytes > 0 && !sharedUploads.empty()) {
        const auto [start, end] =
            opencl::commandTimes(device, sharedUploads.front().get());
        trace::transfer(traceName(), UploadLane + lane, id, "upload shared",
                        sharedBytes, start ? start : setUp, end ? end : setUp);
      }
    } catch (const std::exception &error) {
      recover(device, lane, inflight, busyUntil, log, error.what());
      // From now on this thread runs CPU chunks, so that what it handed
      // back always has a thread to run it.
      log.rescueDevice = id + " on cpu";
      runCpu(d, RescueLane + lane, log, true);
    }
  }

  std::string_view traceName() const {
    return call_.name.empty() ? std::string_view(key_) : call_.name;
  }

  /// Enqueues `chunk`'s uploads, kernel and downloads, and flushes them.
  void enqueue(opencl::Device &device, cl_kernel kernel, std::size_t groupSize,
               const std::vector<opencl::MemRef> &buffers,
               const std::vector<opencl::EventRef> &sharedUploads,
               Inflight &chunk) {
    const Range range = chunk.range;
    for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
      const KernelArg &arg = kernel_.args[a];
      if (arg.isArray() && arg.reads() && !arg.shared())
        chunk.uploads.emplace_back(
            copySection(device.uploadQueue(), buffers[a].get(), arg, range,
                        true, nullptr, {}, chunk.uploadBytes));
    }
    std::vector<cl_event> before;
    for (const opencl::EventRef &event : chunk.uploads)
      before.push_back(event.get());
    for (const opencl::EventRef &event : sharedUploads)
      before.push_back(event.get());
    // Whole work-groups of `groupSize`, then the rest (the loop's last
    // chunk only: chunks start at multiples of WorkGroupSize) as one group.
    const auto size = static_cast<std::size_t>(range.size());
    const std::size_t whole = size / groupSize * groupSize;
    const std::size_t parts[2][2] = {
        {static_cast<std::size_t>(range.begin), whole},
        {static_cast<std::size_t>(range.begin) + whole, size - whole}};
    for (const auto &[offset, items] : parts) {
      if (items == 0)
        continue;
      cl_event launched = nullptr;
      const std::size_t *local = items == whole ? &groupSize : nullptr;
      opencl::check(clEnqueueNDRangeKernel(
                        device.computeQueue(), kernel, 1, &offset, &items,
                        local, static_cast<cl_uint>(before.size()),
                        before.empty() ? nullptr : before.data(), &launched),
                    "clEnqueueNDRangeKernel");
      if (chunk.kernel)
        chunk.firstKernel = std::move(chunk.kernel);
      chunk.kernel = opencl::EventRef(launched);
      before.clear(); // the queue is in order
    }
    const cl_event after[1] = {chunk.kernel.get()};
    for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
      const KernelArg &arg = kernel_.args[a];
      if (!arg.isArray() || !arg.writes())
        continue;
      // A read-and-written section lands in a staging area first: a
      // download that fails half way must not leave the caller's input
      // half overwritten for the CPU's rerun.
      std::byte *staging = nullptr;
      if (arg.reads()) {
        chunk.staging.push_back(
            {a, std::vector<std::byte>(stagedBytes(arg, range))});
        staging = chunk.staging.back().bytes.data();
      }
      chunk.downloads.emplace_back(
          copySection(device.downloadQueue(), buffers[a].get(), arg, range,
                      false, staging, after, chunk.downloadBytes));
    }
    opencl::check(clFlush(device.uploadQueue()), "clFlush");
    opencl::check(clFlush(device.computeQueue()), "clFlush");
    opencl::check(clFlush(device.downloadQueue()), "clFlush");
  }

  /// Accounts for a chunk whose commands all completed.
  void finish(opencl::Device &device, int lane, Inflight &chunk,
              std::int64_t &busyUntil, WorkerLog &log) {
    for (const Staging &staged : chunk.staging)
      unstage(kernel_.args[staged.arg], chunk.range, staged.bytes.data());
    // Busy from its first command's start to its last one's end, less what
    // overlapped the previous chunk (pipelined transfers).
    auto [start, end] = opencl::commandTimes(device, chunk.kernel.get());
    if (chunk.firstKernel)
      start = opencl::commandTimes(device, chunk.firstKernel.get()).first;
    const std::int64_t kernelStart = start, kernelEnd = end;
    for (const opencl::EventRef &event : chunk.uploads)
      if (auto [s, e] = opencl::commandTimes(device, event.get()); s > 0) {
        start = std::min(start, s);
        if (tracing_)
          trace::transfer(traceName(), UploadLane + lane, device.info().id,
                          "upload", chunk.uploadBytes, s, e);
      }
    for (const opencl::EventRef &event : chunk.downloads)
      if (auto [s, e] = opencl::commandTimes(device, event.get()); s > 0) {
        end = std::max(end, e);
        if (tracing_)
          trace::transfer(traceName(), DownloadLane + lane, device.info().id,
                          "download", chunk.downloadBytes, s, e);
      }
    if (end <= 0) // no profiling information: the host's view
      start = end = trace::now();
    const std::int64_t busy =
        std::max<std::int64_t>(end - std::max(start, busyUntil), 0);
    busyUntil = std::max(busyUntil, end);
    pool_.done(static_cast<std::size_t>(&log - logs_.data()), chunk.range,
               std::max(seconds(busy), 1e-9));
    log.add(chunk.range.size(), seconds(busy));
    if (tracing_)
      trace::chunk(traceName(), KernelLane + lane, device.info().id,
                   chunk.range.begin, chunk.range.end, kernelStart, kernelEnd);
  }

  /// After a failure on `device`: waits for what was enqueued, keeps the
  /// chunks that completed, and hands the rest back to the pool.
  void recover(opencl::Device &device, int lane, std::deque<Inflight> &inflight,
               std::int64_t &busyUntil, WorkerLog &log, const char *what) {
    // Nothing may still write to the caller's arrays once the rest runs
    // elsewhere. Errors here are the failure's echo.
    clFinish(device.uploadQueue());
    clFinish(device.computeQueue());
    clFinish(device.downloadQueue());
    std::vector<Range> unfinished;
    for (Inflight &chunk : inflight) {
      auto completed = [](const opencl::EventRef &event) {
        cl_int status = CL_QUEUED;
        return event &&
               clGetEventInfo(event.get(), CL_EVENT_COMMAND_EXECUTION_STATUS,
                              sizeof status, &status, nullptr) == CL_SUCCESS &&
               status == CL_COMPLETE;
      };
      const bool complete =
          completed(chunk.kernel) &&
          std::all_of(chunk.uploads.begin(), chunk.uploads.end(), completed) &&
          std::all_of(chunk.downloads.begin(), chunk.downloads.end(),
                      completed) &&
          !faultAt(device.info().id, chunk.number, true);
      // The injected chunk never counts as done, even if it ran.
      if (complete && chunk.number < firstInjected(device.info().id))
        finish(device, lane, chunk, busyUntil, log);
      else
        unfinished.push_back(chunk.range);
    }
    inflight.clear();
    const std::int64_t moved =
        pool_.fail(static_cast<std::size_t>(&log - logs_.data()), unfinished);
    {
      const std::lock_guard<std::mutex> lock(errorMutex_);
      failed_.push_back(device.info().id);
    }
    if (tracing_)
      trace::failure(traceName(), KernelLane + lane, device.info().id, what,
                     trace::now());
    std::ostringstream line;
    line << "fpm: " << label_ << ": " << device.info().id << " ("
         << device.info().name << ") failed: " << what << "; "
         << (moved > 0 ? "its " + std::to_string(moved) +
                             " unfinished iterations run on the other PEs"
                       : std::string("nothing of it was lost"))
         << ", and it is not used for this loop again\n";
    std::fputs(line.str().c_str(), stderr);
  }

  int firstInjected(std::string_view id) const {
    int first = 1 << 30;
    for (const InjectedFault &fault : faults_)
      if (fault.pe == id && fault.chunk > 0)
        first = std::min(first, fault.chunk);
    return first;
  }

  const LoopCall &call_;
  const KernelSpec &kernel_;
  std::string key_;
  std::string label_;
  std::vector<DevicePe> devices_;
  int cpuWorkers_;
  WorkPool &pool_;
  std::vector<InjectedFault> faults_;
  bool tracing_;
  std::vector<WorkerLog> logs_;
  std::atomic<bool> stop_{false};
  std::mutex errorMutex_;
  std::exception_ptr error_;
  std::vector<std::string> failed_;
};

} // namespace

//===----------------------------------------------------------------------===//
// Kernel descriptions.
//===----------------------------------------------------------------------===//

std::pair<std::int64_t, std::int64_t> KernelArg::span(std::int64_t begin,
                                                      std::int64_t end) const {
  if (shared())
    return {offset, offset + count};
  if (stride < 0)
    return {offset + (end - 1) * stride, offset + begin * stride + count};
  return {offset + begin * stride, offset + (end - 1) * stride + count};
}

KernelSpec makeKernelSpec(const fpm_kernel &kernel, std::int64_t tripCount) {
  KernelSpec spec;
  if (!kernel.name || !*kernel.name)
    throw std::invalid_argument("the OpenCL kernel has no name");
  spec.name = kernel.name;
  const std::string what = "OpenCL kernel '" + spec.name + "'";
  if (kernel.source) {
    spec.source = kernel.source;
  } else if (kernel.file && *kernel.file) {
    std::ifstream in(kernel.file, std::ios::binary);
    std::ostringstream text;
    if (in)
      text << in.rdbuf();
    if (!in || in.bad())
      throw std::invalid_argument(std::string(kernel.file) + ": cannot read " +
                                  what + "'s source: " + std::strerror(errno));
    spec.source = text.str();
  } else {
    throw std::invalid_argument(what + " has neither source nor file");
  }
  if (kernel.options)
    spec.options = kernel.options;
  if (kernel.arg_count < 0 || (kernel.arg_count > 0 && !kernel.args))
    throw std::invalid_argument(what + ": bad argument list");

  for (int a = 0; a < kernel.arg_count; ++a) {
    const fpm_arg &in = kernel.args[a];
    const std::string where = what + ", argument " + std::to_string(a) + ": ";
    KernelArg arg;
    switch (in.kind) {
    case FPM_ARG_SCALAR:
      arg.kind = KernelArg::Kind::Scalar;
      break;
    case FPM_ARG_IN:
      arg.kind = KernelArg::Kind::In;
      break;
    case FPM_ARG_OUT:
      arg.kind = KernelArg::Kind::Out;
      break;
    case FPM_ARG_INOUT:
      arg.kind = KernelArg::Kind::InOut;
      break;
    case FPM_ARG_LOCAL:
      arg.kind = KernelArg::Kind::Local;
      break;
    default:
      throw std::invalid_argument(where + "unknown kind " +
                                  std::to_string(in.kind));
    }
    arg.data = in.data;
    arg.size = in.size;
    if (arg.size == 0)
      throw std::invalid_argument(where + "size is 0");
    if (arg.kind == KernelArg::Kind::Scalar && !arg.data)
      throw std::invalid_argument(where + "a scalar needs its value");
    if (arg.isArray()) {
      arg.length = in.length;
      arg.offset = in.offset;
      arg.stride = in.stride;
      arg.count = in.count;
      if (!arg.data || arg.length <= 0)
        throw std::invalid_argument(where + "an array needs data and a length "
                                            "> 0");
      if (arg.offset < 0 || arg.count < 0)
        throw std::invalid_argument(where + "offset and count must be >= 0");
      if (arg.stride == 0 && arg.count == 0) {
        arg.offset = 0;
        arg.count = arg.length;
      }
      if (arg.count == 0)
        throw std::invalid_argument(where + "a section of 0 elements");
      if (arg.writes() && arg.stride == 0)
        throw std::invalid_argument(
            where + "a written section must move with the iteration (stride "
                    "> 0): every iteration would write the same elements");
      if (arg.writes() && std::abs(arg.stride) < arg.count)
        throw std::invalid_argument(
            where +
            "written sections of neighbouring iterations overlap "
            "(stride " +
            std::to_string(arg.stride) + " < count " +
            std::to_string(arg.count) + "): the loop is not a DOALL loop");
      // Every iteration's section must lie in the array: the first's and
      // the last's do (128-bit: no overflow whatever the caller passed).
      const std::int64_t lastIteration =
          std::max<std::int64_t>(tripCount - 1, 0);
      const __int128 move = static_cast<__int128>(lastIteration) * arg.stride;
      const __int128 lowest = arg.offset + std::min<__int128>(move, 0);
      const __int128 end = arg.offset + std::max<__int128>(move, 0) + arg.count;
      if (lowest < 0)
        throw std::invalid_argument(
            where + "the section of iteration " +
            std::to_string(lastIteration) + " starts at element " +
            std::to_string(static_cast<long long>(lowest)) +
            ", before the array");
      if (end > arg.length)
        throw std::invalid_argument(
            where + "the section of iteration " +
            std::to_string(move > 0 ? lastIteration : 0) + " ends at element " +
            std::to_string(static_cast<long long>(end)) +
            ", past the array's " + std::to_string(arg.length));
      if (static_cast<__int128>(arg.length) * arg.size >
          static_cast<__int128>(INT64_MAX))
        throw std::invalid_argument(where + "the array is too large");
    }
    spec.args.push_back(arg);
  }
  return spec;
}

//===----------------------------------------------------------------------===//
// runCoexecution
//===----------------------------------------------------------------------===//

/// The devices a loop call runs on, opened, and the CPU team beside them.
struct LoopDevices {
  std::vector<DevicePe> devices; ///< empty: none usable (see the note)
  int cpuWorkers = 0;            ///< the CPU PE's threads
  int team = 0;                  ///< the whole team, host threads included
};

/// Says once per process and id, on stderr, that `selection` names an
/// OpenCL device there is none of, and which there are: the loop would
/// otherwise run without it (on the CPU, when it named no other) without a
/// word.
void warnAboutMissingDevices(const LoopCall &call,
                             const std::vector<opencl::DeviceInfo> &found,
                             bool noneChosen) {
  const DeviceSelection &selection = call.devices;
  // FPM_DEVICES is every loop's; a devices clause is this loop's.
  const std::string source = selection.source.starts_with("FPM_DEVICES")
                                 ? selection.source
                                 : loopLabel(call) + ": " + selection.source;
  static std::mutex mutex;
  static std::set<std::string, std::less<>> warned;
  for (const std::string &id : selection.openClIds) {
    if (std::any_of(
            found.begin(), found.end(),
            [&](const opencl::DeviceInfo &info) { return info.id == id; }))
      continue;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!warned.insert(source + "|" + id).second)
        continue;
    }
    std::string known;
    for (const opencl::DeviceInfo &info : found)
      known += (known.empty() ? "" : ", ") + info.id + " (" + info.name + ")";
    const std::string line =
        "fpm: " + source + ": there is no OpenCL device " + id + " (" +
        (known.empty() ? std::string("no OpenCL device was found")
                       : "the OpenCL devices are " + known) +
        "); " +
        (noneChosen ? "the loop runs on the CPU" : "the loop runs without it") +
        "\n";
    std::fputs(line.c_str(), stderr);
  }
}

/// The devices `call` selects that did not fail for loop `key` before,
/// opened (a CPU device narrowed to the cores the CPU team leaves free),
/// one host thread each taken from the team. `note` says why there are
/// none.
LoopDevices openLoopDevices(const LoopCall &call, const std::string &key,
                            std::string &note) {
  // The devices that take part: selected, not failed for this loop before.
  const std::vector<opencl::DeviceInfo> &found = opencl::devices();
  std::vector<std::size_t> chosen;
  std::set<std::string, std::less<>> failedBefore;
  {
    const std::lock_guard<std::mutex> lock(recordsMutex);
    failedBefore = recordFor(key).failed;
  }
  for (std::size_t i = 0; i < found.size(); ++i)
    if (call.devices.selects(found[i].id) &&
        !failedBefore.contains(found[i].id))
      chosen.push_back(i);
  warnAboutMissingDevices(call, found, chosen.empty());
  if (chosen.empty()) {
    note = found.empty() ? "no OpenCL device found"
                         : "no OpenCL device selected or usable";
    return {};
  }
  // One host thread per device, taken from the team; the CPU PE keeps the
  // rest, if it takes part.
  const int team = cpuThreads();
  LoopDevices opened;
  opened.team = team;
  if (static_cast<int>(chosen.size()) > team)
    chosen.resize(static_cast<std::size_t>(team));
  const int cpuWorkers = opened.cpuWorkers =
      call.devices.cpu ? team - static_cast<int>(chosen.size()) : 0;
  const int cpuDevices = static_cast<int>(
      std::count_if(chosen.begin(), chosen.end(),
                    [&](std::size_t i) { return found[i].isCpu; }));
  const unsigned units = cpuDeviceUnits(cpuWorkers, cpuDevices);

  std::vector<DevicePe> &devices = opened.devices;
  for (std::size_t i : chosen) {
    const std::size_t pipeline = pipelineDepth(found[i]); // may throw
    try {
      devices.push_back(
          {i, &opencl::openDevice(i, found[i].isCpu ? units : 0), pipeline});
    } catch (const std::exception &error) {
      const std::lock_guard<std::mutex> lock(recordsMutex);
      if (recordFor(key).failed.insert(found[i].id).second)
        std::fprintf(stderr,
                     "fpm: %s: %s (%s) cannot be opened: %s; it is not used "
                     "for this loop\n",
                     loopLabel(call).c_str(), found[i].id.c_str(),
                     found[i].name.c_str(), error.what());
    }
  }
  if (devices.empty())
    note = "no OpenCL device could be opened";
  return opened;
}

std::optional<LoopStatus> runCoexecution(const LoopCall &call,
                                         std::string &note) {
  const KernelSpec &kernel = *call.kernel;
  const std::string key = loopKey(call);
  const LoopSchedule schedule = parseLoopSchedule(call.schedule);
  std::vector<InjectedFault> faults = injectedFaults();
  if (call.verbose)
    describeDevicesOnce();

  LoopDevices opened = openLoopDevices(call, key, note);
  if (opened.devices.empty())
    return std::nullopt;
  std::vector<DevicePe> &devices = opened.devices;
  const int team = opened.team;
  int cpuWorkers = opened.cpuWorkers;
  const std::vector<opencl::DeviceInfo> &found = opencl::devices();
  if (!call.onlyPe.empty()) {
    // A benchmark: the one PE alone, configured as for the whole call.
    std::erase_if(devices, [&](const DevicePe &device) {
      return device.profileId() != call.onlyPe;
    });
    if (call.onlyPe != CpuProfileId)
      cpuWorkers = 0;
    if (devices.empty() && cpuWorkers == 0)
      throw std::runtime_error("no PE '" + std::string(call.onlyPe) +
                               "' takes part in this loop");
  }

  // PEs: the devices, then the CPU team. Speeds: what earlier calls of this
  // loop measured, else one unit per worker thread.
  std::vector<PoolPe> pes;
  std::vector<std::string> ids;
  const std::int64_t probe =
      (call.tripCount + 8 * team - 1) / (8 * std::int64_t{team});
  {
    const std::lock_guard<std::mutex> lock(recordsMutex);
    const LoopRecord &record = recordFor(key);
    auto estimate = [&](const std::string &id, int workers, bool cpu) {
      PoolPe pe;
      pe.workers = workers;
      pe.cpu = cpu;
      // A speed measured on less than a probe's worth of iterations (a
      // device that got one chunk while it was still compiling) is no
      // better than a guess: it is probed again.
      if (auto it = record.pes.find(id); it != record.pes.end() &&
                                         it->second.seconds > 0 &&
                                         it->second.iterations >= probe) {
        pe.speed = static_cast<double>(it->second.iterations) /
                   it->second.seconds * std::max(workers, 1);
        pe.guessed = false;
      } else {
        pe.speed = std::max(workers, 1);
        pe.guessed = true;
      }
      return pe;
    };
    for (const DevicePe &device : devices) {
      pes.push_back(estimate(found[device.index].id, 1, false));
      ids.push_back(found[device.index].id);
    }
    pes.push_back(estimate("cpu", cpuWorkers, true));
    ids.emplace_back("cpu");
  }
  const std::size_t cpuPe = devices.size();
  std::vector<std::size_t> live; // PEs with a thread, in the pool's order
  for (std::size_t p = 0; p < pes.size(); ++p)
    if (pes[p].workers > 0)
      live.push_back(p);

  // The FPMs of the live PEs stored by earlier runs of a named loop: the
  // CPU's is one thread's, scaled to the team (a package of c*w iterations
  // on c threads takes what w takes on one).
  std::vector<Profile> models;
  if (!call.name.empty()) {
    const std::string loop(call.name);
    for (std::size_t p : live) {
      std::optional<Profile> stored =
          storedProfile(loop, p == cpuPe ? std::string(CpuProfileId)
                                         : devices[p].profileId());
      if (!stored) {
        models.clear();
        break;
      }
      if (p == cpuPe)
        for (ProfilePoint &point : stored->points)
          point.size *= cpuWorkers;
      models.push_back(std::move(*stored));
    }
  }
  const bool modelled = !models.empty();
  if (modelled) {
    // Speeds where this process has not measured its own yet: each PE's
    // at an equal share of the loop.
    const CostModel model(models);
    const std::int64_t share = std::max<std::int64_t>(
        call.tripCount / static_cast<std::int64_t>(live.size()), 1);
    for (std::size_t i = 0; i < live.size(); ++i)
      if (PoolPe &pe = pes[live[i]]; pe.guessed) {
        pe.speed = static_cast<double>(share) / model.time(i, share);
        pe.guessed = false;
      }
  }
  const bool measured =
      std::none_of(pes.begin(), pes.end(), [](const PoolPe &pe) {
        return pe.workers > 0 && pe.guessed;
      });

  // Repeated calls of `auto` and `numerical` over several PEs balance with
  // partial FPMs (balance/): each call adds what every PE ran to its
  // model, and from the second call in this process over this set of PEs
  // on, the split is the numerical partitioner's on those models. Stored
  // FPMs seed them. `cpm` stays on one measured speed per PE: it is the
  // traditional baseline (seed 002, Fig. 8).
  const Partitioner *numerical = findPartitioner("numerical");
  const bool automatic = schedule.automatic;
  const bool balancing =
      (automatic || schedule.partitioner == numerical) && live.size() > 1;
  std::string balanceKey;
  for (std::size_t p : live)
    balanceKey += (p == cpuPe ? "cpu*" + std::to_string(cpuWorkers)
                              : devices[p].profileId()) +
                  " ";
  std::optional<LoadBalancer> balancer; // a copy, for this call's split
  if (balancing) {
    const std::lock_guard<std::mutex> lock(recordsMutex);
    auto &balancers = recordFor(key).balancers;
    auto it = balancers.find(balanceKey);
    if (it == balancers.end()) {
      it = balancers.emplace(balanceKey, LoadBalancer(live.size())).first;
      for (std::size_t i = 0; i < models.size(); ++i)
        it->second.seed(i, models[i].points);
    }
    if (it->second.observed() > 0 && it->second.ready())
      balancer = it->second;
  }
  const bool partial = balancer.has_value();

  // The plan. `auto`: on partial FPMs, as above; else, with stored FPMs of
  // every PE, the exact optimum when it is cheap, else WDAH; with speeds
  // measured in this process, a split by them; else the weighted guided
  // schedule, which measures as it goes.
  const bool isStatic =
      partial ||
      (automatic ? measured : schedule.kind == LoopSchedule::Kind::Static);
  const std::int64_t grain = std::max<std::int64_t>(call.grain, 1);
  std::int64_t granule = (WorkGroupSize + grain - 1) / grain * grain;
  const Partitioner *partitioner = schedule.partitioner;
  if (partial)
    partitioner = numerical;
  else if (automatic)
    partitioner = !modelled ? findPartitioner("cpm")
                  : call.tripCount / granule <= 1024
                      ? findPartitioner("optimal")
                      : findPartitioner("wdah");
  if (isStatic)
    granule = std::max(granule,
                       staticGranule(*partitioner, call.tripCount, call.grain));
  WorkPool pool(call.tripCount, granule, pes);
  if (call.steal)
    pool.setStealing(*call.steal);

  std::vector<std::int64_t> planned(pes.size(), 0);
  if (isStatic) {
    PartitionRequest request;
    request.size = call.tripCount;
    request.granularity = granule;
    request.backtrack = schedule.backtrack;
    // The partial FPMs; else the stored FPMs, else constant-speed profiles
    // of the speeds above.
    auto modelledSplit = [&] {
      std::vector<Profile> profiles = models;
      const std::int64_t largest = std::max<std::int64_t>(call.tripCount, 2);
      if (!modelled)
        for (std::size_t p : live) {
          Profile profile;
          profile.kernel = key;
          profile.device = ids[p];
          profile.points = {
              {1, 1.0 / pes[p].speed, {}, {}},
              {largest, static_cast<double>(largest) / pes[p].speed, {}, {}}};
          profiles.push_back(std::move(profile));
        }
      return partition(*partitioner, CostModel(std::move(profiles)), request);
    };
    const Distribution distribution =
        partial ? balancer->split(request) : modelledSplit();
    std::int64_t begin = 0;
    for (std::size_t i = 0; i < live.size(); ++i)
      for (std::int64_t size : distribution.packages[i]) {
        pool.queue(live[i], {begin, begin + size});
        planned[live[i]] += size;
        begin += size;
      }
    if (begin != call.tripCount)
      throw std::logic_error(std::string(partitioner->name) + " split " +
                             std::to_string(begin) + " of " +
                             std::to_string(call.tripCount) + " iterations");
  } else {
    std::int64_t begin = 0;
    if (schedule.alpha) {
      // Stage 1 (seed 001, 3.2): alpha% by the PEs' speeds, into their
      // queues, where tail-end stealing can still move it.
      ScheduleSpec spec;
      spec.scheme = schedule.scheme;
      spec.iterations = (call.tripCount + granule - 1) / granule;
      spec.workers = static_cast<int>(pes.size());
      spec.alpha = schedule.alpha;
      for (const PoolPe &pe : pes)
        spec.weights.push_back(pe.workers > 0 ? pe.speed : 1e-9);
      const std::vector<std::int64_t> shares = stage1Shares(spec);
      for (std::size_t p = 0; p < shares.size(); ++p) {
        const std::int64_t end =
            std::min(call.tripCount, begin + shares[p] * granule);
        pool.queue(p, {begin, end});
        planned[p] += end - begin;
        begin = end;
      }
    }
    pool.dynamic(schedule.scheme, schedule.chunk, begin);
  }

  if (call.verbose) {
    std::ostringstream line;
    line << "fpm: " << loopLabel(call) << ": " << call.tripCount
         << " iterations, schedule " << schedule.text;
    if (partial)
      line << " (numerical on partial FPMs, refined at every call)";
    else if (automatic)
      line << " ("
           << (!isStatic ? std::string("gss: no speeds measured yet")
               : modelled
                   ? std::string(partitioner->name) + " on stored profiles"
                   : std::string("cpm on measured speeds"))
           << ")";
    else if (modelled && isStatic)
      line << " (on stored profiles)";
    line << " over";
    for (std::size_t p = 0; p < pes.size(); ++p) {
      if (pes[p].workers == 0)
        continue;
      line << (p ? ", " : " ") << ids[p];
      if (p == cpuPe)
        line << " (" << cpuWorkers << " thread" << (cpuWorkers == 1 ? "" : "s")
             << ")";
      else
        line << " (" << found[devices[p].index].name << ", "
             << devices[p].device->computeUnits() << " compute unit"
             << (devices[p].device->computeUnits() == 1 ? "" : "s") << ")";
    }
    // Iterations per second, from earlier calls; "?" until then.
    line << "; speeds:";
    for (std::size_t p = 0; p < pes.size(); ++p)
      if (pes[p].workers > 0) {
        line << " " << ids[p] << " ";
        if (pes[p].guessed)
          line << "?";
        else
          line << static_cast<long long>(pes[p].speed) << "/s";
      }
    if (isStatic || schedule.alpha) {
      line << "; " << (isStatic ? "split" : "stage 1") << ":";
      for (std::size_t p = 0; p < pes.size(); ++p)
        if (pes[p].workers > 0)
          line << " " << ids[p] << " " << planned[p];
    }
    line << "\n";
    const std::string text = line.str();
    const std::lock_guard<std::mutex> lock(recordsMutex);
    // Once per loop, shape and kind of split, not per call: speeds drift
    // a little, but auto's switch to a static split is worth a line.
    if (recordFor(key)
            .described
            .insert(schedule.text + "|" + std::to_string(call.tripCount) +
                    (partial    ? "|partial"
                     : isStatic ? "|static"
                                : "|dynamic"))
            .second)
      std::fputs(text.c_str(), stderr);
  }

  if (trace::enabled()) {
    for (const DevicePe &device : devices) {
      const int lane = static_cast<int>(device.index);
      const std::string &id = found[device.index].id;
      trace::nameLane(KernelLane + lane,
                      id + " (" + found[device.index].name + ")");
      trace::nameLane(UploadLane + lane, id + " uploads");
      trace::nameLane(DownloadLane + lane, id + " downloads");
      trace::nameLane(RescueLane + lane, id + "'s host thread on the CPU");
    }
    for (int t = 0; t < cpuWorkers; ++t)
      trace::nameLane(CpuLane + t, "cpu thread " + std::to_string(t));
  }

  const std::int64_t started = trace::now();
  Call run(call, kernel, key, devices, cpuWorkers, pool, std::move(faults));
  const int threads = static_cast<int>(devices.size()) + cpuWorkers;
#pragma omp parallel num_threads(threads)
  {
    // A smaller team than asked for (nesting): the PEs without a thread
    // lose their queues to the others' steals.
    run.work(omp_get_thread_num());
  }
  const std::int64_t finished = trace::now();
  if (std::exception_ptr error = run.error())
    std::rethrow_exception(error);

  // What this call measured, for the next one, and the verbose report.
  trace::CallStats stats(call.name.empty() ? key : std::string(call.name));
  bool firstCall = false;
  std::vector<std::size_t> changed; // PEs whose partial FPM restarted
  {
    const std::lock_guard<std::mutex> lock(recordsMutex);
    LoopRecord &record = recordFor(key);
    for (const std::string &id : run.failedDevices())
      record.failed.insert(id);
    std::map<std::string, std::pair<double, std::int64_t>> busy;
    for (const WorkerLog &log : run.logs()) {
      const std::string device = log.device.empty() ? "cpu" : log.device;
      if (log.iterations > 0) {
        const auto [iterations, measuredSeconds] = log.measured();
        PeRecord &pe = record.pes[device];
        pe.iterations += iterations;
        pe.seconds += measuredSeconds;
        busy[device].first += log.busy;
        busy[device].second += log.iterations;
      }
      if (log.rescueIterations > 0) {
        busy[log.rescueDevice].first += log.rescueBusy;
        busy[log.rescueDevice].second += log.rescueIterations;
      }
    }
    // The CPU PE's busy time is the mean of its threads': its utilisation
    // is then the team's.
    if (auto it = busy.find("cpu"); it != busy.end() && cpuWorkers > 0)
      it->second.first /= cpuWorkers;
    for (const auto &[device, total] : busy)
      stats.busy(device, total.first, total.second);
    firstCall = record.calls++ == 0;
    if (auto it = record.balancers.find(balanceKey);
        balancing && it != record.balancers.end() &&
        run.failedDevices().empty() && !run.stopped())
      changed = it->second.observe(
          observations(run.logs(), pes, live, firstCall ? probe : 0));
  }
  stats.finish(seconds(finished - started));
  if (call.verbose)
    for (std::size_t i : changed)
      std::fprintf(stderr,
                   "fpm: %s: %s no longer runs at the speed its partial FPM "
                   "says; the model starts again from its last calls\n",
                   loopLabel(call).c_str(), ids[live[i]].c_str());

  // Online profiling of a named loop: every chunk's size and time, but a
  // worker's first chunk of the loop's first call in this process, which
  // pays for PoCL's lazy compiles and cold caches. A failed device's
  // chunks are kept: they completed.
  if (!call.name.empty()) {
    const std::string loop(call.name);
    const std::string cpuName(CpuProfileName);
    for (std::size_t w = 0; w < run.logs().size(); ++w) {
      const WorkerLog &log = run.logs()[w];
      std::span<const Sample> samples = log.samples;
      if (firstCall && !samples.empty())
        samples = samples.subspan(1);
      if (samples.empty())
        continue;
      const bool device = w < devices.size();
      recordProfile(
          loop, device ? devices[w].profileId() : std::string(CpuProfileId),
          device ? devices[w].profileName() : cpuName, granule, samples);
    }
  }
  if (!call.onlyPe.empty() && !run.failedDevices().empty())
    throw std::runtime_error(std::string(call.onlyPe) +
                             " failed while it was benchmarked");
  return run.stopped() ? LoopStatus::Stopped : LoopStatus::Completed;
}

std::vector<LoopPe> coexecutionPes(const LoopCall &call) {
  std::string note;
  const LoopDevices opened = openLoopDevices(call, loopKey(call), note);
  std::vector<LoopPe> pes;
  for (const DevicePe &device : opened.devices)
    pes.push_back({device.profileId(), device.profileName(), 1});
  if (!pes.empty() && opened.cpuWorkers > 0)
    pes.push_back({std::string(CpuProfileId), std::string(CpuProfileName),
                   opened.cpuWorkers});
  return pes;
}

} // namespace fpm
