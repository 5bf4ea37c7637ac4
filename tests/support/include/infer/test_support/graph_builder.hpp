// Builds the read-only graph views of the plugin ABI (infer_value_view, infer_attr_view,
// infer_node_view, infer_graph_view) from short C++ descriptions. The builder owns all
// storage, so every pointer it hands out stays valid as long as the builder lives and
// does not move (it is neither copyable nor movable).
//
//   GraphBuilder g;
//   const infer_graph_view* graph = g.single_node_graph(
//       "Add", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3})},
//       {TensorSpec::f32("y", {2, 3})}, {});
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "infer/plugin_api.h"

namespace infer::test {

// Describes one value. An empty name stands for an omitted optional input or output.
struct TensorSpec {
  std::string name;
  infer_dtype dtype = INFER_DTYPE_FLOAT32;
  std::vector<int64_t> dims;            // -1 for an unknown dim
  bool unknown_rank = false;            // rank -1 in the view (dims ignored)
  std::vector<std::string> dim_params;  // empty, or one entry per dim ("" for none)
  bool is_const = false;                // a constant: `data` becomes const_data
  std::vector<uint8_t> data;

  static TensorSpec omitted() { return TensorSpec{}; }
  static TensorSpec of(std::string name, infer_dtype dtype, std::vector<int64_t> dims) {
    TensorSpec s;
    s.name = std::move(name);
    s.dtype = dtype;
    s.dims = std::move(dims);
    return s;
  }
  static TensorSpec f32(std::string name, std::vector<int64_t> dims) {
    return of(std::move(name), INFER_DTYPE_FLOAT32, std::move(dims));
  }
  static TensorSpec i64(std::string name, std::vector<int64_t> dims) {
    return of(std::move(name), INFER_DTYPE_INT64, std::move(dims));
  }
  // A constant holding `values` (element type T must match dtype's size).
  template <typename T>
  static TensorSpec constant(std::string name, infer_dtype dtype, std::vector<int64_t> dims,
                             const std::vector<T>& values) {
    TensorSpec s = of(std::move(name), dtype, std::move(dims));
    s.is_const = true;
    s.data.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(s.data.data(), values.data(), s.data.size());
    return s;
  }
};

// Describes one attribute.
struct AttrSpec {
  std::string name;
  infer_attr_type type = INFER_ATTR_UNDEFINED;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<TensorSpec> tensors;  // TENSOR (one) and TENSORS: constants

  static AttrSpec Int(std::string name, int64_t v);
  static AttrSpec Float(std::string name, double v);
  static AttrSpec String(std::string name, std::string v);
  static AttrSpec Ints(std::string name, std::vector<int64_t> v);
  static AttrSpec Floats(std::string name, std::vector<double> v);
  static AttrSpec Strings(std::string name, std::vector<std::string> v);
  static AttrSpec Tensor(std::string name, TensorSpec t);
};

class GraphBuilder {
 public:
  GraphBuilder();
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // Declares a value (or returns the existing one with that name: the first
  // declaration wins). Returns nullptr for an empty name.
  const infer_value_view* value(const TensorSpec& spec);
  // The value named `name`, or nullptr when none was declared.
  const infer_value_view* find(const std::string& name) const;

  // Adds a node. Inputs/outputs are declared on first use (empty name: omitted). The
  // node's name defaults to "<op_type>_<index>".
  const infer_node_view* node(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                              const std::vector<TensorSpec>& outputs,
                              const std::vector<AttrSpec>& attrs = {}, int64_t opset = 17,
                              const std::string& name = "", const std::string& domain = "");
  // Same, with values referenced by the names of earlier declarations.
  const infer_node_view* node_by_name(const std::string& op_type,
                                      const std::vector<std::string>& inputs,
                                      const std::vector<std::string>& outputs,
                                      const std::vector<AttrSpec>& attrs = {}, int64_t opset = 17,
                                      const std::string& name = "", const std::string& domain = "");

  // Finishes a graph over all nodes added so far. Graph inputs and outputs are given by
  // name, in execution binding order. May be called again after adding more nodes (the
  // previous view stays valid).
  const infer_graph_view* graph(const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs,
                                const std::string& name = "test_graph");
  // Same, with inputs = every non-constant value consumed but produced by no node (in
  // first-use order) and outputs as given.
  const infer_graph_view* graph_auto(const std::vector<std::string>& outputs,
                                     const std::string& name = "test_graph");

  // One node, wrapped in a graph of just that node, whose inputs are the node's
  // non-constant inputs and whose outputs are the node's non-omitted outputs. Node
  // `index` fields count every node added to this builder, so use a fresh builder per
  // graph when indices matter.
  const infer_graph_view* single_node_graph(const std::string& op_type,
                                            const std::vector<TensorSpec>& inputs,
                                            const std::vector<TensorSpec>& outputs,
                                            const std::vector<AttrSpec>& attrs = {},
                                            int64_t opset = 17, const std::string& name = "");

  // The last node added (handy for capability queries).
  const infer_node_view* last_node() const;

 private:
  struct OwnedValue;
  struct OwnedNode;
  struct OwnedGraph;
  const infer_graph_view* make_graph(std::vector<const infer_node_view*> nodes,
                                     std::vector<const infer_value_view*> inputs,
                                     std::vector<const infer_value_view*> outputs,
                                     const std::string& name);
  const infer_value_view* make_value(const TensorSpec& spec, bool register_name);
  const infer_node_view* add_node(const std::string& op_type,
                                  std::vector<const infer_value_view*> ins,
                                  std::vector<const infer_value_view*> outs,
                                  const std::vector<AttrSpec>& attrs, int64_t opset,
                                  const std::string& name, const std::string& domain);

  std::deque<std::unique_ptr<OwnedValue>> values_;
  std::map<std::string, const infer_value_view*> by_name_;
  std::deque<std::unique_ptr<OwnedNode>> nodes_;
  std::deque<std::unique_ptr<OwnedGraph>> graphs_;
};

}  // namespace infer::test
