// FusedConv (ai.infer, sdk/FUSED_OPS.md): Y = act(Conv(X, W, B) + Z). The convolution is
// the plain Conv kernel (conv.cpp: im2col + the blocked sgemm, bias included), run on the
// node's first three inputs through an InnerContext; the residual add and the activation
// are one elementwise pass over its output. float32 only, like Conv.
#include "../node_util.hpp"
#include "fused_common.hpp"

namespace infer::cpu::kernels {

Status conv_check(const infer_node_view& node);
Result<KernelPtr> conv_create(const KernelInit& init);

namespace {

class FusedConvKernel final : public Kernel {
 public:
  FusedConvKernel(KernelPtr conv, Activation act) : conv_(std::move(conv)), act_(act) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* Z = ctx.input(3);
    InnerContext inner(ctx, 3);
    CPU_RETURN_IF_ERROR(conv_->run(inner));
    Tensor* Y = inner.output();
    if (Y == nullptr) return internal("Conv produced no output");
    if (Z != nullptr) {
      if (Z->dtype != Y->dtype)
        return invalid("residual Z is ", dtype_name(Z->dtype), ", expected ", dtype_name(Y->dtype),
                       " like X");
      if (Z->dims != Y->dims)
        return invalid("residual Z has shape ", dims_str(Z->dims),
                       ", expected the convolution's output shape ", dims_str(Y->dims));
    }
    return apply_epilogue(ctx, *Y, Z, nullptr, act_);
  }

 private:
  KernelPtr conv_;
  Activation act_;
};

}  // namespace

Status fused_conv_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 4));
  CPU_RETURN_IF_ERROR(check_activation(node));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), dtypes::kF32, "Z"));
  const infer_node_view conv = inner_view(node, 3, 11);
  return conv_check(conv);
}

Result<KernelPtr> fused_conv_create(const KernelInit& init) {
  const infer_node_view conv_node = inner_view(*init.node, 3, 11);
  const KernelInit conv_init{&conv_node, init.host};
  CPU_ASSIGN_OR_RETURN(KernelPtr conv, conv_create(conv_init));
  return KernelPtr(new FusedConvKernel(std::move(conv), read_activation(*init.node)));
}

}  // namespace infer::cpu::kernels
