// Small tools every pass uses to inspect and edit the IR, so that each pass file holds
// only its pattern and its rewrite.
//
// The usual shape of a pass: build a GraphIndex, walk graph.nodes() looking for the
// pattern, record the edits (mutate the anchor node in place, append new nodes with
// graph.add_node, mark absorbed nodes in a removal list), then call commit() once, which
// erases the marked nodes, rebuilds the links and restores topological order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::optimizer {

// Who reads each value. Built once per pass application; stale after edits.
class GraphIndex {
 public:
  explicit GraphIndex(const ir::Graph& graph);

  // Nodes reading `v` (explicit and implicit/subgraph reads), each once.
  const std::vector<ir::NodeId>& consumers(ir::ValueId v) const;
  bool is_graph_output(ir::ValueId v) const;
  // True when a subgraph of some node reads `v` by name as an outer-scope capture.
  bool is_captured(ir::ValueId v) const;
  // `v` is read by exactly one node, through exactly one input slot, and is neither a
  // graph output nor captured by a subgraph: the value can vanish into a fusion.
  bool has_single_use(ir::ValueId v) const;
  // The node producing `v`, or nullptr for inputs, constants, captures and kNoValue.
  const ir::Node* producer(ir::ValueId v) const;
  ir::NodeId producer_id(ir::ValueId v) const;

 private:
  const ir::Graph& graph_;
  std::vector<std::vector<ir::NodeId>> consumers_;
  std::vector<bool> is_output_;
  std::vector<bool> captured_;
  std::vector<int> use_slots_;  // input slots reading each value, over all nodes
};

// For pattern matchers that claim nodes as they go (`claimed` per node): the only reader
// of `v` when `v` has a single use and that reader is an unclaimed default-domain `op`
// with one output and no subgraph; kNoNode otherwise.
ir::NodeId sole_consumer(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v,
                         const char* op, const std::vector<bool>& claimed);
// The producer of `v` when `v` has a single use and the producer is an unclaimed
// default-domain `op` with one output; kNoNode otherwise.
ir::NodeId sole_producer(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v,
                         const char* op, const std::vector<bool>& claimed);

// The operand of binary node `n` that is not `v` (kNoValue when `v` is not an operand).
ir::ValueId other_operand(const ir::Node& n, ir::ValueId v);

// ---- Values and constants -------------------------------------------------------

// The constant data of `v`, or nullptr (not a constant, or kNoValue).
const ir::TensorData* constant_of(const ir::Graph& graph, ir::ValueId v);
// The value of a one-element float/double/float16/bfloat16/integer constant as double.
std::optional<double> scalar_constant(const ir::Graph& graph, ir::ValueId v);
// The elements of an int32/int64 constant (e.g. a Reshape shape, Slice starts).
std::optional<std::vector<int64_t>> int_constant(const ir::Graph& graph, ir::ValueId v);
// The elements of a float32/float64/float16/bfloat16 constant, converted to double.
std::optional<std::vector<double>> float_constant(const ir::Graph& graph, ir::ValueId v);

// A name not yet used by any value of `graph`: `base`, else base_1, base_2, ...
std::string unique_value_name(const ir::Graph& graph, const std::string& base);
// Adds a constant value named after `base` (made unique) holding `data`.
ir::ValueId add_constant(ir::Graph& graph, const std::string& base, ir::TensorDataPtr data);
// Constant tensors built from host values.
ir::TensorDataPtr make_int64_tensor(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& values);
// A tensor of `dtype` (float32, float64, float16 or bfloat16) from double values.
ir::TensorDataPtr make_float_tensor(DataType dtype, const std::vector<int64_t>& dims,
                                    const std::vector<double>& values);
// A new tensor of `t`'s float dtype and dims whose slice [r, ...] along the first axis is
// t[r, ...] * factors[r] (computed in double), e.g. a convolution's weights scaled per
// output channel. nullptr when `t` is not float32/float64/float16/bfloat16, or has no
// dims, or factors.size() is not dims[0]. One typed pass and one allocation: folded
// weights can hold millions of elements.
ir::TensorDataPtr scale_outer_slices(const ir::TensorData& t, const std::vector<double>& factors);
// Adds a non-constant value named after `base` (made unique) with a dtype and shape.
ir::ValueId add_value(ir::Graph& graph, const std::string& base, DataType dtype,
                      ir::Shape shape);

// ---- Shapes ----------------------------------------------------------------------

// Two dims provably equal: the same known size, or the same symbol name.
bool same_dim(const ir::Dim& a, const ir::Dim& b);
// Both ranks known and every dim provably equal.
bool same_shape(const ir::Shape& a, const ir::Shape& b);

// ---- Attributes ------------------------------------------------------------------

ir::Attribute attr_int(const std::string& name, int64_t value);
ir::Attribute attr_float(const std::string& name, double value);
ir::Attribute attr_string(const std::string& name, std::string value);
ir::Attribute attr_ints(const std::string& name, std::vector<int64_t> values);
ir::Attribute attr_floats(const std::string& name, std::vector<double> values);
// Replaces an attribute of the same name, or appends it.
void set_attr(ir::Node& node, ir::Attribute attr);
void remove_attr(ir::Node& node, const std::string& name);
// The ints of an attribute, or `fallback` when it is absent.
std::vector<int64_t> attr_ints_or(const ir::Node& node, const std::string& name,
                                  std::vector<int64_t> fallback);
bool has_subgraphs(const ir::Node& node);

// ---- Editing ---------------------------------------------------------------------

// Makes every reader of `from` (node inputs of this graph) read `to` instead. Does not
// touch graph outputs or subgraph captures: callers check GraphIndex::is_graph_output /
// is_captured first, or use bypass().
void replace_uses(ir::Graph& graph, ir::ValueId from, ir::ValueId to);

// The low-level step of remove_forwarding_node() (prefer that one): readers of `dropped`
// read `kept` instead. When `dropped` is a graph output or captured by name (its name
// must survive) and `kept` is produced by a node that can take over the name, that
// producer writes `dropped` directly instead; Value::producer (which GraphIndex reads)
// is then stale until the forwarding node is detached and the links rebuilt. Returns
// false, changing nothing, when neither is possible (e.g. `kept` is a graph input and
// `dropped` a graph output). The caller removes the forwarding node only on true.
bool bypass(ir::Graph& graph, const GraphIndex& index, ir::ValueId kept, ir::ValueId dropped);

// Removes node `id`, which forwards `kept` unchanged to `dropped`, through bypass(): the
// node is marked in `remove` and detached (no inputs, no outputs) so that the links can
// be rebuilt at once when bypass() moved an output name onto `kept`'s producer; `index`
// (which reads producers from the graph) therefore stays right for later calls. Returns
// false, changing nothing, when bypass() refuses.
bool remove_forwarding_node(ir::Graph& graph, const GraphIndex& index, ir::NodeId id,
                            ir::ValueId kept, ir::ValueId dropped, std::vector<bool>& remove);

// Erases the nodes marked in `remove` (may be shorter than the node list), rebuilds the
// links and sorts the graph topologically (nodes appended by the pass move into place).
Status commit(ir::Graph& graph, const std::vector<bool>& remove);

}  // namespace infer::optimizer
