#include "runtime/session_builder.hpp"

#include <oneapi/tbb/info.h>

#include <chrono>
#include <exception>
#include <new>
#include <set>

#include "onnx/model_loader.hpp"
#include "onnx/model_writer.hpp"
#include "partitioner/partitioner.hpp"
#include "runtime/capability_collector.hpp"
#include "runtime/fused_fallback.hpp"
#include "runtime/graph_optimization.hpp"
#include "runtime/micro_batch.hpp"
#include "runtime/partition_compiler.hpp"
#include "runtime/plan_report_builder.hpp"
#include "runtime/plugin_arena_backing.hpp"
#include "runtime/precision_fallback.hpp"
#include "runtime/session_impl.hpp"
#include "runtime/signature.hpp"
#include "runtime/step_graph_builder.hpp"

namespace infer::runtime {
namespace {

// Pins are written against the model as loaded; a pinned node the optimizer removed has
// nothing left to place, which is not the user's mistake.
std::vector<partitioner::Pin> live_pins(const SessionOptions& options,
                                        const std::set<std::string>& loaded_nodes,
                                        const ir::Graph& optimized, const Logger& log) {
  std::set<std::string> live;
  for (const ir::Node& n : optimized.nodes()) live.insert(n.name);
  std::vector<partitioner::Pin> pins;
  for (const PlacementPin& p : options.placement) {
    if (loaded_nodes.count(p.node) && !live.count(p.node)) {
      log.log(LogLevel::kWarning,
              "placement pin for node '" + p.node +
                  "' ignored: the optimizer removed the node or fused it into another (a "
                  "fused node keeps the name of the node it grew from, e.g. the Conv; pin "
                  "that one, or disable the pass)");
      continue;
    }
    pins.push_back(partitioner::Pin{p.node, p.backend});
  }
  return pins;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Result<std::unique_ptr<Session>> build(const std::string& model_path,
                                       const SessionOptions& options) {
  Logger log(options.log_sink, options.log_level);
  if (options.threads < 0)
    return invalid_argument("threads must be 0 (one per hardware thread) or more, got " +
                            std::to_string(options.threads));
  if (options.micro_batches < 1)
    return invalid_argument("micro_batches must be 1 (no split) or more, got " +
                            std::to_string(options.micro_batches));
  if (options.assumed_symbolic_dim < 0)
    return invalid_argument("assumed_symbolic_dim must be 0 (off) or more, got " +
                            std::to_string(options.assumed_symbolic_dim));

  INFER_ASSIGN_OR_RETURN(ir::Model model, onnx_io::load_model(model_path));
  if (!model.graph) return internal_error("loading '" + model_path + "': no graph");
  ir::Graph& graph = *model.graph;
  const std::string where = "model '" + model_path + "'";
  Result<std::vector<TensorInfo>> inputs = signature_of(graph, graph.inputs, "input");
  if (!inputs.is_ok()) return inputs.status().with_context(where);
  Result<std::vector<TensorInfo>> outputs = signature_of(graph, graph.outputs, "output");
  if (!outputs.is_ok()) return outputs.status().with_context(where);
  Status batchable = check_micro_batchable(*inputs, *outputs, options.micro_batches);
  if (!batchable.is_ok()) return batchable.with_context(where);

  std::set<std::string> loaded_nodes;
  for (const ir::Node& n : graph.nodes()) loaded_nodes.insert(n.name);
  const size_t nodes_loaded = graph.node_count();

  INFER_ASSIGN_OR_RETURN(std::vector<std::string> order,
                         partitioner::backend_priority(options.backends, options.strict));
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  // One slot stays reserved for the application's thread, which runs the first step of
  // each run itself; the other threads - 1 slots are for oneTBB's workers.
  auto arena = std::make_shared<tbb::task_arena>(threads);
  arena->initialize();
  std::vector<SkippedBackend> skipped;
  INFER_ASSIGN_OR_RETURN(std::vector<Backend> backends,
                         open_backends(order, options, arena, log, &skipped));
  for (const SkippedBackend& s : skipped)
    for (const PlacementPin& pin : options.placement)
      if (pin.backend == s.name)
        return unavailable("placement pin for node '" + pin.node + "' names backend '" + s.name +
                           "', which is unavailable: " + s.reason);

  // The optimizer runs once the backends are open: constant folding evaluates nodes on
  // the cpu backend's kernels.
  const auto optimizer_start = std::chrono::steady_clock::now();
  INFER_ASSIGN_OR_RETURN(OptimizationOutcome optimized,
                         optimize_model(model, options, backends, arena, log));

  INFER_ASSIGN_OR_RETURN(std::shared_ptr<host::GraphViewSet> views,
                         host::GraphViewSet::build(model));
  std::vector<partitioner::BackendCapabilities> capabilities =
      collect_capabilities(*views, backends, log);
  // Float16/bfloat16 nodes first: a fused node no backend runs in float16 stays fused if
  // one runs it in float32, rather than being decomposed.
  Result<std::vector<std::string>> widened =
      widen_unclaimed_low_precision_nodes(model, backends, views, capabilities, log);
  if (!widened.is_ok()) return widened.status().with_context(where);
  Result<std::vector<std::string>> decomposed = decompose_unclaimed_fused_nodes(
      model, optimized.context, backends, views, capabilities, log);
  if (!decomposed.is_ok()) return decomposed.status().with_context(where);
  const double optimizer_ms = ms_since(optimizer_start);
  if (!options.dump_graph_path.empty()) {
    Status dumped = onnx_io::save_model(model, options.dump_graph_path);
    if (!dumped.is_ok()) return dumped.with_context("--dump-graph");
  }

  partitioner::PartitionRequest request;
  request.graph = &graph;
  request.backends = std::move(capabilities);
  add_cost_inputs(request.backends, backends, options, log);
  request.strict = options.strict;
  request.pins = live_pins(options, loaded_nodes, graph, log);
  request.options.cost_model = options.cost_model;
  request.options.min_island_nodes = options.min_island_nodes;
  request.options.assumed_symbolic_dim = options.assumed_symbolic_dim;
  INFER_ASSIGN_OR_RETURN(partitioner::PartitionPlan partitions, partitioner::partition(request));

  auto plan = std::make_unique<ExecutionPlan>();
  plan->views = views;
  for (const Backend& b : backends) {
    PlanDevice d;
    d.backend = b.name;
    d.device = b.device;
    d.mappable = b.mappable;
    d.arena =
        std::make_unique<DeviceArena>(std::make_unique<PluginArenaBacking>(b.device, b.mappable));
    d.streams = std::make_unique<StreamPool>(b.device);
    d.events = std::make_unique<EventPool>(b.device);
    plan->devices.push_back(std::move(d));
  }
  const auto ids = value_ids_of(*views);
  for (const partitioner::Partition& p : partitions.partitions) {
    INFER_ASSIGN_OR_RETURN(
        PlanPartition compiled,
        compile_partition(*views, ids, p, p.backend, backends[p.backend],
                          static_cast<uint32_t>(options.optimization_level), &graph));
    plan->partitions.push_back(std::move(compiled));
  }
  INFER_RETURN_IF_ERROR(build_step_graph(graph, partitions, *plan));

  SessionImpl::Parts parts;
  parts.report = make_plan_report(graph, partitions, std::move(optimized.pass_lines));
  parts.report.optimization_level = options.optimization_level;
  parts.report.nodes_loaded = nodes_loaded;
  parts.report.nodes_optimized = graph.node_count();
  parts.report.optimizer_ms = optimizer_ms;
  parts.report.decomposed = std::move(*decomposed);
  parts.report.precision = std::move(*widened);
  parts.report.requested_precision = options.precision;
  for (size_t id = 0; id < partitions.assignments.size() && id < graph.node_count(); ++id) {
    const size_t b = partitions.assignments[id].backend;
    if (b >= request.backends.size() || id >= request.backends[b].nodes.size()) continue;
    const std::string& type = request.backends[b].nodes[id].compute_type;
    if (!type.empty())
      parts.report.reduced_precision.push_back(
          graph.node(static_cast<ir::NodeId>(id)).describe() + ": " + type + " on " +
          request.backends[b].name);
  }
  for (const SkippedBackend& s : skipped)
    parts.report.unavailable_backends.push_back(s.name + ": " + s.reason);
  std::vector<bool> used(backends.size(), false);
  for (const partitioner::Partition& p : partitions.partitions) used[p.backend] = true;
  for (size_t b = 0; b < backends.size(); ++b)
    if (used[b]) parts.active_backends.push_back(backends[b].name);
  parts.arena = std::move(arena);
  parts.backends = std::move(backends);
  parts.plan = std::move(plan);
  parts.inputs = std::move(*inputs);
  parts.outputs = std::move(*outputs);
  parts.micro_batches = options.micro_batches;
  parts.trace_path = options.trace_path;
  parts.log_sink = options.log_sink;
  parts.log_level = options.log_level;
  return std::unique_ptr<Session>(std::make_unique<SessionImpl>(std::move(parts)));
}

}  // namespace

Result<std::unique_ptr<Session>> build_session(const std::string& model_path,
                                               const SessionOptions& options) {
  try {
    return build(model_path, options);
  } catch (const std::bad_alloc&) {
    return unavailable("creating a session for '" + model_path + "': out of host memory");
  } catch (const std::exception& e) {
    return internal_error("creating a session for '" + model_path +
                          "': unexpected exception: " + e.what());
  }
}

}  // namespace infer::runtime

namespace infer {

Result<std::unique_ptr<Session>> Session::create(const std::string& model_path,
                                                 const SessionOptions& options) {
  return runtime::build_session(model_path, options);
}

}  // namespace infer
