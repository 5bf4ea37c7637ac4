#include "plugin_host/graph_views.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "infer/printable.hpp"

namespace infer::host {
namespace {

constexpr ir::NodeId kNoNode = UINT32_MAX;

std::string describe_node(const ir::Node& n) {
  // Names come from model files: escaped, so a message never carries raw bytes.
  return "node '" + printable(n.name) + "' (" + printable(n.domain.empty() ? "" : n.domain + ".") +
         printable(n.op_type) + ")";
}

// Names visible to a (sub)graph: its own values, then its enclosing graphs'.
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, const infer_value_view*> by_name;

  const infer_value_view* resolve(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->by_name.find(name);
      if (it != s->by_name.end()) return it->second;
    }
    return nullptr;
  }
};

// What the partition builder needs to know about a top-level node after the IR is gone.
struct NodeInfo {
  std::vector<ir::ValueId> inputs;    // explicit inputs (kNoValue kept for omitted ones)
  std::vector<ir::ValueId> implicit;  // outer values its subgraphs capture
  std::vector<ir::ValueId> outputs;
};

}  // namespace

struct GraphViewSet::Impl {
  // Stable storage: std::deque never moves its elements on push_back, so every pointer
  // handed to a view stays valid for the life of the set.
  std::deque<std::string> strings;
  std::deque<infer_value_view> values;
  std::deque<infer_quant_desc> quants;
  std::deque<std::vector<int64_t>> int_arrays;
  std::deque<std::vector<double>> double_arrays;
  std::deque<std::vector<const char*>> cstr_arrays;
  std::deque<std::vector<const infer_value_view*>> value_ptr_arrays;
  std::deque<std::vector<infer_attr_view>> attr_arrays;
  std::deque<std::vector<const infer_graph_view*>> graph_ptr_arrays;
  std::deque<infer_node_view> nodes;
  std::deque<std::vector<const infer_node_view*>> node_ptr_arrays;
  std::deque<infer_graph_view> graphs;
  std::vector<infer_opset_view> opsets;  // filled once before any view points at it
  std::map<std::string, int64_t> opset_map;
  std::shared_ptr<std::vector<ir::TensorDataPtr>> constants =
      std::make_shared<std::vector<ir::TensorDataPtr>>();

  // The top-level graph.
  const infer_graph_view* top = nullptr;
  std::vector<const infer_value_view*> top_values;  // by ValueId
  // By ValueId: the position of a top-level constant's share in *constants (release_constant).
  std::unordered_map<ir::ValueId, size_t> top_constant_share;
  std::vector<const infer_node_view*> top_nodes;  // by NodeId
  std::vector<NodeInfo> node_info;
  std::vector<ir::NodeId> producer;                // by ValueId
  std::vector<std::vector<ir::NodeId>> consumers;  // by ValueId, implicit uses included
  std::vector<bool> graph_output;
  std::vector<bool> constant;
  size_t partitions_built = 0;
  std::mutex mu;  // guards the storage during build_partition_view

  const char* keep(std::string s) { return strings.emplace_back(std::move(s)).c_str(); }

  int64_t opset_for(const std::string& domain) const {
    auto it = opset_map.find(domain);
    if (it != opset_map.end()) return it->second;
    // "ai.onnx" and "" name the same default domain.
    if (domain == "ai.onnx")
      it = opset_map.find("");
    else if (domain.empty())
      it = opset_map.find("ai.onnx");
    return it != opset_map.end() ? it->second : 0;
  }

  const infer_value_view* constant_view(const std::string& name, const ir::TensorDataPtr& t) {
    infer_value_view v{};
    v.struct_size = sizeof(v);
    v.name = keep(name);
    v.dtype = static_cast<infer_dtype>(t->dtype());
    auto& dims = int_arrays.emplace_back(t->dims());
    v.rank = static_cast<int64_t>(dims.size());
    v.dims = dims.data();
    v.const_data = t->data();
    v.const_size = t->size_bytes();
    constants->push_back(t);
    return &values.emplace_back(v);
  }

