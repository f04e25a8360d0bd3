//===- exec/host_access.cpp - CPU ranges in a data region -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "exec/host_access.hpp"

#include "residency/residency.hpp"

namespace fpm {

HostAccess::HostAccess(const LoopCall &call) : active_(residency::active()) {
  if (!active_)
    return;
  for (const fpm_arg &arg : call.data)
    if (arg.row_length == 0 && arg.kind >= FPM_ARG_IN &&
        arg.kind <= FPM_ARG_INOUT)
      sections_.push_back({arg.data, arg.size, ArgSection(arg),
                           arg.kind != FPM_ARG_OUT, arg.kind != FPM_ARG_IN});
  if (call.data.empty() && call.kernel)
    for (const KernelArg &arg : call.kernel->args)
      if (arg.isArray() && !arg.rowPointers())
        sections_.push_back(
            {arg.data, arg.size, arg.section(), arg.reads(), arg.writes()});
  whole_ = sections_.empty();
}

void HostAccess::before(Range range) const {
  if (!active_ || range.size() <= 0)
    return;
  if (whole_) {
    residency::acquireHostAll();
    residency::hostWroteAll();
    return;
  }
  for (const Section &s : sections_) {
    if (!s.reads)
      continue; // out: after()
    const std::vector<SectionRect> rects =
        sectionRects(s.section, range.begin, range.end);
    residency::acquireHost(s.data, s.size, rects);
    if (s.writes)
      residency::hostWrote(s.data, s.size, rects);
  }
}

void HostAccess::after(Range range) const {
  if (!active_ || whole_ || range.size() <= 0)
    return;
  for (const Section &s : sections_)
    if (!s.reads && s.writes)
      residency::hostWrote(s.data, s.size,
                           sectionRects(s.section, range.begin, range.end));
}

double HostAccess::readSeconds(Range range, const void *reader) const {
  double seconds = 0;
  if (active_ && range.size() > 0)
    for (const Section &s : sections_)
      if (s.reads)
        seconds += residency::readSeconds(
            s.data, s.size, sectionRects(s.section, range.begin, range.end),
            reader);
  return seconds;
}

} // namespace fpm
