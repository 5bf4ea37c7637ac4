// The island pass: a small island (fewer nodes than options().min_island_nodes) moves as
// a whole to a backend around it that supports all its nodes, when the transfers that
// saves outweigh the compute it loses (or it saves both).
#pragma once

#include "partitioner/placement_state.hpp"

namespace infer::partitioner {

// Repeats until no small island moves: each move changes the islands around it. Every
// accepted move lowers the estimated total by at least min_gain_us, so it ends.
void merge_small_islands(PlacementState& state);

}  // namespace infer::partitioner
