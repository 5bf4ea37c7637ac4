// Shared pieces of the generic fusion passes (conv_bn_folding, conv_add_fusion,
// matmul_add_fusion, activation_fusion): when a fusion may fire at all, and how an
// activation node maps onto the `activation` / `activation_params` attributes of the
// ai.infer fused operators (sdk/FUSED_OPS.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "infer/dtype.hpp"
#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Fusions only fire on models importing the default domain at this opset or newer: the
// decompositions of the fused operators (fused_decomposition.hpp) emit the forms of the
// graph's own opset from 9 on (Clip with bound attributes before 11, HardSwish as
// HardSigmoid and Mul before 14), and BatchNormalization from 9 on has no per-element
// (spatial = 0) mode. PaddleOCR's and many TensorFlow exports are opset 9 to 12.
inline constexpr int64_t kMinFusionOpset = 9;

inline bool fusions_enabled(const PassContext& context) {
  return context.opset("") >= kMinFusionOpset;
}

// The element types the fused operators accept (their type constraint T).
bool is_fusion_float(DataType dtype);

// True when `node` is the ONNX operator `op` (default domain, no subgraph).
bool is_onnx_op(const ir::Node& node, const char* op);
// True when `node` is the ai.infer operator `op`.
bool is_fused_op(const ir::Node& node, const char* op);

// A fused node carries an activation once its `activation` attribute is a non-empty
// string; another activation cannot be stacked on top of it.
bool has_activation(const ir::Node& node);

// What an activation node becomes on the fused node it is absorbed into.
struct FusedActivation {
  std::string name;            // the `activation` attribute value
  std::vector<double> params;  // the `activation_params` attribute value
};

// The fused form of `node` when it is an activation the fused operators support, with
// every parameter known at optimization time (a Clip bound must be a constant scalar or
// omitted); std::nullopt otherwise. Only the node's first input is the activated tensor.
std::optional<FusedActivation> match_activation(const ir::Graph& graph, const ir::Node& node);

// The values of constant `c` as one per output channel of a convolution output of rank
// `rank` (= the weight's rank) with `channels` channels: c, right-aligned with that rank,
// is 1 on every axis but the channel axis (1), which is 1 or `channels`; a
// one-value-per-channel vector is returned either way. nullopt for any other shape, a
// non-constant or a non-float one.
std::optional<std::vector<double>> per_channel_constant(const ir::Graph& graph, ir::ValueId c,
                                                        size_t rank, int64_t channels);

// The fused operator `anchor` becomes when it takes an activation: Conv -> FusedConv,
// Gemm -> FusedGemm, MatMul -> FusedMatMul, a fused one without an activation stays what
// it is; nullptr when it cannot take one.
const char* fused_form_of(const ir::Node& anchor);

// Writes `activation` (and `activation_params` when it takes any) onto `node`.
void set_activation(ir::Node& node, const FusedActivation& activation);

}  // namespace infer::optimizer
