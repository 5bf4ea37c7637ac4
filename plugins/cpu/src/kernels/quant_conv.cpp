// ConvInteger (opsets 10-21) and QLinearConv (opsets 10-21): Conv over uint8/int8 data
// with zero points, accumulated in int32, for any number of spatial dims, with group,
// strides, dilations, pads and auto_pad.
//   ConvInteger: y = conv(x - x_zero_point, w - w_zero_point) in int32
//   QLinearConv: acc = conv(...) + B, then
//                y = saturate(round_half_even(acc * x_scale * w_scale[m] / y_scale) + y_zero_point)
// x's zero point is per tensor; w's zero point and scale are per tensor or per output
// channel m. Padding contributes zero after the zero point is subtracted, i.e. the input
// is padded with its zero point. Each image and group unrolls its receptive fields
// (im2col) into an int32 matrix that the group's shifted weights multiply.
#include <algorithm>
#include <cstring>
#include <memory>

#include "quant_common.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace quant;  // NOLINT: short names for the helpers

// Unrolls rows [r0, r1) of the column matrix of one image and group: row r covers
// channel r / kprod and kernel offset r % kprod, its columns the output positions.
void im2col_int(const int32_t* x, const Window& w, int64_t kprod, int64_t r0, int64_t r1,
                int32_t* col) {
  const size_t nd = w.in.size();
  const int64_t out_sp = sdk::element_count(w.out.data(), w.out.size());
  const int64_t in_sp = sdk::element_count(w.in.data(), w.in.size());
  std::vector<int64_t> koff(nd), opos(nd);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / kprod;
    int64_t kr = r % kprod;
    for (size_t d = nd; d-- > 0;) {
      koff[d] = kr % w.kernel[d];
      kr /= w.kernel[d];
    }
    const int32_t* xc = x + c * in_sp;
    int32_t* dst = col + r * out_sp;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t o = 0; o < out_sp; ++o) {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < nd; ++d) {
        const int64_t p = opos[d] * w.stride[d] + koff[d] * w.dilation[d] - w.pad_begin[d];
        if (p < 0 || p >= w.in[d]) {
          inside = false;
          break;
        }
        off = off * w.in[d] + p;
      }
      dst[o] = inside ? xc[off] : 0;
      for (size_t d = nd; d-- > 0;) {  // next output position
        if (++opos[d] < w.out[d]) break;
        opos[d] = 0;
      }
    }
  }
}

// A per-tensor or per-output-channel parameter, spread to one value per channel.
template <typename V>
Result<std::vector<V>> per_channel(const std::vector<V>& vals, const Tensor& t, int64_t M,
                                   const char* what) {
  if (vals.size() == 1) return std::vector<V>(static_cast<size_t>(M), vals[0]);
  if (t.rank() == 1 && t.dims[0] == M) return vals;
  return invalid(what, " has shape ", dims_str(t.dims), ", expected a scalar or [", M,
                 "] (one per output channel)");
}

class IntConvKernel final : public Kernel {
 public:
  IntConvKernel(WindowAttrs attrs, int64_t group, bool qlinear)
      : attrs_(std::move(attrs)), group_(group), qlinear_(qlinear) {}

