//===- cluster/rank_holdings.cpp - Which rank holds which bytes -----------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Stretches of bytes with the rank that wrote each and the ranks that
// received it since, rather than a set of bytes per rank: a write touches
// the stretches it covers, not every rank, so that the simulation's 4096
// ranks cost what three do.
//
//===----------------------------------------------------------------------===//

#include "cluster/rank_holdings.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

namespace fpm {

RankHoldings::RankHoldings(int ranks, std::size_t bytes)
    : ranks_(ranks), bytes_(bytes) {
  if (ranks < 1)
    throw std::invalid_argument("RankHoldings: " + std::to_string(ranks) +
                                " ranks");
  if (bytes > 0)
    stretches_.emplace(0, Stretch{bytes, Everyone, {}});
}

void RankHoldings::cut(std::size_t at) {
  if (at == 0 || at >= bytes_)
    return;
  auto next = stretches_.upper_bound(at);
  auto holder = std::prev(next);
  if (holder->first == at)
    return;
  Stretch tail = holder->second;
  holder->second.last = at;
  stretches_.emplace_hint(next, at, std::move(tail));
}

void RankHoldings::join(std::size_t first, std::size_t last) {
  auto at = stretches_.upper_bound(first);
  if (at != stretches_.begin())
    at = std::prev(at);
  while (at != stretches_.end() && at->first <= last) {
    auto next = std::next(at);
    if (next == stretches_.end())
      break;
    if (next->second.owner == at->second.owner &&
        next->second.copies == at->second.copies) {
      at->second.last = next->second.last;
      stretches_.erase(next);
      continue;
    }
    at = next;
  }
}

bool RankHoldings::holds(const Stretch &stretch, int rank) const {
  return stretch.owner == Everyone || stretch.owner == rank ||
         std::ranges::binary_search(stretch.copies, rank);
}

void RankHoldings::assign(Bytes range, int owner) {
  const std::size_t last = std::min(range.last, bytes_);
  if (range.first >= last)
    return;
  cut(range.first);
  cut(last);
  auto at = stretches_.find(range.first);
  at->second = Stretch{last, owner, {}};
  for (auto next = std::next(at);
       next != stretches_.end() && next->first < last;)
    next = stretches_.erase(next);
  join(range.first, last);
}

void RankHoldings::wrote(int rank, std::span<const Bytes> ranges) {
  for (const Bytes &range : ranges)
    assign(range, rank);
}

template <class Keep>
void RankHoldings::appendOwnerRuns(Bytes range, Keep keep,
                                   std::vector<Run> &runs) const {
  const std::size_t last = std::min(range.last, bytes_);
  if (range.first >= last)
    return;
  for (auto at = std::prev(stretches_.upper_bound(range.first));
       at != stretches_.end() && at->first < last; ++at) {
    if (!keep(at->second))
      continue;
    const Bytes part{std::max(at->first, range.first),
                     std::min(at->second.last, last)};
    if (!runs.empty() && runs.back().owner == at->second.owner &&
        runs.back().bytes.last == part.first)
      runs.back().bytes.last = part.last;
    else
      runs.push_back({at->second.owner, part});
  }
}

std::vector<RankHoldings::Transfer>
RankHoldings::toRead(int rank, std::span<const Bytes> ranges) const {
  std::vector<Run> runs;
  for (const Bytes &range : ranges)
    appendOwnerRuns(
        range, [&](const Stretch &stretch) { return !holds(stretch, rank); },
        runs);
  std::vector<Transfer> transfers;
  transfers.reserve(runs.size());
  for (const Run &run : runs)
    transfers.push_back({run.owner, rank, run.bytes});
  return transfers;
}

void RankHoldings::received(const Transfer &transfer) {
  const std::size_t first = transfer.bytes.first;
  const std::size_t last = std::min(transfer.bytes.last, bytes_);
  if (first >= last)
    return;
  cut(first);
  cut(last);
  for (auto at = stretches_.find(first);
       at != stretches_.end() && at->first < last; ++at) {
    std::vector<int> &copies = at->second.copies;
    if (holds(at->second, transfer.to))
      continue;
    copies.insert(std::ranges::upper_bound(copies, transfer.to), transfer.to);
    // Held by every rank now: no rank need receive it again.
    if (copies.size() + 1 >= static_cast<std::size_t>(ranks_))
      at->second = Stretch{at->second.last, Everyone, {}};
  }
  join(first, last);
}

std::vector<RankHoldings::Run> RankHoldings::notEverywhere(Bytes range) const {
  std::vector<Run> runs;
  appendOwnerRuns(
      range, [](const Stretch &stretch) { return stretch.owner != Everyone; },
      runs);
  return runs;
}

void RankHoldings::everywhere(Bytes range) { assign(range, Everyone); }

bool RankHoldings::whole() const {
  return std::ranges::all_of(stretches_, [](const auto &stretch) {
    return stretch.second.owner == Everyone;
  });
}

} // namespace fpm
