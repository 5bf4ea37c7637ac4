// QuantizeLinear and DequantizeLinear (opsets 10-21):
//   quantize:   y = saturate(round_half_even(x / scale) + zero_point)
//   dequantize: y = (x - zero_point) * scale
// Scales and zero points are per tensor (a scalar or one element), per axis (from 13: a
// 1-D tensor as long as x's dim `axis`) or, from 21, per block along `axis`. The
// quantized type is the zero point's (uint8 when absent, or `output_dtype` from 21);
// 16-bit types come with opset 21, float8 and 4-bit types are not supported.
#include "quant_common.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace quant;  // NOLINT: short names for the dtype sets

// How the scale and zero point map onto x, viewed as [outer, len, inner] around `axis`.
struct AxisParams {
  int64_t outer = 1, len = 1, inner = 1;
  int64_t block = 0;    // > 0: one parameter per block of `block` along the axis
  int64_t nblocks = 1;  // blocks along the axis
  bool per_tensor = true;
  std::vector<float> scale;
  std::vector<int32_t> zp;  // empty: all zero

  size_t index(int64_t o, int64_t a, int64_t i) const {
    if (per_tensor) return 0;
    if (block == 0) return static_cast<size_t>(a);
    return static_cast<size_t>((o * nblocks + a / block) * inner + i);
  }
  int32_t zero_point(size_t k) const { return zp.empty() ? 0 : zp[k]; }
};

// Reads and checks the scale/zero point of x. `sname`/`zname` are the inputs' names.
Result<AxisParams> resolve_params(const Tensor& x, const Tensor& scale, const Tensor* zp,
                                  int64_t axis_attr, int64_t block, int64_t opset,
                                  const char* sname, const char* zname, ScaleUse use) {
  AxisParams p;
  CPU_ASSIGN_OR_RETURN(p.scale, read_scales(scale, sname, use));
  if (zp != nullptr) {
    if (zp->dims != scale.dims)
      return invalid(zname, " has shape ", dims_str(zp->dims), " but ", sname, " has shape ",
                     dims_str(scale.dims), ": they must match");
    CPU_ASSIGN_OR_RETURN(p.zp, read_ints(*zp, zname));
  }
  const bool single = scale.numel() == 1 && scale.rank() <= 1;
  if (block == 0 && single) {
    p.len = x.numel();  // rows of one element, so that the threads can share them
    return p;
  }
  if (opset < 13)
    return invalid(sname,
                   " must be a scalar before opset 13 (per-axis quantization needs opset 13), "
                   "got shape ",
                   dims_str(scale.dims));
  const int64_t rank = static_cast<int64_t>(x.rank());
  CPU_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(axis_attr, rank, "axis"));
  p.per_tensor = false;
  p.len = x.dims[static_cast<size_t>(axis)];
  for (int64_t d = 0; d < axis; ++d) p.outer *= x.dims[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank; ++d) p.inner *= x.dims[static_cast<size_t>(d)];
  if (block == 0) {
    if (scale.rank() != 1)
      return invalid(sname, " has shape ", dims_str(scale.dims),
                     ", expected a scalar or a 1-D tensor (per-axis)");
    if (scale.dims[0] != p.len)
      return invalid(sname, " has ", scale.dims[0], " elements but x ", dims_str(x.dims), " has ",
                     p.len, " along axis ", axis,
                     " (per-axis quantization needs one "
                     "scale per slice)");
    return p;
  }
  p.block = block;
  p.nblocks = (p.len + block - 1) / block;
  Dims want = x.dims;
  want[static_cast<size_t>(axis)] = p.nblocks;
  if (scale.dims != want)
    return invalid(sname, " has shape ", dims_str(scale.dims), ", expected ", dims_str(want),
                   " for blocks of ", block, " along axis ", axis, " of x ", dims_str(x.dims));
  return p;
}

// Runs f(o, a, i, flat_index) over x viewed as [outer, len, inner], spread over threads.
template <typename F>
void for_each_element(const KernelContext& ctx, const AxisParams& p, F&& f) {
  const int64_t rows = p.outer * p.len;
  ctx.parallel_for(static_cast<size_t>(rows), grain_for(static_cast<size_t>(p.inner) * 4),
                   [&](size_t r0, size_t r1) {
                     for (size_t r = r0; r < r1; ++r) {
                       const int64_t o = static_cast<int64_t>(r) / p.len;
                       const int64_t a = static_cast<int64_t>(r) % p.len;
                       const int64_t base = static_cast<int64_t>(r) * p.inner;
                       for (int64_t i = 0; i < p.inner; ++i) f(o, a, i, base + i);
                     }
                   });
}

