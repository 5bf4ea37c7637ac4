#include "runtime/session_builder.hpp"

#include <oneapi/tbb/info.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <exception>
#include <map>
#include <new>
#include <set>

#include "onnx/model_loader.hpp"
#include "onnx/model_writer.hpp"
#include "onnx/shape_refine.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/pipeline.hpp"
#include "partitioner/partitioner.hpp"
#include "runtime/capability_collector.hpp"
#include "runtime/constant_evaluator.hpp"
#include "runtime/partition_compiler.hpp"
#include "runtime/plan_report_builder.hpp"
#include "runtime/plugin_arena_backing.hpp"
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

// Constant folding runs nodes on the CPU plugin's kernels. The session's own cpu backend
// serves when it has one; otherwise (strict mode without cpu) a separate instance is
// opened just for folding, and without one folding is skipped, which only costs speed.
std::unique_ptr<optimizer::ConstantEvaluator> make_evaluator(
    const ir::Model& model, const std::vector<Backend>& backends, const SessionOptions& options,
    const std::shared_ptr<tbb::task_arena>& arena, const Logger& log) {
  for (const Backend& b : backends)
    if (b.name == partitioner::kFallbackBackend && b.mappable)
      return std::make_unique<PluginConstantEvaluator>(b.device, model.opsets);
  Logger quiet(options.log_sink, LogLevel::kError);
  Result<std::vector<Backend>> cpu =
      open_backends({partitioner::kFallbackBackend}, options, arena, quiet);
  if (!cpu.is_ok() || cpu->empty() || !(*cpu)[0].mappable) {
    log.log(LogLevel::kInfo, "constant folding disabled: no cpu backend to evaluate nodes on");
    return nullptr;
  }
  return std::make_unique<PluginConstantEvaluator>((*cpu)[0].device, model.opsets);
}

// ONNX's shape inference between optimizer rounds (core/onnx/shape_refine.hpp). ONNX
// knows nothing of the ai.infer fused operators, so it runs on a copy of the graph where
// they are decomposed into standard ones (their outputs keep their names); what it learns
// about the values of the real graph is copied back.
class OnnxShapeRefiner final : public optimizer::ShapeRefiner {
 public:
  explicit OnnxShapeRefiner(std::map<std::string, int64_t> opsets) : opsets_(std::move(opsets)) {}
  void refine(ir::Graph& graph) const override {
    std::vector<ir::NodeId> fused;
    for (ir::NodeId id = 0; id < graph.node_count(); ++id)
      if (optimizer::is_decomposable_fused_node(graph.node(id))) fused.push_back(id);
    if (fused.empty()) {
      // Best effort by design: the shapes stay as they were when ONNX cannot run.
      (void)onnx_io::refine_shapes(graph, opsets_);
      return;
    }
    ir::Graph plain = graph;
    optimizer::PassContext context;
    context.opsets = opsets_;
    if (!optimizer::decompose_fused_nodes(plain, fused, context).is_ok()) return;
    if (!onnx_io::refine_shapes(plain, opsets_).is_ok()) return;
    for (ir::ValueId v = 0; v < graph.value_count(); ++v) {
      ir::Value& value = graph.value(v);
      if (value.is_constant() || value.outer_scope) continue;
      std::optional<ir::ValueId> twin = plain.find_value(value.name);
      if (twin && onnx_io::shape_more_known(value.shape, plain.value(*twin).shape))
        value.shape = plain.value(*twin).shape;
    }
  }

 private:
  std::map<std::string, int64_t> opsets_;
};

// Every domain a node uses must be imported for the graph views (they carry each node's
// opset) and for --dump-graph's file.
void import_used_domains(ir::Model& model) {
  for (const ir::Node& n : model.graph->nodes())
    if (n.domain == optimizer::kFusedDomain && !model.opsets.count(n.domain))
      model.opsets[n.domain] = optimizer::kFusedOpsetVersion;
}

// The first backend (priority order) that claims node `id`, or SIZE_MAX.
size_t first_claiming(const std::vector<partitioner::BackendCapabilities>& caps, ir::NodeId id) {
  for (size_t b = 0; b < caps.size(); ++b)
    if (id < caps[b].nodes.size() && caps[b].nodes[id].supported()) return b;
  return SIZE_MAX;
}

