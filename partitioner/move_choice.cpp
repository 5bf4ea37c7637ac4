#include "partitioner/move_choice.hpp"

#include <algorithm>

#include "partitioner/move_reasons.hpp"
#include "partitioner/units.hpp"

namespace infer::partitioner {

MoveChoice choose_move(const PlacementState& s, const std::vector<ir::NodeId>& nodes) {
  MoveChoice choice;
  const std::vector<size_t> targets = neighbour_targets(s, nodes);
  if (targets.empty()) return choice;
  std::vector<std::pair<size_t, MoveEstimate>> known;
  for (size_t t : targets) {
    MoveEstimate e = estimate_move(s, nodes, t);
    if (e.known) known.emplace_back(t, e);
  }
  if (known.empty()) {
    choice.outcome = MoveChoice::Outcome::kUnknown;
    return choice;
  }
  // Best gain first; ties go to the higher-priority backend (stable sort, targets come
  // in priority order).
  std::stable_sort(known.begin(), known.end(), [](const auto& a, const auto& b) {
    return a.second.gain_us() > b.second.gain_us();
  });
  choice.outcome = MoveChoice::Outcome::kKeep;
  choice.target = known.front().first;
  choice.estimate = known.front().second;
  for (const auto& [t, e] : known) {
    if (e.gain_us() < s.options().min_gain_us) break;
    std::optional<std::string> problem = cycle_problem(s, nodes, t);
    if (!problem) problem = budget_problem(s, nodes, t);
    if (!problem) {
      choice.outcome = MoveChoice::Outcome::kMove;
      choice.target = t;
      choice.estimate = e;
      choice.blocked.clear();
      return choice;
    }
    if (choice.blocked.empty()) {
      choice.target = t;
      choice.estimate = e;
      choice.blocked = *problem;
    }
  }
  return choice;
}

std::string kept_note(const PlacementState& s, const MoveChoice& choice) {
  const std::string& to = s.backend_name(choice.target);
  if (!choice.blocked.empty())
    return "moving to " + to + " would save " + format_time_us(choice.estimate.gain_us()) +
           ", but " + choice.blocked;
  if (choice.outcome == MoveChoice::Outcome::kMove)
    return "moving to " + to + " would save " + format_time_us(choice.estimate.gain_us()) +
           ", but the passes stopped before making the move";
  return kept_because(choice.estimate, to, s.options().min_gain_us);
}

}  // namespace infer::partitioner
