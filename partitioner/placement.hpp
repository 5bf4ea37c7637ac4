// Step 1 of partitioning: which backend runs each node, and why.
#pragma once

#include <vector>

#include "infer/status.hpp"
#include "partitioner/partitioner.hpp"

namespace infer::partitioner {

// Each node goes to the first backend in priority order that supports it; a pin
// overrides the order. Fails as described on partition() in partitioner.hpp.
Result<std::vector<NodeAssignment>> assign_nodes(const PartitionRequest& request);

}  // namespace infer::partitioner
