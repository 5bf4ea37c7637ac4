#include "runtime/graph_optimization.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "onnx/shape_refine.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/pass_registry.hpp"
#include "optimizer/pipeline.hpp"
#include "optimizer/rewrite.hpp"
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

// Control-flow bodies (If branches, Loop and Scan bodies, at any depth) get the basic
// passes: what an exporter inlines into a branch (weights sliced and concatenated for an
// LSTM, shape arithmetic) is then computed once at load time instead of on every run.
// A body's reference to a constant of an enclosing graph becomes a constant of the body
// (the same data, shared), so that folding sees through it. Fusion and layout passes
// stay at the top level, where the session can still hand a fused node no backend
// claims back as its standard operators. Bodies are copied before they change: graphs
// are shared by pointer between copies of a model. `outer` maps the names of the
// enclosing graphs' constants to their data.
using ConstantScope = std::map<std::string, ir::TensorDataPtr>;

bool has_subgraphs(const ir::Graph& graph) {
  for (const ir::Node& node : graph.nodes())
    if (optimizer::has_subgraphs(node)) return true;
  return false;
}

Status optimize_subgraphs(ir::Graph& graph, const ConstantScope& outer,
                          optimizer::Pipeline& pipeline, const optimizer::PassContext& context) {
  // What this graph's bodies see: the enclosing constants, then this graph's own values
  // (a computed value hides an outer constant of the same name).
  ConstantScope scope = outer;
  for (ir::ValueId v = 0; v < graph.value_count(); ++v) {
    const ir::Value& value = graph.value(v);
    if (value.is_constant())
      scope[value.name] = value.constant;
    else if (!value.outer_scope)
      scope.erase(value.name);
  }
  // Constant nodes whose value only bodies read are not folded (folding leaves captured
  // values computed); their tensors are constants all the same.
  for (const ir::Node& node : graph.nodes()) {
    const ir::Attribute* value = node.attr("value");
    if (node.domain.empty() && node.op_type == "Constant" && node.outputs.size() == 1 &&
        node.outputs[0] != ir::kNoValue && value != nullptr &&
        value->type == ir::AttrType::kTensor && value->tensors.size() == 1)
      scope[graph.value(node.outputs[0]).name] = value->tensors[0];
  }
  for (ir::Node& node : graph.mutable_nodes())
    for (ir::Attribute& attr : node.attributes)
      for (std::shared_ptr<ir::Graph>& body : attr.graphs) {
        if (body == nullptr) continue;
        body = std::make_shared<ir::Graph>(*body);
        for (ir::ValueId v = 0; v < body->value_count(); ++v) {
          ir::Value& value = body->value(v);
          auto it = value.outer_scope ? scope.find(value.name) : scope.end();
          if (it == scope.end()) continue;
          value.outer_scope = false;
          value.constant = it->second;
        }
        const std::string where = node.describe() + ", subgraph '" + attr.name + "'";
        INFER_RETURN_IF_ERROR(pipeline.run(*body, context).with_context(where));
        if (!has_subgraphs(*body)) continue;
        INFER_RETURN_IF_ERROR(optimize_subgraphs(*body, scope, pipeline, context));
        // What the nested bodies now hold themselves may be dead here.
        INFER_RETURN_IF_ERROR(pipeline.run(*body, context).with_context(where));
      }
  return Status::ok();
}

// "constant_folding: 12 rewrites, 0.8 ms" for each pass that changed the graph, with
// `where` after the name ("constant_folding (in subgraphs): ...").
void add_pass_lines(const optimizer::Pipeline& pipeline, const std::string& where,
                    std::vector<std::string>& lines) {
  for (const optimizer::PassStats& st : pipeline.stats()) {
    if (st.changes == 0) continue;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", st.milliseconds);
    lines.push_back(st.name + where + ": " + std::to_string(st.rewrites) +
                    (st.rewrites == 1 ? " rewrite, " : " rewrites, ") + ms + " ms");
  }
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
  INFER_ASSIGN_OR_RETURN(
      optimizer::Pipeline body_pipeline,
      optimizer::make_pipeline(std::min(options.optimization_level, optimizer::kLevelBasic),
                               options.disabled_passes));
  if (body_pipeline.size() > 0) {
    optimizer::PassContext body_context = outcome.context;
    body_context.shape_refiner = nullptr;  // ONNX shape inference runs on whole models
    INFER_RETURN_IF_ERROR(optimize_subgraphs(*model.graph, {}, body_pipeline, body_context)
                              .with_context("model '" + model.source_path + "'"));
  }
  // The services live only as long as this call.
  outcome.context.evaluator = nullptr;
  outcome.context.shape_refiner = nullptr;
  import_used_domains(model);
  add_pass_lines(pipeline, "", outcome.pass_lines);
  add_pass_lines(body_pipeline, " (in subgraphs)", outcome.pass_lines);
  return outcome;
}

}  // namespace infer::runtime
