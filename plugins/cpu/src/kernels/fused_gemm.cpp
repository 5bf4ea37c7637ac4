// FusedGemm and FusedMatMul (ai.infer, sdk/FUSED_OPS.md):
//   FusedGemm:   Y = act(alpha·A'·B' + beta·C)
//   FusedMatMul: Y = act(MatMul(A, B) + bias), bias 1-D along the last axis
// They are the plain Gemm and MatMul kernels (gemm.cpp, matmul.cpp) created with the
// activation (and FusedMatMul's bias input): for float32 the extras run in the packed
// sgemm's epilogue on each finished tile, for float64/float16/bfloat16 in one elementwise
// pass after the plain loop. Only the float types are claimed: the activations are
// defined for floats.
#include "../node_util.hpp"
#include "fused_common.hpp"

namespace infer::cpu::kernels {

Status gemm_check(const infer_node_view& node);
Result<KernelPtr> gemm_create_fused(const KernelInit& init, const infer_node_view& weights_node,
                                    const Activation& act);
Status matmul_check(const infer_node_view& node);
Result<KernelPtr> matmul_create_fused(const KernelInit& init, const infer_node_view& weights_node,
                                      int bias_input, const Activation& act);

namespace {

// The plain kernels' opset-dependent rules are read for this opset: Gemm's C is optional
// from 11, and the float types are accepted at every opset.
constexpr int64_t kInnerOpset = 13;

Status check_float_inputs(const infer_node_view& node) {
  for (size_t i = 0; i < node.num_inputs; ++i)
    CPU_RETURN_IF_ERROR(
        check_dtype(node, node.inputs[i], dtypes::kAllFloat, cat("input ", i).c_str()));
  return Status::ok();
}

}  // namespace

Status fused_gemm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_float_inputs(node));
  CPU_RETURN_IF_ERROR(check_activation(node));
  return gemm_check(inner_view(node, 3, kInnerOpset));
}

Result<KernelPtr> fused_gemm_create(const KernelInit& init) {
  const infer_node_view gemm_node = inner_view(*init.node, 3, kInnerOpset);
  return gemm_create_fused(KernelInit{&gemm_node, init.host}, *init.node,
                           read_activation(*init.node));
}

Status fused_matmul_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_float_inputs(node));
  CPU_RETURN_IF_ERROR(check_activation(node));
  const infer_value_view* bias = node_input(node, 2);
  if (bias != nullptr && bias->rank >= 0 && bias->rank != 1)
    return unsupported(node_label(node), ": bias must be 1-D, got rank ", bias->rank);
  return matmul_check(inner_view(node, 2, kInnerOpset));
}

Result<KernelPtr> fused_matmul_create(const KernelInit& init) {
  const infer_node_view matmul_node = inner_view(*init.node, 2, kInnerOpset);
  return matmul_create_fused(KernelInit{&matmul_node, init.host}, *init.node, 2,
                             read_activation(*init.node));
}

}  // namespace infer::cpu::kernels
