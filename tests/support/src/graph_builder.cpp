#include "infer/test_support/graph_builder.hpp"

#include <algorithm>
#include <set>

namespace infer::test {

// Owns a value view and everything it points to.
struct GraphBuilder::OwnedValue {
  infer_value_view view{};
  std::string name;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_param_storage;
  std::vector<const char*> dim_params;
  std::vector<uint8_t> data;
};

struct GraphBuilder::OwnedNode {
  infer_node_view view{};
  std::string name, op_type, domain;
  std::vector<const infer_value_view*> inputs, outputs;
  // Attribute storage: std::deque keeps element addresses stable while growing.
  std::vector<infer_attr_view> attrs;
  std::deque<AttrSpec> specs;
  std::deque<std::vector<const char*>> string_ptrs;
  std::deque<std::vector<const infer_value_view*>> tensor_ptrs;
};

struct GraphBuilder::OwnedGraph {
  infer_graph_view view{};
  std::string name;
  std::vector<const infer_node_view*> nodes;
  std::vector<const infer_value_view*> inputs, outputs;
  std::vector<std::string> opset_domains;
  std::vector<infer_opset_view> opsets;
};

AttrSpec AttrSpec::Int(std::string name, int64_t v) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_INT;
  a.i = v;
  return a;
}
AttrSpec AttrSpec::Float(std::string name, double v) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_FLOAT;
  a.f = v;
  return a;
}
AttrSpec AttrSpec::String(std::string name, std::string v) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_STRING;
  a.s = std::move(v);
  return a;
}
AttrSpec AttrSpec::Ints(std::string name, std::vector<int64_t> v) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_INTS;
  a.ints = std::move(v);
  return a;
}
AttrSpec AttrSpec::Floats(std::string name, std::vector<double> v) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_FLOATS;
  a.floats = std::move(v);
  return a;
}
AttrSpec AttrSpec::Strings(std::string name, std::vector<std::string> v) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_STRINGS;
  a.strings = std::move(v);
  return a;
}
AttrSpec AttrSpec::Tensor(std::string name, TensorSpec t) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = INFER_ATTR_TENSOR;
  t.is_const = true;
  a.tensors.push_back(std::move(t));
  return a;
}

GraphBuilder::GraphBuilder() = default;
GraphBuilder::~GraphBuilder() = default;

const infer_value_view* GraphBuilder::make_value(const TensorSpec& spec, bool register_name) {
  auto v = std::make_unique<OwnedValue>();
  v->name = spec.name;
  v->dims = spec.dims;
  v->view.struct_size = sizeof(infer_value_view);
  v->view.name = v->name.c_str();
  v->view.dtype = spec.dtype;
  v->view.rank = spec.unknown_rank ? -1 : static_cast<int64_t>(v->dims.size());
  v->view.dims = v->dims.empty() ? nullptr : v->dims.data();
  if (!spec.dim_params.empty() && !spec.unknown_rank) {
    v->dim_param_storage = spec.dim_params;
    v->dim_param_storage.resize(v->dims.size());
    for (const auto& p : v->dim_param_storage)
      v->dim_params.push_back(p.empty() ? nullptr : p.c_str());
    v->view.dim_params = v->dim_params.data();
  }
  if (spec.is_const) {
    v->data = spec.data;
    // A zero-byte constant still gets a non-NULL pointer: const_data NULL means "not a
    // constant".
    if (v->data.empty()) v->data.resize(1);
    v->view.const_data = v->data.data();
    v->view.const_size = spec.data.size();
  }
  const infer_value_view* out = &v->view;
  values_.push_back(std::move(v));
  if (register_name) by_name_[spec.name] = out;
  return out;
}

const infer_value_view* GraphBuilder::value(const TensorSpec& spec) {
  if (spec.name.empty()) return nullptr;
  auto it = by_name_.find(spec.name);
  if (it != by_name_.end()) return it->second;
  return make_value(spec, true);
}

const infer_value_view* GraphBuilder::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const infer_node_view* GraphBuilder::add_node(const std::string& op_type,
                                              std::vector<const infer_value_view*> ins,
                                              std::vector<const infer_value_view*> outs,
                                              const std::vector<AttrSpec>& attrs, int64_t opset,
                                              const std::string& name, const std::string& domain) {
  auto n = std::make_unique<OwnedNode>();
  n->op_type = op_type;
  n->domain = domain;
  n->name = name.empty() ? op_type + "_" + std::to_string(nodes_.size()) : name;
  n->inputs = std::move(ins);
  n->outputs = std::move(outs);
  for (const AttrSpec& spec : attrs) {
    n->specs.push_back(spec);
    AttrSpec& s = n->specs.back();
    infer_attr_view a{};
    a.struct_size = sizeof(infer_attr_view);
    a.name = s.name.c_str();
    a.type = s.type;
    a.i = s.i;
    a.f = s.f;
    a.s = s.s.c_str();
    a.s_len = s.s.size();
    switch (s.type) {
      case INFER_ATTR_INTS:
        a.count = s.ints.size();
        a.ints = s.ints.data();
        break;
      case INFER_ATTR_FLOATS:
        a.count = s.floats.size();
        a.floats = s.floats.data();
        break;
      case INFER_ATTR_STRINGS: {
        auto& ptrs = n->string_ptrs.emplace_back();
        for (const auto& str : s.strings) ptrs.push_back(str.c_str());
        a.count = ptrs.size();
        a.strings = ptrs.data();
        break;
      }
      case INFER_ATTR_TENSOR:
      case INFER_ATTR_TENSORS: {
        auto& ptrs = n->tensor_ptrs.emplace_back();
        // Attribute tensors are not graph values: they get their own, unnamed-in-graph
        // views.
        for (const auto& t : s.tensors) ptrs.push_back(make_value(t, false));
        a.count = ptrs.size();
        a.tensors = ptrs.data();
        break;
      }
      default:
        break;
    }
    n->attrs.push_back(a);
  }
  n->view.struct_size = sizeof(infer_node_view);
  n->view.name = n->name.c_str();
  n->view.op_type = n->op_type.c_str();
  n->view.domain = n->domain.c_str();
  n->view.opset = opset;
  n->view.num_inputs = n->inputs.size();
  n->view.inputs = n->inputs.data();
  n->view.num_outputs = n->outputs.size();
  n->view.outputs = n->outputs.data();
  n->view.num_attrs = n->attrs.size();
  n->view.attrs = n->attrs.data();
  n->view.index = nodes_.size();
  const infer_node_view* out = &n->view;
  nodes_.push_back(std::move(n));
  return out;
}

