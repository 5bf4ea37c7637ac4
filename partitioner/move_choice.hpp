// Picks the best move for a set of nodes (a small island, or one node on a boundary):
// to one of the backends around them that supports them all, when the cost model says it
// saves at least options().min_gain_us and it neither closes a cycle nor breaks a memory
// budget.
#pragma once

#include <string>
#include <vector>

#include "partitioner/placement_state.hpp"

namespace infer::partitioner {

struct MoveChoice {
  enum class Outcome {
    kNoTarget,  // no backend around the nodes supports them all
    kUnknown,   // every candidate needs a figure the cost model does not have
    kMove,      // `target` pays and is allowed
    kKeep,      // nothing pays (or what pays is not allowed: `blocked` says why)
  };
  Outcome outcome = Outcome::kNoTarget;
  size_t target = 0;  // kMove: where to; kKeep: the best candidate
  MoveEstimate estimate;
  std::string blocked;  // kKeep: why the best paying candidate is not allowed
};

MoveChoice choose_move(const PlacementState& state, const std::vector<ir::NodeId>& nodes);

// The note for nodes kept where they are after `choice` (kKeep, or a kMove the passes
// did not get to): "moving to cpu saves 50.0 us but adds a 1.2 MiB transfer (300.0 us)".
std::string kept_note(const PlacementState& state, const MoveChoice& choice);

}  // namespace infer::partitioner