class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(int64_t axis, int64_t block, int64_t opset, infer_dtype out_dtype)
      : axis_(axis), block_(block), opset_(opset), out_dtype_(out_dtype) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    const Tensor* S = ctx.input(1);
    const Tensor* Z = ctx.input(2);
    if (X == nullptr || S == nullptr) return invalid("x and y_scale are required");
    infer_dtype out = Z != nullptr                          ? Z->dtype
                      : out_dtype_ != INFER_DTYPE_UNDEFINED ? out_dtype_
                                                            : INFER_DTYPE_UINT8;
    if (Z != nullptr && out_dtype_ != INFER_DTYPE_UNDEFINED && out_dtype_ != Z->dtype)
      return invalid("output_dtype is ", dtype_name(out_dtype_), " but y_zero_point is ",
                     dtype_name(Z->dtype));
    CPU_ASSIGN_OR_RETURN(
        AxisParams p, resolve_params(*X, *S, Z, axis_, block_, opset_, "y_scale", "y_zero_point",
                                          ScaleUse::kDivisor));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, out, X->dims));
    if (Y->numel() == 0) return Status::ok();
    const uint32_t in_mask = dtypes::kF32 | dtypes::kF16 | dtypes::kBF16 | dtypes::kI32;
    return dispatch(X->dtype, in_mask, "QuantizeLinear x", [&]<typename T>(Tag<T>) -> Status {
      return dispatch(out, kQuantized, "QuantizeLinear y", [&]<typename Q>(Tag<Q>) -> Status {
        if constexpr ((is_float_v<T> || std::is_same_v<T, int32_t>)&&std::is_integral_v<Q> &&
                      !std::is_same_v<Q, bool>) {
          // int32 inputs divide in double, as numpy promotes int32 / float32 to float64.
          using F = std::conditional_t<std::is_same_v<T, int32_t>, double, float>;
          const T* x = X->as<T>();
          Q* y = Y->mut<Q>();
          if constexpr (std::is_same_v<T, float> && sizeof(Q) == 1) {
            if (p.per_tensor) {  // the activations of QDQ models: vectorized
              const float scale = p.scale[0];
              const int32_t zp = p.zero_point(0);
              // Pieces of about 25 us (0.2 ns per element, the division's pace).
              ctx.parallel_for(static_cast<size_t>(Y->numel()), 131072, [&](size_t b, size_t e) {
                quantize_8bit(x + b, e - b, scale, zp, y + b);
              });
              return Status::ok();
            }
          }
          for_each_element(ctx, p, [&](int64_t o, int64_t a, int64_t i, int64_t k) {
            const size_t pi = p.index(o, a, i);
            const F v = static_cast<F>(to_compute(x[k])) / static_cast<F>(p.scale[pi]);
            y[k] = saturate_round<Q>(v, p.zero_point(pi));
          });
        }
        return Status::ok();
      });
    });
  }

 private:
  int64_t axis_, block_, opset_;
  infer_dtype out_dtype_;
};

class DequantizeKernel final : public Kernel {
 public:
  DequantizeKernel(int64_t axis, int64_t block, int64_t opset)
      : axis_(axis), block_(block), opset_(opset) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    const Tensor* S = ctx.input(1);
    const Tensor* Z = ctx.input(2);
    if (X == nullptr || S == nullptr) return invalid("x and x_scale are required");
    if (Z != nullptr && Z->dtype != X->dtype)
      return invalid("x_zero_point is ", dtype_name(Z->dtype), " but x is ", dtype_name(X->dtype),
                     ": they must be the same type");
    CPU_ASSIGN_OR_RETURN(
        AxisParams p, resolve_params(*X, *S, Z, axis_, block_, opset_, "x_scale", "x_zero_point",
                                          ScaleUse::kFactor));
    if (X->dtype == INFER_DTYPE_INT32)
      for (int32_t z : p.zp)
        if (z != 0) return invalid("x_zero_point must be 0 for int32 x, got ", z);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, S->dtype, X->dims));
    if (Y->numel() == 0) return Status::ok();
    const uint32_t in_mask = kQuantized | dtypes::kI32;
    return dispatch(X->dtype, in_mask, "DequantizeLinear x", [&]<typename Q>(Tag<Q>) -> Status {
      // Decided here, on Q alone: clang checks the inner lambda's body as soon as Q is known,
      // so a static_cast<int64_t> of a float16 x inside it would not compile.
      if constexpr (!std::is_integral_v<Q> || std::is_same_v<Q, bool>)
        return Status::ok();
      else
        return dispatch(
            S->dtype, kScale, "DequantizeLinear x_scale", [&]<typename T>(Tag<T>) -> Status {
              if constexpr (is_float_v<T>) {
                const Q* x = X->as<Q>();
                T* y = Y->mut<T>();
                if constexpr (std::is_same_v<T, float> && sizeof(Q) == 1) {
                  if (p.per_tensor) {  // the activations of QDQ models: vectorized
                    const float scale = p.scale[0];
                    const int32_t zp = p.zero_point(0);
                    // Pieces of about 15 us.
                    ctx.parallel_for(static_cast<size_t>(Y->numel()), 262144,
                                     [&](size_t b, size_t e) {
                                       dequantize_8bit(x + b, e - b, scale, zp, y + b);
                                     });
                    return Status::ok();
                  }
                }
                for_each_element(ctx, p, [&](int64_t o, int64_t a, int64_t i, int64_t k) {
                  const size_t pi = p.index(o, a, i);
                  const int64_t diff = static_cast<int64_t>(x[k]) - p.zero_point(pi);
                  y[k] = from_compute<T>(
                      static_cast<compute_t<T>>(static_cast<float>(diff) * p.scale[pi]));
                });
              }
              return Status::ok();
            });
    });
  }

 private:
  int64_t axis_, block_, opset_;
};

