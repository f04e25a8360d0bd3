//===- device/opencl/opencl_driver.cpp - An OpenCL device as a PE ---------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The OpenCL driver (opencl_driver.hpp): a range's uploads, launches and
// downloads on one device, staged where rows or masks need it, and its
// recovery when the device fails, and a data region's buffers kept on the
// device (ResidentBuffer, uploadStale). Over 800 lines: one range's
// commands and their events are one sequence that reads best in one
// place, and the region's copies are steps of that sequence.
//
//===----------------------------------------------------------------------===//

#include "device/opencl/opencl_driver.hpp"

#include "device/opencl/staging.hpp"
#include "residency/residency.hpp"
#include "trace/trace.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <ranges>

namespace fpm {
namespace {

std::atomic<std::uint64_t> bytesToDevices{0}, bytesFromDevices{0};

double seconds(std::int64_t nanoseconds) {
  return static_cast<double>(nanoseconds) * 1e-9;
}

/// The rectangles a copy of `arg`'s section of `range` moves: an
/// over-declared input (a guarded stencil's a[i-1:3] at i = 0) only where
/// it is the array's, never an element past it.
std::vector<SectionRect> copiedRects(const KernelArg &arg, Range range,
                                     bool toDevice) {
  std::vector<SectionRect> rects = arg.rects(range.begin, range.end);
  if (!toDevice || arg.extent <= 0)
    return rects;
  return clipRects(rects, arg.origin, arg.origin + arg.extent);
}

/// Enqueues a marker after `waitFor` where a range has nothing to copy,
/// so that it always waits for something.
void enqueueMarker(cl_command_queue queue, std::span<const cl_event> waitFor,
                   std::vector<opencl::EventRef> &events) {
  cl_event event = nullptr;
  opencl::check(clEnqueueMarkerWithWaitList(
                    queue, static_cast<cl_uint>(waitFor.size()),
                    waitFor.empty() ? nullptr : waitFor.data(), &event),
                "clEnqueueMarkerWithWaitList");
  events.emplace_back(event);
}

/// Enqueues the copies of `arg`'s section of `range` between the caller's
/// array (or `staging`, packed rectangle after rectangle) and `buffer`,
/// adding their events to `events` (a marker where there is nothing to
/// copy, so that a range always waits for something).
void copySection(cl_command_queue queue, cl_mem buffer, const KernelArg &arg,
                 Range range, bool toDevice, std::byte *staging,
                 std::span<const cl_event> waitFor, std::uint64_t &bytes,
                 std::vector<opencl::EventRef> &events) {
  const auto size = static_cast<std::size_t>(arg.size);
  auto *host = static_cast<std::byte *>(arg.data);
  const auto waits = static_cast<cl_uint>(waitFor.size());
  const cl_event *waitList = waitFor.empty() ? nullptr : waitFor.data();
  const std::vector<SectionRect> rects = copiedRects(arg, range, toDevice);
  if (rects.empty()) {
    enqueueMarker(queue, waitFor, events);
    return;
  }
  for (const SectionRect &rect : rects) {
    cl_event event = nullptr;
    const auto start = static_cast<std::size_t>(rect.first) * size;
    const auto rowBytes = static_cast<std::size_t>(rect.width) * size;
    const auto rows = static_cast<std::size_t>(rect.rows);
    bytes += rowBytes * rows;
    if (rows == 1) {
      std::byte *at = staging ? staging : host + start;
      opencl::check(
          toDevice ? clEnqueueWriteBuffer(queue, buffer, CL_FALSE, start,
                                          rowBytes, at, waits, waitList, &event)
                   : clEnqueueReadBuffer(queue, buffer, CL_FALSE, start,
                                         rowBytes, at, waits, waitList, &event),
          toDevice ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
    } else {
      const auto pitch = static_cast<std::size_t>(rect.pitch) * size;
      const std::size_t bufferOrigin[3] = {start, 0, 0};
      const std::size_t hostOrigin[3] = {staging ? 0 : start, 0, 0};
      const std::size_t region[3] = {rowBytes, rows, 1};
      const std::size_t hostPitch = staging ? rowBytes : pitch;
      std::byte *base = staging ? staging : host;
      opencl::check(
          toDevice
              ? clEnqueueWriteBufferRect(
                    queue, buffer, CL_FALSE, bufferOrigin, hostOrigin, region,
                    pitch, 0, hostPitch, 0, base, waits, waitList, &event)
              : clEnqueueReadBufferRect(queue, buffer, CL_FALSE, bufferOrigin,
                                        hostOrigin, region, pitch, 0, hostPitch,
                                        0, base, waits, waitList, &event),
          toDevice ? "clEnqueueWriteBufferRect" : "clEnqueueReadBufferRect");
    }
    events.emplace_back(event);
    if (staging)
      staging += rowBytes * rows;
  }
}

/// The bytes of `arg`'s section of `range`, packed as copySection() lays a
/// staged copy out.
std::size_t stagedBytes(const KernelArg &arg, Range range, bool toDevice) {
  std::size_t bytes = 0;
  for (const SectionRect &rect : copiedRects(arg, range, toDevice))
    bytes += static_cast<std::size_t>(rect.elements()) * arg.size;
  return bytes;
}

/// `arg`'s section of `range` gathered from the caller's rows, packed as
/// copySection() reads a staged upload: one copy per rectangle, not per row.
StagingArea stage(const KernelArg &arg, Range range) {
  StagingArea staging(stagedBytes(arg, range, true));
  std::byte *at = staging.get();
  for (const SectionRect &rect : copiedRects(arg, range, true))
    forEachHostRun(arg.data, arg.size, arg.rowPointers(), rect,
                   [&](const std::byte *from, std::size_t bytes) {
                     std::memcpy(at, from, bytes);
                     at += bytes;
                   });
  return staging;
}

/// Copies a staged download to the caller's array (or rows).
void unstage(const KernelArg &arg, Range range, const std::byte *staging) {
  for (const SectionRect &rect : copiedRects(arg, range, false))
    forEachHostRun(arg.data, arg.size, arg.rowPointers(), rect,
                   [&](std::byte *to, std::size_t bytes) {
                     std::memcpy(to, staging, bytes);
                     staging += bytes;
                   });
}

/// The arguments that share argument `a`'s buffer (KernelArg::buffer).
auto sharers(const KernelSpec &spec, std::size_t a) {
  return spec.args | std::views::filter([&spec, a](const KernelArg &arg) {
           return arg.isArray() && arg.buffer == spec.args[a].buffer;
         });
}

/// The buffer argument `a` owns: what each of its sharers' copies reach,
/// readable and writable as they need.
std::pair<cl_mem_flags, std::size_t> bufferOf(const KernelSpec &spec,
                                              std::size_t a) {
  bool reads = false, writes = false;
  std::size_t bytes = 0;
  for (const KernelArg &arg : sharers(spec, a)) {
    // A masked array goes to the device whole, and its kernel may read
    // what it updates (`+=`).
    reads |= arg.reads() || arg.mask;
    writes |= arg.writes();
    bytes = std::max(bytes, arg.arrayBytes());
  }
  return {reads && writes ? CL_MEM_READ_WRITE
          : writes        ? CL_MEM_WRITE_ONLY
                          : CL_MEM_READ_ONLY,
          bytes};
}

/// Whether another argument writes argument `a`'s buffer: a range's copy
/// in must then wait until the range before has copied its writes out.
bool sharesWithAWriter(const KernelSpec &spec, std::size_t a) {
  return std::ranges::any_of(sharers(spec, a), [&](const KernelArg &arg) {
    return &arg != &spec.args[a] && arg.writes();
  });
}

/// A resident array's buffer on one device (residency/residency.hpp): the
/// whole array, kept from call to call while its region lasts, and given
/// back to the device's pool at the region's end.
class ResidentBuffer final : public residency::DeviceCopy {
public:
  ResidentBuffer(opencl::Device &device, std::size_t bytes)
      : device_(device), bytes_(bytes),
        buffer_(device.acquireBuffer(CL_MEM_READ_WRITE, bytes)) {}
  ~ResidentBuffer() override {
    device_.releaseBuffer(CL_MEM_READ_WRITE, bytes_, std::move(buffer_));
  }
  void download(residency::Bytes range, std::byte *host) override {
    bytesFromDevices += range.size();
    opencl::check(clEnqueueReadBuffer(device_.downloadQueue(), buffer_.get(),
                                      CL_TRUE, range.first, range.size(),
                                      host + range.first, 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
  }
  const opencl::MemRef &buffer() const { return buffer_; }

private:
  opencl::Device &device_;
  std::size_t bytes_;
  opencl::MemRef buffer_;
};

/// The resident array that argument `a`'s buffer is, when a data region
/// maps exactly that array and a device may keep it between calls: not
/// the rows of row pointers (packed per range), nor an array whose kernel
/// marks its writes (merged into the host's copy after every range).
residency::Array *residentArray(const KernelSpec &spec, std::size_t a) {
  const KernelArg &arg = spec.args[a];
  if (arg.rowPointers() ||
      std::ranges::any_of(sharers(spec, a), [](const KernelArg &sharer) {
        return sharer.mask.has_value();
      }))
    return nullptr;
  return residency::find(arg.data, bufferOf(spec, a).second);
}

/// Enqueues the uploads of what of `arg`'s section of `range` the device
/// lacks of resident `array` (nothing, once it holds it: a marker then, so
/// that a range always waits for something).
void uploadStale(cl_command_queue queue, cl_mem buffer, const KernelArg &arg,
                 residency::Array &array, residency::Holder holder, Range range,
                 std::span<const cl_event> waitFor, std::uint64_t &bytes,
                 std::vector<opencl::EventRef> &events) {
  const auto waits = static_cast<cl_uint>(waitFor.size());
  const cl_event *waitList = waitFor.empty() ? nullptr : waitFor.data();
  const std::vector<residency::Bytes> stale = residency::prepareRead(
      array, holder,
      residency::rectBytes(copiedRects(arg, range, true), arg.size));
  const auto *host = static_cast<const std::byte *>(arg.data);
  if (stale.empty()) {
    enqueueMarker(queue, waitFor, events);
    return;
  }
  for (const residency::Bytes &part : stale) {
    cl_event event = nullptr;
    opencl::check(clEnqueueWriteBuffer(queue, buffer, CL_FALSE, part.first,
                                       part.size(), host + part.first, waits,
                                       waitList, &event),
                  "clEnqueueWriteBuffer");
    events.emplace_back(event);
    bytes += part.size();
  }
}

/// Where a staged download lands before it is copied to the caller.
struct Staging {
  std::size_t arg = 0;
  StagingArea bytes;
};

/// One range's write mask of a masked array: zeroed on the device before
/// the range's kernel, which sets a byte per element it writes, and read
/// back with the array. A mask per range, not per array: with two ranges
/// in flight, the second's zeroing must not clear what the first wrote
/// before the first's mask is read.
struct RangeMask {
  std::size_t arg = 0;  ///< the mask argument
  std::size_t unit = 0; ///< bytes of the array per mask byte
  opencl::MemRef buffer;
  std::vector<std::uint8_t> host;
};

} // namespace

DeviceTraffic deviceTraffic() {
  return {bytesToDevices.load(), bytesFromDevices.load()};
}

std::string DevicePe::profileId() const {
  const opencl::DeviceInfo &info = device->info();
  if (info.isCpu && device->computeUnits() < info.computeUnits)
    return info.id + "." + std::to_string(device->computeUnits()) + "cu";
  return info.id;
}

std::string DevicePe::profileName() const {
  return device->info().name + ", " + std::to_string(device->computeUnits()) +
         " compute unit" + (device->computeUnits() == 1 ? "" : "s");
}

std::int64_t DevicePe::fill() const {
  if (device->info().isCpu)
    return 0;
  return std::int64_t{device->computeUnits()} * OpenClWorkGroupSize * 4;
}

void DevicePe::nameTraceLanes() const {
  const opencl::DeviceInfo &info = device->info();
  trace::nameLane(kernelLane(), info.id + " (" + info.name + ")");
  trace::nameLane(uploadLane(), info.id + " uploads");
  trace::nameLane(downloadLane(), info.id + " downloads");
  trace::nameLane(rescueLane(), info.id + "'s host thread on the CPU");
}

std::size_t pipelineDepth(const opencl::DeviceInfo &info,
                          std::optional<long> requested) {
  if (requested)
    return static_cast<std::size_t>(*requested);
  return info.isCpu ? 1 : 2;
}

/// One reduction argument's partial results of one launch: an element per
/// work-group, on the device and read back.
struct LaunchPartials {
  std::size_t arg = 0; ///< the kernel argument
  opencl::MemRef buffer;
  std::size_t bytes = 0;
  std::vector<std::byte> host;
};

struct OpenClDriver::Inflight {
  Range range;
  std::vector<LaunchPartials> partials; ///< launch after launch
  std::vector<opencl::EventRef> uploads;
  opencl::EventRef kernel;      ///< the last launch
  opencl::EventRef firstKernel; ///< the first, when there are two
  std::vector<opencl::EventRef> downloads;
  std::vector<Staging> staging;
  /// Gathered rows of row pointers, read by the uploads.
  std::vector<StagingArea> uploadStaging;
  std::vector<RangeMask> masks;
  std::uint64_t uploadBytes = 0;
  std::uint64_t downloadBytes = 0;
  int number = 0; ///< the device's range count, from 1
};

OpenClDriver::OpenClDriver(const KernelSpec &kernel, const DevicePe &pe,
                           FaultSeam faults, const TraceTarget *trace,
                           ReductionPartials *reductions)
    : kernel_(kernel), pe_(pe), device_(*pe.device), faults_(std::move(faults)),
      trace_(trace), reductions_(reductions) {}

bool OpenClDriver::run(WorkFeed &feed) {
  std::deque<Inflight> inflight;
  // Shared inputs' gathered rows: uploads may read them until recover().
  std::vector<StagingArea> sharedStaging;
  int chunks = 0;
  // Whole arrays on the device, indexed as on the host; given back to the
  // device for the next call when this function returns, after every
  // command that uses them has completed or been waited for. Last first:
  // the pool hands out the most recently released buffer of a size first,
  // so the next call's arguments get the buffers they had (released first
  // to last, two inputs of one size would swap every call, and a kernel's
  // speed can differ from one buffer to another).
  struct Buffers {
    opencl::Device &device;
    const KernelSpec &spec;
    std::vector<opencl::MemRef> buffers;
    const std::vector<residency::Array *> &resident; ///< the region's own
    ~Buffers() {
      for (std::size_t a = buffers.size(); a-- > 0;)
        if (buffers[a] && spec.args[a].buffer == a && !resident[a]) {
          const auto [flags, bytes] = bufferOf(spec, a);
          device.releaseBuffer(flags, bytes, std::move(buffers[a]));
        }
    }
  } owned{device_, kernel_, std::vector<opencl::MemRef>(kernel_.args.size()),
          resident_};
  // Arrays of a data region keep their buffers, and what they hold, from
  // call to call: only what a range lacks goes over, and what it writes
  // stays.
  resident_.assign(kernel_.args.size(), nullptr);
  const bool regions = residency::active();
  std::vector<opencl::MemRef> &buffers = owned.buffers;
  try {
    faults_.at(0, false);
    // Given back for the next call whatever happens below.
    struct Lease {
      opencl::Device &device;
      const KernelSpec &spec;
      opencl::KernelRef kernel;
      ~Lease() {
        device.recycle(spec.source, spec.options, spec.name, std::move(kernel));
      }
    } lease{device_, kernel_,
            device_.kernel(kernel_.source, kernel_.options, kernel_.name)};
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
      if (arg.kind == KernelArg::Kind::Origin) {
        const cl_long origin = arg.origin;
        opencl::check(
            clSetKernelArg(kernel.get(), index, sizeof origin, &origin),
            "clSetKernelArg");
        continue;
      }
      if (arg.kind == KernelArg::Kind::Reduction ||
          arg.kind == KernelArg::Kind::End || arg.kind == KernelArg::Kind::Mask)
        continue; // set per launch (enqueue)
      if (arg.buffer != a) {
        buffers[a] = buffers[arg.buffer];
        resident_[a] = resident_[arg.buffer];
      } else if (residency::Array *array =
                     regions ? residentArray(kernel_, a) : nullptr) {
        resident_[a] = array;
        buffers[a] =
            static_cast<ResidentBuffer &>(
                residency::deviceCopy(*array, &device_,
                                      [&](std::size_t bytes) {
                                        return std::make_unique<ResidentBuffer>(
                                            device_, bytes);
                                      }))
                .buffer();
      } else {
        const auto [flags, bytes] = bufferOf(kernel_, a);
        buffers[a] = device_.acquireBuffer(flags, bytes);
      }
      opencl::check(
          clSetKernelArg(kernel.get(), index, sizeof(cl_mem), &buffers[a]),
          "clSetKernelArg");
    }
    // Shared inputs go over once per call, with the first range: a device
    // that gets none copies nothing. So do masked arrays, whole, `out` ones
    // too (their kernel may read what it wrote, or update it): a device's
    // ranges write disjoint elements and copy back only those, and an
    // element another PE writes is one no iteration here reads, so the
    // buffer needs no fresh copy per range.
    auto uploadShared = [&] {
      for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
        const KernelArg &arg = kernel_.args[a];
        if (!arg.isArray() || !arg.shared() || !(arg.reads() || arg.mask))
          continue;
        if (resident_[a]) {
          uploadStale(device_.uploadQueue(), buffers[a].get(), arg,
                      *resident_[a], &device_, {}, {}, sharedBytes,
                      sharedUploads);
          continue;
        }
        if (regions)
          hostAccess(arg, {});
        std::byte *staging = nullptr;
        if (arg.rowPointers())
          staging = sharedStaging.emplace_back(stage(arg, {})).get();
        copySection(device_.uploadQueue(), buffers[a].get(), arg, {}, true,
                    staging, {}, sharedBytes, sharedUploads);
      }
    };
    const std::int64_t setUp = trace::now();
    // OpenClWorkGroupSize, or the largest power of two the kernel allows.
    std::size_t groupSize = 1;
    std::size_t largest = 0;
    opencl::check(clGetKernelWorkGroupInfo(kernel.get(), device_.device(),
                                           CL_KERNEL_WORK_GROUP_SIZE,
                                           sizeof largest, &largest, nullptr),
                  "clGetKernelWorkGroupInfo");
    while (groupSize * 2 <= std::min<std::size_t>(largest, OpenClWorkGroupSize))
      groupSize *= 2;

    while (true) {
      while (inflight.size() < pe_.pipeline && !feed.stopped()) {
        const std::optional<Range> range = feed.next();
        if (!range)
          break;
        Inflight chunk;
        chunk.range = *range;
        chunk.number = ++chunks;
        inflight.push_back(std::move(chunk));
        faults_.at(chunks, false);
        if (chunks == 1)
          uploadShared();
        enqueue(kernel.get(), groupSize, buffers, sharedUploads,
                inflight.back(),
                inflight.size() > 1 ? &inflight[inflight.size() - 2] : nullptr);
      }
      if (inflight.empty())
        break;
      Inflight &front = inflight.front();
      faults_.at(front.number, true);
      std::vector<cl_event> waits;
      for (const opencl::EventRef &event : front.downloads)
        waits.push_back(event.get());
      waits.push_back(front.kernel.get());
      opencl::check(
          clWaitForEvents(static_cast<cl_uint>(waits.size()), waits.data()),
          "clWaitForEvents");
      finish(front, feed);
      inflight.pop_front();
    }
    // Every range waited for its uploads, but a stopped loop may leave
    // shared ones in flight: none may read the caller's arrays after the
    // call returns.
    std::vector<cl_event> shared;
    for (const opencl::EventRef &event : sharedUploads)
      shared.push_back(event.get());
    if (!shared.empty())
      opencl::check(
          clWaitForEvents(static_cast<cl_uint>(shared.size()), shared.data()),
          "clWaitForEvents");
    bytesToDevices += sharedBytes;
    if (trace_ && sharedBytes > 0 && !sharedUploads.empty()) {
      const auto [start, end] =
          opencl::commandTimes(device_, sharedUploads.front().get());
      trace::transfer(trace_->loop, pe_.uploadLane(), device_.info().id,
                      "upload shared", sharedBytes, start ? start : setUp,
                      end ? end : setUp);
    }
    return true;
  } catch (const std::exception &error) {
    recover(inflight, feed, error.what());
    return false;
  }
}

void OpenClDriver::enqueue(cl_kernel kernel, std::size_t groupSize,
                           const std::vector<opencl::MemRef> &buffers,
                           const std::vector<opencl::EventRef> &sharedUploads,
                           Inflight &chunk, const Inflight *previous) {
  const Range range = chunk.range;
  // A section read from a buffer that another section writes waits until
  // the range before has copied its writes out: the copy in must not
  // overwrite them on the device first.
  std::vector<cl_event> written;
  if (previous) {
    for (const opencl::EventRef &event : previous->downloads)
      written.push_back(event.get());
    if (previous->kernel)
      written.push_back(previous->kernel.get());
  }
  for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
    const KernelArg &arg = kernel_.args[a];
    if (!arg.isArray() || !arg.reads() || arg.shared())
      continue;
    const std::span<const cl_event> waitFor =
        sharesWithAWriter(kernel_, a) ? std::span<const cl_event>(written)
                                      : std::span<const cl_event>();
    if (resident_[a]) {
      uploadStale(device_.uploadQueue(), buffers[a].get(), arg, *resident_[a],
                  &device_, range, waitFor, chunk.uploadBytes, chunk.uploads);
      continue;
    }
    if (residency::active())
      hostAccess(arg, range);
    std::byte *staging = nullptr;
    if (arg.rowPointers())
      staging = chunk.uploadStaging.emplace_back(stage(arg, range)).get();
    copySection(device_.uploadQueue(), buffers[a].get(), arg, range, true,
                staging, waitFor, chunk.uploadBytes, chunk.uploads);
  }
  std::vector<cl_event> before;
  for (const opencl::EventRef &event : chunk.uploads)
    before.push_back(event.get());
  for (const opencl::EventRef &event : sharedUploads)
    before.push_back(event.get());
  // One launch per range in whole work-groups of `groupSize`, one local
  // size for the kernel: PoCL compiles a kernel again for every local size
  // (0.4-2 s each), and a range's rest past its whole groups takes a new
  // size at every split. A range starts and ends on multiples of
  // OpenClWorkGroupSize but at the loop's end and where it meets a CPU
  // thread's (work_pool.hpp). A kernel that takes the range's end
  // (FPM_ARG_END: every generated one) runs the rest in a last group padded
  // past the end, whose extra work-items do nothing; one that does not
  // must run no iteration outside the range, so its rest is launched apart
  // in groups of one work-item, a second local size but never a third.
  const auto size = static_cast<std::size_t>(range.size());
  const std::size_t begin = static_cast<std::size_t>(range.begin);
  const std::size_t whole = size / groupSize * groupSize;
  const bool bounded = kernel_.bounded();
  const std::size_t padded = (size + groupSize - 1) / groupSize * groupSize;
  const std::size_t one = 1;
  struct Launch {
    std::size_t offset, items;
    const std::size_t *local;
  };
  const Launch launches[2] = {
      {begin, bounded ? padded : whole, &groupSize},
      {begin + whole, bounded ? 0 : size - whole, &one}};
  // Each masked array's mask for this range, zeroed before its kernel (the
  // compute queue is in order).
  for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
    const KernelArg &arg = kernel_.args[a];
    if (!arg.mask)
      continue;
    RangeMask &mask = chunk.masks.emplace_back();
    mask.arg = *arg.mask;
    mask.unit = kernel_.args[*arg.mask].size;
    mask.host.resize(arg.arrayBytes() / mask.unit);
    mask.buffer = device_.acquireBuffer(CL_MEM_READ_WRITE, mask.host.size());
    const cl_uchar zero = 0;
    opencl::check(clEnqueueFillBuffer(device_.computeQueue(), mask.buffer.get(),
                                      &zero, sizeof zero, 0, mask.host.size(),
                                      0, nullptr, nullptr),
                  "clEnqueueFillBuffer");
  }
  for (const Launch &launch : launches) {
    if (launch.items == 0)
      continue;
    cl_event launched = nullptr;
    for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
      const KernelArg &arg = kernel_.args[a];
      if (arg.kind == KernelArg::Kind::End) {
        const cl_ulong end = static_cast<cl_ulong>(range.end);
        opencl::check(
            clSetKernelArg(kernel, static_cast<cl_uint>(a), sizeof end, &end),
            "clSetKernelArg");
        continue;
      }
      if (arg.kind == KernelArg::Kind::Mask) {
        const auto mask = std::ranges::find(chunk.masks, a, &RangeMask::arg);
        opencl::check(clSetKernelArg(kernel, static_cast<cl_uint>(a),
                                     sizeof(cl_mem), &mask->buffer),
                      "clSetKernelArg");
        continue;
      }
      if (arg.kind != KernelArg::Kind::Reduction)
        continue;
      // Each launch's work-groups store their partial results from element
      // 0 of buffers of their own.
      LaunchPartials &partials = chunk.partials.emplace_back();
      partials.arg = a;
      partials.bytes = launch.items / *launch.local * arg.size;
      partials.buffer =
          device_.acquireBuffer(CL_MEM_WRITE_ONLY, partials.bytes);
      partials.host.resize(partials.bytes);
      opencl::check(clSetKernelArg(kernel, static_cast<cl_uint>(a),
                                   sizeof(cl_mem), &partials.buffer),
                    "clSetKernelArg");
    }
    opencl::check(clEnqueueNDRangeKernel(
                      device_.computeQueue(), kernel, 1, &launch.offset,
                      &launch.items, launch.local,
                      static_cast<cl_uint>(before.size()),
                      before.empty() ? nullptr : before.data(), &launched),
                  "clEnqueueNDRangeKernel");
    if (chunk.kernel)
      chunk.firstKernel = std::move(chunk.kernel);
    chunk.kernel = opencl::EventRef(launched);
    before.clear(); // the queue is in order
  }
  const cl_event after[1] = {chunk.kernel.get()};
  for (LaunchPartials &partials : chunk.partials) {
    cl_event read = nullptr;
    opencl::check(clEnqueueReadBuffer(
                      device_.downloadQueue(), partials.buffer.get(), CL_FALSE,
                      0, partials.bytes, partials.host.data(), 1, after, &read),
                  "clEnqueueReadBuffer");
    chunk.downloads.emplace_back(read);
  }
  for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
    const KernelArg &arg = kernel_.args[a];
    if (!arg.isArray() || !arg.writes() || resident_[a])
      continue; // a resident array's writes stay (finish)
    if (residency::active() && !arg.reads())
      hostAccess(arg, range);
    // A read-and-written section lands in a staging area first: a download
    // that fails half way must not leave the caller's input half
    // overwritten for the CPU's rerun. Rows of row pointers too: they are
    // scattered to their rows from there. So is a masked one, of which only
    // the marked elements reach the caller.
    std::byte *staging = nullptr;
    if (arg.reads() || arg.rowPointers() || arg.mask) {
      chunk.staging.push_back({a, StagingArea(stagedBytes(arg, range, false))});
      staging = chunk.staging.back().bytes.get();
    }
    copySection(device_.downloadQueue(), buffers[a].get(), arg, range, false,
                staging, after, chunk.downloadBytes, chunk.downloads);
  }
  for (RangeMask &mask : chunk.masks) {
    cl_event read = nullptr;
    opencl::check(clEnqueueReadBuffer(
                      device_.downloadQueue(), mask.buffer.get(), CL_FALSE, 0,
                      mask.host.size(), mask.host.data(), 1, after, &read),
                  "clEnqueueReadBuffer");
    chunk.downloads.emplace_back(read);
    chunk.downloadBytes += mask.host.size();
  }
  opencl::check(clFlush(device_.uploadQueue()), "clFlush");
  opencl::check(clFlush(device_.computeQueue()), "clFlush");
  opencl::check(clFlush(device_.downloadQueue()), "clFlush");
}

