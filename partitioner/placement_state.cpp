#include "partitioner/placement_state.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "partitioner/copy_planner.hpp"
#include "partitioner/grouping.hpp"
#include "partitioner/memory_budget.hpp"
#include "partitioner/units.hpp"

namespace infer::partitioner {

PlacementState::PlacementState(const PartitionRequest& request, const CostModel& cost,
                               std::vector<NodeAssignment> initial)
    : request_(request),
      cost_(cost),
      facts_(graph_facts(*request.graph)),
      assignments_(std::move(initial)) {
  for (const NodeAssignment& a : assignments_) backend_of_.push_back(a.backend);
  priority_backend_ = backend_of_;
  move_reasons_.resize(assignments_.size());
  notes_.resize(assignments_.size());
}

void PlacementState::move(const std::vector<ir::NodeId>& nodes, size_t target,
                          const std::string& reason) {
  for (ir::NodeId id : nodes) {
    backend_of_[id] = target;
    move_reasons_[id] = reason;
    notes_[id].clear();
  }
}

std::vector<NodeAssignment> PlacementState::finish() const {
  std::vector<NodeAssignment> out = assignments_;
  for (ir::NodeId id = 0; id < out.size(); ++id) {
    NodeAssignment& a = out[id];
    a.backend = backend_of_[id];
    a.moved = backend_of_[id] != priority_backend_[id];
    if (a.moved)
      a.reason = move_reasons_[id];
    else if (!notes_[id].empty())
      a.reason += "; " + notes_[id];
    a.est_time_us = cost_.node_time_us(id, a.backend);
  }
  return out;
}

std::vector<size_t> PlacementState::partition_of_node() const {
  std::vector<size_t> part;
  group_partitions(graph(), facts_, backend_of_, part);
  return part;
}

std::vector<size_t> PlacementState::partition_of_node_if(const std::vector<ir::NodeId>& nodes,
                                                         size_t target) const {
  std::vector<size_t> backends = backend_of_;
  for (ir::NodeId id : nodes) backends[id] = target;
  std::vector<size_t> part;
  group_partitions(graph(), facts_, backends, part);
  return part;
}

namespace {

struct CopyKey {
  ir::ValueId value;
  size_t src;
  size_t dst;
  auto operator<=>(const CopyKey&) const = default;
};

std::vector<CopyKey> copies_of(const PlacementState& s, const std::vector<ir::ValueId>& values,
                               const std::vector<size_t>& backend_of) {
  std::vector<CopyKey> keys;
  std::vector<ValueCopy> copies;
  for (ir::ValueId v : values) {
    copies.clear();
    copies_of_value(s.graph(), s.facts(), v, backend_of, s.request().backends, copies);
    for (const ValueCopy& c : copies) keys.push_back(CopyKey{v, c.src, c.dst});
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Adds the copies in `keys` to one side of the estimate; false when one has no estimate.
bool add_copies(const PlacementState& s, const std::vector<CopyKey>& keys, double& time,
                int64_t& bytes, size_t& count) {
  for (const CopyKey& k : keys) {
    const int64_t b = s.cost().value_bytes(k.value);
    const double t = s.cost().copy_time_us(k.src, k.dst, b);
    if (t < 0) return false;
    time += t;
    bytes += std::max<int64_t>(b, 0);
    ++count;
  }
  return true;
}

}  // namespace

MoveEstimate estimate_move(const PlacementState& s, const std::vector<ir::NodeId>& nodes,
                           size_t target) {
  MoveEstimate e;
  for (ir::NodeId id : nodes) {
    const double before = s.cost().node_time_us(id, s.backend_of(id));
    const double after = s.cost().node_time_us(id, target);
    if (before < 0 || after < 0) return e;
    e.compute_before_us += before;
    e.compute_after_us += after;
  }
  // Only the copies of values the moved nodes read or write can change, and of those
  // only the ones the move adds or removes count: a copy made either way (a graph input
  // another device also reads, say) needs no estimate.
  std::set<ir::ValueId> touched;
  for (ir::NodeId id : nodes) {
    for (ir::ValueId v : s.graph().node(id).inputs)
      if (v != ir::kNoValue) touched.insert(v);
    for (ir::ValueId v : s.graph().node(id).outputs)
      if (v != ir::kNoValue) touched.insert(v);
  }
  const std::vector<ir::ValueId> values(touched.begin(), touched.end());
  std::vector<size_t> after = s.backend_of();
  for (ir::NodeId id : nodes) after[id] = target;
  const std::vector<CopyKey> before_keys = copies_of(s, values, s.backend_of());
  const std::vector<CopyKey> after_keys = copies_of(s, values, after);
  std::vector<CopyKey> removed, added;
  std::set_difference(before_keys.begin(), before_keys.end(), after_keys.begin(),
                      after_keys.end(), std::back_inserter(removed));
  std::set_difference(after_keys.begin(), after_keys.end(), before_keys.begin(),
                      before_keys.end(), std::back_inserter(added));
  if (!add_copies(s, removed, e.transfer_before_us, e.bytes_before, e.copies_before)) return e;
  if (!add_copies(s, added, e.transfer_after_us, e.bytes_after, e.copies_after)) return e;
  e.known = true;
  return e;
}

std::optional<std::string> cycle_problem(const PlacementState& s,
                                         const std::vector<ir::NodeId>& nodes, size_t target) {
  if (nodes.empty()) return std::nullopt;
  const std::vector<size_t> part = s.partition_of_node_if(nodes, target);
  const size_t home = part[nodes.front()];
  bool split = false;
  for (ir::NodeId id : nodes) split = split || part[id] != home;
  std::set<ir::NodeId> moving(nodes.begin(), nodes.end());
  bool has_target_neighbour = false;
  bool joined = false;
  for (ir::NodeId id : nodes) {
    for (ir::NodeId n : s.facts().neighbours[id]) {
      if (moving.count(n) || s.backend_of(n) != target) continue;
      has_target_neighbour = true;
      joined = joined || part[n] == home;
    }
  }
  if (!split && (joined || !has_target_neighbour)) return std::nullopt;
  return "joining " + s.backend_name(target) +
         "'s partitions would create a cycle between partitions, so it would run in a "
         "partition of its own";
}

std::optional<std::string> budget_problem(const PlacementState& s,
                                          const std::vector<ir::NodeId>& nodes, size_t target) {
  const int64_t budget = s.request().backends[target].memory_budget_bytes;
  if (budget < 0) return std::nullopt;
  std::vector<size_t> after = s.backend_of();
  for (ir::NodeId id : nodes) after[id] = target;
  const MemoryUse use = memory_use(s.graph(), s.facts(), s.cost(), after, target);
  if (use.total() <= budget) return std::nullopt;
  return "it would need " + format_bytes(use.total()) + " on " + s.backend_name(target) +
         ", over its memory budget of " + format_bytes(budget);
}

std::vector<size_t> neighbour_targets(const PlacementState& s,
                                      const std::vector<ir::NodeId>& nodes) {
  std::set<ir::NodeId> moving(nodes.begin(), nodes.end());
  std::set<size_t> own;
  for (ir::NodeId id : nodes) own.insert(s.backend_of(id));
  std::set<size_t> candidates;
  for (ir::NodeId id : nodes)
    for (ir::NodeId n : s.facts().neighbours[id])
      if (!moving.count(n) && !own.count(s.backend_of(n))) candidates.insert(s.backend_of(n));
  std::vector<size_t> out;
  for (size_t b : candidates) {
    bool all = true;
    for (ir::NodeId id : nodes) all = all && s.supports(b, id);
    if (all) out.push_back(b);
  }
  return out;
}

}  // namespace infer::partitioner
