// MaxPool / AveragePool (1-D to 3-D windows, with strides, pads, dilations, ceil_mode,
// count_include_pad, auto_pad and MaxPool's optional Indices output) and the global
// pools. Windows of fewer than three spatial dims are run as 3-D windows with leading
// size-1 dims, so one triple loop serves every rank.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

enum class Kind { kMax, kAverage, kGlobalMax, kGlobalAverage };

// A window padded out to three spatial dims.
struct Window3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
};

Window3 to3(const Window& w) {
  Window3 r;
  const int64_t off = 3 - w.rank();
  for (int64_t i = 0; i < 3; ++i) {
    const bool real = i >= off;
    const int64_t j = i - off;
    r.in[i] = real ? w.in[j] : 1;
    r.k[i] = real ? w.kernel[j] : 1;
    r.s[i] = real ? w.stride[j] : 1;
    r.d[i] = real ? w.dilation[j] : 1;
    r.pb[i] = real ? w.pad_begin[j] : 0;
    r.pe[i] = real ? w.pad_end[j] : 0;
    r.out[i] = real ? w.out[j] : 1;
  }
  return r;
}

// Taps [lo, hi) of one dim whose input position start + k*d lies in [0, in), and how
// many lie in the padded range [-pb, in + pe).
struct TapRange {
  int64_t lo, hi, padded;
};
TapRange taps(int64_t start, int64_t k, int64_t d, int64_t in, int64_t pb, int64_t pe) {
  TapRange t{0, 0, 0};
  int64_t lo = 0;
  while (lo < k && start + lo * d < 0) ++lo;
  int64_t hi = lo;
  while (hi < k && start + hi * d < in) ++hi;
  t.lo = lo;
  t.hi = hi;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t p = start + i * d;
    t.padded += (p >= -pb && p < in + pe) ? 1 : 0;
  }
  return t;
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(Kind kind, WindowAttrs attrs, bool count_include_pad)
      : kind_(kind), attrs_(std::move(attrs)), count_include_pad_(count_include_pad) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.dtype != INFER_DTYPE_FLOAT32) return invalid("only float32 is supported");
    if (X.rank() < 3)
      return invalid("input must have at least 3 dims (N, C, spatial...), got ", dims_str(X.dims));
    const Dims in_sp(X.dims.begin() + 2, X.dims.end());
    const bool global = kind_ == Kind::kGlobalMax || kind_ == Kind::kGlobalAverage;
    if (global) return run_global(ctx, X, in_sp);
    if (in_sp.size() > 3) return invalid("pooling over more than 3 spatial dims is not supported");
    if (attrs_.kernel_shape.size() != in_sp.size())
      return invalid("kernel_shape ", dims_str(attrs_.kernel_shape), " does not match input ",
                     dims_str(X.dims));
    CPU_ASSIGN_OR_RETURN(Window w, plan_window(attrs_, in_sp, attrs_.kernel_shape));
    Dims y_dims = {X.dims[0], X.dims[1]};
    y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, y_dims));
    Tensor* I = nullptr;
    if (kind_ == Kind::kMax && ctx.has_output(1)) {
      CPU_ASSIGN_OR_RETURN(I, ctx.allocate_output(1, INFER_DTYPE_INT64, y_dims));
    }
    const Window3 g = to3(w);
    const int64_t planes = X.dims[0] * X.dims[1];
    const int64_t in_n = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_n = g.out[0] * g.out[1] * g.out[2];
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    int64_t* idx = I ? I->mut<int64_t>() : nullptr;
    const bool is_max = kind_ == Kind::kMax;
    const bool include_pad = count_include_pad_;
    ctx.parallel_for(
        static_cast<size_t>(planes),
        grain_for(static_cast<size_t>(out_n * g.k[0] * g.k[1] * g.k[2])),
        [&](size_t p0, size_t p1) {
          for (size_t p = p0; p < p1; ++p) {
            const float* xp = x + static_cast<int64_t>(p) * in_n;
            float* yp = y + static_cast<int64_t>(p) * out_n;
            int64_t o = 0;
            for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
              const TapRange t0 =
                  taps(o0 * g.s[0] - g.pb[0], g.k[0], g.d[0], g.in[0], g.pb[0], g.pe[0]);
              for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
                const TapRange t1 =
                    taps(o1 * g.s[1] - g.pb[1], g.k[1], g.d[1], g.in[1], g.pb[1], g.pe[1]);
                for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++o) {
                  const int64_t st2 = o2 * g.s[2] - g.pb[2];
                  const TapRange t2 = taps(st2, g.k[2], g.d[2], g.in[2], g.pb[2], g.pe[2]);
                  float best = std::numeric_limits<float>::lowest();
                  int64_t best_at = -1;
                  double sum = 0;
                  for (int64_t k0 = t0.lo; k0 < t0.hi; ++k0) {
                    const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
                    for (int64_t k1 = t1.lo; k1 < t1.hi; ++k1) {
                      const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                      const int64_t row = (i0 * g.in[1] + i1) * g.in[2];
                      for (int64_t k2 = t2.lo; k2 < t2.hi; ++k2) {
                        const int64_t at = row + st2 + k2 * g.d[2];
                        const float v = xp[at];
                        if (is_max) {
                          if (v > best || best_at < 0) {
                            best = v;
                            best_at = at;
                          }
                        } else {
                          sum += v;
                        }
                      }
                    }
                  }
                  if (is_max) {
                    yp[o] = best;
                    if (idx)
                      idx[static_cast<int64_t>(p) * out_n + o] =
                          static_cast<int64_t>(p) * in_n + std::max<int64_t>(best_at, 0);
                  } else {
                    const int64_t count = include_pad
                                              ? t0.padded * t1.padded * t2.padded
                                              : (t0.hi - t0.lo) * (t1.hi - t1.lo) * (t2.hi - t2.lo);
                    yp[o] = static_cast<float>(sum / static_cast<double>(count));
                  }
                }
              }
            }
          }
        });
    return Status::ok();
  }

 private:
  Status run_global(KernelContext& ctx, const Tensor& X, const Dims& in_sp) const {
    Dims y_dims = {X.dims[0], X.dims[1]};
    y_dims.resize(X.rank(), 1);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, y_dims));
    const int64_t planes = X.dims[0] * X.dims[1];
    const int64_t n = sdk::element_count(in_sp.data(), in_sp.size());
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    const bool is_max = kind_ == Kind::kGlobalMax;
    ctx.parallel_for(static_cast<size_t>(planes), grain_for(static_cast<size_t>(n)),
                     [&](size_t p0, size_t p1) {
                       for (size_t p = p0; p < p1; ++p) {
                         const float* xp = x + static_cast<int64_t>(p) * n;
                         if (is_max) {
                           float best = n > 0 ? xp[0] : std::numeric_limits<float>::lowest();
                           for (int64_t i = 1; i < n; ++i) best = xp[i] > best ? xp[i] : best;
                           y[p] = best;
                         } else {
                           double sum = 0;
                           for (int64_t i = 0; i < n; ++i) sum += xp[i];
                           y[p] = static_cast<float>(sum / static_cast<double>(n));
                         }
                       }
                     });
    return Status::ok();
  }

  Kind kind_;
  WindowAttrs attrs_;
  bool count_include_pad_;
};