  Status run(KernelContext& ctx) const override {
    // Input positions differ between the two ops.
    const size_t ix = 0, iw = qlinear_ ? 3 : 1, ixz = 2, iwz = qlinear_ ? 5 : 3;
    const Tensor* X = ctx.input(ix);
    const Tensor* W = ctx.input(iw);
    if (X == nullptr || W == nullptr) return invalid("x and w are required");
    if (qlinear_)
      for (size_t i = 0; i < 8; ++i)
        if (ctx.input(i) == nullptr) return invalid("input ", i, " is required");
    if (X->rank() < 3)
      return invalid("x must have at least 3 dims (N, C, spatial...), got ", dims_str(X->dims));
    if (W->rank() != X->rank())
      return invalid("w has shape ", dims_str(W->dims), ", expected rank ", X->rank(), " like x ",
                     dims_str(X->dims));
    const int64_t N = X->dims[0], C = X->dims[1], M = W->dims[0], G = group_;
    if (C % G != 0 || M % G != 0)
      return invalid("group ", G, " does not divide input channels ", C, " and output channels ",
                     M);
    const int64_t Cg = C / G, Mg = M / G;
    if (W->dims[1] != Cg)
      return invalid("w has shape ", dims_str(W->dims), ": dim 1 must be C/group = ", Cg, " for x ",
                     dims_str(X->dims));
    const Dims in_sp(X->dims.begin() + 2, X->dims.end()), k_sp(W->dims.begin() + 2, W->dims.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != k_sp)
      return invalid("kernel_shape ", dims_str(attrs_.kernel_shape), " does not match w ",
                     dims_str(W->dims));
    CPU_ASSIGN_OR_RETURN(Window win, plan_window(attrs_, in_sp, k_sp));

    // Zero points: x per tensor, w per tensor or per output channel.
    const Tensor* XZ = ctx.input(ixz);
    const Tensor* WZ = ctx.input(iwz);
    if (XZ != nullptr && XZ->dtype != X->dtype)
      return invalid("x_zero_point is ", dtype_name(XZ->dtype), " but x is ", dtype_name(X->dtype));
    if (WZ != nullptr && WZ->dtype != W->dtype)
      return invalid("w_zero_point is ", dtype_name(WZ->dtype), " but w is ", dtype_name(W->dtype));
    int32_t xz = 0;
    if (XZ != nullptr) {
      if (XZ->numel() != 1)
        return invalid("x_zero_point has shape ", dims_str(XZ->dims), ", expected a scalar");
      CPU_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_ints(*XZ, "x_zero_point"));
      xz = v[0];
    }
    std::vector<int32_t> wz(static_cast<size_t>(M), 0);
    if (WZ != nullptr) {
      CPU_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_ints(*WZ, "w_zero_point"));
      CPU_ASSIGN_OR_RETURN(wz, per_channel(v, *WZ, M, "w_zero_point"));
    }
    // Requantization parameters (QLinearConv).
    std::vector<float> mult;
    std::vector<int32_t> bias;
    int32_t yz = 0;
    infer_dtype out_dtype = INFER_DTYPE_INT32;
    if (qlinear_) {
      CPU_ASSIGN_OR_RETURN(mult, multipliers(ctx, M));
      const Tensor& YZ = *ctx.input(7);
      if (YZ.numel() != 1)
        return invalid("y_zero_point has shape ", dims_str(YZ.dims), ", expected a scalar");
      if (YZ.dtype != INFER_DTYPE_UINT8 && YZ.dtype != INFER_DTYPE_INT8)
        return invalid("y_zero_point must be uint8 or int8, got ", dtype_name(YZ.dtype));
      CPU_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_ints(YZ, "y_zero_point"));
      yz = v[0];
      out_dtype = YZ.dtype;
      if (const Tensor* B = ctx.input(8)) {
        if (B->dtype != INFER_DTYPE_INT32 || B->rank() != 1 || B->dims[0] != M)
          return invalid("B is ", dtype_name(B->dtype), dims_str(B->dims), ", expected int32[", M,
                         "]");
        bias.assign(B->as<int32_t>(), B->as<int32_t>() + M);
      }
    }

    Dims y_dims = {N, M};
    y_dims.insert(y_dims.end(), win.out.begin(), win.out.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, out_dtype, y_dims));
    if (Y->numel() == 0) return Status::ok();
    const int64_t kprod = sdk::element_count(k_sp.data(), k_sp.size());
    const int64_t in_n = sdk::element_count(in_sp.data(), in_sp.size());
    const int64_t out_n = sdk::element_count(win.out.data(), win.out.size());
    const int64_t rows = Cg * kprod;

    std::vector<int32_t> x32, w32;
    CPU_RETURN_IF_ERROR(to_int32(*X, &x32, [&](int64_t) { return xz; }));
    CPU_RETURN_IF_ERROR(
        to_int32(*W, &w32, [&](int64_t i) { return wz[static_cast<size_t>(i / rows)]; }));
    // Written whole by im2col before it is read: no need to zero it (it can be tens of MB).
    std::unique_ptr<int32_t[]> col(new int32_t[static_cast<size_t>(rows * out_n)]);
    std::vector<uint32_t> acc(static_cast<size_t>(N * M * out_n), 0u);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < G; ++g) {
        const int32_t* xg = x32.data() + (n * C + g * Cg) * in_n;
        ctx.parallel_for(static_cast<size_t>(rows), grain_for(static_cast<size_t>(out_n), 16384),
                         [&](size_t r0, size_t r1) {
                           im2col_int(xg, win, kprod, static_cast<int64_t>(r0),
                                      static_cast<int64_t>(r1), col.get());
                         });
        uint32_t* out = acc.data() + (n * M + g * Mg) * out_n;
        const int32_t* wg = w32.data() + g * Mg * rows;
        // Tiles of kTileRows output channels x kTileColumns positions, so that each task
        // hands int_gemm whole blocks of four rows.
        constexpr int64_t kTileRows = 16, kTileColumns = 2048;
        const int64_t row_tiles = (Mg + kTileRows - 1) / kTileRows;
        const int64_t col_tiles = (out_n + kTileColumns - 1) / kTileColumns;
        const size_t tile_work = static_cast<size_t>(kTileRows * kTileColumns * rows);
        ctx.parallel_for(static_cast<size_t>(row_tiles * col_tiles), grain_for(tile_work, 1 << 20),
                         [&](size_t t0, size_t t1) {
                           for (size_t t = t0; t < t1; ++t) {
                             const int64_t m0 = static_cast<int64_t>(t) / col_tiles * kTileRows;
                             const int64_t j0 = static_cast<int64_t>(t) % col_tiles * kTileColumns;
                             int_gemm(std::min(kTileRows, Mg - m0),
                                      std::min(kTileColumns, out_n - j0), rows, wg + m0 * rows,
                                      rows, col.get() + j0, out_n, out + m0 * out_n + j0, out_n);
                           }
                         });
      }

    if (!qlinear_) {
      int32_t* y = Y->mut<int32_t>();
      for (size_t i = 0; i < acc.size(); ++i) y[i] = static_cast<int32_t>(acc[i]);
      return Status::ok();
    }
    return dispatch(out_dtype, k8Bit, "y", [&]<typename Q>(Tag<Q>) -> Status {
      if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
        Q* y = Y->mut<Q>();
        for (int64_t r = 0; r < N * M; ++r) {
          const size_t m = static_cast<size_t>(r % M);
          const uint32_t b = bias.empty() ? 0u : static_cast<uint32_t>(bias[m]);
          for (int64_t i = 0; i < out_n; ++i) {
            const size_t k = static_cast<size_t>(r * out_n + i);
            const int32_t v = static_cast<int32_t>(acc[k] + b);
            y[k] = saturate_round<Q>(static_cast<float>(v) * mult[m], yz);
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  // x_scale * w_scale[m] / y_scale per output channel.
  static Result<std::vector<float>> multipliers(const KernelContext& ctx, int64_t M) {
    const Tensor& XS = *ctx.input(1);
    const Tensor& WS = *ctx.input(4);
    const Tensor& YS = *ctx.input(6);
    if (XS.numel() != 1)
      return invalid("x_scale has shape ", dims_str(XS.dims), ", expected a scalar");
    if (YS.numel() != 1)
      return invalid("y_scale has shape ", dims_str(YS.dims), ", expected a scalar");
    CPU_ASSIGN_OR_RETURN(std::vector<float> xs, read_floats(XS, "x_scale"));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ys, read_floats(YS, "y_scale"));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ws_raw, read_floats(WS, "w_scale"));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ws, per_channel(ws_raw, WS, M, "w_scale"));
    for (float& w : ws) w = xs[0] * w / ys[0];
    return ws;
  }

  WindowAttrs attrs_;
  int64_t group_;
  bool qlinear_;
};

