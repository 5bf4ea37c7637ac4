// The words --explain uses for the cost model's decisions, with the numbers behind them:
// "moved to cpu: example island of 1 node (Relu) under the minimum of 3; a 3.1 MiB
// transfer (210.0 us) costs more than the 12.0 us it saves on example".
#pragma once

#include <string>
#include <vector>

#include "partitioner/placement_state.hpp"

namespace infer::partitioner {

// "example island of 2 nodes (Add, Relu) under the minimum of 3".
std::string island_phrase(const PlacementState& state, const std::vector<ir::NodeId>& nodes);

// Why a move that was made pays: "a 3.1 MiB transfer (210.0 us) costs more than the
// 12.0 us it saves on example", "it saves 3.0 ms of compute, more than the 1.2 MiB
// transfer it adds (300.0 us)", "it saves a 48 B transfer (20.0 us) and 1.5 us of compute".
std::string moved_because(const MoveEstimate& e, const std::string& from);

// Why a move considered was not made, starting with "moving to <to>": "moving to vulkan
// saves 50.0 us but adds a 1.2 MiB transfer (300.0 us)".
std::string kept_because(const MoveEstimate& e, const std::string& to, double min_gain_us);

}  // namespace infer::partitioner
