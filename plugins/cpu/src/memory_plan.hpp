// Static memory planning for an executable's intermediate values. Each value lives from
// the step that produces it to the last step that reads it; two values whose lifetimes
// do not overlap may share bytes. plan_memory() gives every value an offset in one block
// so that values live at the same time never overlap, using the greedy-by-size best-fit
// heuristic (largest values first, each into the smallest gap among the values it is
// live with): it is within a few percent of the optimum on CNN and transformer graphs
// and costs O(n^2) for n values, paid once per shape signature.
//
// This header knows nothing of kernels or of the ABI, so tests can check it directly; it
// is header-only so that the test target needs no plugin sources.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace infer::cpu {

// One value to place: live during steps [first, last] (inclusive) and `bytes` long.
struct PlanInterval {
  int first = 0;
  int last = 0;
  size_t bytes = 0;
};

struct MemoryPlan {
  // Byte offset of each interval in the block (0 for zero-byte intervals, which get no
  // memory) and the bytes reserved for it (the request, rounded up to the alignment).
  std::vector<size_t> offsets;
  std::vector<size_t> sizes;
  size_t total = 0;  // bytes of the whole block (a multiple of the alignment)
};

// Places `intervals`; `alignment` must be a power of two. Every offset is a multiple of
// it, so a block allocated with that alignment gives aligned tensors.
inline MemoryPlan plan_memory(std::span<const PlanInterval> intervals, size_t alignment = 64);

// The largest number of bytes live at one step: a lower bound for any plan's total
// (counting each interval's size rounded up to `alignment`).
inline size_t peak_live_bytes(std::span<const PlanInterval> intervals, size_t alignment = 64);

namespace memory_plan_detail {

inline size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

inline bool overlaps(const PlanInterval& a, const PlanInterval& b) {
  return a.first <= b.last && b.first <= a.last;
}

// Places the intervals in `order`, each at the best-fitting gap among the already
// placed intervals it overlaps in time.
inline void place_in_order(std::span<const PlanInterval> intervals,
                           const std::vector<size_t>& order, MemoryPlan& plan) {
  const size_t n = intervals.size();
  plan.offsets.assign(n, 0);
  plan.total = 0;
  std::vector<size_t> placed;  // indices already given an offset
  placed.reserve(n);
  std::vector<std::pair<size_t, size_t>> busy;  // (offset, end) of live neighbours
  for (size_t i : order) {
    const size_t size = plan.sizes[i];
    if (size == 0) continue;
    busy.clear();
    for (size_t j : placed)
      if (overlaps(intervals[i], intervals[j]))
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + plan.sizes[j]);
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap between live neighbours that holds the value; past the
    // last neighbour when none does.
    size_t best = std::numeric_limits<size_t>::max();
    size_t best_gap = std::numeric_limits<size_t>::max();
    size_t cursor = 0;
    for (const auto& [off, end] : busy) {
      if (off > cursor) {
        const size_t gap = off - cursor;
        if (gap >= size && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, end);
    }
    if (best == std::numeric_limits<size_t>::max()) best = cursor;
    plan.offsets[i] = best;
    plan.total = std::max(plan.total, best + size);
    placed.push_back(i);
  }
}

}  // namespace memory_plan_detail

inline MemoryPlan plan_memory(std::span<const PlanInterval> intervals, size_t alignment) {
  using namespace memory_plan_detail;
  if (alignment == 0) alignment = 1;
  const size_t n = intervals.size();
  MemoryPlan plan;
  plan.sizes.resize(n);
  for (size_t i = 0; i < n; ++i) plan.sizes[i] = round_up(intervals[i].bytes, alignment);

  // Largest first: big values claim space early and small ones fill the gaps they
  // leave. Ties go to the longer-lived value, then to the earlier one, so the result is
  // deterministic.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (plan.sizes[a] != plan.sizes[b]) return plan.sizes[a] > plan.sizes[b];
    const int la = intervals[a].last - intervals[a].first;
    const int lb = intervals[b].last - intervals[b].first;
    if (la != lb) return la > lb;
    return intervals[a].first < intervals[b].first;
  });
  place_in_order(intervals, order, plan);
  // Neither order is always best: by size can strand a small value above two big
  // neighbours placed apart (a chain 10, 9, 5, 8 takes 24 instead of 19), where placing
  // in step order packs it. Trying both and keeping the smaller costs a second pass.
  std::vector<size_t> by_time(n);
  std::iota(by_time.begin(), by_time.end(), size_t{0});
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) {
    if (intervals[a].first != intervals[b].first) return intervals[a].first < intervals[b].first;
    return plan.sizes[a] > plan.sizes[b];
  });
  MemoryPlan other;
  other.sizes = plan.sizes;
  place_in_order(intervals, by_time, other);
  return other.total < plan.total ? other : plan;
}

inline size_t peak_live_bytes(std::span<const PlanInterval> intervals, size_t alignment) {
  using memory_plan_detail::round_up;
  if (alignment == 0) alignment = 1;
  // Sweep over steps: +size where an interval starts, -size after it ends.
  std::map<int, int64_t> delta;
  for (const PlanInterval& iv : intervals) {
    const auto size = static_cast<int64_t>(round_up(iv.bytes, alignment));
    if (size == 0) continue;
    delta[iv.first] += size;
    delta[iv.last + 1] -= size;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [step, d] : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return static_cast<size_t>(peak);
}

}  // namespace infer::cpu
