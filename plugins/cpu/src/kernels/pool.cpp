// MaxPool / AveragePool / LpPool (1-D to 3-D windows, with strides, pads, dilations,
// ceil_mode, count_include_pad, auto_pad and MaxPool's optional Indices output in either
// storage order) and the global pools. Windows of fewer than three spatial dims are run
// as 3-D windows with leading size-1 dims, so one triple loop serves every rank.
//
// MaxPool takes float16/32/64, int8 and uint8; the averaging pools take the float types.
// Half-precision inputs are compared and summed in float/double and rounded once on store.
// float32 GlobalAveragePool sums each plane with the SIMD library's vector sum, and
// float32 2-D MaxPool (without the Indices output) and AveragePool run on the SIMD
// library's pool2d, which takes every window attribute (its average sums in float, not
// double: a few ulps apart); the rest stays on the generic loop here.
#include "simd/pool.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../dispatch.hpp"
#include "../host_threads.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "simd/vec.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

enum class PoolKind { kMax, kAverage, kLp, kGlobalMax, kGlobalAverage, kGlobalLp };

constexpr uint32_t kMaxTypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16 |
                               dtype_bit(INFER_DTYPE_INT8) | dtype_bit(INFER_DTYPE_UINT8);
constexpr uint32_t kAvgTypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;

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

struct PoolParams {
  PoolKind kind;
  bool count_include_pad = false;
  bool column_major = false;  // MaxPool storage_order = 1
  double p = 2;               // LpPool exponent
};

template <typename T>
void pool_planes(const PoolParams& prm, const Window3& g, const T* x, T* y, int64_t* idx, size_t p0,
                 size_t p1) {
  using C = compute_t<T>;
  const int64_t in_n = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_n = g.out[0] * g.out[1] * g.out[2];
  for (size_t p = p0; p < p1; ++p) {
    const T* xp = x + static_cast<int64_t>(p) * in_n;
    T* yp = y + static_cast<int64_t>(p) * out_n;
    int64_t o = 0;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
      const TapRange t0 = taps(o0 * g.s[0] - g.pb[0], g.k[0], g.d[0], g.in[0], g.pb[0], g.pe[0]);
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
        const TapRange t1 = taps(o1 * g.s[1] - g.pb[1], g.k[1], g.d[1], g.in[1], g.pb[1], g.pe[1]);
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++o) {
          const int64_t st2 = o2 * g.s[2] - g.pb[2];
          const TapRange t2 = taps(st2, g.k[2], g.d[2], g.in[2], g.pb[2], g.pe[2]);
          C best = std::numeric_limits<C>::lowest();
          int64_t best_i[3] = {-1, 0, 0};
          double sum = 0;
          for (int64_t k0 = t0.lo; k0 < t0.hi; ++k0) {
            const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
            for (int64_t k1 = t1.lo; k1 < t1.hi; ++k1) {
              const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
              const int64_t row = (i0 * g.in[1] + i1) * g.in[2];
              for (int64_t k2 = t2.lo; k2 < t2.hi; ++k2) {
                const int64_t i2 = st2 + k2 * g.d[2];
                const C v = to_compute(xp[row + i2]);
                if (prm.kind == PoolKind::kMax) {
                  if (v > best || best_i[0] < 0) {
                    best = v;
                    best_i[0] = i0;
                    best_i[1] = i1;
                    best_i[2] = i2;
                  }
                } else if (prm.kind == PoolKind::kAverage) {
                  sum += static_cast<double>(v);
                } else {
                  sum += std::pow(std::fabs(static_cast<double>(v)), prm.p);
                }
              }
            }
          }
          if (prm.kind == PoolKind::kMax) {
            yp[o] = from_compute<T>(best);
            if (idx) {
              const int64_t i0 = std::max<int64_t>(best_i[0], 0), i1 = best_i[1], i2 = best_i[2];
              // Indices count over the whole flattened tensor; storage_order 1 flattens
              // the spatial dims column-major (the first spatial dim varies fastest).
              const int64_t at = prm.column_major ? i0 + g.in[0] * (i1 + g.in[1] * i2)
                                                  : (i0 * g.in[1] + i1) * g.in[2] + i2;
              idx[static_cast<int64_t>(p) * out_n + o] = static_cast<int64_t>(p) * in_n + at;
            }
          } else if (prm.kind == PoolKind::kAverage) {
            const int64_t count = prm.count_include_pad
                                      ? t0.padded * t1.padded * t2.padded
                                      : (t0.hi - t0.lo) * (t1.hi - t1.lo) * (t2.hi - t2.lo);
            yp[o] = from_compute<T>(static_cast<C>(sum / static_cast<double>(count)));
          } else {
            yp[o] = from_compute<T>(static_cast<C>(std::pow(sum, 1.0 / prm.p)));
          }
        }
      }
    }
  }
}

