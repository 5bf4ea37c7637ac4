#include "runtime/graph_optimization.hpp"

#include <cstdio>
#include <map>
#include <optional>

#include "onnx/shape_refine.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/pipeline.hpp"
#include "partitioner/partitioner.hpp"
#include "runtime/constant_evaluator.hpp"

namespace infer::runtime {
namespace {

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

}  // namespace

Result<OptimizationOutcome> optimize_model(ir::Model& model, const SessionOptions& options,
                                           const std::vector<Backend>& backends,
                                           const std::shared_ptr<tbb::task_arena>& arena,
                                           const Logger& log) {
  INFER_ASSIGN_OR_RETURN(
      optimizer::Pipeline pipeline,
      optimizer::make_pipeline(options.optimization_level, options.disabled_passes));
  OptimizationOutcome outcome;
  outcome.context.opsets = model.opsets;
  std::unique_ptr<optimizer::ConstantEvaluator> evaluator;
  if (pipeline.size() > 0) evaluator = make_evaluator(model, backends, options, arena, log);
  outcome.context.evaluator = evaluator.get();
  const OnnxShapeRefiner refiner(model.opsets);
  outcome.context.shape_refiner = &refiner;
  INFER_RETURN_IF_ERROR(pipeline.run(*model.graph, outcome.context)
                            .with_context("model '" + model.source_path + "'"));
  // The services live only as long as this call.
  outcome.context.evaluator = nullptr;
  outcome.context.shape_refiner = nullptr;
  import_used_domains(model);
  for (const optimizer::PassStats& st : pipeline.stats()) {
    if (st.changes == 0) continue;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", st.milliseconds);
    outcome.pass_lines.push_back(st.name + ": " + std::to_string(st.rewrites) +
                                 (st.rewrites == 1 ? " rewrite, " : " rewrites, ") + ms + " ms");
  }
  return outcome;
}

}  // namespace infer::runtime
