#include "runtime/constant_evaluator.hpp"

#include <cstring>
#include <mutex>

#include "plugin_host/graph_views.hpp"

namespace infer::runtime {
namespace {

// A graph holding only `node`, its constant inputs and its outputs (as graph outputs).
Result<ir::Graph> single_node_graph(const ir::Graph& graph, const ir::Node& node) {
  ir::Graph g;
  g.name = "constant_folding/" + node.name;
  ir::Node copy = node;
  for (ir::ValueId& in : copy.inputs) {
    if (in == ir::kNoValue) continue;
    const ir::Value& v = graph.value(in);
    if (!v.is_constant())
      return invalid_argument(node.describe() + ": input '" + v.name + "' is not a constant");
    ir::Value c = v;
    c.producer = ir::kNoNode;
    c.quant.reset();
    in = g.add_value(std::move(c));
  }
  for (ir::ValueId& out : copy.outputs) {
    if (out == ir::kNoValue) continue;
    ir::Value o;
    o.name = graph.value(out).name;
    o.dtype = graph.value(out).dtype;
    o.shape = graph.value(out).shape;
    out = g.add_value(std::move(o));
    g.outputs.push_back(out);
  }
  g.add_node(std::move(copy));
  g.rebuild_links();
  return g;
}

}  // namespace

Result<std::vector<ir::TensorDataPtr>> PluginConstantEvaluator::evaluate(
    const ir::Graph& graph, const ir::Node& node) const {
  INFER_ASSIGN_OR_RETURN(ir::Graph g, single_node_graph(graph, node));
  INFER_ASSIGN_OR_RETURN(std::shared_ptr<host::GraphViewSet> views,
                         host::GraphViewSet::build(g, opsets_));
  INFER_ASSIGN_OR_RETURN(host::Capability cap, device_.query_capability(*views->node(0)));
  if (!cap.supported()) return unsupported(node.describe() + ": " + cap.reason);

  const ir::NodeId only = 0;
  // The view carries the "constant_folding/<node>" name so plugins can tell load-time
  // folding from the model's partitions (the cpu plugin's profile leaves it out).
  host::PartitionViewOptions view_options;
  view_options.name = g.name;
  INFER_ASSIGN_OR_RETURN(const infer_graph_view* view,
                         views->build_partition_view(std::span<const ir::NodeId>(&only, 1), view_options));
  host::CompileOptions options;
  options.partition_name = g.name;
  options.keep_alive.push_back(views->constants_keeper());
  INFER_ASSIGN_OR_RETURN(host::Executable exe, device_.compile(*view, options));
  INFER_ASSIGN_OR_RETURN(host::Stream stream, device_.create_stream());
  INFER_ASSIGN_OR_RETURN(host::Event done, device_.create_event());

  // One buffer per output, allocated when the kernel knows the output's shape.
  struct Output {
    host::Buffer buffer;
    DataType dtype = DataType::kUndefined;
    std::vector<int64_t> dims;
    size_t bytes = 0;
    bool allocated = false;
  };
  std::vector<Output> outputs(view->num_outputs);
  std::mutex mu;
  host::ExecuteArgs args;
  host::RunContext run;
  const infer_event_value signal{done.raw(), 1};
  args.signals = std::span<const infer_event_value>(&signal, 1);
  args.run = &run;
  args.alloc_output = [&](size_t index, infer_dtype dtype, std::span<const int64_t> dims,
                          infer_tensor* out) -> Status {
    std::lock_guard lock(mu);
    if (index >= outputs.size() || outputs[index].allocated)
      return invalid_argument(node.describe() + ": bad output allocation " +
                              std::to_string(index));
    Output& o = outputs[index];
    o.dtype = static_cast<DataType>(dtype);
    o.dims.assign(dims.begin(), dims.end());
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    o.bytes = storage_bytes(o.dtype, count);
    INFER_ASSIGN_OR_RETURN(o.buffer,
                           device_.allocate(INFER_MEMORY_HOST_VISIBLE, std::max<size_t>(o.bytes, 1)));
    o.allocated = true;
    *out = infer_tensor{};
    out->struct_size = sizeof(infer_tensor);
    out->dtype = dtype;
    out->rank = o.dims.size();
    out->dims = o.dims.data();
    out->buffer = o.buffer.raw();
    out->offset = 0;
    out->size_bytes = o.bytes;
    return Status::ok();
  };
  Status issued = exe.execute(stream, args);
  // Whatever was enqueued must finish before the buffers go away.
  Status finished = issued.is_ok() ? done.wait(1) : Status::ok();
  INFER_RETURN_IF_ERROR(issued);
  INFER_RETURN_IF_ERROR(finished);

  std::vector<ir::TensorDataPtr> result(node.outputs.size());
  size_t next = 0;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    Output& o = outputs.at(next++);
    if (!o.allocated) return internal_error(node.describe() + ": output " + std::to_string(i) +
                                            " was not produced");
    std::optional<void*> host = o.buffer.map();
    if (!host) return unsupported(node.describe() + ": the folding device's memory is not mappable");
    std::vector<uint8_t> bytes(o.bytes);
    if (o.bytes > 0) std::memcpy(bytes.data(), *host, o.bytes);
    result[i] = std::make_shared<const ir::TensorData>(o.dtype, o.dims, std::move(bytes));
  }
  return result;
}

}  // namespace infer::runtime