// The partitioner asks for a fused node (ai.infer) first, then for its decomposition: a
// fused node is replaced by its standard operators when no backend claims it, or when a
// backend of higher priority than the first one claiming the fused op claims every node
// of the decomposition (so `--backends vulkan,cpu` keeps a Conv+Relu on vulkan even if
// only cpu knows FusedConv). The answers for the decomposed forms come from a trial
// copy of the graph; the capability answers are then collected again for the changed
// graph. Returns the descriptions of the decomposed nodes for --explain.
Result<std::vector<std::string>> decompose_unclaimed_fused_nodes(
    ir::Model& model, const optimizer::PassContext& context, const std::vector<Backend>& backends,
    std::shared_ptr<host::GraphViewSet>& views,
    std::vector<partitioner::BackendCapabilities>& capabilities, const Logger& log) {
  const ir::Graph& graph = *model.graph;
  std::vector<ir::NodeId> fused;
  bool any_unclaimed = false;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    if (!optimizer::is_decomposable_fused_node(graph.node(id))) continue;
    fused.push_back(id);
    any_unclaimed = any_unclaimed || first_claiming(capabilities, id) == SIZE_MAX;
  }
  std::vector<std::string> described;
  if (fused.empty() || (backends.size() == 1 && !any_unclaimed)) return described;

  ir::Model trial = model;
  trial.graph = std::make_shared<ir::Graph>(graph);
  INFER_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> parts,
                         optimizer::decompose_fused_nodes(*trial.graph, fused, context));
  INFER_ASSIGN_OR_RETURN(std::shared_ptr<host::GraphViewSet> trial_views,
                         host::GraphViewSet::build(trial));
  const std::vector<partitioner::BackendCapabilities> trial_caps =
      collect_capabilities(*trial_views, backends, log);
  std::map<std::string, ir::NodeId> trial_ids;
  for (ir::NodeId id = 0; id < trial.graph->node_count(); ++id)
    trial_ids[trial.graph->node(id).name] = id;

  std::vector<ir::NodeId> chosen;
  for (size_t i = 0; i < fused.size(); ++i) {
    const size_t fused_backend = first_claiming(capabilities, fused[i]);
    size_t decomposed_backend = SIZE_MAX;
    for (size_t b = 0; b < trial_caps.size() && decomposed_backend == SIZE_MAX; ++b) {
      bool all = true;
      for (const std::string& name : parts[i]) {
        auto it = trial_ids.find(name);
        all = all && it != trial_ids.end() && it->second < trial_caps[b].nodes.size() &&
              trial_caps[b].nodes[it->second].supported();
      }
      if (all) decomposed_backend = b;
    }
    if (fused_backend == SIZE_MAX || decomposed_backend < fused_backend) {
      chosen.push_back(fused[i]);
      const std::string why = fused_backend == SIZE_MAX
                                  ? "no backend claims it"
                                  : backends[decomposed_backend].name +
                                        " runs its decomposition and comes before " +
                                        backends[fused_backend].name;
      described.push_back(graph.node(fused[i]).describe() + ": decomposed (" + why + ")");
    }
  }
  if (chosen.empty()) return described;
  INFER_RETURN_IF_ERROR(
      optimizer::decompose_fused_nodes(*model.graph, chosen, context).status());
  INFER_ASSIGN_OR_RETURN(views, host::GraphViewSet::build(model));
  capabilities = collect_capabilities(*views, backends, log);
  return described;
}

