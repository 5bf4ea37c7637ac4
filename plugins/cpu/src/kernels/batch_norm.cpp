// BatchNormalization, per channel (dim 1) of X [N, C, D1, ...]:
//   y = (x - mean) / sqrt(var + epsilon) * scale + B
// Inference mode uses input_mean / input_var, folded into one multiply-add per channel.
// Training mode (opset 14+: training_mode=1; before 14: when any output beyond Y is
// requested) uses the batch's own mean and population variance over N and the spatial
// dims, and outputs the running statistics
//   running_mean = input_mean * momentum + batch_mean * (1 - momentum)   (same for var)
// and, before opset 14, saved_mean / saved_var = the batch mean and variance.
// Opsets 7-8 with spatial=0 take parameters of shape [C, D1, ...]: statistics are then
// per (channel, position) instead of per channel.
// X may be any float type; from opset 15 scale/B and mean/var may each have another float
// type. Arithmetic is in float for float32 inference, in double otherwise.
#include <cmath>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"

namespace infer::cpu::kernels {
namespace {

Result<std::vector<double>> read_param(const Tensor& t, const char* name, int64_t count,
                                       const Dims& x_dims) {
  if (t.numel() != count)
    return invalid(name, " has shape ", dims_str(t.dims), ", expected ", count, " elements for X ",
                   dims_str(x_dims));
  std::vector<double> v(static_cast<size_t>(count));
  CPU_RETURN_IF_ERROR(dispatch_float(t.dtype, name, [&]<typename T>(Tag<T>) {
    const T* p = t.as<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(to_compute(p[i]));
    return Status::ok();
  }));
  return v;
}

Status write_param(KernelContext& ctx, size_t out, infer_dtype dtype, int64_t count,
                   const std::vector<double>& v) {
  if (!ctx.has_output(out)) return Status::ok();
  CPU_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(out, dtype, Dims{count}));
  return dispatch_float(dtype, "statistics output", [&]<typename T>(Tag<T>) {
    T* p = t->mut<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(v[i]));
    return Status::ok();
  });
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(double epsilon, double momentum, bool training, bool spatial)
      : epsilon_(epsilon), momentum_(momentum), training_(training), spatial_(spatial) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() < 2)
      return invalid("input must have at least 2 dims (N, C, ...), got ", dims_str(X.dims));
    const int64_t N = X.dims[0], C = X.dims[1];
    const int64_t inner = N * C != 0 ? X.numel() / (N * C) : 1;
    // Parameters are per channel, or per (channel, position) for spatial=0.
    const int64_t F = spatial_ ? C : C * inner;
    const int64_t per_f = spatial_ ? inner : 1;  // contiguous elements per feature run
    if (!training_ && spatial_ && X.dtype == INFER_DTYPE_FLOAT32 && all_f32(ctx))
      return run_f32_inference(ctx, X, N, C, inner);
    const char* names[] = {"scale", "B", "input_mean", "input_var"};
    std::vector<double> p[4];
    for (size_t i = 0; i < 4; ++i) {
      CPU_ASSIGN_OR_RETURN(p[i], read_param(*ctx.input(i + 1), names[i], F, X.dims));
    }
    std::vector<double>&scale = p[0], &bias = p[1], mean = p[2], var = p[3];
    const int64_t total = X.numel();
    // Feature run r (N * F / ... runs of per_f contiguous elements) belongs to feature r % F.
    const int64_t runs = per_f ? total / per_f : 0;
    return dispatch_float(X.dtype, "X", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      if (training_) {
        std::vector<double> sum(static_cast<size_t>(F), 0.0), sq(sum);
        for (int64_t r = 0; r < runs; ++r)
          for (int64_t i = 0; i < per_f; ++i)
            sum[r % F] += static_cast<double>(to_compute(x[r * per_f + i]));
        const double count = static_cast<double>(N * per_f);
        for (double& s : sum) s /= count;
        for (int64_t r = 0; r < runs; ++r)
          for (int64_t i = 0; i < per_f; ++i) {
            const double d = static_cast<double>(to_compute(x[r * per_f + i])) - sum[r % F];
            sq[r % F] += d * d;
          }
        for (double& s : sq) s /= count;
        std::vector<double> run_mean(sum.size()), run_var(sum.size());
        for (size_t f = 0; f < sum.size(); ++f) {
          run_mean[f] = mean[f] * momentum_ + sum[f] * (1 - momentum_);
          run_var[f] = var[f] * momentum_ + sq[f] * (1 - momentum_);
        }
        const infer_dtype stat_dtype = ctx.input(3)->dtype;
        CPU_RETURN_IF_ERROR(write_param(ctx, 1, stat_dtype, F, run_mean));
        CPU_RETURN_IF_ERROR(write_param(ctx, 2, stat_dtype, F, run_var));
        CPU_RETURN_IF_ERROR(write_param(ctx, 3, stat_dtype, F, sum));
        CPU_RETURN_IF_ERROR(write_param(ctx, 4, stat_dtype, F, sq));
        mean = std::move(sum);
        var = std::move(sq);
      } else {
        // Inference with extra outputs requested (opset 14+ with training_mode=0): the
        // running statistics are unchanged.
        const infer_dtype stat_dtype = ctx.input(3)->dtype;
        CPU_RETURN_IF_ERROR(write_param(ctx, 1, stat_dtype, F, mean));
        CPU_RETURN_IF_ERROR(write_param(ctx, 2, stat_dtype, F, var));
      }
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
      T* y = Y->mut<T>();
      for (int64_t r = 0; r < runs; ++r) {
        const size_t f = static_cast<size_t>(r % F);
        const double mul = scale[f] / std::sqrt(var[f] + epsilon_);
        const double add = bias[f] - mean[f] * mul;
        for (int64_t i = 0; i < per_f; ++i) {
          const double v = static_cast<double>(to_compute(x[r * per_f + i]));
          y[r * per_f + i] = from_compute<T>(static_cast<compute_t<T>>(v * mul + add));
        }
      }
      return Status::ok();
    });
  }

 private:
  static bool all_f32(const KernelContext& ctx) {
    for (size_t i = 1; i < 5; ++i)
      if (ctx.input(i)->dtype != INFER_DTYPE_FLOAT32) return false;
    return !ctx.has_output(1) && !ctx.has_output(2);
  }

  // The common case, kept fast: float32 inference, per-channel parameters.
  Status run_f32_inference(KernelContext& ctx, const Tensor& X, int64_t N, int64_t C,
                           int64_t inner) const {
    const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (size_t i = 1; i < 5; ++i)
      if (ctx.input(i)->numel() != C)
        return invalid(names[i], " has shape ", dims_str(ctx.input(i)->dims), ", expected [", C,
                       "] for X ", dims_str(X.dims));
    std::vector<float> mul(static_cast<size_t>(C)), add(static_cast<size_t>(C));
    const float* scale = ctx.input(1)->as<float>();
    const float* bias = ctx.input(2)->as<float>();
    const float* mean = ctx.input(3)->as<float>();
    const float* var = ctx.input(4)->as<float>();
    const float eps = static_cast<float>(epsilon_);
    for (int64_t c = 0; c < C; ++c) {
      mul[c] = scale[c] / std::sqrt(var[c] + eps);
      add[c] = bias[c] - mean[c] * mul[c];
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, X.dims));
    if (Y->numel() == 0) return Status::ok();
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    const size_t rows = static_cast<size_t>(N * C);
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

  double epsilon_, momentum_;
  bool training_, spatial_;
};

}  // namespace

Status batch_norm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 5, 5));
  for (size_t i = 1; i < 5; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[i], dtypes::kAllFloat, "its parameters"));
  const size_t max_outputs = node.opset >= 14 ? 3 : 5;
  for (size_t i = max_outputs; i < node.num_outputs; ++i)
    if (node.outputs[i] != nullptr)
      return unsupported("BatchNormalization opset ", node.opset, " has at most ", max_outputs,
                         " outputs");
  return Status::ok();
}

Result<KernelPtr> batch_norm_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  bool training = false;
  if (n.opset >= 14) {
    training = attr_i(n, "training_mode", 0) != 0;
  } else {
    for (size_t i = 1; i < n.num_outputs; ++i) training |= n.outputs[i] != nullptr;
  }
  const bool spatial = n.opset >= 9 || attr_i(n, "spatial", 1) != 0;
  return KernelPtr(new BatchNormKernel(attr_f(n, "epsilon", 1e-5), attr_f(n, "momentum", 0.9),
                                       training, spatial));
}

}  // namespace infer::cpu::kernels
