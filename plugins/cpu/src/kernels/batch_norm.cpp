// BatchNormalization in inference mode: y = (x - mean) / sqrt(var + epsilon) * scale + B
// per channel (dim 1). The per-channel factors are folded into one multiply-add.
// Training mode (opset 14's training_mode=1, or the running-statistics outputs) is not
// supported.
#include <cmath>
#include <vector>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(float epsilon) : epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() < 2)
      return invalid("input must have at least 2 dims (N, C, ...), got ", dims_str(X.dims));
    const int64_t C = X.dims[1];
    const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (size_t i = 0; i < 5; ++i) {
      const Tensor* t = ctx.input(i);
      if (t->dtype != INFER_DTYPE_FLOAT32)
        return invalid(names[i], " must be float32, got ", dtype_name(t->dtype));
      if (i > 0 && t->numel() != C)
        return invalid(names[i], " has shape ", dims_str(t->dims), ", expected [", C, "] for X ",
                       dims_str(X.dims));
    }
    std::vector<float> mul(static_cast<size_t>(C)), add(static_cast<size_t>(C));
    const float* scale = ctx.input(1)->as<float>();
    const float* bias = ctx.input(2)->as<float>();
    const float* mean = ctx.input(3)->as<float>();
    const float* var = ctx.input(4)->as<float>();
    for (int64_t c = 0; c < C; ++c) {
      mul[c] = scale[c] / std::sqrt(var[c] + epsilon_);
      add[c] = bias[c] - mean[c] * mul[c];
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, X.dims));
    if (Y->numel() == 0) return Status::ok();
    const int64_t inner = X.numel() / (X.dims[0] * C);
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    const size_t rows = static_cast<size_t>(X.dims[0] * C);
    ctx.parallel_for(rows, grain_for(static_cast<size_t>(inner)), [&](size_t r0, size_t r1) {
      for (size_t r = r0; r < r1; ++r) {
        const float m = mul[r % static_cast<size_t>(C)], a = add[r % static_cast<size_t>(C)];
        const float* xr = x + r * inner;
        float* yr = y + r * inner;
        for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] * m + a;
      }
    });
    return Status::ok();
  }

 private:
  float epsilon_;
};

}  // namespace

Status batch_norm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 5, 5));
  for (size_t i = 1; i < 5; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[i], dtypes::kF32, "its parameters"));
  if (attr_i(node, "training_mode", 0) != 0)
    return unsupported("BatchNormalization training_mode=1 not supported");
  if (node.opset < 9 && attr_i(node, "spatial", 1) != 1)
    return unsupported("BatchNormalization spatial=0 not supported");
  for (size_t i = 1; i < node.num_outputs; ++i)
    if (node.outputs[i] != nullptr)
      return unsupported("BatchNormalization training outputs (running mean/var) not supported");
  return Status::ok();
}

Result<KernelPtr> batch_norm_create(const KernelInit& init) {
  return KernelPtr(new BatchNormKernel(static_cast<float>(attr_f(*init.node, "epsilon", 1e-5))));
}

}  // namespace infer::cpu::kernels
