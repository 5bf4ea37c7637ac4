#include "runtime/capability_collector.hpp"

#include <algorithm>

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
    }
    tables.push_back(std::move(table));
  }
  return tables;
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
