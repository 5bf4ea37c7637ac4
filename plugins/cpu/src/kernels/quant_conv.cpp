// ConvInteger (opsets 10-21) and QLinearConv (opsets 10-21): Conv over uint8/int8 data
// with zero points, accumulated in int32, for any number of spatial dims, with group,
// strides, dilations, pads and auto_pad.
//   ConvInteger: y = conv(x - x_zero_point, w - w_zero_point) in int32
//   QLinearConv: acc = conv(...) + B, then
//                y = saturate(round_half_even(acc * x_scale * w_scale[m] / y_scale) + y_zero_point)
// x's zero point is per tensor; w's zero point and scale are per tensor or per output
// channel m. Padding contributes zero after the zero point is subtracted, i.e. the input
// is padded with its zero point. Each image and group unrolls blocks of its receptive
// fields (im2col, skipped for 1x1 stride-1 convs) into a uint8 matrix that the group's
// weights, packed once when constant, multiply in the SIMD library's integer GEMM
// (simd/qgemm.hpp), whose output stage requantizes.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "../host_threads.hpp"
#include "quant_common.hpp"
#include "simd/qdepthwise.hpp"
#include "simd/qgemm.hpp"
#include "simd/scratch.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace quant;  // NOLINT: short names for the helpers

// Whether the convolution reads its input as is: 1x1 kernel, stride 1, no padding. The
// column matrix is then the image itself.
bool is_pointwise(const Window& w) {
  for (size_t d = 0; d < w.in.size(); ++d)
    if (w.kernel[d] != 1 || w.stride[d] != 1 || w.pad_begin[d] != 0 || w.out[d] != w.in[d])
      return false;
  return true;
}