void OpenClDriver::hostAccess(const KernelArg &arg, Range range) const {
  if (arg.rowPointers())
    return; // rows: no region maps them
  const std::vector<SectionRect> rects = copiedRects(arg, range, false);
  residency::acquireHost(arg.data, arg.size, rects);
  if (arg.writes())
    residency::hostWrote(arg.data, arg.size, rects);
}

void OpenClDriver::finish(Inflight &chunk, WorkFeed &feed) {
  for (std::size_t a = 0; a < kernel_.args.size(); ++a) {
    const KernelArg &arg = kernel_.args[a];
    if (arg.isArray() && arg.writes() && resident_[a])
      residency::wrote(
          *resident_[a], &device_,
          residency::rectBytes(copiedRects(arg, chunk.range, false), arg.size));
  }
  for (const Staging &staged : chunk.staging) {
    const KernelArg &arg = kernel_.args[staged.arg];
    if (!arg.mask) {
      unstage(arg, chunk.range, staged.bytes.get());
      continue;
    }
    const auto mask =
        std::ranges::find(chunk.masks, *arg.mask, &RangeMask::arg);
    mergeMasked(copiedRects(arg, chunk.range, false), arg.size, mask->unit,
                mask->host, staged.bytes.get(),
                static_cast<std::byte *>(arg.data));
  }
  for (RangeMask &mask : chunk.masks)
    device_.releaseBuffer(CL_MEM_READ_WRITE, mask.host.size(),
                          std::move(mask.buffer));
  chunk.masks.clear();
  if (!chunk.partials.empty()) {
    // The work-groups' results in order: launch after launch, group after
    // group; one value per reduction for the range.
    std::span<const Reduction> reductions = reductions_->reductions();
    std::vector<ScalarValue> values(reductions.size());
    reductions_->reset(values);
    for (LaunchPartials &partials : chunk.partials) {
      const KernelArg &arg = kernel_.args[partials.arg];
      const auto r = static_cast<std::size_t>(arg.offset);
      for (std::size_t at = 0; at < partials.bytes; at += arg.size)
        reductions[r].combine(values[r].data(), partials.host.data() + at);
      device_.releaseBuffer(CL_MEM_WRITE_ONLY, partials.bytes,
                            std::move(partials.buffer));
    }
    chunk.partials.clear();
    reductions_->add(chunk.range, values);
  }
  // Busy from its first command's start to its last one's end, less what
  // overlapped the previous range (pipelined transfers).
  auto [start, end] = opencl::commandTimes(device_, chunk.kernel.get());
  if (chunk.firstKernel)
    start = opencl::commandTimes(device_, chunk.firstKernel.get()).first;
  const std::int64_t kernelStart = start, kernelEnd = end;
  const std::string &id = device_.info().id;
  // One trace event per direction, from its first copy's start to its
  // last one's end, with the range's bytes: a range's copies are many (a
  // rectangle each, or a region's stale parts), its bytes counted once.
  auto span = [&](const std::vector<opencl::EventRef> &events) {
    std::pair<std::int64_t, std::int64_t> all{0, 0};
    for (const opencl::EventRef &event : events)
      if (auto [s, e] = opencl::commandTimes(device_, event.get()); s > 0) {
        all.first = all.first ? std::min(all.first, s) : s;
        all.second = std::max(all.second, e);
      }
    return all;
  };
  if (const auto [s, e] = span(chunk.uploads); s > 0) {
    start = std::min(start, s);
    // In a region what a range uploads is what it lacked: the copy cost
    // that steals and kept splits weigh a move by (residency/copy_cost.hpp).
    if (residency::active() && chunk.uploadBytes > 0)
      residency::copied(&device_, residency::Direction::ToDevice,
                        chunk.uploadBytes, seconds(e - s));
    if (trace_ && chunk.uploadBytes > 0)
      trace::transfer(trace_->loop, pe_.uploadLane(), id, "upload",
                      chunk.uploadBytes, s, e);
  }
  if (const auto [s, e] = span(chunk.downloads); s > 0) {
    end = std::max(end, e);
    if (trace_ && chunk.downloadBytes > 0)
      trace::transfer(trace_->loop, pe_.downloadLane(), id, "download",
                      chunk.downloadBytes, s, e);
  }
  if (end <= 0) // no profiling information: the host's view
    start = end = trace::now();
  bytesToDevices += chunk.uploadBytes;
  bytesFromDevices += chunk.downloadBytes;
  const std::int64_t busy =
      std::max<std::int64_t>(end - std::max(start, busyUntil_), 0);
  busyUntil_ = std::max(busyUntil_, end);
  feed.done(chunk.range, std::max(seconds(busy), 1e-9));
  if (trace_)
    trace::chunk(trace_->loop, pe_.kernelLane(), id, chunk.range.begin,
                 chunk.range.end, kernelStart, kernelEnd);
}

void OpenClDriver::recover(std::deque<Inflight> &inflight, WorkFeed &feed,
                           const char *what) {
  // Nothing may still write to the caller's arrays once the rest runs
  // elsewhere. Errors here are the failure's echo.
  clFinish(device_.uploadQueue());
  clFinish(device_.computeQueue());
  clFinish(device_.downloadQueue());
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
        !faults_.failsAtWait(chunk.number);
    // An injected range never counts as done, even if it ran.
    if (complete && chunk.number < faults_.firstFailing())
      finish(chunk, feed);
    else
      unfinished.push_back(chunk.range);
  }
  inflight.clear();
  // What only this device holds of resident arrays, its completed ranges'
  // writes included, comes back before others rerun the rest.
  if (residency::active())
    residency::forget(&device_);
  if (trace_)
    trace::failure(trace_->loop, pe_.kernelLane(), device_.info().id, what,
                   trace::now());
  feed.fail(unfinished, what);
}

} // namespace fpm
