#include "optimizer/constant_folding.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool is_onnx_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Dropout with training_mode (opset 12+) set to a constant true draws a random mask.
bool is_training_dropout(const ir::Graph& graph, const ir::Node& node) {
  if (!is_onnx_domain(node.domain) || node.op_type != "Dropout") return false;
  if (node.inputs.size() < 3 || node.inputs[2] == ir::kNoValue) return false;
  // A training_mode that is not a constant may be true at run time.
  return bool_constant(graph, node.inputs[2]).value_or(true);
}

// A Constant node (exporters write many: scalars, shapes, Gather indices) has no input
// but is the most foldable node of all; its value becomes an ordinary constant that the
// other passes can read.
bool is_constant_node(const ir::Node& node) {
  return is_onnx_domain(node.domain) && node.op_type == "Constant";
}

// Whether `node` qualifies for evaluation, looking only at the graph (not the result).
bool foldable(const ir::Graph& graph, const GraphIndex& index, const ir::Node& node) {
  if (has_subgraphs(node) || is_random_op(node) || is_training_dropout(graph, node)) return false;
  bool any_input = false;
  for (ir::ValueId in : node.inputs) {
    if (in == ir::kNoValue) continue;
    if (!graph.value(in).is_constant()) return false;
    any_input = true;
  }
  if (!any_input && !is_constant_node(node)) return false;
  for (ir::ValueId out : node.outputs)
    if (out != ir::kNoValue && (index.is_graph_output(out) || index.is_captured(out))) return false;
  return true;
}

size_t constant_input_bytes(const ir::Graph& graph, const ir::Node& node) {
  size_t bytes = 0;
  for (ir::ValueId in : node.inputs)
    if (in != ir::kNoValue) bytes += graph.value(in).constant->size_bytes();
  return bytes;
}

// Checks the evaluator's answer against the node before anything is changed: one tensor
// per present output, of the declared dtype where one is declared, within the size cap.
bool acceptable(const ir::Graph& graph, const ir::Node& node,
                const std::vector<ir::TensorDataPtr>& results) {
  if (results.size() != node.outputs.size()) return false;
  size_t result_bytes = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const ir::ValueId out = node.outputs[i];
    if (out == ir::kNoValue) continue;
    if (!results[i]) return false;
    const DataType declared = graph.value(out).dtype;
    if (declared != DataType::kUndefined && declared != results[i]->dtype()) return false;
    result_bytes += results[i]->size_bytes();
  }
  // A fold may only grow the model by a bounded amount: Expand, Tile or ConstantOfShape
  // turn a few bytes into megabytes that are cheaper to compute at run time than to
  // store, load and copy to every device. A Constant's value is in the model already.
  if (is_constant_node(node)) return true;
  const size_t cap = std::max(ConstantFolding::kMinSizeCap,
                              ConstantFolding::kGrowthFactor * constant_input_bytes(graph, node));
  return result_bytes <= cap;
}

}  // namespace

std::optional<bool> bool_constant(const ir::Graph& graph, ir::ValueId v) {
  const ir::TensorData* t = constant_of(graph, v);
  if (t == nullptr || t->element_count() != 1) return std::nullopt;
  if (t->dtype() == DataType::kBool) return *t->as<uint8_t>() != 0;
  if (std::optional<double> d = scalar_constant(graph, v)) return *d != 0;
  return std::nullopt;
}

bool is_random_op(const ir::Node& node) {
  if (!is_onnx_domain(node.domain)) return false;
  static const char* const kRandom[] = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                        "RandomUniformLike", "Bernoulli",     "Multinomial"};
  return std::any_of(std::begin(kRandom), std::end(kRandom),
                     [&](const char* op) { return node.op_type == op; });
}

Result<int> ConstantFolding::apply(ir::Graph& graph, const PassContext& context) {
  if (context.evaluator == nullptr) return 0;
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int folded = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& node = graph.node(id);
    if (!foldable(graph, index, node)) continue;
    Result<std::vector<ir::TensorDataPtr>> results = context.evaluator->evaluate(graph, node);
    // Unsupported or a kernel failure: leave the node to run (and fail, if it must) at
    // run time.
    if (!results.is_ok() || !acceptable(graph, node, *results)) continue;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ir::ValueId out = node.outputs[i];
      if (out == ir::kNoValue) continue;
      ir::Value& v = graph.value(out);
      v.dtype = (*results)[i]->dtype();
      v.shape = ir::Shape::of((*results)[i]->dims());
      v.constant = (*results)[i];
    }
    remove[id] = true;
    ++folded;
  }
  if (folded > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return folded;
}

}  // namespace infer::optimizer
