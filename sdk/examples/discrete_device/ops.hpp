// The op table: one line per operator the example device runs.
//
// Capability answers, compilation and execution all read this one table, so adding an op
// means writing its functions in ops.cpp and adding one line there; nothing else in the
// plugin changes. Every op works on float32 tensors only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/plugin_glue.hpp"
#include "kernels.hpp"

namespace infer::example {

// The node attributes the kernels use, read once at compile time (defaults are ONNX's).
struct NodeAttrs {
  bool trans_a = false;  // Gemm transA
  bool trans_b = false;  // Gemm transB
  float alpha = 1.0f;    // Gemm alpha
  float beta = 1.0f;     // Gemm beta
};
NodeAttrs read_attrs(const infer_node_view& node);

// What one kernel launch works on, resolved to the device's memory.
struct KernelArgs {
  std::vector<const float*> inputs;     // nullptr for an omitted optional input
  std::vector<const Dims*> input_dims;  // nullptr likewise
  float* output = nullptr;
  const Dims* output_dims = nullptr;
  const NodeAttrs* attrs = nullptr;
};

struct OpInfo {
  std::string_view op_type;  // in the default ONNX domain
  int64_t min_opset;         // older versions of the op mean something else
  size_t min_inputs, max_inputs;
  // YES for cheap elementwise ops, PREFERRED for the compute-heavy ones an accelerator
  // exists for: the partitioner weighs that against the copies a placement costs.
  infer_support support;
  // Rules beyond dtype, arity and known rank (checked for every op); returns the reason
  // when the node is not supported. nullptr: no extra rules.
  std::optional<std::string> (*check)(const infer_node_view& node);
  // The output dims for concrete input dims, or the reason they do not fit together.
  std::optional<std::string> (*output_dims)(const std::vector<const Dims*>& inputs,
                                            const NodeAttrs& attrs, Dims* out);
  void (*run)(const KernelArgs& args);
  // Multiply-adds per output element for the capability time estimate; -1 when unknown.
  // nullptr: one (elementwise).
  int64_t (*work_per_element)(const infer_node_view& node);
};

// The op of `op_type`, or nullptr when the device does not have it.
const OpInfo* find_op(std::string_view op_type);
std::span<const OpInfo> all_ops();

// "[2,3,4]", for messages.
inline std::string dims_string(const Dims& dims) { return sdk::dims_text(dims); }

}  // namespace infer::example