  const infer_value_view* value_view(const ir::Value& val) {
    infer_value_view v{};
    v.struct_size = sizeof(v);
    v.name = keep(val.name);
    v.dtype = static_cast<infer_dtype>(val.dtype);
    if (val.shape.rank_known()) {
      auto& dims = int_arrays.emplace_back();
      bool any_param = false;
      for (const ir::Dim& d : *val.shape.dims) {
        dims.push_back(d.is_known() ? d.value : -1);
        any_param = any_param || !d.param.empty();
      }
      v.rank = static_cast<int64_t>(dims.size());
      v.dims = dims.data();
      if (any_param) {
        auto& params = cstr_arrays.emplace_back();
        for (const ir::Dim& d : *val.shape.dims)
          params.push_back(d.param.empty() ? nullptr : keep(d.param));
        v.dim_params = params.data();
      }
    } else if (val.constant) {
      // A constant's data knows its shape even when shape inference did not record it.
      auto& dims = int_arrays.emplace_back(val.constant->dims());
      v.rank = static_cast<int64_t>(dims.size());
      v.dims = dims.data();
    } else {
      v.rank = -1;
    }
    if (val.constant) {
      v.const_data = val.constant->data();
      v.const_size = val.constant->size_bytes();
      constants->push_back(val.constant);
    }
    return &values.emplace_back(v);
  }

  Result<const infer_graph_view*> build_graph(const ir::Graph& g, const Scope* parent, bool is_top);
  Result<const infer_attr_view*> build_attrs(const ir::Node& node, const Scope& scope,
                                             size_t* count);
};

Result<const infer_attr_view*> GraphViewSet::Impl::build_attrs(const ir::Node& node,
                                                               const Scope& scope, size_t* count) {
  auto& attrs = attr_arrays.emplace_back();
  attrs.reserve(node.attributes.size());  // no reallocation below: pointers stay valid
  for (const ir::Attribute& a : node.attributes) {
    infer_attr_view v{};
    v.struct_size = sizeof(v);
    v.name = keep(a.name);
    v.type = static_cast<infer_attr_type>(a.type);
    v.f = a.f;
    v.i = a.i;
    switch (a.type) {
      case ir::AttrType::kString:
        v.s = keep(a.s);
        v.s_len = a.s.size();
        break;
      case ir::AttrType::kFloats: {
        auto& f = double_arrays.emplace_back(a.floats);
        v.floats = f.data();
        v.count = f.size();
        break;
      }
      case ir::AttrType::kInts: {
        auto& i = int_arrays.emplace_back(a.ints);
        v.ints = i.data();
        v.count = i.size();
        break;
      }
      case ir::AttrType::kStrings: {
        auto& s = cstr_arrays.emplace_back();
        for (const auto& str : a.strings) s.push_back(keep(str));
        v.strings = s.data();
        v.count = s.size();
        break;
      }
      case ir::AttrType::kTensor:
      case ir::AttrType::kTensors: {
        auto& t = value_ptr_arrays.emplace_back();
        for (const auto& data : a.tensors) {
          if (!data) {
            return invalid_argument(describe_node(node) + ": attribute '" + a.name +
                                    "' holds a null tensor");
          }
          t.push_back(constant_view(a.name, data));
        }
        v.tensors = t.data();
        v.count = t.size();
        break;
      }
      case ir::AttrType::kGraph:
      case ir::AttrType::kGraphs: {
        auto& gs = graph_ptr_arrays.emplace_back();
        for (const auto& sub : a.graphs) {
          if (!sub) {
            return invalid_argument(describe_node(node) + ": attribute '" + a.name +
                                    "' holds a null graph");
          }
          auto view = build_graph(*sub, &scope, false);
          if (!view.is_ok()) {
            return view.status().with_context(describe_node(node) + ": attribute '" + a.name + "'");
          }
          gs.push_back(view.value());
        }
        v.graphs = gs.data();
        v.count = gs.size();
        break;
      }
      default:
        break;
    }
    attrs.push_back(v);
  }
  *count = attrs.size();
  return attrs.data();
}

