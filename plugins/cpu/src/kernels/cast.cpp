// Cast and CastLike between every fixed-size numeric dtype, bool, float16 and bfloat16.
// Float to integer truncates toward zero and saturates out-of-range values (NaN becomes 0)
// so the conversion is never undefined behaviour; to float16/bfloat16 rounds to nearest
// even, once, from the exact source value; to bool is "not zero". Cast-1 names the target
// type with a string ("FLOAT"), later versions with the TensorProto data type number;
// CastLike takes the target type from its second input.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "../half.hpp"
#include "../host_threads.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "simd/half_convert.hpp"

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

// The float nearest to v rounding to odd: when v is not exactly representable, the float
// toward zero with its lowest mantissa bit set. Float keeps at least 13 more mantissa
// bits than float16 and bfloat16, so rounding this float to nearest even gives the same
// result as rounding v directly, where a plain double -> float -> half conversion could
// round twice and land on the wrong neighbour at a tie.
template <typename V>
float to_float_round_odd(V v) {
  const double d = static_cast<double>(v);
  if (!std::isfinite(d)) return static_cast<float>(d);
  if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
    return std::copysign(std::numeric_limits<float>::infinity(), static_cast<float>(d));
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return bits_float(float_bits(f) | 1u);
}

template <typename S, typename D>
D convert(S s) {
  const auto v = widen(s);
  using V = decltype(v);
  if constexpr (std::is_same_v<D, Half>) {
    if constexpr (std::is_same_v<V, float>)
      return Half{float_to_half(v)};
    else
      return Half{float_to_half(to_float_round_odd(v))};
  } else if constexpr (std::is_same_v<D, BFloat>) {
    if constexpr (std::is_same_v<V, float>)
      return BFloat{float_to_bfloat16(v)};
    else
      return BFloat{float_to_bfloat16(to_float_round_odd(v))};
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
  // float16 <-> float32 with the ISA's conversion instructions (the same bits as
  // convert<>, simd/half_convert.hpp); whatever it leaves, and every other pair, here.
  if constexpr (std::is_same_v<S, Half> && std::is_same_v<D, float>) {
    static_assert(sizeof(Half) == sizeof(uint16_t));
    b += static_cast<int64_t>(simd::half_to_float_run(
        kernel_isa(), reinterpret_cast<const uint16_t*>(s + b), d + b, static_cast<size_t>(e - b)));
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, Half>) {
    b += static_cast<int64_t>(simd::float_to_half_run(
        kernel_isa(), s + b, reinterpret_cast<uint16_t*>(d + b), static_cast<size_t>(e - b)));
  }
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

// Cast-1's string names of the target types.
infer_dtype dtype_from_name(const std::string& s) {
  static constexpr struct {
    const char* name;
    infer_dtype dtype;
  } kNames[] = {{"FLOAT", INFER_DTYPE_FLOAT32}, {"UINT8", INFER_DTYPE_UINT8},
                {"INT8", INFER_DTYPE_INT8},     {"UINT16", INFER_DTYPE_UINT16},
                {"INT16", INFER_DTYPE_INT16},   {"INT32", INFER_DTYPE_INT32},
                {"INT64", INFER_DTYPE_INT64},   {"STRING", INFER_DTYPE_STRING},
                {"BOOL", INFER_DTYPE_BOOL},     {"FLOAT16", INFER_DTYPE_FLOAT16},
                {"DOUBLE", INFER_DTYPE_FLOAT64}, {"UINT32", INFER_DTYPE_UINT32},
                {"UINT64", INFER_DTYPE_UINT64}, {"BFLOAT16", INFER_DTYPE_BFLOAT16}};
  for (const auto& n : kNames)
    if (s == n.name) return n.dtype;
  return INFER_DTYPE_UNDEFINED;
}

bool is_cast_like(const infer_node_view& node) { return std::strcmp(node.op_type, "CastLike") == 0; }

// The target dtype of a Cast or CastLike node; UNDEFINED when missing or unknown.
infer_dtype target_dtype(const infer_node_view& node) {
  if (is_cast_like(node)) {
    const infer_value_view* like = node_input(node, 1);
    return like ? like->dtype : INFER_DTYPE_UNDEFINED;
  }
  const infer_attr_view* to = sdk::find_attr(&node, "to");
  if (to == nullptr) return INFER_DTYPE_UNDEFINED;
  if (to->type == INFER_ATTR_STRING) return dtype_from_name(std::string(to->s, to->s_len));
  if (to->type == INFER_ATTR_INT && to->i > 0 && to->i < 32) return static_cast<infer_dtype>(to->i);
  return INFER_DTYPE_UNDEFINED;
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(infer_dtype to) : to_(to) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (in == nullptr) return invalid("input 0 is required");
    const Tensor& X = *in;
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
  const bool like = is_cast_like(node);
  CPU_RETURN_IF_ERROR(check_input_count(node, like ? 2 : 1, like ? 2 : 1));
  if (!like && !has_attr(node, "to")) return unsupported("Cast requires the 'to' attribute");
  const infer_dtype to = target_dtype(node);
  if (to == INFER_DTYPE_UNDEFINED) {
    if (!like && attr_s(node, "to", "") != "")
      return unsupported("Cast to \"", attr_s(node, "to", ""), "\" not supported");
    return unsupported(node.op_type, ": unknown target dtype");
  }
  if (!castable(to)) return unsupported(node.op_type, " to ", dtype_name(to), " not supported");
  const infer_value_view* x = node_input(node, 0);
  if (x && !castable(x->dtype))
    return unsupported(node.op_type, " from ", dtype_name(x->dtype), " not supported");
  return Status::ok();
}

Result<KernelPtr> cast_create(const KernelInit& init) {
  const infer_dtype to = target_dtype(*init.node);
  if (!castable(to)) return internal("Cast target dtype ", dtype_name(to));
  return KernelPtr(new CastKernel(to));
}

}  // namespace infer::cpu::kernels
