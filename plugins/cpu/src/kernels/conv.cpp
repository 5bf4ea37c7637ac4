// Conv (1-D, 2-D, 3-D and beyond) as im2col + the blocked sgemm: for each image and
// group, the receptive fields are unrolled into a [C/group * kernel, out_spatial]
// matrix that the group's weights [M/group, C/group * kernel] multiply. A 1x1 kernel
// with unit strides and no padding skips the unrolling and reads the input directly.
#include <cstring>
#include <vector>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "gemm_core.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

// Unrolls rows [r0, r1) of the column matrix for one image and group. Row r covers
// channel r / kprod and kernel offset r % kprod; its columns are the output positions.
void im2col(const float* x, const Window& w, int64_t kprod, int64_t r0, int64_t r1, float* col) {
  const int64_t nd = w.rank();
  const int64_t out_sp = sdk::element_count(w.out.data(), w.out.size());
  const int64_t in_sp = sdk::element_count(w.in.data(), w.in.size());
  const int64_t ow_n = w.out[nd - 1];
  const int64_t outer_n = out_sp / ow_n;
  int64_t koff[8], opos[8];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / kprod;
    int64_t kr = r % kprod;
    for (int64_t d = nd; d-- > 0;) {
      koff[d] = kr % w.kernel[d];
      kr /= w.kernel[d];
    }
    const float* xc = x + c * in_sp;
    float* dst = col + r * out_sp;
    const int64_t s_last = w.stride[nd - 1];
    const int64_t base_last = koff[nd - 1] * w.dilation[nd - 1] - w.pad_begin[nd - 1];
    const int64_t in_last = w.in[nd - 1];
    for (int64_t outer = 0; outer < outer_n; ++outer) {
      // Decompose the outer output index and find the input row it reads.
      int64_t rem = outer;
      for (int64_t d = nd - 1; d-- > 0;) {
        opos[d] = rem % w.out[d];
        rem /= w.out[d];
      }
      int64_t in_off = 0;
      bool inside = true;
      for (int64_t d = 0; d < nd - 1; ++d) {
        const int64_t p = opos[d] * w.stride[d] + koff[d] * w.dilation[d] - w.pad_begin[d];
        if (p < 0 || p >= w.in[d]) {
          inside = false;
          break;
        }
        in_off = in_off * w.in[d] + p;
      }
      float* drow = dst + outer * ow_n;
      if (!inside) {
        std::memset(drow, 0, sizeof(float) * ow_n);
        continue;
      }
      const float* xrow = xc + in_off * in_last;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const int64_t p = ow * s_last + base_last;
        drow[ow] = (p >= 0 && p < in_last) ? xrow[p] : 0.0f;
      }
    }
  }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs attrs, int64_t group) : attrs_(std::move(attrs)), group_(group) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& W = *ctx.input(1);
    const Tensor* B = ctx.input(2);
    if (X.dtype != INFER_DTYPE_FLOAT32 || W.dtype != INFER_DTYPE_FLOAT32)
      return invalid("only float32 is supported");
    if (X.rank() < 3)
      return invalid("input X must have at least 3 dims (N, C, spatial...), got ",
                     dims_str(X.dims));
    if (W.rank() != X.rank())
      return invalid("weights W have shape ", dims_str(W.dims), ", expected rank ", X.rank(),
                     " like X ", dims_str(X.dims));
    if (X.rank() > 8 + 2) return invalid("more than 8 spatial dims");
    const int64_t N = X.dims[0], C = X.dims[1], M = W.dims[0];
    const int64_t G = group_;
    if (C % G != 0 || M % G != 0)
      return invalid("group ", G, " does not divide input channels ", C, " and output channels ",
                     M);
    const int64_t Cg = C / G, Mg = M / G;
    if (W.dims[1] != Cg)
      return invalid("W has shape ", dims_str(W.dims), ": dim 1 must be C/group = ", Cg, " for X ",
                     dims_str(X.dims));
    Dims in_sp(X.dims.begin() + 2, X.dims.end());
    Dims k_sp(W.dims.begin() + 2, W.dims.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != k_sp)
      return invalid("kernel_shape ", dims_str(attrs_.kernel_shape), " does not match W ",
                     dims_str(W.dims));
    if (B != nullptr && (B->dtype != INFER_DTYPE_FLOAT32 || B->numel() != M))
      return invalid("bias B has shape ", dims_str(B->dims), ", expected [", M, "]");
    CPU_ASSIGN_OR_RETURN(Window w, plan_window(attrs_, in_sp, k_sp));

    Dims y_dims = {N, M};
    y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, y_dims));
    const int64_t kprod = sdk::element_count(k_sp.data(), k_sp.size());
    const int64_t in_sp_n = sdk::element_count(in_sp.data(), in_sp.size());
    const int64_t out_sp_n = sdk::element_count(w.out.data(), w.out.size());
    const int64_t rows = Cg * kprod;
    if (Y->numel() == 0) return Status::ok();

    bool direct = kprod == 1;
    for (int64_t d = 0; d < w.rank(); ++d)
      direct = direct && w.stride[d] == 1 && w.pad_begin[d] == 0 && w.pad_end[d] == 0;
    std::vector<float> col(direct ? 0 : static_cast<size_t>(rows * out_sp_n));

    const float* x = X.as<float>();
    const float* wt = W.as<float>();
    float* y = Y->mut<float>();
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t g = 0; g < G; ++g) {
        const float* xg = x + (n * C + g * Cg) * in_sp_n;
        const float* bmat = xg;
        if (!direct) {
          ctx.parallel_for(static_cast<size_t>(rows),
                           grain_for(static_cast<size_t>(out_sp_n), 16384),
                           [&](size_t r0, size_t r1) {
                             im2col(xg, w, kprod, static_cast<int64_t>(r0),
                                    static_cast<int64_t>(r1), col.data());
                           });
          bmat = col.data();
        }
        GemmArgs ga;
        ga.M = Mg;
        ga.N = out_sp_n;
        ga.K = rows;
        ga.A = wt + g * Mg * rows;
        ga.a_row_stride = rows;
        ga.a_col_stride = 1;
        ga.B = bmat;
        ga.ldb = out_sp_n;
        ga.C = y + (n * M + g * Mg) * out_sp_n;
        ga.ldc = out_sp_n;
        sgemm(ctx.host(), ga);
      }
    }
    if (B != nullptr) {
      const float* b = B->as<float>();
      ctx.parallel_for(static_cast<size_t>(N * M), grain_for(static_cast<size_t>(out_sp_n)),
                       [&](size_t r0, size_t r1) {
                         for (size_t r = r0; r < r1; ++r) {
                           const float bv = b[r % static_cast<size_t>(M)];
                           float* row = y + r * static_cast<size_t>(out_sp_n);
                           for (int64_t i = 0; i < out_sp_n; ++i) row[i] += bv;
                         }
                       });
    }
    return Status::ok();
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

Status conv_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kF32, "W"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kF32, "B"));
  const infer_value_view* x = node_input(node, 0);
  int64_t spatial = x->rank >= 0 ? x->rank - 2 : -1;
  if (x->rank >= 0 && (x->rank < 3 || x->rank > 10))
    return unsupported("Conv input rank ", x->rank, " not supported (3 to 10)");
  if (attr_i(node, "group", 1) < 1) return unsupported("Conv group must be >= 1");
  return check_window_attrs(node, read_window_attrs(node), spatial);
}

Result<KernelPtr> conv_create(const KernelInit& init) {
  WindowAttrs a = read_window_attrs(*init.node);
  a.ceil_mode = false;
  return KernelPtr(new ConvKernel(std::move(a), attr_i(*init.node, "group", 1)));
}

}  // namespace infer::cpu::kernels
