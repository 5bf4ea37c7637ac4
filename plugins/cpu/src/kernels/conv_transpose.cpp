// ConvTranspose as sgemm + col2im: for each image and group, the weights' transpose
// [M/group * kernel, C/group] times the input [C/group, in_spatial] gives every
// input position's contribution, which col2im scatters (adds) into the output. Output
// size and padding follow the ONNX formulas, including output_padding, output_shape
// and auto_pad.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "gemm_core.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

struct TransposeGeometry {
  Dims in, kernel, stride, dilation, pad_begin, out;
};

// col2im for 2-D: per kernel offset, the input columns whose output column is inside the
// image are a contiguous range, so the inner loop is a plain strided add without index
// arithmetic per element (the generic loop below divides per element and dimension, and
// was most of a DBNet upsampling ConvTranspose's time).
void col2im_2d(const float* col, const TransposeGeometry& g, int64_t kprod, int64_t m0, int64_t m1,
               float* y) {
  const int64_t IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1];
  const int64_t KH = g.kernel[0], KW = g.kernel[1], sh = g.stride[0], sw = g.stride[1];
  const int64_t dh = g.dilation[0], dw = g.dilation[1], ph = g.pad_begin[0], pw = g.pad_begin[1];
  const int64_t in_sp = IH * IW, out_sp = OH * OW;
  // Inputs i with 0 <= i * s + k * d - p < out: [lo, hi).
  auto range = [](int64_t n, int64_t s, int64_t off, int64_t out, int64_t& lo, int64_t& hi) {
    lo = off >= 0 ? 0 : (-off + s - 1) / s;
    hi = out - off <= 0 ? 0 : std::min<int64_t>(n, (out - off + s - 1) / s);
    if (hi < lo) hi = lo;
  };
  for (int64_t m = m0; m < m1; ++m) {
    float* ym = y + m * out_sp;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t offh = kh * dh - ph;
      int64_t ih0, ih1;
      range(IH, sh, offh, OH, ih0, ih1);
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t offw = kw * dw - pw;
        int64_t iw0, iw1;
        range(IW, sw, offw, OW, iw0, iw1);
        const float* crow = col + (m * kprod + kh * KW + kw) * in_sp;
        for (int64_t ih = ih0; ih < ih1; ++ih) {
          const float* src = crow + ih * IW;
          float* dst = ym + (ih * sh + offh) * OW + offw;
          for (int64_t iw = iw0; iw < iw1; ++iw) dst[iw * sw] += src[iw];
        }
      }
    }
  }
}