Result<const infer_graph_view*> GraphViewSet::Impl::build_graph(const ir::Graph& g,
                                                                const Scope* parent, bool is_top) {
  const size_t nvalues = g.value_count();
  std::vector<const infer_value_view*> table(nvalues, nullptr);
  Scope scope;
  scope.parent = parent;
  for (ir::ValueId id = 0; id < nvalues; ++id) {
    const ir::Value& val = g.value(id);
    const infer_value_view* view = nullptr;
    if (val.outer_scope && parent != nullptr) {
      view = parent->resolve(val.name);
    }
    if (view == nullptr) {
      if (is_top && val.constant) top_constant_share[id] = constants->size();
      view = value_view(val);
    }
    table[id] = view;
    if (!val.outer_scope) scope.by_name[val.name] = view;
  }
  // Quantization descriptors point at other values of the same graph, so they are
  // filled once every value has its view.
  for (ir::ValueId id = 0; id < nvalues; ++id) {
    const ir::Value& val = g.value(id);
    if (!val.quant || val.outer_scope) continue;
    const ir::QuantInfo& q = *val.quant;
    auto lookup = [&](ir::ValueId ref, const char* what) -> Result<const infer_value_view*> {
      if (ref == ir::kNoValue) return static_cast<const infer_value_view*>(nullptr);
      if (ref >= nvalues) {
        return invalid_argument("value '" + val.name + "': quantization " + what +
                                " refers to value " + std::to_string(ref) + ", the graph has " +
                                std::to_string(nvalues) + " values");
      }
      return table[ref];
    };
    infer_quant_desc d{};
    d.struct_size = sizeof(d);
    d.scheme = static_cast<infer_quant_scheme>(q.scheme);
    d.storage = static_cast<infer_dtype>(q.storage);
    d.axis = q.axis;
    d.block_size = q.block_size;
    INFER_ASSIGN_OR_RETURN(d.scale, lookup(q.scale, "scale"));
    INFER_ASSIGN_OR_RETURN(d.zero_point, lookup(q.zero_point, "zero point"));
    // The value views are const to everyone else; this is the one place that completes
    // them, before any view is handed out.
    const_cast<infer_value_view*>(table[id])->quant = &quants.emplace_back(d);
  }

  if (is_top) {
    top_values = table;
    node_info.assign(g.node_count(), NodeInfo{});
    producer.assign(nvalues, kNoNode);
    consumers.assign(nvalues, {});
    graph_output.assign(nvalues, false);
    constant.assign(nvalues, false);
    for (ir::ValueId id = 0; id < nvalues; ++id) constant[id] = g.value(id).is_constant();
  }

  auto& node_ptrs = node_ptr_arrays.emplace_back();
  for (ir::NodeId nid = 0; nid < g.node_count(); ++nid) {
    const ir::Node& n = g.node(nid);
    auto map_ids = [&](const std::vector<ir::ValueId>& ids,
                       const char* what) -> Result<std::vector<const infer_value_view*>*> {
      auto& out = value_ptr_arrays.emplace_back();
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] == ir::kNoValue) {
          out.push_back(nullptr);
        } else if (ids[i] >= nvalues) {
          return invalid_argument(describe_node(n) + ": " + what + " " + std::to_string(i) +
                                  " refers to value " + std::to_string(ids[i]) +
                                  ", the graph has " + std::to_string(nvalues) + " values");
        } else {
          out.push_back(table[ids[i]]);
        }
      }
      return &out;
    };
    INFER_ASSIGN_OR_RETURN(auto* ins, map_ids(n.inputs, "input"));
    INFER_ASSIGN_OR_RETURN(auto* outs, map_ids(n.outputs, "output"));
    infer_node_view v{};
    v.struct_size = sizeof(v);
    v.name = keep(n.name);
    v.op_type = keep(n.op_type);
    v.domain = keep(n.domain);
    v.opset = opset_for(n.domain);
    v.num_inputs = ins->size();
    v.inputs = ins->data();
    v.num_outputs = outs->size();
    v.outputs = outs->data();
    v.index = nid;
    INFER_ASSIGN_OR_RETURN(v.attrs, build_attrs(n, scope, &v.num_attrs));
    const infer_node_view* view = &nodes.emplace_back(v);
    node_ptrs.push_back(view);
    if (is_top) {
      top_nodes.push_back(view);
      NodeInfo& info = node_info[nid];
      info.inputs = n.inputs;
      // What its subgraphs capture from the top level, at any depth: partition views
      // route these like inputs (the same set the partitioner computes).
      info.implicit = g.implicit_inputs(nid);
      info.outputs = n.outputs;
      for (ir::ValueId o : n.outputs)
        if (o != ir::kNoValue) producer[o] = nid;
    }
  }
  if (is_top) {
    for (ir::NodeId nid = 0; nid < node_info.size(); ++nid) {
      auto add = [&](ir::ValueId v) {
        if (v == ir::kNoValue) return;
        auto& c = consumers[v];
        if (c.empty() || c.back() != nid) c.push_back(nid);
      };
      for (ir::ValueId v : node_info[nid].inputs) add(v);
      for (ir::ValueId v : node_info[nid].implicit) add(v);
    }
  }

  auto resolve_list = [&](const std::vector<ir::ValueId>& ids,
                          const char* what) -> Result<std::vector<const infer_value_view*>*> {
    auto& out = value_ptr_arrays.emplace_back();
    for (ir::ValueId id : ids) {
      if (id >= nvalues) {
        return invalid_argument("graph '" + g.name + "': " + what + " refers to value " +
                                std::to_string(id) + ", the graph has " + std::to_string(nvalues) +
                                " values");
      }
      out.push_back(table[id]);
    }
    return &out;
  };
  INFER_ASSIGN_OR_RETURN(auto* gin, resolve_list(g.inputs, "an input"));
  INFER_ASSIGN_OR_RETURN(auto* gout, resolve_list(g.outputs, "an output"));
  if (is_top) {
    for (ir::ValueId id : g.outputs) graph_output[id] = true;
  }

  infer_graph_view gv{};
  gv.struct_size = sizeof(gv);
  gv.name = keep(g.name);
  gv.num_nodes = node_ptrs.size();
  gv.nodes = node_ptrs.data();
  gv.num_inputs = gin->size();
  gv.inputs = gin->data();
  gv.num_outputs = gout->size();
  gv.outputs = gout->data();
  gv.num_opsets = opsets.size();
  gv.opsets = opsets.data();
  return &graphs.emplace_back(gv);
}

