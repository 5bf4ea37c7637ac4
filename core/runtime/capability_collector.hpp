// Asks every backend about every node, through the node views plugins read.
#pragma once

#include <vector>

#include "partitioner/capability.hpp"
#include "plugin_host/graph_views.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/logger.hpp"

namespace infer::runtime {

// One table per backend, in the backends' order. A plugin whose query fails for a node
// (a plugin bug) is logged and treated as "no" for that node, with the error as reason,
// so that another backend may still run it.
std::vector<partitioner::BackendCapabilities> collect_capabilities(
    const host::GraphViewSet& views, const std::vector<Backend>& backends, const Logger& log);

}  // namespace infer::runtime
