// Clip: min/max are float attributes up to opset 10 (float inputs only) and optional
// scalar inputs of the input's dtype from opset 11 (every numeric dtype from opset 12).
// When min > max every output is max, as ONNX (numpy.clip) specifies; NaN passes through.
#include <cmath>
#include <limits>

#include "../node_util.hpp"
#include "math_common.hpp"

namespace infer::cpu::kernels {
namespace {

template <typename C>
C clip_one(C x, C lo, C hi) {
  C v = x < lo ? lo : x;
  return v > hi ? hi : v;
}

class ClipKernel final : public Kernel {
 public:
  ClipKernel(bool from_inputs, double lo, double hi) : from_inputs_(from_inputs), lo_(lo), hi_(hi) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    if (X == nullptr) return invalid("input 0 is required");
    const uint32_t mask = from_inputs_ ? dtypes::kAllNum : dtypes::kAllFloat;
    return dispatch(X->dtype, mask, "Clip", [&]<typename T>(Tag<T>) -> Status {
      if constexpr (math::in_mask<T>(dtypes::kAllNum)) {
        return apply<T>(ctx, *X);
      } else {
        return internal("Clip on bool");
      }
    });
  }

 private:
  // Bound input i (1: min, 2: max) as a compute value, or `fallback` when omitted.
  template <typename T>
  Result<compute_t<T>> bound(KernelContext& ctx, size_t i, const Tensor& X,
                             compute_t<T> fallback) const {
    const Tensor* t = ctx.input(i);
    const char* what = i == 1 ? "min" : "max";
    if (t == nullptr) return fallback;
    if (t->dtype != X.dtype)
      return invalid(what, " has dtype ", dtype_name(t->dtype), ", expected ", dtype_name(X.dtype));
    if (t->numel() != 1)
      return invalid(what, " must be a scalar, got shape ", dims_str(t->dims));
    return to_compute(*t->as<T>());
  }

  template <typename T>
  Status apply(KernelContext& ctx, const Tensor& X) const {
    using C = compute_t<T>;
    C lo, hi;
    if (from_inputs_) {
      CPU_ASSIGN_OR_RETURN(lo, bound<T>(ctx, 1, X, std::numeric_limits<C>::lowest()));
      CPU_ASSIGN_OR_RETURN(hi, bound<T>(ctx, 2, X, std::numeric_limits<C>::max()));
    } else {
      lo = static_cast<C>(lo_);
      hi = static_cast<C>(hi_);
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    const T* x = X.as<T>();
    T* y = Y->mut<T>();
    ctx.parallel_for(static_cast<size_t>(X.numel()), 16384, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) y[i] = from_compute<T>(clip_one(to_compute(x[i]), lo, hi));
    });
    return Status::ok();
  }

  bool from_inputs_;
  double lo_, hi_;
};

}  // namespace

Status clip_check(const infer_node_view& node) {
  if (node.opset < 11) {
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
    return check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "input 0 before opset 12");
  }
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 3));
  const uint32_t mask = node.opset < 12 ? dtypes::kAllFloat : dtypes::kAllNum;
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), mask,
                                  node.opset < 12 ? "input 0 before opset 12" : "input 0"));
  const infer_value_view* x = node_input(node, 0);
  for (size_t i = 1; i < 3; ++i) {
    const infer_value_view* b = node_input(node, i);
    if (x && b && b->dtype != x->dtype)
      return unsupported("Clip ", i == 1 ? "min" : "max", " has dtype ", dtype_name(b->dtype),
                         ", expected the input's ", dtype_name(x->dtype));
  }
  return Status::ok();
}

Result<KernelPtr> clip_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  // Clip-6 defaults the bounds to the float32 range; Clip-1 leaves an absent bound open.
  const double open = n.opset < 6 ? std::numeric_limits<double>::infinity()
                                  : static_cast<double>(std::numeric_limits<float>::max());
  const double lo = attr_f(n, "min", -open);
  const double hi = attr_f(n, "max", open);
  return KernelPtr(new ClipKernel(n.opset >= 11, lo, hi));
}

}  // namespace infer::cpu::kernels
