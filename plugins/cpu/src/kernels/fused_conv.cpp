// FusedConv (ai.infer, sdk/FUSED_OPS.md): Y = act(Conv(X, W, B) + Z). The Conv kernel
// itself (conv.cpp) runs it: the residual Z and the activation go into the convolution's
// epilogue, applied to each output tile while it is in cache, instead of a second pass.
// float32 only, like Conv.
#include "../node_util.hpp"
#include "conv_prepack.hpp"
#include "fused_common.hpp"

namespace infer::cpu::kernels {

Status conv_check(const infer_node_view& node);

Status fused_conv_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 4));
  CPU_RETURN_IF_ERROR(check_activation(node));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), dtypes::kF32, "Z"));
  const infer_node_view conv = inner_view(node, 3, 11);
  return conv_check(conv);
}

Result<KernelPtr> fused_conv_create(const KernelInit& init) {
  return conv_create_fused(init, to_simd_act(read_activation(*init.node)), true);
}

}  // namespace infer::cpu::kernels
