// Capability: whether, and how well, the example device runs one node.
//
// The host asks about every node of the model before partitioning; the answer must be
// cheap, must not fail for a node the device simply lacks (that is support = NO with a
// reason, not an error), and must be right: compile re-checks with the same function and
// refuses a node this says NO to.
#pragma once

#include <optional>
#include <string>

#include "ops.hpp"

namespace infer::example {

// nullopt when the device runs `node`, else why not, prefixed "example: " so the
// partitioner's --explain output says which backend refused ("example: unsupported op
// Conv", "example: MatMul needs float32, got int64 for input 'B'"). When supported and
// `op` is given, *op receives the table entry.
std::optional<std::string> why_unsupported(const infer_node_view& node, const OpInfo** op);

// Fills the host's capability struct (support, reason, estimates when the shapes are
// static).
void query_capability(const infer_node_view& node, infer_capability* out);

// "float32", "int64"... for messages (the SDK's names, shared by every plugin).
using sdk::dtype_name;

}  // namespace infer::example
