// The partitioner asks for a fused node first, then for its decomposition: which fused
// ai.infer nodes are replaced by their standard operators before partitioning.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "optimizer/pass.hpp"
#include "partitioner/capability.hpp"
#include "plugin_host/graph_views.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/logger.hpp"

namespace infer::runtime {

// The partitioner asks for a fused node (ai.infer) first, then for its decomposition: a
// fused node is replaced by its standard operators when no backend claims it, or when a
// backend of higher priority than the first one claiming the fused op claims every node
// of the decomposition (so `--backends vulkan,cpu` keeps a Conv+Relu on vulkan even if
// only cpu knows FusedConv). The answers for the decomposed forms come from a trial
// copy of the graph; the capability answers are then collected again for the changed
// graph. Returns the descriptions of the decomposed nodes for --explain.
Result<std::vector<std::string>> decompose_unclaimed_fused_nodes(
    ir::Model& model, const optimizer::PassContext& context, const std::vector<Backend>& backends,
    std::shared_ptr<host::GraphViewSet>& views,
    std::vector<partitioner::BackendCapabilities>& capabilities, const Logger& log);

}  // namespace infer::runtime
