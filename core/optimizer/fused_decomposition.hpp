// The way back from a fused operator of the ai.infer domain (sdk/FUSED_OPS.md) to
// standard ONNX operators. The session uses it when no enabled backend claims a fused
// node, so a plugin that knows none of our fused ops still runs every optimized model.
#pragma once

#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

inline constexpr const char* kFusedDomain = "ai.infer";
inline constexpr int64_t kFusedOpsetVersion = 1;

// True for a node of the ai.infer domain that decompose_fused_nodes knows.
bool is_decomposable_fused_node(const ir::Node& node);

// Replaces each listed node (each must satisfy is_decomposable_fused_node) with its
// decomposition into standard ONNX operators valid at the context's default-domain opset
// (9 or newer), keeping the node's output values (names included), then restores
// topological order. The first new node takes the fused node's name, the others are
// named "<fused name>/<Op>" (numbered when an op repeats). Returns, for each listed node
// in order, the names of the nodes that replace it. Errors name the node: an unknown
// activation, a missing attribute.
Result<std::vector<std::vector<std::string>>> decompose_fused_nodes(
    ir::Graph& graph, const std::vector<ir::NodeId>& nodes, const PassContext& context);

}  // namespace infer::optimizer