// Checks shared by both ops: scale dtype, block_size, and the quantized dtype.
Status check_common(const infer_node_view& n, const infer_value_view* quantized) {
  CPU_RETURN_IF_ERROR(check_input_count(n, 2, 3));
  CPU_RETURN_IF_ERROR(
      check_dtype(n, node_input(n, 1), n.opset < 19 ? dtypes::kF32 : kScale, "the scale"));
  const int64_t block = attr_i(n, "block_size", 0);
  if (block < 0) return unsupported(n.op_type, " block_size must be >= 0, got ", block);
  if (block > 0 && n.opset < 21)
    return unsupported(n.op_type, " block_size needs opset 21, the model has ", n.opset);
  if (quantized != nullptr && n.opset < 21)
    CPU_RETURN_IF_ERROR(check_dtype(n, quantized, k8Bit | (n.op_type[0] == 'D' ? dtypes::kI32 : 0),
                                    "the quantized tensor before opset 21"));
  return check_dtype(n, quantized, kQuantized | (n.op_type[0] == 'D' ? dtypes::kI32 : 0),
                     "the quantized tensor (float8 and 4-bit types are not supported)");
}

}  // namespace

Status quant_quantize_check(const infer_node_view& node) {
  const uint32_t x_mask = node.opset < 19
                              ? (dtypes::kF32 | dtypes::kI32)
                              : (dtypes::kF32 | dtypes::kF16 | dtypes::kBF16 | dtypes::kI32);
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), x_mask, "x"));
  const infer_value_view* zp = node_input(node, 2);
  const infer_value_view* y = node_output(node, 0);
  const int64_t out_dtype = attr_i(node, "output_dtype", 0);
  if (out_dtype != 0 && node.opset < 21)
    return unsupported("QuantizeLinear output_dtype needs opset 21, the model has ", node.opset);
  if (out_dtype != 0 &&
      (out_dtype >= 32 || (dtype_bit(static_cast<infer_dtype>(out_dtype)) & kQuantized) == 0))
    return unsupported("QuantizeLinear output_dtype ",
                       dtype_name(static_cast<infer_dtype>(out_dtype)),
                       " is not supported (uint8, int8, uint16, int16)");
  // `saturate` (19) only concerns float8 outputs, which are refused here.
  const bool y_known = y != nullptr && y->dtype != INFER_DTYPE_UNDEFINED;
  return check_common(node, zp != nullptr ? zp : (y_known ? y : nullptr));
}

Result<KernelPtr> quant_quantize_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const int64_t out = attr_i(n, "output_dtype", 0);
  return KernelPtr(new QuantizeKernel(attr_i(n, "axis", 1), attr_i(n, "block_size", 0), n.opset,
                                      static_cast<infer_dtype>(out)));
}

Status quant_dequantize_check(const infer_node_view& node) {
  const infer_value_view* x = node_input(node, 0);
  const infer_value_view* zp = node_input(node, 2);
  if (x != nullptr && zp != nullptr && x->dtype != zp->dtype)
    return unsupported("DequantizeLinear x_zero_point is ", dtype_name(zp->dtype), " but x is ",
                       dtype_name(x->dtype));
  return check_common(node, x);
}

Result<KernelPtr> quant_dequantize_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new DequantizeKernel(attr_i(n, "axis", 1), attr_i(n, "block_size", 0), n.opset));
}

}  // namespace infer::cpu::kernels
