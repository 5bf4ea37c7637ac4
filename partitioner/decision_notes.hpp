// After the passes: the notes --explain shows for the decisions that left nodes where
// they are. Every small island and every boundary node that could have moved gets one,
// with the numbers ("kept: moving to cpu saves 50.0 us but adds a 1.2 MiB transfer
// (300.0 us)"); those the cost model could not price are counted as undecided instead.
#pragma once

#include "partitioner/placement_state.hpp"

namespace infer::partitioner {

void note_kept_decisions(PlacementState& state);

}  // namespace infer::partitioner