template <typename T>
void global_planes(const PoolParams& prm, int64_t n, const T* x, T* y, size_t p0, size_t p1) {
  using C = compute_t<T>;
  for (size_t p = p0; p < p1; ++p) {
    const T* xp = x + static_cast<int64_t>(p) * n;
    if (prm.kind == PoolKind::kGlobalMax) {
      C best = std::numeric_limits<C>::lowest();
      for (int64_t i = 0; i < n; ++i) {
        const C v = to_compute(xp[i]);
        best = (i == 0 || v > best) ? v : best;
      }
      y[p] = from_compute<T>(best);
    } else {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(to_compute(xp[i]));
        sum += prm.kind == PoolKind::kGlobalAverage ? v : std::pow(std::fabs(v), prm.p);
      }
      const double r = prm.kind == PoolKind::kGlobalAverage ? sum / static_cast<double>(n)
                                                            : std::pow(sum, 1.0 / prm.p);
      y[p] = from_compute<T>(static_cast<C>(r));
    }
  }
}

// The SIMD library's description of a 2-D MaxPool or AveragePool window.
simd::Pool2dShape pool2d_shape(const PoolParams& prm, const Window& w) {
  simd::Pool2dShape s;
  s.kind = prm.kind == PoolKind::kMax ? simd::PoolKind::kMax : simd::PoolKind::kAverage;
  s.in_h = w.in[0];
  s.in_w = w.in[1];
  s.out_h = w.out[0];
  s.out_w = w.out[1];
  s.k_h = w.kernel[0];
  s.k_w = w.kernel[1];
  s.s_h = w.stride[0];
  s.s_w = w.stride[1];
  s.d_h = w.dilation[0];
  s.d_w = w.dilation[1];
  s.pad_top = w.pad_begin[0];
  s.pad_left = w.pad_begin[1];
  s.pad_bottom = w.pad_end[0];
  s.pad_right = w.pad_end[1];
  s.count_include_pad = prm.count_include_pad;
  return s;
}