GraphViewSet::GraphViewSet() : impl_(std::make_unique<Impl>()) {}
GraphViewSet::~GraphViewSet() = default;

Result<std::shared_ptr<GraphViewSet>> GraphViewSet::build(const ir::Model& model) {
  if (!model.graph) return invalid_argument("GraphViewSet: the model has no graph");
  return build(*model.graph, model.opsets);
}

Result<std::shared_ptr<GraphViewSet>> GraphViewSet::build(
    const ir::Graph& graph, const std::map<std::string, int64_t>& opsets) {
  try {
    std::shared_ptr<GraphViewSet> set(new GraphViewSet());
    Impl& impl = *set->impl_;
    impl.opset_map = opsets;
    impl.opsets.reserve(opsets.size());
    for (const auto& [domain, version] : opsets) {
      impl.opsets.push_back(infer_opset_view{impl.keep(domain), version});
    }
    INFER_ASSIGN_OR_RETURN(impl.top, impl.build_graph(graph, nullptr, true));
    return set;
  } catch (const std::bad_alloc&) {
    return unavailable("out of host memory while building graph views");
  }
}

size_t GraphViewSet::node_count() const { return impl_->top_nodes.size(); }
size_t GraphViewSet::value_count() const { return impl_->top_values.size(); }

const infer_node_view* GraphViewSet::node(ir::NodeId id) const {
  return id < impl_->top_nodes.size() ? impl_->top_nodes[id] : nullptr;
}

const infer_value_view* GraphViewSet::value(ir::ValueId id) const {
  return id < impl_->top_values.size() ? impl_->top_values[id] : nullptr;
}

const infer_graph_view* GraphViewSet::graph() const { return impl_->top; }

std::shared_ptr<const void> GraphViewSet::constants_keeper() const { return impl_->constants; }

bool GraphViewSet::release_constant(ir::ValueId id) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  if (id >= m.top_values.size() || !m.constant[id] || m.graph_output[id] ||
      m.consumers[id].size() != 1)
    return false;
  const NodeInfo& reader = m.node_info[m.consumers[id].front()];
  const auto reads = std::count(reader.inputs.begin(), reader.inputs.end(), id) +
                     std::count(reader.implicit.begin(), reader.implicit.end(), id);
  auto* view = const_cast<infer_value_view*>(m.top_values[id]);
  auto share = m.top_constant_share.find(id);
  if (reads != 1 || view->const_data == nullptr || share == m.top_constant_share.end())
    return false;
  // Each value's view holds its own share, so values that share one TensorData (folded
  // duplicates) never lose each other's bytes.
  (*m.constants)[share->second].reset();
  view->const_data = nullptr;
  return true;
}

