// Cast between every fixed-size numeric dtype, bool, float16 and bfloat16. Float to
// integer truncates toward zero and saturates out-of-range values (NaN becomes 0) so the
// conversion is never undefined behaviour; to float16/bfloat16 rounds to nearest even;
// to bool is "not zero".
#include <cmath>
#include <limits>
#include <type_traits>

#include "../half.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

// Tag types for the 16-bit float formats and bool, which share storage with integers.
struct Half {
  uint16_t bits;
};
struct BFloat {
  uint16_t bits;
};
struct Bool {
  uint8_t v;
};

// Widens a source element to a plain C++ arithmetic value.
template <typename S>
auto widen(S v) {
  if constexpr (std::is_same_v<S, Half>)
    return half_to_float(v.bits);
  else if constexpr (std::is_same_v<S, BFloat>)
    return bfloat16_to_float(v.bits);
  else if constexpr (std::is_same_v<S, Bool>)
    return static_cast<uint8_t>(v.v != 0);
  else
    return v;
}

template <typename D, typename V>
D float_to_int(V v) {
  if (std::isnan(v)) return 0;
  const V t = std::trunc(v);
  if (t <= static_cast<V>(std::numeric_limits<D>::lowest()))
    return std::numeric_limits<D>::lowest();
  // max() may not be representable in V; compare against 2^digits instead.
  const V limit = std::ldexp(V(1), std::numeric_limits<D>::digits);
  if (t >= limit) return std::numeric_limits<D>::max();
  return static_cast<D>(t);
}

template <typename S, typename D>
D convert(S s) {
  const auto v = widen(s);
  using V = decltype(v);
  if constexpr (std::is_same_v<D, Half>) {
    return Half{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<D, BFloat>) {
    return BFloat{float_to_bfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<D, Bool>) {
    return Bool{static_cast<uint8_t>(v != V(0))};
  } else if constexpr (std::is_floating_point_v<V> && std::is_integral_v<D>) {
    return float_to_int<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

template <typename S, typename D>
void cast_loop(const void* in, void* out, int64_t b, int64_t e) {
  const S* s = static_cast<const S*>(in);
  D* d = static_cast<D*>(out);
  for (int64_t i = b; i < e; ++i) d[i] = convert<S, D>(s[i]);
}

using CastFn = void (*)(const void*, void*, int64_t, int64_t);

// Calls f(Tag{}) with the C++ type of `t`; returns false for dtypes Cast does not handle.
template <typename F>
bool with_type(infer_dtype t, F&& f) {
  switch (t) {
    case INFER_DTYPE_FLOAT32:
      f(float{});
      return true;
    case INFER_DTYPE_FLOAT64:
      f(double{});
      return true;
    case INFER_DTYPE_FLOAT16:
      f(Half{});
      return true;
    case INFER_DTYPE_BFLOAT16:
      f(BFloat{});
      return true;
    case INFER_DTYPE_BOOL:
      f(Bool{});
      return true;
    case INFER_DTYPE_INT8:
      f(int8_t{});
      return true;
    case INFER_DTYPE_UINT8:
      f(uint8_t{});
      return true;
    case INFER_DTYPE_INT16:
      f(int16_t{});
      return true;
    case INFER_DTYPE_UINT16:
      f(uint16_t{});
      return true;
    case INFER_DTYPE_INT32:
      f(int32_t{});
      return true;
    case INFER_DTYPE_UINT32:
      f(uint32_t{});
      return true;
    case INFER_DTYPE_INT64:
      f(int64_t{});
      return true;
    case INFER_DTYPE_UINT64:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

CastFn pick(infer_dtype from, infer_dtype to) {
  CastFn fn = nullptr;
  with_type(from, [&](auto s) {
    with_type(to, [&](auto d) { fn = &cast_loop<decltype(s), decltype(d)>; });
  });
  return fn;
}

bool castable(infer_dtype t) {
  return static_cast<uint32_t>(t) < 32 && (dtype_bit(t) & dtypes::kCastable);
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(infer_dtype to) : to_(to) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    CastFn fn = pick(X.dtype, to_);
    if (fn == nullptr) return invalid("cannot cast ", dtype_name(X.dtype), " to ", dtype_name(to_));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, to_, X.dims));
    ctx.parallel_for(static_cast<size_t>(X.numel()), 16384, [&](size_t b, size_t e) {
      fn(X.data, Y->data, static_cast<int64_t>(b), static_cast<int64_t>(e));
    });
    return Status::ok();
  }

 private:
  infer_dtype to_;
};

}  // namespace

Status cast_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  if (!has_attr(node, "to")) return unsupported("Cast requires the 'to' attribute");
  const auto to = static_cast<infer_dtype>(attr_i(node, "to", 0));
  if (!castable(to)) return unsupported("Cast to ", dtype_name(to), " not supported");
  return Status::ok();
}

Result<KernelPtr> cast_create(const KernelInit& init) {
  return KernelPtr(new CastKernel(static_cast<infer_dtype>(attr_i(*init.node, "to", 0))));
}

}  // namespace infer::cpu::kernels
