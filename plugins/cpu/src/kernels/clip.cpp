// Clip: min/max are attributes up to opset 10 and optional scalar inputs from opset 11
// (int32/int64 allowed from opset 12). When min > max every output is max, as ONNX
// specifies; NaN passes through.
#include <cmath>
#include <limits>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

template <typename T>
T clip_one(T x, T lo, T hi) {
  T v = x < lo ? lo : x;
  return v > hi ? hi : v;
}

class ClipKernel final : public Kernel {
 public:
  ClipKernel(bool from_inputs, float lo, float hi) : from_inputs_(from_inputs), lo_(lo), hi_(hi) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    switch (X->dtype) {
      case INFER_DTYPE_FLOAT32:
        return apply<float>(ctx, *X);
      case INFER_DTYPE_INT32:
        return apply<int32_t>(ctx, *X);
      case INFER_DTYPE_INT64:
        return apply<int64_t>(ctx, *X);
      default:
        return invalid("dtype ", dtype_name(X->dtype), " not supported");
    }
  }

 private:
  template <typename T>
  Result<T> bound(KernelContext& ctx, size_t i, const Tensor& X, T fallback) const {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) return fallback;
    if (t->dtype != X.dtype)
      return invalid(i == 1 ? "min" : "max", " has dtype ", dtype_name(t->dtype), ", expected ",
                     dtype_name(X.dtype));
    if (t->numel() != 1)
      return invalid(i == 1 ? "min" : "max", " must be a scalar, got shape ", dims_str(t->dims));
    return *t->as<T>();
  }

  template <typename T>
  Status apply(KernelContext& ctx, const Tensor& X) const {
    T lo, hi;
    if (from_inputs_) {
      CPU_ASSIGN_OR_RETURN(lo, bound<T>(ctx, 1, X, std::numeric_limits<T>::lowest()));
      CPU_ASSIGN_OR_RETURN(hi, bound<T>(ctx, 2, X, std::numeric_limits<T>::max()));
    } else {
      lo = static_cast<T>(lo_);
      hi = static_cast<T>(hi_);
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    const T* x = X.as<T>();
    T* y = Y->mut<T>();
    ctx.parallel_for(static_cast<size_t>(X.numel()), 16384, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) y[i] = clip_one(x[i], lo, hi);
    });
    return Status::ok();
  }

  bool from_inputs_;
  float lo_, hi_;
};

}  // namespace

Status clip_check(const infer_node_view& node) {
  if (node.opset < 11) {
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
    return check_dtype(node, node_input(node, 0), dtypes::kF32, "input 0 before opset 12");
  }
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 3));
  if (node.opset < 12)
    return check_dtype(node, node_input(node, 0), dtypes::kF32, "input 0 before opset 12");
  return Status::ok();
}

Result<KernelPtr> clip_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  float lo = static_cast<float>(attr_f(n, "min", -std::numeric_limits<float>::max()));
  float hi = static_cast<float>(attr_f(n, "max", std::numeric_limits<float>::max()));
  return KernelPtr(new ClipKernel(n.opset >= 11, lo, hi));
}

}  // namespace infer::cpu::kernels