// Unrolls rows [r0, r1) x columns [j0, j1) of the column matrix of one image and group
// into col (row stride j1 - j0): row r covers channel r / kprod and kernel offset
// r % kprod, its columns the output positions. Padding reads as `pad` (the input's zero
// point, which contributes zero once subtracted).
void im2col_u8(const uint8_t* x, const Window& w, int64_t kprod, int64_t r0, int64_t r1, int64_t j0,
               int64_t j1, uint8_t pad, uint8_t* col) {
  const size_t nd = w.in.size();
  const int64_t in_sp = sdk::element_count(w.in.data(), w.in.size());
  const int64_t ld = j1 - j0;
  if (nd == 2) {
    const int64_t IH = w.in[0], IW = w.in[1], OW = w.out[1];
    const int64_t KW = w.kernel[1];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / kprod, kr = r % kprod;
      const int64_t kh = kr / KW, kw = kr % KW;
      const uint8_t* xc = x + c * in_sp;
      uint8_t* dst = col + r * ld;
      for (int64_t o = j0; o < j1;) {
        const int64_t oh = o / OW, ow0 = o % OW;
        const int64_t ow1 = std::min(OW, ow0 + (j1 - o));
        uint8_t* d = dst + (o - j0);
        const int64_t ih = oh * w.stride[0] + kh * w.dilation[0] - w.pad_begin[0];
        if (ih < 0 || ih >= IH) {
          std::memset(d, pad, static_cast<size_t>(ow1 - ow0));
        } else {
          // Output columns [lo, hi) read inside the row (iw = ow * sw + off in [0, IW));
          // those before and after read the padding.
          const uint8_t* src = xc + ih * IW;
          const int64_t sw = w.stride[1], off = kw * w.dilation[1] - w.pad_begin[1];
          const int64_t lo = std::clamp<int64_t>(off >= 0 ? 0 : (-off + sw - 1) / sw, ow0, ow1);
          const int64_t hi =
              std::clamp<int64_t>(IW - off <= 0 ? 0 : (IW - off + sw - 1) / sw, lo, ow1);
          if (lo > ow0) std::memset(d, pad, static_cast<size_t>(lo - ow0));
          if (sw == 1) {
            std::memcpy(d + (lo - ow0), src + lo + off, static_cast<size_t>(hi - lo));
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) d[ow - ow0] = src[ow * sw + off];
          }
          if (ow1 > hi) std::memset(d + (hi - ow0), pad, static_cast<size_t>(ow1 - hi));
        }
        o += ow1 - ow0;
      }
    }
    return;
  }
  std::vector<int64_t> koff(nd), opos(nd);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / kprod;
    int64_t kr = r % kprod;
    for (size_t d = nd; d-- > 0;) {
      koff[d] = kr % w.kernel[d];
      kr /= w.kernel[d];
    }
    const uint8_t* xc = x + c * in_sp;
    uint8_t* dst = col + r * ld;
    int64_t rem = j0;  // the multi-dim position of output j0
    for (size_t d = nd; d-- > 0;) {
      opos[d] = rem % w.out[d];
      rem /= w.out[d];
    }
    for (int64_t o = j0; o < j1; ++o) {
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
      dst[o - j0] = inside ? xc[off] : pad;
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

// A 2-D convolution computed in place over phase planes of its zero-padded input: for
// strides sh x sw, phase (r, c) of a channel holds the padded input's rows r, r + sh, ...
// and columns c, c + sw, ... (Hq x Wq; one phase, the padded plane itself, at stride 1).
// Tap (kh, kw) of output (oh, ow) is element (oh + kh dh / sh) Wq + ow + kw dw / sw of
// phase ((kh dh) % sh, (kw dw) % sw): a fixed offset from p = oh Wq + ow. So row
// (c, kh, kw) of the im2col matrix is a phase plane shifted by that offset, and
// qgemm_rows reads it in place over the columns p < OH Wq. The columns ow >= OW wrap
// into the next row and are computed only to be dropped; the kernel takes this path when
// they are at most an eighth of the work.
struct PaddedPlane {
  int64_t H = 0, W = 0, OH = 0, OW = 0, Hq = 0, Wq = 0;
  int64_t pad_top = 0, pad_left = 0;
  int64_t KH = 1, KW = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t phase_bytes() const { return Hq * Wq; }
  int64_t channel_bytes() const { return sh * sw * phase_bytes(); }
  // Whether some tap reads phase (r, c): a 1x1 kernel at stride 2 reads only (0, 0).
  bool phase_read(int64_t r, int64_t c) const {
    bool row = false, col = false;
    for (int64_t kh = 0; kh < KH && !row; ++kh) row = kh * dh % sh == r;
    for (int64_t kw = 0; kw < KW && !col; ++kw) col = kw * dw % sw == c;
    return row && col;
  }
};

std::optional<PaddedPlane> padded_plane(const Window& w) {
  if (w.in.size() != 2) return std::nullopt;
  PaddedPlane p;
  p.H = w.in[0], p.W = w.in[1];
  p.KH = w.kernel[0], p.KW = w.kernel[1];
  p.sh = w.stride[0], p.sw = w.stride[1];
  p.dh = w.dilation[0], p.dw = w.dilation[1];
  p.pad_top = w.pad_begin[0], p.pad_left = w.pad_begin[1];
  p.OH = w.out[0], p.OW = w.out[1];
  // Read in place already (1x1 stride 1), or phases too many to pay off.
  if (p.KH * p.KW * p.sh * p.sw == 1 || p.sh * p.sw > 4 || p.OH <= 0 || p.OW <= 0)
    return std::nullopt;
  p.Hq = p.OH + (p.KH - 1) * p.dh / p.sh;
  p.Wq = p.OW + (p.KW - 1) * p.dw / p.sw;
  if ((p.Wq - p.OW) * 8 > p.Wq) return std::nullopt;  // too many dropped columns
  return p;
}

// One image and group of a convolution on a PaddedPlane: builds the Cg channels' phase
// planes (the zero point in the padding), runs qgemm_rows over the Mg x OH * Wq output
// and keeps the OW valid columns of each row in y (Mg planes of OH x OW elements of
// `elem` bytes).
void conv_in_place(const KernelContext& ctx, const simd::Threads& threads, simd::Isa isa,
                   const PaddedPlane& p, const uint8_t* x, int64_t Cg, int64_t Mg, int64_t kprod,
                   const QWeights& w, const int32_t* a_zero, int32_t x_zero, simd::QGemmOutput out,
                   size_t elem, uint8_t* y) {
  const int64_t channel = p.channel_bytes();
  const int64_t slack = p.Wq + 64;  // the dropped columns of the last rows
  // The calling thread's scratch (kept from run to run: no page faults), shared with the
  // threads of the parallel loops below (the host's parallel_for is isolated, so nothing
  // else runs on this thread meanwhile; qgemm uses only the kPackB slot).
  uint8_t* const xp_base = simd::scratch_as<uint8_t>(simd::ScratchSlot::kSharedA,
                                                     static_cast<size_t>(Cg * channel + slack));
  const uint8_t pad = static_cast<uint8_t>(x_zero);
  std::memset(xp_base + Cg * channel, pad, static_cast<size_t>(slack));
  ctx.parallel_for(
      static_cast<size_t>(Cg), grain_for(static_cast<size_t>(channel)), [&](size_t c0, size_t c1) {
        for (size_t ci = c0; ci < c1; ++ci) {
          const uint8_t* src = x + static_cast<int64_t>(ci) * p.H * p.W;
          uint8_t* dst = xp_base + static_cast<int64_t>(ci) * channel;
          for (int64_t r = 0; r < p.sh; ++r)
            for (int64_t c = 0; c < p.sw; ++c) {
              if (!p.phase_read(r, c)) continue;  // left unwritten: no row offset points there
              uint8_t* ph = dst + (r * p.sw + c) * p.phase_bytes();
              std::memset(ph, pad, static_cast<size_t>(p.phase_bytes()));
              const simd::PhaseColumns pc = simd::phase_columns(c, p.pad_left, p.sw, p.W, p.Wq);
              const int64_t first = pc.first, j0 = pc.j0, j1 = pc.j1;
              if (j1 <= j0) continue;
              for (int64_t i = 0; i < p.Hq; ++i) {
                const int64_t ih = r + p.sh * i - p.pad_top;
                if (ih < 0 || ih >= p.H) continue;
                const uint8_t* from = src + ih * p.W + first + p.sw * j0;
                uint8_t* to = ph + i * p.Wq + j0;
                const int64_t n = j1 - j0;
                if (p.sw == 1)
                  std::memcpy(to, from, static_cast<size_t>(n));
                else if (p.sw == 2)  // a constant stride: GCC vectorizes it (pand, packuswb)
                  for (int64_t j = 0; j < n; ++j) to[j] = from[2 * j];
                else
                  for (int64_t j = 0; j < n; ++j) to[j] = from[p.sw * j];
              }
            }
        }
      });
  const int64_t rows = Cg * kprod;
  std::vector<int64_t> row_off(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r / kprod, kr = r % kprod;
    const int64_t rh = kr / p.KW * p.dh, rw = kr % p.KW * p.dw;
    row_off[static_cast<size_t>(r)] = c * channel +
                                      ((rh % p.sh) * p.sw + rw % p.sw) * p.phase_bytes() +
                                      rh / p.sh * p.Wq + rw / p.sw;
  }
  const int64_t cols = p.OH * p.Wq;
  out.rs = cols;
  out.cs = 1;
  if (p.Wq == p.OW) {  // no dropped columns (a 1x1 kernel): straight into y
    out.c = y;
    simd::qgemm_rows(isa, threads, Mg, cols, rows, w.packed.get(), a_zero, xp_base,
                     row_off.data(), x_zero, out);
    return;
  }
  uint8_t* const full = simd::scratch_as<uint8_t>(simd::ScratchSlot::kSharedB,
                                                  static_cast<size_t>(Mg * cols) * elem);
  out.c = full;
  simd::qgemm_rows(isa, threads, Mg, cols, rows, w.packed.get(), a_zero, xp_base, row_off.data(),
                   x_zero, out);
  const size_t row_bytes = static_cast<size_t>(p.OW) * elem;
  ctx.parallel_for(static_cast<size_t>(Mg), grain_for(static_cast<size_t>(p.OH * p.OW) * elem),
                   [&](size_t m0, size_t m1) {
                     for (size_t m = m0; m < m1; ++m)
                       for (int64_t oh = 0; oh < p.OH; ++oh)
                         std::memcpy(y + ((static_cast<int64_t>(m) * p.OH + oh) * p.OW) *
                                             static_cast<int64_t>(elem),
                                     full + ((static_cast<int64_t>(m) * cols + oh * p.Wq) *
                                                   static_cast<int64_t>(elem)),
                                     row_bytes);
                   });
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
    if (X->dtype != INFER_DTYPE_UINT8 && X->dtype != INFER_DTYPE_INT8)
      return invalid("x must be uint8 or int8, got ", dtype_name(X->dtype));
    if (W->dtype != INFER_DTYPE_UINT8 && W->dtype != INFER_DTYPE_INT8)
      return invalid("w must be uint8 or int8, got ", dtype_name(W->dtype));
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

    // qgemm's form: activations as uint8, weights as packed int8 per group, zero points
    // shifted to match.
    const QActivations xq = as_uint8(*X);
    const int32_t xz_q = xz + xq.zero_shift;
    const std::vector<QWeights>* weights = &packed_;
    std::vector<QWeights> per_run;
    if (packed_.empty() || packed_dims_ != W->dims || packed_dtype_ != W->dtype) {
      per_run = pack_groups(W->data, W->dtype, M, G, rows);
      weights = &per_run;
    }
    std::vector<int32_t> a_zero(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m)
      a_zero[static_cast<size_t>(m)] = wz[static_cast<size_t>(m)] - (*weights)[0].zero_shift;

    simd::QGemmOutput out;
    size_t out_elem = sizeof(int32_t);
    if (qlinear_) {
      out.kind = out_dtype == INFER_DTYPE_UINT8 ? simd::QGemmOutput::Kind::kUint8
                                                : simd::QGemmOutput::Kind::kInt8;
      out.out_zero = yz;
      out_elem = 1;
    }
    out.cs = 1;
    out.rs = out_n;
    HostThreads threads(ctx.host());
    const simd::Isa isa = kernel_isa();
    uint8_t* y_bytes = static_cast<uint8_t*>(Y->data);
    if (Cg == 1 && Mg == 1 && win.in.size() == 2) {
      run_depthwise(ctx, win, xq.data, xz_q, *W, wz, mult, bias, out, N, C,
                    static_cast<uint8_t*>(Y->data));
      return Status::ok();
    }
    if (const std::optional<PaddedPlane> plane = padded_plane(win)) {
      for (int64_t n = 0; n < N; ++n)
        for (int64_t g = 0; g < G; ++g) {
          if (qlinear_) {
            out.scale = mult.data() + g * Mg;
            out.bias = bias.empty() ? nullptr : bias.data() + g * Mg;
          }
          conv_in_place(ctx, threads, isa, *plane, xq.data + (n * C + g * Cg) * in_n, Cg, Mg, kprod,
                        (*weights)[static_cast<size_t>(g)], a_zero.data() + g * Mg, xz_q, out,
                        out_elem,
                        y_bytes + static_cast<size_t>((n * M + g * Mg) * out_n) * out_elem);
        }
      return Status::ok();
    }
    const bool pointwise = is_pointwise(win);
    // Column blocks of im2col small enough to stay in the last-level cache (a 3x3 conv
    // over a 1024x1024 image would otherwise unroll hundreds of megabytes).
    const int64_t block =
        pointwise ? out_n
                  : std::min(out_n, std::max<int64_t>(
                                        256, (int64_t{4} << 20) / std::max<int64_t>(rows, 1)));
    std::unique_ptr<uint8_t[]> col(pointwise ? nullptr
                                             : new uint8_t[static_cast<size_t>(rows * block)]);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < G; ++g) {
        const uint8_t* xg = xq.data + (n * C + g * Cg) * in_n;
        const QWeights& wg = (*weights)[static_cast<size_t>(g)];
        if (qlinear_) {
          out.scale = mult.data() + g * Mg;
          out.bias = bias.empty() ? nullptr : bias.data() + g * Mg;
        }
        for (int64_t j0 = 0; j0 < out_n; j0 += block) {
          const int64_t cols = std::min(block, out_n - j0);
          const uint8_t* b = xg;
          int64_t ldb = in_n;
          if (!pointwise) {
            ctx.parallel_for(static_cast<size_t>(rows), grain_for(static_cast<size_t>(cols), 16384),
                             [&](size_t r0, size_t r1) {
                               im2col_u8(xg, win, kprod, static_cast<int64_t>(r0),
                                         static_cast<int64_t>(r1), j0, j0 + cols,
                                         static_cast<uint8_t>(xz_q), col.get());
                             });
            b = col.get();
            ldb = cols;
          }
          out.c = y_bytes + static_cast<size_t>(((n * M + g * Mg) * out_n + j0)) * out_elem;
          simd::qgemm(isa, threads, Mg, cols, rows, wg.packed.get(), a_zero.data() + g * Mg, b, ldb,
                      1, xz_q, out);
        }
      }
    return Status::ok();
  }

  // One output channel per input channel (MobileNet's depthwise layers): each plane runs
  // the direct loop of simd/qdepthwise.hpp, which finishes exactly like qgemm.
  static void run_depthwise(const KernelContext& ctx, const Window& win, const uint8_t* x,
                            int32_t x_zero, const Tensor& W, const std::vector<int32_t>& wz,
                            const std::vector<float>& mult, const std::vector<int32_t>& bias,
                            const simd::QGemmOutput& qout, int64_t N, int64_t C, uint8_t* y) {
    simd::QDepthwiseShape s;
    s.H = win.in[0], s.W = win.in[1], s.OH = win.out[0], s.OW = win.out[1];
    s.KH = win.kernel[0], s.KW = win.kernel[1];
    s.sh = win.stride[0], s.sw = win.stride[1], s.dh = win.dilation[0], s.dw = win.dilation[1];
    s.pad_top = win.pad_begin[0], s.pad_left = win.pad_begin[1];
    const int64_t taps = s.KH * s.KW, in_n = s.H * s.W, out_n = s.OH * s.OW;
    // The weights as int32 with their zero points subtracted, per channel.
    std::vector<int32_t> w(static_cast<size_t>(C * taps));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t i = c * taps + t;
        const int32_t v =
            W.dtype == INFER_DTYPE_UINT8 ? int32_t{W.as<uint8_t>()[i]} : int32_t{W.as<int8_t>()[i]};
        w[static_cast<size_t>(i)] = v - wz[static_cast<size_t>(c)];
      }
    simd::QDepthwiseOutput base;
    size_t elem = 4;
    if (qout.kind == simd::QGemmOutput::Kind::kUint8 ||
        qout.kind == simd::QGemmOutput::Kind::kInt8) {
      base.kind = qout.kind == simd::QGemmOutput::Kind::kUint8
                      ? simd::QDepthwiseOutput::Kind::kUint8
                      : simd::QDepthwiseOutput::Kind::kInt8;
      base.out_zero = qout.out_zero;
      elem = 1;
    } else {
      base.kind = simd::QDepthwiseOutput::Kind::kInt32;
    }
    const simd::Isa isa = kernel_isa();
    if (simd::qdepthwise_block_supported(isa, s)) {
      // 16 channels at a time, in bands of output rows: tasks over (image, block, band).
      const int64_t blocks = (C + 15) / 16, band = simd::qdepthwise_block_band_rows(s);
      const int64_t bands = (s.OH + band - 1) / band;
      const size_t floats = simd::qdepthwise_block_scratch_floats(s);
      ctx.parallel_for(
          static_cast<size_t>(N * blocks * bands),
          grain_for(static_cast<size_t>(16 * band * s.OW * taps)), [&](size_t t0, size_t t1) {
            float* scratch = simd::scratch_as<float>(simd::ScratchSlot::kColumns, floats);
            for (size_t t = t0; t < t1; ++t) {
              const int64_t i = static_cast<int64_t>(t) / bands, oh0 = static_cast<int64_t>(t) % bands * band;
              const int64_t n = i / blocks, c0 = i % blocks * 16;
              simd::QDepthwiseBlock b;
              b.count = static_cast<int>(std::min<int64_t>(16, C - c0));
              b.x = x + (n * C + c0) * in_n;
              b.w = w.data() + c0 * taps;
              if (base.kind != simd::QDepthwiseOutput::Kind::kInt32) {
                b.scale = mult.data() + c0;
                b.bias = bias.empty() ? nullptr : bias.data() + c0;
              }
              b.y = y + (n * C + c0) * out_n * static_cast<int64_t>(elem);
              simd::qdepthwise_block(isa, s, x_zero, base, b, oh0, std::min(s.OH, oh0 + band),
                                     scratch);
            }
          });
      return;
    }
    ctx.parallel_for(
        static_cast<size_t>(N * C), grain_for(static_cast<size_t>(out_n * taps)),
        [&](size_t p0, size_t p1) {
          std::vector<int32_t> acc(simd::qdepthwise_scratch_ints(s));
          for (size_t p = p0; p < p1; ++p) {
            const int64_t c = static_cast<int64_t>(p) % C;
            simd::QDepthwiseOutput o = base;
            if (o.kind != simd::QDepthwiseOutput::Kind::kInt32) {
              o.scale = mult[static_cast<size_t>(c)];
              o.bias = bias.empty() ? 0 : bias[static_cast<size_t>(c)];
            }
            simd::qdepthwise_plane(
                isa, s, x + static_cast<int64_t>(p) * in_n, x_zero, w.data() + c * taps, o,
                y + static_cast<int64_t>(p) * out_n * static_cast<int64_t>(elem), acc.data());
          }
        });
  }

  // Packs the weights once when they are constant.
  void prepack(const infer_value_view* w) {
    if (!is_const(w) || w->rank < 3 ||
        (w->dtype != INFER_DTYPE_UINT8 && w->dtype != INFER_DTYPE_INT8))
      return;
    Dims dims(w->dims, w->dims + w->rank);
    for (int64_t d : dims)
      if (d <= 0) return;
    const int64_t M = dims[0];
    if (M % group_ != 0) return;
    const int64_t count = sdk::element_count(dims.data(), dims.size());
    if (w->const_size != static_cast<size_t>(count)) return;
    packed_ = pack_groups(w->const_data, w->dtype, M, group_, count / M);
    packed_dims_ = std::move(dims);
    packed_dtype_ = w->dtype;
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
    CPU_ASSIGN_OR_RETURN(std::vector<float> xs, read_scales(XS, "x_scale", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ys, read_scales(YS, "y_scale", ScaleUse::kDivisor));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ws_raw, read_scales(WS, "w_scale", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ws, per_channel(ws_raw, WS, M, "w_scale"));
    for (float& w : ws) w = xs[0] * w / ys[0];
    return ws;
  }

  // Per group: its Mg x rows weights in qgemm's form.
  static std::vector<QWeights> pack_groups(const void* w, infer_dtype dtype, int64_t M, int64_t G,
                                           int64_t rows) {
    const int64_t Mg = M / G;
    std::vector<QWeights> groups;
    for (int64_t g = 0; g < G; ++g)
      groups.push_back(
          pack_qweights(static_cast<const uint8_t*>(w) + g * Mg * rows, dtype, Mg, rows, rows, 1));
    return groups;
  }

  WindowAttrs attrs_;
  int64_t group_;
  bool qlinear_;
  std::vector<QWeights> packed_;  // constant weights, packed at creation (else empty)
  Dims packed_dims_;
  infer_dtype packed_dtype_ = INFER_DTYPE_UNDEFINED;
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
  auto kernel =
      std::make_unique<IntConvKernel>(std::move(a), attr_i(*init.node, "group", 1), qlinear);
  kernel->prepack(node_input(*init.node, qlinear ? 3 : 1));
  return KernelPtr(kernel.release());
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
