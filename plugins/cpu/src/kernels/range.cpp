// Range(start, limit, delta): max(ceil((limit - start) / delta), 0) elements
// start + i * delta. Integer counts are computed exactly in integers.
#include <cmath>
#include <type_traits>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

template <typename T>
Status range(KernelContext& ctx, const Tensor& s, const Tensor& l, const Tensor& d) {
  const T start = *s.as<T>(), limit = *l.as<T>(), delta = *d.as<T>();
  if (delta == T(0)) return invalid("delta must not be zero");
  int64_t n;
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = static_cast<int64_t>(limit) - static_cast<int64_t>(start);
    const int64_t step = delta;
    n = step > 0 ? (span > 0 ? (span + step - 1) / step : 0)
                 : (span < 0 ? (-span + -step - 1) / -step : 0);
  } else {
    const double c = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                               static_cast<double>(delta));
    if (!(c < 1e12)) return invalid("range of ", c, " elements is too large");
    n = c > 0 ? static_cast<int64_t>(c) : 0;
  }
  CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, s.dtype, Dims{n}));
  T* y = Y->mut<T>();
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  return Status::ok();
}

class RangeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor& s = *ctx.input(0);
    const Tensor& l = *ctx.input(1);
    const Tensor& d = *ctx.input(2);
    const char* names[] = {"start", "limit", "delta"};
    const Tensor* all[] = {&s, &l, &d};
    for (size_t i = 0; i < 3; ++i) {
      if (all[i]->numel() != 1)
        return invalid(names[i], " must be a scalar, got shape ", dims_str(all[i]->dims));
      if (all[i]->dtype != s.dtype)
        return invalid(names[i], " has dtype ", dtype_name(all[i]->dtype), ", expected ",
                       dtype_name(s.dtype));
    }
    switch (s.dtype) {
      case INFER_DTYPE_FLOAT32:
        return range<float>(ctx, s, l, d);
      case INFER_DTYPE_FLOAT64:
        return range<double>(ctx, s, l, d);
      case INFER_DTYPE_INT16:
        return range<int16_t>(ctx, s, l, d);
      case INFER_DTYPE_INT32:
        return range<int32_t>(ctx, s, l, d);
      case INFER_DTYPE_INT64:
        return range<int64_t>(ctx, s, l, d);
      default:
        return invalid("dtype ", dtype_name(s.dtype), " not supported");
    }
  }
};

}  // namespace

Status range_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  const infer_value_view* s = node_input(node, 0);
  for (size_t i = 1; i < 3; ++i)
    if (node.inputs[i]->dtype != s->dtype) return unsupported("Range inputs have different dtypes");
  return Status::ok();
}

Result<KernelPtr> range_create(const KernelInit&) { return KernelPtr(new RangeKernel()); }

}  // namespace infer::cpu::kernels
