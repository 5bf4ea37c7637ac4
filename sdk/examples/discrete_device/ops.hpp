// The op table: one line per operator the example device runs.
//
// Capability answers, compilation and execution all read this one table, so adding an op
// means writing its functions in ops.cpp and adding one line there; nothing else in the
// plugin changes. Every op works on float32 tensors, except DequantizeLinear: it reads an
// 8-bit tensor through the quantization descriptor the host attaches to it
// (infer_value_view::quant), which is how a plugin takes quantized data.
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
  // DequantizeLinear: input 0's storage, scale and zero point, from its descriptor.
  infer_dtype storage = INFER_DTYPE_UNDEFINED;
  float scale = 1.0f;
  int32_t zero_point = 0;
};
NodeAttrs read_attrs(const infer_node_view& node);
// DequantizeLinear's scale and zero point from the descriptor of its input 0 (which the
// capability check has vetted) into `attrs`.
void read_quant_params(const infer_node_view& node, NodeAttrs* attrs);

// What one kernel launch works on, resolved to the device's memory.
struct KernelArgs {
  // nullptr for an omitted optional input. A DequantizeLinear input holds 8-bit data
  // (NodeAttrs::storage says which): the kernel reads it as such.
  std::vector<const float*> inputs;
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
  // Input 0 holds quantized data read through its descriptor, and the other inputs are
  // the descriptor's own constants (scale, zero point): `check` vets all of them, and
  // compilation takes the parameters from the descriptor instead of uploading them.
  bool quantized_input = false;
};

// The op of `op_type`, or nullptr when the device does not have it.
const OpInfo* find_op(std::string_view op_type);
std::span<const OpInfo> all_ops();

// "[2,3,4]", for messages.
inline std::string dims_string(const Dims& dims) { return sdk::dims_text(dims); }

}  // namespace infer::example
