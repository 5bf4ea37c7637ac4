// FusedGemm and FusedMatMul (ai.infer, sdk/FUSED_OPS.md):
//   FusedGemm:   Y = act(alpha·A'·B' + beta·C)
//   FusedMatMul: Y = act(MatMul(A, B) + bias), bias 1-D along the last axis
// The products are the plain Gemm and MatMul kernels (gemm.cpp, matmul.cpp: the blocked
// sgemm for float32, the plain loop for float64/float16/bfloat16), run through an
// InnerContext; the bias add and the activation are one elementwise pass over their
// output. Only the float types are claimed: the activations are defined for floats.
#include "../node_util.hpp"
#include "fused_common.hpp"

namespace infer::cpu::kernels {

Status gemm_check(const infer_node_view& node);
Result<KernelPtr> gemm_create(const KernelInit& init);
Status matmul_check(const infer_node_view& node);
Result<KernelPtr> matmul_create(const KernelInit& init);

namespace {

// The plain kernels' opset-dependent rules are read for this opset: Gemm's C is optional
// from 11, and the float types are accepted at every opset.
constexpr int64_t kInnerOpset = 13;

class FusedProductKernel final : public Kernel {
 public:
  // `num_inner` inputs go to the plain kernel; input `bias_input` (if any) is the row
  // bias (FusedMatMul), -1 for none (FusedGemm's C is the plain Gemm's business).
  FusedProductKernel(KernelPtr inner, size_t num_inner, int bias_input, Activation act)
      : inner_(std::move(inner)), num_inner_(num_inner), bias_input_(bias_input), act_(act) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* bias = bias_input_ >= 0 ? ctx.input(static_cast<size_t>(bias_input_)) : nullptr;
    InnerContext inner(ctx, num_inner_);
    CPU_RETURN_IF_ERROR(inner_->run(inner));
    Tensor* Y = inner.output();
    if (Y == nullptr) return internal("the product produced no output");
    if (bias != nullptr) {
      if (bias->dtype != Y->dtype)
        return invalid("bias is ", dtype_name(bias->dtype), ", expected ", dtype_name(Y->dtype),
                       " like A and B");
      if (Y->rank() == 0)
        return invalid("bias ", dims_str(bias->dims),
                       " needs a product of rank 1 or more, but A and B give a scalar");
      if (bias->rank() != 1 || bias->dims[0] != Y->dims.back())
        return invalid("bias has shape ", dims_str(bias->dims), ", expected [", Y->dims.back(),
                       "] (the last dim of the product ", dims_str(Y->dims), ")");
    }
    return apply_epilogue(ctx, *Y, nullptr, bias, act_);
  }

 private:
  KernelPtr inner_;
  size_t num_inner_;
  int bias_input_;
  Activation act_;
};

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
  CPU_ASSIGN_OR_RETURN(KernelPtr gemm, gemm_create(KernelInit{&gemm_node, init.host}));
  return KernelPtr(new FusedProductKernel(std::move(gemm), 3, -1, read_activation(*init.node)));
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
  CPU_ASSIGN_OR_RETURN(KernelPtr matmul, matmul_create(KernelInit{&matmul_node, init.host}));
  return KernelPtr(new FusedProductKernel(std::move(matmul), 2, 2, read_activation(*init.node)));
}

}  // namespace infer::cpu::kernels
