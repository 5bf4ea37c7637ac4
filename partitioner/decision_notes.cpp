#include "partitioner/decision_notes.hpp"

#include "partitioner/islands.hpp"
#include "partitioner/move_choice.hpp"
#include "partitioner/move_reasons.hpp"
#include "partitioner/region_growth.hpp"

namespace infer::partitioner {
namespace {

bool any_moved_off_priority(const PlacementState& s, const std::vector<ir::NodeId>& nodes) {
  for (ir::NodeId id : nodes)
    if (s.moved(id)) return true;
  return false;
}

}  // namespace

void note_kept_decisions(PlacementState& s) {
  std::vector<bool> noted(s.graph().node_count(), false);
  for (const Island& island : small_islands(s)) {
    for (ir::NodeId id : island.nodes) noted[id] = true;
    // A node that was moved shows the reason of its move instead.
    if (any_moved_off_priority(s, island.nodes)) continue;
    const MoveChoice choice = choose_move(s, island.nodes);
    if (choice.outcome == MoveChoice::Outcome::kNoTarget) continue;
    if (choice.outcome == MoveChoice::Outcome::kUnknown) {
      s.count_undecided();
      continue;
    }
    const std::string text = "kept: " + island_phrase(s, island.nodes) + "; " + kept_note(s, choice);
    for (ir::NodeId id : island.nodes) s.note(id, text);
  }
  for (ir::NodeId id = 0; id < s.graph().node_count(); ++id) {
    if (noted[id] || s.pinned(id) || s.moved(id) || !on_boundary(s, id)) continue;
    const MoveChoice choice = choose_move(s, {id});
    if (choice.outcome == MoveChoice::Outcome::kNoTarget) continue;
    if (choice.outcome == MoveChoice::Outcome::kUnknown) {
      s.count_undecided();
      continue;
    }
    s.note(id, "kept: " + kept_note(s, choice));
  }
}

}  // namespace infer::partitioner
