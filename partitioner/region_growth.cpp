#include "partitioner/region_growth.hpp"

#include "partitioner/move_choice.hpp"
#include "partitioner/move_reasons.hpp"

namespace infer::partitioner {

bool on_boundary(const PlacementState& s, ir::NodeId id) {
  for (ir::NodeId n : s.facts().neighbours[id])
    if (s.backend_of(n) != s.backend_of(id)) return true;
  return false;
}

void grow_regions(PlacementState& s) {
  for (int round = 0; round < s.options().max_growth_rounds; ++round) {
    bool changed = false;
    for (ir::NodeId id = 0; id < s.graph().node_count(); ++id) {
      if (s.pinned(id) || !on_boundary(s, id)) continue;
      const MoveChoice choice = choose_move(s, {id});
      if (choice.outcome != MoveChoice::Outcome::kMove) continue;
      const std::string from = s.backend_name(s.backend_of(id));
      s.move({id}, choice.target,
             "moved to " + s.backend_name(choice.target) + ": " +
                 moved_because(choice.estimate, from));
      changed = true;
    }
    if (!changed) return;
  }
}

}  // namespace infer::partitioner
