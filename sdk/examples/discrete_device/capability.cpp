#include "capability.hpp"

#include <string_view>

#include "failure.hpp"
#include "infer/plugin.hpp"

namespace infer::example {
namespace {

// The cost model: what the capability estimates assume about the simulated device. It is
// deliberately rough (the partitioner only compares backends with it): a fixed launch
// overhead per kernel plus about one multiply-add per nanosecond, which is what the
// plain loops of kernels.cpp achieve on one core.
constexpr double kLaunchOverheadUs = 5.0;
constexpr double kMultiplyAddsPerUs = 1000.0;

// Checks one value the node reads or writes: float32, not quantized, known rank.
std::optional<std::string> check_value(std::string_view op, const infer_value_view* v,
                                       const char* role) {
  if (v->dtype != INFER_DTYPE_FLOAT32)
    return std::string(op) + " needs float32, got " + dtype_name(v->dtype) + " for " + role + " '" +
           value_name(v) + "'";
  if (v->quant != nullptr)
    return std::string(op) + " does not take quantized tensors ('" + value_name(v) + "')";
  if (v->rank < 0)
    return std::string(op) + " needs a known rank for " + role + " '" + value_name(v) + "'";
  if (v->rank > 0 && v->dims == nullptr)
    return std::string(op) + ": " + role + " '" + value_name(v) + "' has rank " +
           std::to_string(v->rank) + " but no dims";
  return std::nullopt;
}

// All the rules, without the "example: " prefix.
std::optional<std::string> check_node(const infer_node_view& node, const OpInfo** op_out) {
  const std::string_view domain = node.domain ? node.domain : "";
  const std::string_view op_type = node.op_type ? node.op_type : "";
  if (domain != "" && domain != "ai.onnx")
    return "unsupported op " + std::string(domain) + "." + std::string(op_type);
  const OpInfo* op = find_op(op_type);
  if (op == nullptr) return "unsupported op " + std::string(op_type);
  if (node.opset < op->min_opset)
    return std::string(op_type) + " needs opset >= " + std::to_string(op->min_opset) + ", got " +
           std::to_string(node.opset);

  // Arity: count present inputs; an omitted optional input is a NULL entry.
  size_t last_present = 0;
  for (size_t i = 0; i < node.num_inputs; ++i)
    if (node.inputs[i] != nullptr) last_present = i + 1;
  if (last_present < op->min_inputs || last_present > op->max_inputs)
    return std::string(op_type) + " with " + std::to_string(last_present) +
           " inputs is not supported";
  for (size_t i = 0; i < op->min_inputs; ++i)
    if (node.inputs[i] == nullptr)
      return std::string(op_type) + " is missing input " + std::to_string(i);
  if (node.num_outputs < 1 || node.outputs[0] == nullptr)
    return std::string(op_type) + " has no output";
  for (size_t i = 1; i < node.num_outputs; ++i)
    if (node.outputs[i] != nullptr)
      return std::string(op_type) + " with " + std::to_string(node.num_outputs) +
             " outputs is not supported";

  // A quantized op's inputs are vetted by its own check (the descriptor and its constants).
  if (!op->quantized_input)
    for (size_t i = 0; i < last_present; ++i)
      if (node.inputs[i] != nullptr)
        if (auto why = check_value(op_type, node.inputs[i], "input")) return why;
  if (auto why = check_value(op_type, node.outputs[0], "output")) return why;
  if (op->check != nullptr)
    if (auto why = op->check(node)) return why;
  if (op_out) *op_out = op;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> why_unsupported(const infer_node_view& node, const OpInfo** op) {
  std::optional<std::string> why = check_node(node, op);
  if (why) return "example: " + *why;
  return std::nullopt;
}

void query_capability(const infer_node_view& node, infer_capability* out) {
  const OpInfo* op = nullptr;
  if (std::optional<std::string> why = why_unsupported(node, &op)) {
    out->support = INFER_SUPPORT_NO;
    sdk::set_reason(out, *why);
    return;
  }
  out->support = op->support;
  sdk::set_reason(out, "");

  // Estimates only when the output shape is fully static: with a symbolic dim (the batch,
  // say) the honest answer is "unknown", which the host initialized the fields to.
  const infer_value_view* y = node.outputs[0];
  int64_t elements = 1;
  for (int64_t i = 0; i < y->rank; ++i) {
    if (y->dims[i] < 0) return;
    elements *= y->dims[i];
  }
  out->est_memory_bytes = elements * static_cast<int64_t>(sizeof(float));
  const int64_t work = op->work_per_element ? op->work_per_element(node) : 1;
  if (work >= 0)
    out->est_time_us =
        kLaunchOverheadUs + static_cast<double>(elements * work) / kMultiplyAddsPerUs;
}

}  // namespace infer::example