// Adds the contributions of column rows for output channels [m0, m1) of one group.
void col2im(const float* col, const TransposeGeometry& g, int64_t kprod, int64_t m0, int64_t m1,
            float* y) {
  if (g.in.size() == 2) {
    col2im_2d(col, g, kprod, m0, m1, y);
    return;
  }
  const int64_t nd = static_cast<int64_t>(g.in.size());
  const int64_t in_sp = sdk::element_count(g.in.data(), g.in.size());
  const int64_t out_sp = sdk::element_count(g.out.data(), g.out.size());
  int64_t koff[8], ipos[8];
  for (int64_t m = m0; m < m1; ++m) {
    float* ym = y + m * out_sp;
    for (int64_t kk = 0; kk < kprod; ++kk) {
      int64_t kr = kk;
      for (int64_t d = nd; d-- > 0;) {
        koff[d] = kr % g.kernel[d];
        kr /= g.kernel[d];
      }
      const float* crow = col + (m * kprod + kk) * in_sp;
      for (int64_t p = 0; p < in_sp; ++p) {
        int64_t rem = p;
        for (int64_t d = nd; d-- > 0;) {
          ipos[d] = rem % g.in[d];
          rem /= g.in[d];
        }
        int64_t off = 0;
        bool inside = true;
        for (int64_t d = 0; d < nd; ++d) {
          const int64_t o = ipos[d] * g.stride[d] + koff[d] * g.dilation[d] - g.pad_begin[d];
          if (o < 0 || o >= g.out[d]) {
            inside = false;
            break;
          }
          off = off * g.out[d] + o;
        }
        if (inside) ym[off] += crow[p];
      }
    }
  }
}

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(WindowAttrs attrs, int64_t group, Dims output_padding, Dims output_shape)
      : attrs_(std::move(attrs)),
        group_(group),
        output_padding_(std::move(output_padding)),
        output_shape_(std::move(output_shape)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& W = *ctx.input(1);
    const Tensor* B = ctx.input(2);
    if (X.dtype != INFER_DTYPE_FLOAT32 || W.dtype != INFER_DTYPE_FLOAT32)
      return invalid("only float32 is supported");
    if (X.rank() < 3 || X.rank() > 10 || W.rank() != X.rank())
      return invalid("X ", dims_str(X.dims), " and W ", dims_str(W.dims),
                     " must both have rank 3 to 10");
    const int64_t N = X.dims[0], C = X.dims[1], G = group_;
    if (W.dims[0] != C)
      return invalid("W ", dims_str(W.dims), " dim 0 must equal input channels ", C);
    if (C % G != 0) return invalid("group ", G, " does not divide input channels ", C);
    const int64_t Cg = C / G, Mg = W.dims[1], M = Mg * G;
    if (B != nullptr && (B->dtype != INFER_DTYPE_FLOAT32 || B->numel() != M))
      return invalid("bias B has shape ", dims_str(B->dims), ", expected [", M, "]");
    CPU_ASSIGN_OR_RETURN(TransposeGeometry geo, geometry(X, W));
    Dims y_dims = {N, M};
    y_dims.insert(y_dims.end(), geo.out.begin(), geo.out.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, y_dims));
    if (Y->numel() == 0) return Status::ok();
    const int64_t kprod = sdk::element_count(geo.kernel.data(), geo.kernel.size());
    const int64_t in_sp = sdk::element_count(geo.in.data(), geo.in.size());
    const int64_t out_sp = sdk::element_count(geo.out.data(), geo.out.size());
    const int64_t rows = Mg * kprod;
    std::vector<float> col(static_cast<size_t>(rows * in_sp));
    float* y = Y->mut<float>();
    std::memset(y, 0, Y->bytes());
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t g = 0; g < G; ++g) {
        GemmArgs ga;
        ga.M = rows;
        ga.N = in_sp;
        ga.K = Cg;
        ga.A = W.as<float>() + g * Cg * rows;
        ga.a_row_stride = 1;
        ga.a_col_stride = rows;
        ga.B = X.as<float>() + (n * C + g * Cg) * in_sp;
        ga.ldb = in_sp;
        ga.C = col.data();
        ga.ldc = in_sp;
        sgemm(ctx.host(), ga);
        float* yg = y + (n * M + g * Mg) * out_sp;
        ctx.parallel_for(static_cast<size_t>(Mg), 1, [&](size_t m0, size_t m1) {
          col2im(col.data(), geo, kprod, static_cast<int64_t>(m0), static_cast<int64_t>(m1), yg);
        });
      }
    }
    if (B != nullptr) {
      const float* b = B->as<float>();
      ctx.parallel_for(static_cast<size_t>(N * M), 1, [&](size_t r0, size_t r1) {
        for (size_t r = r0; r < r1; ++r) {
          float* row = y + static_cast<int64_t>(r) * out_sp;
          const float v = b[static_cast<int64_t>(r) % M];
          for (int64_t i = 0; i < out_sp; ++i) row[i] += v;
        }
      });
    }
    return Status::ok();
  }

 private:
  Result<TransposeGeometry> geometry(const Tensor& X, const Tensor& W) const {
    TransposeGeometry g;
    const size_t r = X.rank() - 2;
    g.in.assign(X.dims.begin() + 2, X.dims.end());
    g.kernel.assign(W.dims.begin() + 2, W.dims.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != g.kernel)
      return invalid("kernel_shape ", dims_str(attrs_.kernel_shape), " does not match W ",
                     dims_str(W.dims));
    auto pick = [](const Dims& v, size_t i, int64_t fallback) {
      return v.size() > i ? v[i] : fallback;
    };
    if (!output_shape_.empty() && output_shape_.size() != r && output_shape_.size() != r + 2)
      return invalid("output_shape has ", output_shape_.size(), " values, expected ", r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t s = pick(attrs_.strides, i, 1), d = pick(attrs_.dilations, i, 1);
      const int64_t op = pick(output_padding_, i, 0);
      const int64_t full = s * (g.in[i] - 1) + op + (g.kernel[i] - 1) * d + 1;
      int64_t pb = pick(attrs_.pads, i, 0), pe = pick(attrs_.pads, i + r, 0);
      int64_t out;
      const bool same = attrs_.auto_pad == "SAME_UPPER" || attrs_.auto_pad == "SAME_LOWER";
      if (!output_shape_.empty() || same) {
        if (!output_shape_.empty())
          out = output_shape_[output_shape_.size() == r ? i : i + 2];
        else
          out = g.in[i] * s;
        // An output larger than the full one (negative total padding) keeps the
        // positions past the full output at zero (plus bias), as ONNX Runtime does.
        const int64_t total = std::max<int64_t>(0, full - out);
        if (attrs_.auto_pad == "SAME_UPPER") {
          pb = total / 2;
        } else {
          pb = total - total / 2;
        }
      } else {
        if (attrs_.auto_pad == "VALID") pb = pe = 0;
        out = full - pb - pe;
      }
      if (out <= 0) return invalid("spatial dim ", i, " gives an empty output (", out, ")");
      g.stride.push_back(s);
      g.dilation.push_back(d);
      g.pad_begin.push_back(pb);
      g.out.push_back(out);
    }
    return g;
  }

  WindowAttrs attrs_;
  int64_t group_;
  Dims output_padding_, output_shape_;
};

}  // namespace

Status conv_transpose_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kF32, "W"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kF32, "B"));
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && (x->rank < 3 || x->rank > 10))
    return unsupported("ConvTranspose input rank ", x->rank, " not supported (3 to 10)");
  if (attr_i(node, "group", 1) < 1) return unsupported("ConvTranspose group must be >= 1");
  return check_window_attrs(node, read_window_attrs(node), x->rank >= 0 ? x->rank - 2 : -1);
}

Result<KernelPtr> conv_transpose_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  WindowAttrs a = read_window_attrs(n);
  return KernelPtr(new ConvTransposeKernel(std::move(a), attr_i(n, "group", 1),
                                           attr_ints(n, "output_padding"),
                                           attr_ints(n, "output_shape")));
}

}  // namespace infer::cpu::kernels
