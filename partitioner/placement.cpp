#include "partitioner/placement.hpp"

#include <map>
#include <optional>
#include <string>

namespace infer::partitioner {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string why_not(const BackendCapabilities& b, ir::NodeId id) {
  const std::string& r = b.nodes[id].reason;
  return b.name + ": " + (r.empty() ? "not supported" : r);
}

std::string supported_reason(const BackendCapabilities& b, ir::NodeId id) {
  const NodeCapability& c = b.nodes[id];
  std::string text = b.name + (c.support == Support::kPreferred ? ": preferred" : ": supported");
  if (!c.reason.empty()) text += " (" + c.reason + ")";
  return text;
}

// Resolves the pins to a backend index per node name, checking each pin.
Result<std::map<ir::NodeId, size_t>> resolve_pins(const PartitionRequest& request) {
  const ir::Graph& g = *request.graph;
  std::map<std::string, ir::NodeId> by_name;
  for (ir::NodeId id = 0; id < g.node_count(); ++id)
    if (!g.node(id).name.empty()) by_name.emplace(g.node(id).name, id);
  std::vector<std::string> names;
  for (const auto& b : request.backends) names.push_back(b.name);

  std::map<ir::NodeId, size_t> pinned;
  std::vector<std::string> errors;
  for (const Pin& pin : request.pins) {
    auto node_it = by_name.find(pin.node);
    if (node_it == by_name.end()) {
      errors.push_back("placement pin: node '" + pin.node + "' (pinned to backend '" + pin.backend +
                       "') is not in the model");
      continue;
    }
    std::optional<size_t> backend;
    for (size_t i = 0; i < request.backends.size(); ++i)
      if (request.backends[i].name == pin.backend) backend = i;
    if (!backend) {
      errors.push_back("placement pin: node '" + pin.node + "' is pinned to backend '" +
                       pin.backend +
                       "', which is not enabled (enabled backends: " + join(names, ", ") + ")");
      continue;
    }
    const ir::NodeId id = node_it->second;
    const BackendCapabilities& b = request.backends[*backend];
    if (!b.nodes[id].supported()) {
      errors.push_back("placement pin: " + g.node(id).describe() + " is pinned to backend '" +
                       pin.backend + "', which does not support it: " +
                       (b.nodes[id].reason.empty() ? "not supported" : b.nodes[id].reason));
      continue;
    }
    auto [it, inserted] = pinned.emplace(id, *backend);
    if (!inserted && it->second != *backend)
      errors.push_back("placement pin: node '" + pin.node + "' is pinned twice, to '" +
                       request.backends[it->second].name + "' and to '" + pin.backend + "'");
  }
  if (!errors.empty()) return invalid_argument(join(errors, "\n"));
  return pinned;
}

}  // namespace

Result<std::vector<NodeAssignment>> assign_nodes(const PartitionRequest& request) {
  const ir::Graph& g = *request.graph;
  INFER_ASSIGN_OR_RETURN(auto pinned, resolve_pins(request));

  std::vector<NodeAssignment> out(g.node_count());
  std::vector<std::string> unclaimed;
  for (ir::NodeId id = 0; id < g.node_count(); ++id) {
    if (auto it = pinned.find(id); it != pinned.end()) {
      out[id].backend = it->second;
      out[id].pinned = true;
      out[id].reason = request.backends[it->second].name + ": pinned by placement";
      continue;
    }
    std::vector<std::string> refusals;
    std::optional<size_t> chosen;
    for (size_t i = 0; i < request.backends.size() && !chosen; ++i) {
      if (request.backends[i].nodes[id].supported())
        chosen = i;
      else
        refusals.push_back(why_not(request.backends[i], id));
    }
    if (!chosen) {
      const std::string head = describe_node_with_domain(g.node(id)) + ": ";
      unclaimed.push_back(request.strict
                              ? head + join(refusals, "; ")
                              : head + "no backend supports it (" + join(refusals, "; ") + ")");
      continue;
    }
    out[id].backend = *chosen;
    out[id].reason = refusals.empty() ? supported_reason(request.backends[*chosen], id)
                                      : request.backends[*chosen].name + ": fallback (" +
                                            join(refusals, "; ") + ")";
  }

  if (!unclaimed.empty()) {
    if (!request.strict) return unsupported(join(unclaimed, "\n"));
    std::vector<std::string> names;
    for (const auto& b : request.backends) names.push_back(b.name);
    const std::string count =
        std::to_string(unclaimed.size()) + (unclaimed.size() == 1 ? " node is" : " nodes are");
    return unsupported("strict mode: " + count + " not supported by any listed backend (" +
                       join(names, ", ") + "):\n  " + join(unclaimed, "\n  "));
  }
  return out;
}

}  // namespace infer::partitioner
