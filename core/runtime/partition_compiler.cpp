#include "runtime/partition_compiler.hpp"

#include <algorithm>
#include <string>

namespace infer::runtime {
namespace {

Result<std::vector<ir::ValueId>> ids_of(
    const std::unordered_map<const infer_value_view*, ir::ValueId>& ids,
    const infer_value_view* const* views, size_t count) {
  std::vector<ir::ValueId> out;
  for (size_t i = 0; i < count; ++i) {
    auto it = ids.find(views[i]);
    if (it == ids.end()) return internal_error("a partition view names an unknown value");
    out.push_back(it->second);
  }
  return out;
}

// Asks the backend to prepack every constant input of the partition's nodes into its
// own layout (e.g. GEMM weights into register-tile panels), once at compile time. A
// constant read by several nodes keeps the first node's form: the plugin checks the
// form it gets and packs for itself when it does not fit. The bytes live as long as the
// executable (keep_alive). With `graph`, originals the packed forms replace are freed
// one by one as they are packed (see compile_partition).
Status prepack_constants(host::GraphViewSet& views,
                         const std::unordered_map<const infer_value_view*, ir::ValueId>& ids,
                         const partitioner::Partition& partition, const Backend& backend,
                         host::PartitionViewOptions& view_options,
                         std::vector<std::shared_ptr<const void>>& keep_alive, ir::Graph* graph) {
  if (!backend.device.can_prepack()) return Status::ok();
  const bool replaces = graph != nullptr && backend.device.prepack_replaces_constants();
  for (ir::NodeId nid : partition.nodes) {
    const infer_node_view* node = views.node(nid);
    if (node == nullptr) continue;
    for (size_t i = 0; i < node->num_inputs; ++i) {
      const infer_value_view* in = node->inputs[i];
      if (in == nullptr || in->const_data == nullptr) continue;
      auto id = ids.find(in);
      if (id == ids.end() || view_options.prepacked.count(id->second) != 0) continue;
      INFER_ASSIGN_OR_RETURN(std::optional<host::PrepackedConstant> packed,
                             backend.device.prepack_constant(*node, i));
      if (!packed) continue;
      view_options.prepacked[id->second] = host::PrepackedRef{packed->data.get(), packed->size};
      keep_alive.push_back(std::move(packed->data));
      if (replaces && views.release_constant(id->second)) graph->value(id->second).constant.reset();
    }
  }
  return Status::ok();
}

bool same_set(std::vector<ir::ValueId> a, std::vector<ir::ValueId> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

std::unordered_map<const infer_value_view*, ir::ValueId> value_ids_of(
    const host::GraphViewSet& views) {
  std::unordered_map<const infer_value_view*, ir::ValueId> ids;
  for (size_t v = 0; v < views.value_count(); ++v)
    if (const infer_value_view* view = views.value(static_cast<ir::ValueId>(v)))
      ids.emplace(view, static_cast<ir::ValueId>(v));
  return ids;
}

Result<PlanPartition> compile_partition(
    host::GraphViewSet& views, const std::unordered_map<const infer_value_view*, ir::ValueId>& ids,
    const partitioner::Partition& partition, size_t device_index, const Backend& backend,
    uint32_t optimization_level, ir::Graph* graph) {
  const std::string what = "compiling partition '" + partition.name + "' (" +
                           std::to_string(partition.nodes.size()) + " nodes) on backend '" +
                           backend.name + "'";
  host::PartitionViewOptions view_options;
  view_options.name = partition.name;
  std::vector<std::shared_ptr<const void>> prepacked_bytes;
  if (Status st =
          prepack_constants(views, ids, partition, backend, view_options, prepacked_bytes, graph);
      !st.is_ok())
    return st.with_context(what);
  Result<const infer_graph_view*> view = views.build_partition_view(partition.nodes, view_options);
  if (!view.is_ok()) return view.status().with_context(what);

  PlanPartition out;
  out.name = partition.name;
  out.device = device_index;
  Result<std::vector<ir::ValueId>> inputs = ids_of(ids, (*view)->inputs, (*view)->num_inputs);
  Result<std::vector<ir::ValueId>> outputs = ids_of(ids, (*view)->outputs, (*view)->num_outputs);
  if (!inputs.is_ok()) return inputs.status().with_context(what);
  if (!outputs.is_ok()) return outputs.status().with_context(what);
  if (!same_set(*inputs, partition.inputs) || !same_set(*outputs, partition.outputs))
    return internal_error(what +
                          ": the partition view's inputs/outputs differ from the "
                          "partitioner's");
  out.inputs = std::move(*inputs);
  out.outputs = std::move(*outputs);

  host::CompileOptions options;
  options.optimization_level = optimization_level;
  options.partition_name = partition.name;
  options.keep_alive.push_back(views.constants_keeper());
  for (auto& bytes : prepacked_bytes) options.keep_alive.push_back(std::move(bytes));
  Result<host::Executable> exe = backend.device.compile(**view, options);
  if (!exe.is_ok()) return exe.status().with_context(what);
  out.executable = std::move(*exe);
  return out;
}

}  // namespace infer::runtime
