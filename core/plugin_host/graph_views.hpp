// The read-only C views of the IR that plugins receive (infer_node_view for capability
// queries, infer_graph_view for fusion proposals and compilation).
//
// Lifetimes: a GraphViewSet copies every name, shape and attribute it needs, so the IR
// may change or go away after build(); the views stay valid as long as the set. Constant
// data is NOT copied: value views point into the IR's TensorData, which the set keeps
// alive (constants_keeper() hands out that ownership to executables, which the ABI lets
// use constants in place). All views are immutable once built; build_partition_view adds
// storage under a lock, so it may run from several threads, and never moves earlier
// views.
//
// Identity: within one set, each IR value has exactly one infer_value_view, shared by its
// producer, its consumers and every partition view (so a value is identified by pointer,
// as the ABI requires). A subgraph (If/Loop/Scan body) has its own value views; a value it
// captures from an enclosing graph (ir::Value::outer_scope) is resolved by name to the
// enclosing graph's view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "infer/plugin_api.h"
#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::host {

// A prepacked form of one constant value for one partition (see
// infer_value_view.prepacked_data). The caller keeps the bytes alive (e.g. with
// CompileOptions::keep_alive).
struct PrepackedRef {
  const void* data = nullptr;
  size_t size = 0;
};

struct PartitionViewOptions {
  std::string name;  // the graph view's name, for the plugin's logs
  // Constants this partition's plugin prepacked. Inside the partition view such a value
  // is a copy of the shared view with prepacked_data set (still one pointer per value
  // within the partition view).
  std::map<ir::ValueId, PrepackedRef> prepacked;
};

class GraphViewSet {
 public:
  // Builds views of every node and value of `model.graph` (node views' opset is the
  // model's opset for the node's domain). Fails with a message naming the node when the
  // IR refers to a value that does not exist.
  static Result<std::shared_ptr<GraphViewSet>> build(const ir::Model& model);
  static Result<std::shared_ptr<GraphViewSet>> build(const ir::Graph& graph,
                                                     const std::map<std::string, int64_t>& opsets);
  ~GraphViewSet();
  GraphViewSet(const GraphViewSet&) = delete;
  GraphViewSet& operator=(const GraphViewSet&) = delete;

  size_t node_count() const;
  size_t value_count() const;
  // The view of node `id` (its `index` is `id`), for query_capability / prepack.
  const infer_node_view* node(ir::NodeId id) const;
  // The view of value `id`; nullptr for kNoValue or out of range.
  const infer_value_view* value(ir::ValueId id) const;
  // The whole graph (node index == NodeId; inputs/outputs are the graph's), for
  // propose_groups.
  const infer_graph_view* graph() const;

  // A view of the nodes `node_ids` (any order; taken in ascending id order, which is
  // topological) for compile. Its node `index` values are positions in this view. Its
  // inputs are the non-constant values the nodes read but do not produce, in order of
  // first use (node order, then input position); its outputs are the values the nodes
  // produce that a node outside the set reads or that are graph outputs, in production
  // order (node order, then output position). Fails on an empty list, a duplicate or an
  // out-of-range id. The view lives as long as the set.
  Result<const infer_graph_view*> build_partition_view(std::span<const ir::NodeId> node_ids,
                                                       const PartitionViewOptions& options = {});

  // Owns the constant data the views point into; give it to CompileOptions::keep_alive.
  std::shared_ptr<const void> constants_keeper() const;

  // Drops the set's share of constant `id`'s bytes because a plugin's prepacked form
  // replaces them (INFER_PREPACK_REPLACES_CONSTANT): from now on its view has
  // const_data == NULL (name, dtype, dims and const_size stay), and the bytes are freed
  // once the IR lets go of them too. Refused (false, nothing changed) unless the value is
  // a constant of the top graph, not a graph output, and read by exactly one node through
  // exactly one input (a capture by a subgraph counts as a read). Call it before building
  // the view of the partition that holds that reader.
  bool release_constant(ir::ValueId id);

 private:
  GraphViewSet();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infer::host
