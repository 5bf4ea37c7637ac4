// The placement while the passes refine it: which backend runs each node, why, and what
// the passes share (the request, the cost model, the graph's structure). Also the tools
// every pass uses to judge a move: its estimated gain, whether it would split partitions
// around a cycle, and whether it would break a memory budget.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "partitioner/cost_model.hpp"
#include "partitioner/graph_deps.hpp"
#include "partitioner/partition_plan.hpp"
#include "partitioner/partitioner.hpp"

namespace infer::partitioner {

class PlacementState {
 public:
  // `initial` is the priority placement (with pins); it also fixes each node's priority
  // backend and base reason.
  PlacementState(const PartitionRequest& request, const CostModel& cost,
                 std::vector<NodeAssignment> initial);

  const PartitionRequest& request() const { return request_; }
  const ir::Graph& graph() const { return *request_.graph; }
  const CostModel& cost() const { return cost_; }
  const GraphFacts& facts() const { return facts_; }
  const PartitionOptions& options() const { return request_.options; }
  const std::string& backend_name(size_t b) const { return request_.backends[b].name; }
  bool supports(size_t backend, ir::NodeId id) const {
    return request_.backends[backend].nodes[id].supported();
  }

  size_t backend_of(ir::NodeId id) const { return backend_of_[id]; }
  const std::vector<size_t>& backend_of() const { return backend_of_; }
  bool pinned(ir::NodeId id) const { return assignments_[id].pinned; }
  // True when the node is no longer on the backend priority placed it on.
  bool moved(ir::NodeId id) const { return backend_of_[id] != priority_backend_[id]; }

  // Moves `nodes` to `target`, recording `reason` as why (--explain shows it).
  void move(const std::vector<ir::NodeId>& nodes, size_t target, const std::string& reason);
  // A note on a node that stays put ("kept: moving to cpu ..."), shown after its reason.
  void note(ir::NodeId id, const std::string& text) { notes_[id] = text; }
  void count_undecided() { ++undecided_; }
  size_t undecided() const { return undecided_; }

  // The final assignments: the last move's reason for a node that left its priority
  // backend, else the priority reason with the note (if any) after it.
  std::vector<NodeAssignment> finish() const;

  // Partitions of the current placement, or of the placement with `nodes` on `target`.
  std::vector<size_t> partition_of_node() const;
  std::vector<size_t> partition_of_node_if(const std::vector<ir::NodeId>& nodes,
                                           size_t target) const;

 private:
  const PartitionRequest& request_;
  const CostModel& cost_;
  GraphFacts facts_;
  std::vector<NodeAssignment> assignments_;
  std::vector<size_t> backend_of_;
  std::vector<size_t> priority_backend_;
  std::vector<std::string> move_reasons_;
  std::vector<std::string> notes_;
  size_t undecided_ = 0;
};

// What moving a set of nodes to another backend would change, in the cost model's terms.
struct MoveEstimate {
  bool known = false;  // false: a time, a link or a size it needs is unknown
  double compute_before_us = 0;
  double compute_after_us = 0;
  // The copies the move removes (before) and adds (after); copies made either way are
  // not counted.
  double transfer_before_us = 0;
  double transfer_after_us = 0;
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
  size_t copies_before = 0;
  size_t copies_after = 0;
  double transfer_saved_us() const { return transfer_before_us - transfer_after_us; }
  double compute_saved_us() const { return compute_before_us - compute_after_us; }
  double gain_us() const { return transfer_saved_us() + compute_saved_us(); }
};

MoveEstimate estimate_move(const PlacementState& state, const std::vector<ir::NodeId>& nodes,
                           size_t target);

// Why moving `nodes` to `target` would break the partition graph, or nullopt. Grouping
// always yields an acyclic partition graph, so a move can never create a real cycle;
// but when joining the target's partitions would close one, the moved nodes end up in
// partitions of their own instead, which is not the merge the move was for. This says
// so: "joining example's partition would create a cycle through p1 (cpu)".
std::optional<std::string> cycle_problem(const PlacementState& state,
                                         const std::vector<ir::NodeId>& nodes, size_t target);

// Why moving `nodes` to `target` would break the target's memory budget, or nullopt.
std::optional<std::string> budget_problem(const PlacementState& state,
                                          const std::vector<ir::NodeId>& nodes, size_t target);

// The backends a move of `nodes` could go to: those of the nodes around them, other than
// their own, that support every one of them; in priority order.
std::vector<size_t> neighbour_targets(const PlacementState& state,
                                      const std::vector<ir::NodeId>& nodes);

}  // namespace infer::partitioner