Status check_window(const infer_node_view& node) {
  const infer_value_view* x = node_input(node, 0);
  const int64_t spatial = x->rank >= 0 ? x->rank - 2 : -1;
  if (x->rank >= 0 && x->rank < 3)
    return unsupported(node.op_type, " input rank ", x->rank, " not supported (at least 3)");
  if (attr_i(node, "group", 1) < 1) return unsupported(node.op_type, " group must be >= 1");
  return check_window_attrs(node, read_window_attrs(node), spatial);
}

Result<KernelPtr> create(const KernelInit& init, bool qlinear) {
  WindowAttrs a = read_window_attrs(*init.node);
  a.ceil_mode = false;
  return KernelPtr(new IntConvKernel(std::move(a), attr_i(*init.node, "group", 1), qlinear));
}

}  // namespace

Status quant_conv_integer_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 4));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), k8Bit, "w"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), k8Bit, "x_zero_point"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), k8Bit, "w_zero_point"));
  return check_window(node);
}

Result<KernelPtr> quant_conv_integer_create(const KernelInit& init) { return create(init, false); }

Status quant_qlinear_conv_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 8, 9));
  const uint32_t scale_mask = node.opset < 21 ? dtypes::kF32 : kScale;
  for (size_t i : {1, 4, 6})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), scale_mask, "the scales"));
  for (size_t i : {2, 3, 5, 7})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), k8Bit, "w and the zero points"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 8), dtypes::kI32, "B"));
  return check_window(node);
}

Result<KernelPtr> quant_qlinear_conv_create(const KernelInit& init) { return create(init, true); }

}  // namespace infer::cpu::kernels
