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

// Adds to the tables (one per backend, in the same order) what the partitioner's cost
// model needs beyond the capability answers:
//  - the link to and from each device the host cannot address (link_probe.hpp: cached,
//    measured, or the plugin's estimate), when more than one backend is open;
//  - a default throughput by device kind, for nodes the plugin gives no time for;
//  - the memory budget from SessionOptions::backend_options (memory_budget_mb).
void add_cost_inputs(std::vector<partitioner::BackendCapabilities>& tables,
                     const std::vector<Backend>& backends, const SessionOptions& options,
                     const Logger& log);

}  // namespace infer::runtime
