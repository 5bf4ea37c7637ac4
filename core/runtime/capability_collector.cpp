#include "runtime/capability_collector.hpp"

#include <algorithm>
#include <cstdint>

#include "infer/dtype.hpp"
#include "runtime/link_probe.hpp"

namespace infer::runtime {
namespace {

partitioner::Support to_support(infer_support s) {
  switch (s) {
    case INFER_SUPPORT_YES:
      return partitioner::Support::kYes;
    case INFER_SUPPORT_PREFERRED:
      return partitioner::Support::kPreferred;
    default:
      return partitioner::Support::kNo;
  }
}

// Plugins may start their reasons with their own name ("example: unsupported op Conv");
// the partitioner prefixes every reason with the backend name, so drop the repetition.
std::string without_own_prefix(const std::string& reason, const std::string& backend) {
  const std::string prefix = backend + ": ";
  return reason.rfind(prefix, 0) == 0 ? reason.substr(prefix.size()) : reason;
}

}  // namespace

std::vector<partitioner::BackendCapabilities> collect_capabilities(
    const host::GraphViewSet& views, const std::vector<Backend>& backends, const Logger& log) {
  std::vector<partitioner::BackendCapabilities> tables;
  for (const Backend& b : backends) {
    partitioner::BackendCapabilities table;
    table.name = b.name;
    table.host_addressable = b.mappable;
    table.implicit_fallback = b.implicit_fallback;
    table.nodes.resize(views.node_count());
    for (size_t id = 0; id < views.node_count(); ++id) {
      const infer_node_view* node = views.node(static_cast<ir::NodeId>(id));
      Result<host::Capability> cap = b.device.query_capability(*node);
      partitioner::NodeCapability& out = table.nodes[id];
      if (!cap.is_ok()) {
        out.reason = "capability query failed: " + cap.status().message();
        log.log(LogLevel::kWarning,
                "backend '" + b.name + "': node '" + node->name + "': " + out.reason);
        continue;
      }
      out.support = to_support(cap->support);
      out.est_time_us = cap->est_time_us;
      out.est_memory_bytes = cap->est_memory_bytes;
      out.reason = without_own_prefix(cap->reason, b.name);
      if (cap->compute_dtype != INFER_DTYPE_UNDEFINED)
        out.compute_type = std::string(dtype_name(static_cast<DataType>(cap->compute_dtype)));
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

size_t first_claiming(const std::vector<partitioner::BackendCapabilities>& tables, ir::NodeId id) {
  for (size_t b = 0; b < tables.size(); ++b)
    if (id < tables[b].nodes.size() && tables[b].nodes[id].supported()) return b;
  return SIZE_MAX;
}

size_t TrialCapabilities::first_claiming(const std::string& name) const {
  auto it = ids.find(name);
  return it == ids.end() ? SIZE_MAX : runtime::first_claiming(tables, it->second);
}

bool TrialCapabilities::claims(size_t b, const std::string& name) const {
  auto it = ids.find(name);
  return it != ids.end() && b < tables.size() && it->second < tables[b].nodes.size() &&
         tables[b].nodes[it->second].supported();
}

Result<TrialCapabilities> collect_trial_capabilities(const ir::Model& trial,
                                                     const std::vector<Backend>& backends,
                                                     const Logger& log) {
  INFER_ASSIGN_OR_RETURN(std::shared_ptr<host::GraphViewSet> views,
                         host::GraphViewSet::build(trial));
  TrialCapabilities out;
  out.tables = collect_capabilities(*views, backends, log);
  for (ir::NodeId id = 0; id < trial.graph->node_count(); ++id)
    out.ids[trial.graph->node(id).name] = id;
  return out;
}

void add_cost_inputs(std::vector<partitioner::BackendCapabilities>& tables,
                     const std::vector<Backend>& backends, const SessionOptions& options,
                     const Logger& log) {
  for (size_t i = 0; i < tables.size() && i < backends.size(); ++i) {
    partitioner::BackendCapabilities& table = tables[i];
    const Backend& b = backends[i];
    table.throughput = b.device.props().kind == INFER_DEVICE_CPU
                           ? partitioner::kCpuThroughput
                           : partitioner::kAcceleratorThroughput;
    std::vector<std::pair<std::string, std::string>> plugin_options;
    for (const BackendOptions& o : options.backend_options) {
      if (o.backend != b.name) continue;
      plugin_options.insert(plugin_options.end(), o.options.begin(), o.options.end());
      if (o.memory_budget_mb > 0)
        table.memory_budget_bytes = std::min<int64_t>(o.memory_budget_mb, int64_t{1} << 40) << 20;
    }
    // With one backend nothing can move, and measuring would only slow the session down.
    if (b.mappable || backends.size() < 2) continue;
    if (std::optional<LinkFigures> link = link_figures(b.name, b.device, plugin_options, log)) {
      table.host_to_device = link->host_to_device;
      table.device_to_host = link->device_to_host;
    }
  }
}

}  // namespace infer::runtime
