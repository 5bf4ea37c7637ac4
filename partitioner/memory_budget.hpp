// Memory budgets: what a placement keeps resident on a backend (its constants plus the
// peak of its live activations), and the pass that spills nodes off a backend whose
// budget that exceeds.
#pragma once

#include <cstdint>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "partitioner/cost_model.hpp"
#include "partitioner/graph_deps.hpp"

namespace infer::partitioner {

class PlacementState;

struct MemoryUse {
  int64_t constants = 0;         // every constant a node on the backend reads, once
  int64_t peak_activations = 0;  // the largest sum of values live at once
  size_t unknown_values = 0;     // resident values whose size is unknown (not counted)
  int64_t total() const { return constants + peak_activations; }
};

// The estimate, in node order (the order a single stream would run them). A value lives
// on `backend` from its producer there to its last consumer anywhere (the copies out of
// it read it until then), or until the end when it is a graph output; a value made
// elsewhere and read there lives from its first reader there to its last. Graph inputs
// read by a host-addressable backend live in the application's memory and do not count.
MemoryUse memory_use(const ir::Graph& graph, const GraphFacts& facts, const CostModel& cost,
                     const std::vector<size_t>& backend_of, size_t backend);

// For each backend with a budget, in priority order: while its use exceeds the budget,
// the latest node on it (in node order) that is not pinned moves to the first later
// backend that supports it, with the reason "spilled to cpu: example's memory budget of
// 64.0 MiB is exceeded (constants 60.2 MiB + peak activations 8.0 MiB)". Spilling the
// latest nodes keeps the backend's region one prefix of the graph, so the spill adds one
// boundary instead of scattering islands. Fails when the nodes left cannot move.
Status apply_memory_budgets(PlacementState& state);

}  // namespace infer::partitioner
