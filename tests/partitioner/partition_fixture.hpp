// Synthetic graphs and capability tables for the partitioner tests. A graph is written
// as a list of nodes (name, op, inputs, outputs); capability tables say, per backend,
// which op types it supports (everything else gets NO with "unsupported op <Op>").
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "partitioner/partitioner.hpp"

namespace infer::partitioner::testing {

class TestGraph {
 public:
  // Values are created on first mention with dtype float32 and shape `default_shape`.
  explicit TestGraph(std::vector<int64_t> default_shape = {2, 3})
      : shape_(std::move(default_shape)) {}

  ir::ValueId value(const std::string& name) {
    if (auto id = g.find_value(name)) return *id;
    ir::Value v;
    v.name = name;
    v.dtype = DataType::kFloat32;
    v.shape = ir::Shape::of(shape_);
    return g.add_value(std::move(v));
  }
  void input(const std::string& name) { g.inputs.push_back(value(name)); }
  void output(const std::string& name) { g.outputs.push_back(value(name)); }
  // A float32 constant, [2, 3] (24 bytes) unless `dims` says otherwise.
  void constant(const std::string& name, std::vector<int64_t> dims = {2, 3}) {
    ir::ValueId id = value(name);
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<uint8_t> bytes(static_cast<size_t>(4 * count), 0);
    g.value(id).shape = ir::Shape::of(dims);
    g.value(id).constant = std::make_shared<ir::TensorData>(DataType::kFloat32, dims, bytes);
  }
  // Gives a value (created on first mention) another shape.
  void shape(const std::string& name, const std::vector<int64_t>& dims) {
    g.value(value(name)).shape = ir::Shape::of(dims);
  }
  ir::NodeId node(const std::string& name, const std::string& op,
                  const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  const std::string& domain = "") {
    ir::Node n;
    n.name = name;
    n.op_type = op;
    n.domain = domain;
    for (const auto& s : inputs) n.inputs.push_back(value(s));
    for (const auto& s : outputs) n.outputs.push_back(value(s));
    return g.add_node(std::move(n));
  }
  ir::NodeId id_of(const std::string& node_name) const {
    for (ir::NodeId i = 0; i < g.node_count(); ++i)
      if (g.node(i).name == node_name) return i;
    return UINT32_MAX;
  }
  std::string value_name(ir::ValueId v) const { return g.value(v).name; }

  ir::Graph g;

 private:
  std::vector<int64_t> shape_;
};

// A backend that supports the listed op types (YES) and refuses the rest.
inline BackendCapabilities backend(const TestGraph& t, const std::string& name,
                                   const std::set<std::string>& ops, bool host_addressable = true,
                                   const std::string& refusal_prefix = "unsupported op ") {
  BackendCapabilities b;
  b.name = name;
  b.host_addressable = host_addressable;
  for (const ir::Node& n : t.g.nodes()) {
    NodeCapability c;
    if (ops.count(n.op_type)) {
      c.support = Support::kYes;
    } else {
      c.reason = refusal_prefix + n.op_type;
    }
    b.nodes.push_back(c);
  }
  return b;
}

// Makes `b` a device the host cannot address, whose link takes latency_us + bytes /
// bandwidth each way.
inline void set_link(BackendCapabilities& b, double bandwidth_bytes_per_us, double latency_us) {
  b.host_addressable = false;
  b.host_to_device = LinkCost{bandwidth_bytes_per_us, latency_us};
  b.device_to_host = LinkCost{bandwidth_bytes_per_us, latency_us};
}

// The plugin's time estimate for one node, or for every node `b` supports.
inline void set_time(BackendCapabilities& b, const TestGraph& t, const std::string& node,
                     double us) {
  b.nodes.at(t.id_of(node)).est_time_us = us;
}
inline void set_all_times(BackendCapabilities& b, double us) {
  for (NodeCapability& c : b.nodes)
    if (c.supported()) c.est_time_us = us;
}

inline std::vector<std::string> nodes_of(const TestGraph& t, const Partition& p) {
  std::vector<std::string> names;
  for (ir::NodeId id : p.nodes) names.push_back(t.g.node(id).name);
  return names;
}

inline std::vector<std::string> values_named(const TestGraph& t,
                                             const std::vector<ir::ValueId>& ids) {
  std::vector<std::string> names;
  for (ir::ValueId id : ids) names.push_back(t.value_name(id));
  return names;
}

}  // namespace infer::partitioner::testing
