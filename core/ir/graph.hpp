// The in-memory model: a graph of nodes over values. The IR knows no file format and
// nothing of execution; core/onnx fills it, the optimizer rewrites it, the partitioner
// reads it.
//
// Values live in the graph and are referenced by ValueId (an index into the graph's
// value table), so nodes can be rewired without pointer fix-ups. A value is produced by
// at most one node, is a graph input, is a constant (initializer or folded Constant), or
// - in a subgraph - is captured from an enclosing graph (outer_scope).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infer/dtype.hpp"
#include "infer/status.hpp"

namespace infer::ir {

using ValueId = uint32_t;
using NodeId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;  // an omitted optional input/output
inline constexpr NodeId kNoNode = UINT32_MAX;    // Value::producer of a value no node makes

// One dimension: a known size, a named symbol ("batch"), or unknown (value -1, no name).
struct Dim {
  int64_t value = -1;
  std::string param;
  bool is_known() const { return value >= 0; }
  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim symbol(std::string name) { return Dim{-1, std::move(name)}; }
  bool operator==(const Dim&) const = default;
};

// A shape whose rank may be unknown.
struct Shape {
  std::optional<std::vector<Dim>> dims;  // nullopt: rank unknown
  bool rank_known() const { return dims.has_value(); }
  size_t rank() const { return dims ? dims->size() : 0; }
  bool is_static() const;                 // rank known and every dim known
  std::vector<int64_t> concrete() const;  // -1 for unknown dims
  // "[batch,1,8,8]"; an unknown dim prints as "?" ("[?,3]"), a scalar as "[]" and an
  // unknown rank as "[...]".
  std::string to_string() const;
  static Shape of(const std::vector<int64_t>& dims);
  bool operator==(const Shape&) const = default;
};

// Immutable constant data. Shared by pointer so constants are never copied between the
// graph, the optimizer's rewrites and plugins (the plugin ABI hands out `data()`).
class TensorData {
 public:
  // Takes ownership of the bytes.
  TensorData(DataType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  // Refers to bytes owned by `keeper` (e.g. a memory-mapped external data file).
  TensorData(DataType dtype, std::vector<int64_t> dims, const void* data, size_t size,
             std::shared_ptr<const void> keeper);
  // Copies re-point at their own copy of owned bytes (or share the keeper's); moves keep
  // the buffer. Both are rare: constants are shared through TensorDataPtr.
  TensorData(const TensorData& other);
  TensorData& operator=(const TensorData& other);
  TensorData(TensorData&& other) noexcept;
  TensorData& operator=(TensorData&& other) noexcept;
  ~TensorData() = default;

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t element_count() const;
  const void* data() const { return data_; }
  size_t size_bytes() const { return size_; }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data_); }

 private:
  DataType dtype_;
  std::vector<int64_t> dims_;
  std::vector<uint8_t> owned_;
  std::shared_ptr<const void> keeper_;
  const void* data_ = nullptr;
  size_t size_ = 0;
};
using TensorDataPtr = std::shared_ptr<const TensorData>;

enum class QuantScheme { kPerTensor = 0, kPerAxis = 1, kBlock = 2 };

// Describes a value that holds quantized data (see the ABI's infer_quant_desc).
struct QuantInfo {
  QuantScheme scheme = QuantScheme::kPerTensor;
  DataType storage = DataType::kUndefined;
  int64_t axis = 0;
  int64_t block_size = 0;
  ValueId scale = kNoValue;
  ValueId zero_point = kNoValue;
};

struct Value {
  std::string name;
  DataType dtype = DataType::kUndefined;
  Shape shape;
  TensorDataPtr constant;              // set for initializers and folded constants
  std::optional<QuantInfo> quant;
  bool outer_scope = false;            // a subgraph's reference to an enclosing graph's value
  NodeId producer = kNoNode;           // maintained by add_node() and rebuild_links()
  bool is_constant() const { return constant != nullptr; }
};

class Graph;

