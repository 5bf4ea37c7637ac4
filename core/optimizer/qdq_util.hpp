// What the QDQ passes (qdq_*.cpp) share: reading the scale and zero point of one
// DequantizeLinear or QuantizeLinear node with per-tensor parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "optimizer/pass.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer::qdq {

// The QDQ passes fire from this default-domain opset (per-axis DequantizeLinear, and the
// 8-bit MaxPool, Transpose and Reshape they rely on).
inline constexpr int64_t kMinOpset = 13;

bool is_8bit(DataType t);
// Whether optional input `slot` of `n` is given.
bool present(const ir::Node& n, size_t slot);

// The elements of a uint8/int8 constant as int32.
std::optional<std::vector<int32_t>> int8_constant(const ir::Graph& graph, ir::ValueId v);
// A positive, finite float32 scale constant of `count` elements (1: per tensor).
std::optional<std::vector<double>> scales(const ir::Graph& graph, ir::ValueId v, size_t count);

// One DequantizeLinear (or QuantizeLinear) with a per-tensor scale and zero point.
struct PerTensor {
  ir::ValueId data = ir::kNoValue;  // the quantized side (DQ's input, Q's output)
  ir::ValueId scale = ir::kNoValue;
  ir::ValueId zero = ir::kNoValue;  // kNoValue: absent (0 of the data's type)
  DataType dtype = DataType::kUndefined;
  int32_t zero_value = 0;
  double scale_value = 0;

  // Same scale and zero point values and the same storage type.
  bool same_params(const PerTensor& o) const {
    return dtype == o.dtype && zero_value == o.zero_value && scale_value == o.scale_value;
  }
};

// The per-tensor parameters of DequantizeLinear/QuantizeLinear node `n`, whose quantized
// side is `data`; nullopt when they are not one-element constants of an 8-bit type, or
// (QuantizeLinear) an `output_dtype` attribute stands in for the zero point.
std::optional<PerTensor> per_tensor(const ir::Graph& graph, const ir::Node& n, ir::ValueId data);

// The per-tensor DequantizeLinear producing `v` (its parameters, data = its input);
// nullopt when `v` has no such producer. `producer` is the node producing `v` or null.
std::optional<PerTensor> dequantized_input(const ir::Graph& graph, const ir::Node* producer);

// The data of `v` when it is a constant: an initializer (or folded value), or the output
// of a default-domain Constant node holding a tensor (the QDQ passes run before constant
// folding turns those into initializers). nullptr otherwise.
ir::TensorDataPtr constant_data(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v);
// The value of a one-element constant_data() as double.
std::optional<double> scalar_value(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v);

// The zero point input for `p`: its own, or a new one-element constant holding 0.
ir::ValueId zero_point_value(ir::Graph& graph, const PerTensor& p, const std::string& base);

// A value that is float32 or not yet typed (the QDQ passes run before type inference has
// seen every rewrite).
bool float_or_unknown(const ir::Graph& graph, ir::ValueId v);

// The anchor of the QDQ passes: QuantizeLinear node `q_id` with per-tensor parameters
// (`y`, its data the QuantizeLinear's output), and the node computing its float input
// (`producer`), when that input is read by the QuantizeLinear alone and the producer is
// not marked in `remove` yet.
struct QuantizedResult {
  PerTensor y;
  ir::NodeId producer = ir::kNoNode;
};
std::optional<QuantizedResult> quantized_result(const ir::Graph& graph, const GraphIndex& index,
                                                ir::NodeId q_id, const std::vector<bool>& remove);

// The loop every QDQ pass runs (at default-domain opset kMinOpset or newer): calls
// `try_fuse(index, node_id, remove)` for each node, which returns whether it rewrote,
// then commits the removals. Returns the number of rewrites.
template <typename F>
Result<int> rewrite_each_node(ir::Graph& graph, const PassContext& context, F&& try_fuse) {
  if (context.opset("") < kMinOpset) return 0;
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int fused = 0;
  const size_t count = graph.node_count();
  for (ir::NodeId id = 0; id < count; ++id)
    if (try_fuse(index, id, remove)) ++fused;
  if (fused == 0) return 0;
  INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer::qdq