const infer_node_view* GraphBuilder::node(const std::string& op_type,
                                          const std::vector<TensorSpec>& inputs,
                                          const std::vector<TensorSpec>& outputs,
                                          const std::vector<AttrSpec>& attrs, int64_t opset,
                                          const std::string& name, const std::string& domain) {
  std::vector<const infer_value_view*> ins, outs;
  for (const auto& s : inputs) ins.push_back(value(s));
  for (const auto& s : outputs) outs.push_back(value(s));
  return add_node(op_type, std::move(ins), std::move(outs), attrs, opset, name, domain);
}

const infer_node_view* GraphBuilder::node_by_name(const std::string& op_type,
                                                  const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& outputs,
                                                  const std::vector<AttrSpec>& attrs, int64_t opset,
                                                  const std::string& name,
                                                  const std::string& domain) {
  std::vector<const infer_value_view*> ins, outs;
  for (const auto& s : inputs) ins.push_back(s.empty() ? nullptr : find(s));
  for (const auto& s : outputs) outs.push_back(s.empty() ? nullptr : find(s));
  return add_node(op_type, std::move(ins), std::move(outs), attrs, opset, name, domain);
}

const infer_graph_view* GraphBuilder::graph(const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& outputs,
                                            const std::string& name) {
  std::vector<const infer_node_view*> nodes;
  for (const auto& n : nodes_) nodes.push_back(&n->view);
  std::vector<const infer_value_view*> ins, outs;
  for (const auto& s : inputs) ins.push_back(find(s));
  for (const auto& s : outputs) outs.push_back(find(s));
  return make_graph(std::move(nodes), std::move(ins), std::move(outs), name);
}

const infer_graph_view* GraphBuilder::make_graph(std::vector<const infer_node_view*> nodes,
                                                 std::vector<const infer_value_view*> inputs,
                                                 std::vector<const infer_value_view*> outputs,
                                                 const std::string& name) {
  auto g = std::make_unique<OwnedGraph>();
  g->name = name;
  g->nodes = std::move(nodes);
  g->inputs = std::move(inputs);
  g->outputs = std::move(outputs);
  std::map<std::string, int64_t> max_opset;
  for (const infer_node_view* n : g->nodes) {
    int64_t& v = max_opset[n->domain];
    v = std::max(v, n->opset);
  }
  for (const auto& [domain, version] : max_opset) g->opset_domains.push_back(domain);
  for (const auto& d : g->opset_domains) g->opsets.push_back({d.c_str(), max_opset[d]});
  g->view.struct_size = sizeof(infer_graph_view);
  g->view.name = g->name.c_str();
  g->view.num_nodes = g->nodes.size();
  g->view.nodes = g->nodes.data();
  g->view.num_inputs = g->inputs.size();
  g->view.inputs = g->inputs.data();
  g->view.num_outputs = g->outputs.size();
  g->view.outputs = g->outputs.data();
  g->view.num_opsets = g->opsets.size();
  g->view.opsets = g->opsets.data();
  const infer_graph_view* out = &g->view;
  graphs_.push_back(std::move(g));
  return out;
}

const infer_graph_view* GraphBuilder::graph_auto(const std::vector<std::string>& outputs,
                                                 const std::string& name) {
  std::set<const infer_value_view*> produced;
  std::set<const infer_value_view*> seen;
  std::vector<std::string> inputs;
  for (const auto& n : nodes_) {
    for (const infer_value_view* v : n->inputs) {
      if (v == nullptr || v->const_data != nullptr || produced.count(v) || seen.count(v)) continue;
      seen.insert(v);
      inputs.push_back(v->name);
    }
    for (const infer_value_view* v : n->outputs)
      if (v != nullptr) produced.insert(v);
  }
  return graph(inputs, outputs, name);
}

const infer_graph_view* GraphBuilder::single_node_graph(const std::string& op_type,
                                                        const std::vector<TensorSpec>& inputs,
                                                        const std::vector<TensorSpec>& outputs,
                                                        const std::vector<AttrSpec>& attrs,
                                                        int64_t opset, const std::string& name) {
  const infer_node_view* n = node(op_type, inputs, outputs, attrs, opset, name);
  std::vector<const infer_value_view*> ins, outs;
  for (size_t i = 0; i < n->num_inputs; ++i) {
    const infer_value_view* v = n->inputs[i];
    if (v == nullptr || v->const_data != nullptr) continue;
    if (std::find(ins.begin(), ins.end(), v) == ins.end()) ins.push_back(v);
  }
  for (size_t i = 0; i < n->num_outputs; ++i)
    if (n->outputs[i] != nullptr) outs.push_back(n->outputs[i]);
  return make_graph({n}, std::move(ins), std::move(outs), op_type + "_graph");
}

const infer_node_view* GraphBuilder::last_node() const {
  return nodes_.empty() ? nullptr : &nodes_.back()->view;
}

}  // namespace infer::test