Kind kind_of(const char* op) {
  if (std::strcmp(op, "MaxPool") == 0) return Kind::kMax;
  if (std::strcmp(op, "AveragePool") == 0) return Kind::kAverage;
  if (std::strcmp(op, "GlobalMaxPool") == 0) return Kind::kGlobalMax;
  return Kind::kGlobalAverage;
}

}  // namespace

Status pool_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  const Kind kind = kind_of(node.op_type);
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && x->rank < 3)
    return unsupported(node.op_type, " input rank ", x->rank, " < 3");
  if (kind == Kind::kGlobalMax || kind == Kind::kGlobalAverage) return Status::ok();
  WindowAttrs a = read_window_attrs(node);
  if (a.kernel_shape.empty()) return unsupported(node.op_type, " requires kernel_shape");
  if (a.kernel_shape.size() > 3) return unsupported(node.op_type, " over more than 3 spatial dims");
  if (x->rank >= 0 && x->rank - 2 != static_cast<int64_t>(a.kernel_shape.size()))
    return unsupported(node.op_type, " kernel_shape has ", a.kernel_shape.size(),
                       " values for input rank ", x->rank);
  if (kind == Kind::kMax) {
    if (attr_i(node, "storage_order", 0) != 0 && node_output(node, 1) != nullptr)
      return unsupported("MaxPool storage_order=1 with Indices output not supported");
  }
  if (kind == Kind::kAverage && node.opset < 19 && !a.dilations.empty())
    return unsupported("AveragePool dilations before opset 19");
  return check_window_attrs(node, a, static_cast<int64_t>(a.kernel_shape.size()));
}

Result<KernelPtr> pool_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  WindowAttrs a = read_window_attrs(n);
  return KernelPtr(
      new PoolKernel(kind_of(n.op_type), std::move(a), attr_i(n, "count_include_pad", 0) != 0));
}

}  // namespace infer::cpu::kernels
