// The boundary pass (region growth): a node next to nodes of another backend moves there
// alone when that backend supports it and the cost model says the move pays - typically
// a cpu node between accelerator nodes joins them, saving two copies, while a cheap node
// whose move would add a big transfer stays put. Moves go both ways: an expensive node
// also leaves a backend that is slow for it.
#pragma once

#include "partitioner/placement_state.hpp"

namespace infer::partitioner {

// True when a node around `id` runs on another backend.
bool on_boundary(const PlacementState& state, ir::NodeId id);

// Visits the nodes in order, up to options().max_growth_rounds times, until a round
// moves nothing. Pinned nodes never move.
void grow_regions(PlacementState& state);

}  // namespace infer::partitioner
