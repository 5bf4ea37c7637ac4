#include "partitioner/island_merge.hpp"

#include "partitioner/islands.hpp"
#include "partitioner/move_choice.hpp"
#include "partitioner/move_reasons.hpp"

namespace infer::partitioner {

void merge_small_islands(PlacementState& s) {
  // Each round moves at most one island; a graph of n nodes has at most n islands, and a
  // node cannot move back and forth forever since every move lowers the estimate. The
  // bound only guards against a cost model that breaks that promise.
  for (size_t round = 0; round <= s.graph().node_count(); ++round) {
    bool moved = false;
    for (const Island& island : small_islands(s)) {
      const MoveChoice choice = choose_move(s, island.nodes);
      if (choice.outcome != MoveChoice::Outcome::kMove) continue;
      const std::string from = s.backend_name(island.backend);
      const std::string reason = "moved to " + s.backend_name(choice.target) + ": " +
                                 island_phrase(s, island.nodes) + "; " +
                                 moved_because(choice.estimate, from);
      s.move(island.nodes, choice.target, reason);
      moved = true;
      break;
    }
    if (!moved) return;
  }
}

}  // namespace infer::partitioner