Result<std::unique_ptr<Session>> build(const std::string& model_path,
                                       const SessionOptions& options) {
  Logger log(options.log_sink, options.log_level);
  if (options.threads < 0)
    return invalid_argument("threads must be 0 (one per hardware thread) or more, got " +
                            std::to_string(options.threads));

  INFER_ASSIGN_OR_RETURN(ir::Model model, onnx_io::load_model(model_path));
  if (!model.graph) return internal_error("loading '" + model_path + "': no graph");
  ir::Graph& graph = *model.graph;
  const std::string where = "model '" + model_path + "'";
  Result<std::vector<TensorInfo>> inputs = signature_of(graph, graph.inputs, "input");
  if (!inputs.is_ok()) return inputs.status().with_context(where);
  Result<std::vector<TensorInfo>> outputs = signature_of(graph, graph.outputs, "output");
  if (!outputs.is_ok()) return outputs.status().with_context(where);

  std::set<std::string> loaded_nodes;
  for (const ir::Node& n : graph.nodes()) loaded_nodes.insert(n.name);
  const size_t nodes_loaded = graph.node_count();
  INFER_ASSIGN_OR_RETURN(
      optimizer::Pipeline pipeline,
      optimizer::make_pipeline(options.optimization_level, options.disabled_passes));

  INFER_ASSIGN_OR_RETURN(std::vector<std::string> order,
                         partitioner::backend_priority(options.backends, options.strict));
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  // One slot stays reserved for the application's thread, which runs the first step of
  // each run itself; the other threads - 1 slots are for oneTBB's workers.
  auto arena = std::make_shared<tbb::task_arena>(threads);
  arena->initialize();
  INFER_ASSIGN_OR_RETURN(std::vector<Backend> backends, open_backends(order, options, arena, log));

  const auto optimizer_start = std::chrono::steady_clock::now();
  optimizer::PassContext context;
  context.opsets = model.opsets;
  std::unique_ptr<optimizer::ConstantEvaluator> evaluator;
  if (pipeline.size() > 0) evaluator = make_evaluator(model, backends, options, arena, log);
  context.evaluator = evaluator.get();
  const OnnxShapeRefiner refiner(model.opsets);
  context.shape_refiner = &refiner;
  INFER_RETURN_IF_ERROR(pipeline.run(graph, context).with_context(where));
  import_used_domains(model);

  INFER_ASSIGN_OR_RETURN(std::shared_ptr<host::GraphViewSet> views,
                         host::GraphViewSet::build(model));
  std::vector<partitioner::BackendCapabilities> capabilities =
      collect_capabilities(*views, backends, log);
  Result<std::vector<std::string>> decomposed =
      decompose_unclaimed_fused_nodes(model, context, backends, views, capabilities, log);
  if (!decomposed.is_ok()) return decomposed.status().with_context(where);
  const double optimizer_ms = ms_since(optimizer_start);
  if (!options.dump_graph_path.empty()) {
    Status dumped = onnx_io::save_model(model, options.dump_graph_path);
    if (!dumped.is_ok()) return dumped.with_context("--dump-graph");
  }

  partitioner::PartitionRequest request;
  request.graph = &graph;
  request.backends = std::move(capabilities);
  request.strict = options.strict;
  request.pins = live_pins(options, loaded_nodes, graph, log);
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
    INFER_ASSIGN_OR_RETURN(PlanPartition compiled,
                           compile_partition(*views, ids, p, p.backend, backends[p.backend],
                                             static_cast<uint32_t>(options.optimization_level)));
    plan->partitions.push_back(std::move(compiled));
  }
  INFER_RETURN_IF_ERROR(build_step_graph(graph, partitions, *plan));

  SessionImpl::Parts parts;
  std::vector<std::string> pass_lines;
  for (const optimizer::PassStats& st : pipeline.stats()) {
    if (st.changes == 0) continue;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", st.milliseconds);
    pass_lines.push_back(st.name + ": " + std::to_string(st.rewrites) +
                         (st.rewrites == 1 ? " rewrite, " : " rewrites, ") + ms + " ms");
  }
  parts.report = make_plan_report(graph, partitions, std::move(pass_lines));
  parts.report.optimization_level = options.optimization_level;
  parts.report.nodes_loaded = nodes_loaded;
  parts.report.nodes_optimized = graph.node_count();
  parts.report.optimizer_ms = optimizer_ms;
  parts.report.decomposed = std::move(*decomposed);
  std::vector<bool> used(backends.size(), false);
  for (const partitioner::Partition& p : partitions.partitions) used[p.backend] = true;
  for (size_t b = 0; b < backends.size(); ++b)
    if (used[b]) parts.active_backends.push_back(backends[b].name);
  parts.arena = std::move(arena);
  parts.backends = std::move(backends);
  parts.plan = std::move(plan);
  parts.inputs = std::move(*inputs);
  parts.outputs = std::move(*outputs);
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
