// Asks every backend about every node, through the node views plugins read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
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

// The first table (priority order) claiming node `id`, or SIZE_MAX when none does.
size_t first_claiming(const std::vector<partitioner::BackendCapabilities>& tables, ir::NodeId id);

// The answers for a trial copy of the model (a rewrite the session is weighing), with the
// trial's node ids by name.
struct TrialCapabilities {
  std::vector<partitioner::BackendCapabilities> tables;
  std::map<std::string, ir::NodeId> ids;
  // The first table claiming the trial's node `name`, or SIZE_MAX (also when it has none).
  size_t first_claiming(const std::string& name) const;
  // Whether table `b` claims the trial's node `name` (false when it has none).
  bool claims(size_t b, const std::string& name) const;
};
Result<TrialCapabilities> collect_trial_capabilities(const ir::Model& trial,
                                                     const std::vector<Backend>& backends,
                                                     const Logger& log);

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