bool is_global(PoolKind k) {
  return k == PoolKind::kGlobalMax || k == PoolKind::kGlobalAverage || k == PoolKind::kGlobalLp;
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(PoolParams prm, WindowAttrs attrs) : prm_(prm), attrs_(std::move(attrs)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() < 3)
      return invalid("input must have at least 3 dims (N, C, spatial...), got ", dims_str(X.dims));
    const bool maxlike = prm_.kind == PoolKind::kMax || prm_.kind == PoolKind::kGlobalMax;
    return dispatch(X.dtype, maxlike ? kMaxTypes : kAvgTypes, "pooling input",
                    [&]<typename T>(Tag<T>) -> Status {
                      if constexpr (in_mask<T>(kMaxTypes | kAvgTypes)) {
                        return is_global(prm_.kind) ? run_global<T>(ctx, X) : run_window<T>(ctx, X);
                      } else {
                        return invalid("dtype ", dtype_name(X.dtype), " is not supported");
                      }
                    });
  }

 private:
  template <typename T>
  Status run_window(KernelContext& ctx, const Tensor& X) const {
    const Dims in_sp(X.dims.begin() + 2, X.dims.end());
    if (in_sp.size() > 3) return invalid("pooling over more than 3 spatial dims is not supported");
    if (attrs_.kernel_shape.size() != in_sp.size())
      return invalid("kernel_shape ", dims_str(attrs_.kernel_shape), " does not match input ",
                     dims_str(X.dims));
    CPU_ASSIGN_OR_RETURN(Window w, plan_window(attrs_, in_sp, attrs_.kernel_shape));
    Dims y_dims = {X.dims[0], X.dims[1]};
    y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, y_dims));
    Tensor* I = nullptr;
    if (prm_.kind == PoolKind::kMax && ctx.has_output(1)) {
      CPU_ASSIGN_OR_RETURN(I, ctx.allocate_output(1, INFER_DTYPE_INT64, y_dims));
    }
    const Window3 g = to3(w);
    const int64_t planes = X.dims[0] * X.dims[1];
    const int64_t out_n = g.out[0] * g.out[1] * g.out[2];
    const T* x = X.as<T>();
    T* y = Y->mut<T>();
    int64_t* idx = I ? I->mut<int64_t>() : nullptr;
    const PoolParams& prm = prm_;
    if constexpr (std::is_same_v<T, float>) {
      if (w.rank() == 2 &&
          ((prm.kind == PoolKind::kMax && idx == nullptr) || prm.kind == PoolKind::kAverage)) {
        const simd::Pool2dShape s = pool2d_shape(prm, w);
        if (simd::pool2d_supports(s)) {
          HostThreads threads(ctx.host());
          simd::pool2d(kernel_isa(), threads, s, x, y, static_cast<size_t>(planes));
          return Status::ok();
        }
      }
    }
    if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
      // 8-bit MaxPool (the max pools of QDQ models after qdq_passthrough): each group of
      // planes widened to float, pooled by the float kernel, narrowed back. Exact: every
      // 8-bit value is a float, and the max picks one of them (a window with no tap in
      // the plane, whose float result is the lowest float, saturates to T's lowest).
      if (w.rank() == 2 && prm.kind == PoolKind::kMax && idx == nullptr) {
        const simd::Pool2dShape s = pool2d_shape(prm, w);
        if (simd::pool2d_supports(s)) {
          const int64_t in_n = X.dims.size() == 4 ? X.dims[2] * X.dims[3] : 0;
          const simd::Isa isa = kernel_isa();
          // About 64 KiB of float input per group.
          const int64_t group = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_n));
          const int64_t groups = (planes + group - 1) / group;
          ctx.parallel_for(static_cast<size_t>(groups), 1, [&](size_t g0, size_t g1) {
            std::vector<float> in(static_cast<size_t>(group * in_n));
            std::vector<float> out(static_cast<size_t>(group * out_n));
            const simd::SerialThreads serial;
            for (size_t gi = g0; gi < g1; ++gi) {
              const int64_t p0 = static_cast<int64_t>(gi) * group;
              const int64_t np = std::min(group, planes - p0);
              const T* src = x + p0 * in_n;
              for (int64_t i = 0; i < np * in_n; ++i) in[static_cast<size_t>(i)] = src[i];
              simd::pool2d(isa, serial, s, in.data(), out.data(), static_cast<size_t>(np));
              T* dst = y + p0 * out_n;
              const float lowest = static_cast<float>(std::numeric_limits<T>::lowest());
              for (int64_t i = 0; i < np * out_n; ++i)
                dst[i] = static_cast<T>(std::max(lowest, out[static_cast<size_t>(i)]));
            }
          });
          return Status::ok();
        }
      }
    }
    ctx.parallel_for(static_cast<size_t>(planes),
                     grain_for(static_cast<size_t>(out_n * g.k[0] * g.k[1] * g.k[2])),
                     [&](size_t p0, size_t p1) { pool_planes<T>(prm, g, x, y, idx, p0, p1); });
    return Status::ok();
  }

  template <typename T>
  Status run_global(KernelContext& ctx, const Tensor& X) const {
    Dims y_dims = {X.dims[0], X.dims[1]};
    y_dims.resize(X.rank(), 1);
    const int64_t n = sdk::element_count(X.dims.data() + 2, X.rank() - 2);
    const int64_t planes = X.dims[0] * X.dims[1];
    if (n == 0 && planes > 0)
      return invalid("global pooling over an empty input ", dims_str(X.dims));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, y_dims));
    const T* x = X.as<T>();
    T* y = Y->mut<T>();
    const PoolParams& prm = prm_;
    if constexpr (std::is_same_v<T, float>) {
      if (prm.kind == PoolKind::kGlobalAverage) {
        const simd::Isa isa = kernel_isa();
        const float inv = 1.0f / static_cast<float>(n);
        ctx.parallel_for(static_cast<size_t>(planes), grain_for(static_cast<size_t>(n)),
                         [&](size_t p0, size_t p1) {
                           for (size_t p = p0; p < p1; ++p)
                             y[p] = simd::vec_sum(isa, x + static_cast<int64_t>(p) * n,
                                                  static_cast<size_t>(n)) *
                                    inv;
                         });
        return Status::ok();
      }
    }
    ctx.parallel_for(static_cast<size_t>(planes), grain_for(static_cast<size_t>(n)),
                     [&](size_t p0, size_t p1) { global_planes<T>(prm, n, x, y, p0, p1); });
    return Status::ok();
  }

  PoolParams prm_;
  WindowAttrs attrs_;
};