Result<const infer_graph_view*> GraphViewSet::build_partition_view(
    std::span<const ir::NodeId> node_ids, const PartitionViewOptions& options) {
  Impl& m = *impl_;
  const size_t n = m.top_nodes.size();
  const std::string label =
      options.name.empty() ? std::string("partition") : "partition '" + options.name + "'";
  if (node_ids.empty()) return invalid_argument(label + ": no nodes");
  std::vector<ir::NodeId> ids(node_ids.begin(), node_ids.end());
  std::sort(ids.begin(), ids.end());
  std::vector<bool> inside(n, false);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= n) {
      return invalid_argument(label + ": node id " + std::to_string(ids[i]) +
                              " is out of range (the graph has " + std::to_string(n) + " nodes)");
    }
    if (i > 0 && ids[i] == ids[i - 1]) {
      return invalid_argument(label + ": node id " + std::to_string(ids[i]) + " is listed twice");
    }
    inside[ids[i]] = true;
  }
  for (const auto& [vid, ref] : options.prepacked) {
    if (vid >= m.top_values.size() || !m.constant[vid]) {
      return invalid_argument(label + ": prepacked data given for value " + std::to_string(vid) +
                              ", which is not a constant of the graph");
    }
    (void)ref;
  }

  try {
    std::lock_guard<std::mutex> lock(m.mu);
    // One copy per prepacked value, shared by all its uses inside this view.
    std::unordered_map<ir::ValueId, const infer_value_view*> overridden;
    auto view_of = [&](ir::ValueId vid) -> const infer_value_view* {
      auto it = options.prepacked.find(vid);
      if (it == options.prepacked.end()) return m.top_values[vid];
      auto& slot = overridden[vid];
      if (slot == nullptr) {
        infer_value_view copy = *m.top_values[vid];
        copy.prepacked_data = it->second.data;
        copy.prepacked_size = it->second.size;
        slot = &m.values.emplace_back(copy);
      }
      return slot;
    };

    auto& inputs = m.value_ptr_arrays.emplace_back();
    auto& outputs = m.value_ptr_arrays.emplace_back();
    std::vector<bool> listed(m.top_values.size(), false);
    for (ir::NodeId nid : ids) {
      const NodeInfo& info = m.node_info[nid];
      auto consider_input = [&](ir::ValueId v) {
        if (v == ir::kNoValue || listed[v] || m.constant[v]) return;
        if (m.producer[v] != kNoNode && inside[m.producer[v]]) return;
        listed[v] = true;
        inputs.push_back(m.top_values[v]);
      };
      for (ir::ValueId v : info.inputs) consider_input(v);
      for (ir::ValueId v : info.implicit) consider_input(v);
    }
    for (ir::NodeId nid : ids) {
      for (ir::ValueId v : m.node_info[nid].outputs) {
        if (v == ir::kNoValue || listed[v]) continue;
        bool escapes = m.graph_output[v];
        for (ir::NodeId c : m.consumers[v]) escapes = escapes || !inside[c];
        if (!escapes) continue;
        listed[v] = true;
        outputs.push_back(m.top_values[v]);
      }
    }

    auto& node_ptrs = m.node_ptr_arrays.emplace_back();
    for (size_t pos = 0; pos < ids.size(); ++pos) {
      infer_node_view v = *m.top_nodes[ids[pos]];
      v.index = pos;
      const NodeInfo& info = m.node_info[ids[pos]];
      bool touched = false;
      for (ir::ValueId in : info.inputs)
        touched = touched || (in != ir::kNoValue && options.prepacked.count(in));
      if (touched) {
        auto& ins = m.value_ptr_arrays.emplace_back();
        for (ir::ValueId in : info.inputs)
          ins.push_back(in == ir::kNoValue ? nullptr : view_of(in));
        v.inputs = ins.data();
      }
      node_ptrs.push_back(&m.nodes.emplace_back(v));
    }

    infer_graph_view gv{};
    gv.struct_size = sizeof(gv);
    gv.name = m.keep(options.name.empty() ? "partition_" + std::to_string(m.partitions_built)
                                          : options.name);
    gv.num_nodes = node_ptrs.size();
    gv.nodes = node_ptrs.data();
    gv.num_inputs = inputs.size();
    gv.inputs = inputs.data();
    gv.num_outputs = outputs.size();
    gv.outputs = outputs.data();
    gv.num_opsets = m.opsets.size();
    gv.opsets = m.opsets.data();
    ++m.partitions_built;
    return static_cast<const infer_graph_view*>(&m.graphs.emplace_back(gv));
  } catch (const std::bad_alloc&) {
    return unavailable(label + ": out of host memory while building its view");
  }
}

}  // namespace infer::host