enum class AttrType {  // ONNX's AttributeProto.AttributeType numbering
  kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5,
  kFloats = 6, kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10,
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorDataPtr> tensors;            // kTensor (one) and kTensors
  std::vector<std::shared_ptr<Graph>> graphs;    // kGraph (one) and kGraphs
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;                 // "" is the default ONNX domain
  std::vector<ValueId> inputs;        // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;       // kNoValue for an omitted optional output
  std::vector<Attribute> attributes;

  const Attribute* attr(const std::string& attr_name) const;
  int64_t attr_int(const std::string& attr_name, int64_t fallback) const;
  double attr_float(const std::string& attr_name, double fallback) const;
  std::string attr_string(const std::string& attr_name, const std::string& fallback) const;
  // "node 'conv1' (Conv)": the prefix of every error message about this node.
  std::string describe() const;
};

class Graph {
 public:
  std::string name;

  // Value table.
  ValueId add_value(Value v);
  Value& value(ValueId id) { return values_.at(id); }
  const Value& value(ValueId id) const { return values_.at(id); }
  size_t value_count() const { return values_.size(); }
  // Looks a value up by name. Names are unique within a graph (the loader guarantees
  // it). Rename values through rename_value(), or call rebuild_links() after assigning
  // Value::name directly, so that the name index stays current.
  std::optional<ValueId> find_value(const std::string& value_name) const;
  void rename_value(ValueId id, std::string new_name);

  // Nodes, kept in topological order (the loader sorts; rewrites keep the order valid).
  NodeId add_node(Node n);
  Node& node(NodeId id) { return nodes_.at(id); }
  const Node& node(NodeId id) const { return nodes_.at(id); }
  size_t node_count() const { return nodes_.size(); }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }

  // Graph signature. Inputs exclude initializers; outputs are in declaration order.
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;

  // Recomputes Value::producer from the node list (and the name index); call after
  // structural edits.
  void rebuild_links();
  // Values of this graph that the subgraphs of node `id` (If/Loop/Scan bodies) read as
  // outer-scope captures, at any depth (a body of a body reading a value of this graph
  // counts, whether or not the bodies in between declare the capture), each listed once
  // in first-read order: the node depends on them as much as on its explicit inputs.
  // This is the one definition of a node's captures: the partitioner, the plugin graph
  // views, dead-code elimination and the rewrite passes all ask it.
  std::vector<ValueId> implicit_inputs(NodeId id) const;
  // implicit_inputs() of every node, indexed by NodeId.
  std::vector<std::vector<ValueId>> all_implicit_inputs() const;
  // The names this graph reads from enclosing graphs, at any depth: its own outer-scope
  // values, then what its nodes' subgraphs read that this graph does not define itself;
  // each once, in first-seen order.
  std::vector<std::string> free_names() const;
  // Consumers of every value: result[v] lists the nodes reading v, each once, counting
  // both explicit inputs and implicit_inputs() (so a producer whose output only a body
  // reads still has a consumer).
  std::vector<std::vector<NodeId>> consumers() const;
  // The same from all_implicit_inputs() already computed (`implicit`, indexed by NodeId).
  std::vector<std::vector<NodeId>> consumers(
      const std::vector<std::vector<ValueId>>& implicit) const;
  // Reorders nodes topologically (stable: an already sorted graph keeps its order, and
  // independent nodes keep their relative order); implicit inputs count as dependencies.
  // Fails naming the nodes of a cycle, or a value that two nodes produce.
  Status topological_sort();
  // Removes the nodes for which `remove[id]` is true and renumbers the rest (entries
  // past the end of `remove` count as false). Values stay; producers are recomputed.
  void erase_nodes(const std::vector<bool>& remove);
  // Checks the structural invariants the rest of the core relies on: every id is in
  // range, each value has at most one producer and none is produced while also being a
  // graph input, a constant or an outer-scope capture, every node input is defined
  // (constant, graph input, capture or an earlier node's output: nodes are in
  // topological order) and every graph output is defined. Subgraphs are checked too.
  // The message names the graph, node and value.
  Status validate() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::map<std::string, ValueId> by_name_;
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ONNX) -> version
  std::string producer_name;
  std::string producer_version;
  std::string source_path;                // where it was loaded from, for messages
  std::shared_ptr<Graph> graph;

  int64_t opset(const std::string& domain) const;  // 0 when not imported
};

}  // namespace infer::ir