PoolKind pool_kind_of(const char* op) {
  if (std::strcmp(op, "MaxPool") == 0) return PoolKind::kMax;
  if (std::strcmp(op, "AveragePool") == 0) return PoolKind::kAverage;
  if (std::strcmp(op, "LpPool") == 0) return PoolKind::kLp;
  if (std::strcmp(op, "GlobalMaxPool") == 0) return PoolKind::kGlobalMax;
  if (std::strcmp(op, "GlobalLpPool") == 0) return PoolKind::kGlobalLp;
  return PoolKind::kGlobalAverage;
}

// LpPool's p is an int from opset 2 (a float in the retired opset-1 version).
double lp_exponent(const infer_node_view& n) {
  const infer_attr_view* a = sdk::find_attr(&n, "p");
  if (a == nullptr) return 2.0;
  return a->type == INFER_ATTR_FLOAT ? a->f : static_cast<double>(a->i);
}

}  // namespace

Status pool_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  const PoolKind kind = pool_kind_of(node.op_type);
  const infer_value_view* x = node_input(node, 0);
  const bool maxlike = kind == PoolKind::kMax || kind == PoolKind::kGlobalMax;
  CPU_RETURN_IF_ERROR(check_dtype(node, x, maxlike ? kMaxTypes : kAvgTypes, "input 0"));
  if (x->rank >= 0 && x->rank < 3)
    return unsupported(node.op_type, " input rank ", x->rank, " < 3");
  if (kind == PoolKind::kLp || kind == PoolKind::kGlobalLp) {
    const double p = lp_exponent(node);
    if (!(p > 0)) return unsupported(node.op_type, " p must be > 0, got ", p);
  }
  if (is_global(kind)) return Status::ok();
  WindowAttrs a = read_window_attrs(node);
  if (a.kernel_shape.empty()) return unsupported(node.op_type, " requires kernel_shape");
  if (a.kernel_shape.size() > 3) return unsupported(node.op_type, " over more than 3 spatial dims");
  if (x->rank >= 0 && x->rank - 2 != static_cast<int64_t>(a.kernel_shape.size()))
    return unsupported(node.op_type, " kernel_shape has ", a.kernel_shape.size(),
                       " values for input rank ", x->rank);
  if (kind == PoolKind::kMax) {
    const int64_t order = attr_i(node, "storage_order", 0);
    if (order != 0 && order != 1)
      return unsupported("MaxPool storage_order must be 0 or 1, got ", order);
  }
  return check_window_attrs(node, a, static_cast<int64_t>(a.kernel_shape.size()));
}

Result<KernelPtr> pool_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  PoolParams prm;
  prm.kind = pool_kind_of(n.op_type);
  prm.count_include_pad = attr_i(n, "count_include_pad", 0) != 0;
  prm.column_major = attr_i(n, "storage_order", 0) == 1;
  prm.p = lp_exponent(n);
  WindowAttrs a = read_window_attrs(n);
  return KernelPtr(new PoolKernel(prm, std::move(a)));
}

}  // namespace infer::cpu::kernels
