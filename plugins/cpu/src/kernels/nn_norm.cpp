// LayerNormalization (opset 17), InstanceNormalization and MeanVarianceNormalization.
// All normalize groups of elements to zero mean and unit variance (population variance,
// two passes in double), then scale and shift:
//   LayerNormalization: groups are the trailing dims from `axis` (default -1); Scale and
//     the optional B broadcast to those dims; optional outputs Mean and InvStdDev (shape
//     X.shape[:axis] + [1] * (rank - axis)) have the stash type (float32 by default).
//     Y = (X - mean) / sqrt(var + epsilon) * Scale + B
//   InstanceNormalization: groups are the spatial dims of each (n, c); scale and B are
//     per channel. Y = (X - mean) / sqrt(var + epsilon) * scale[c] + B[c]
//   MeanVarianceNormalization: groups are the dims in `axes` (default [0, 2, 3]), as in
//     the ONNX function body: Y = (X - mean) / (sqrt(var) + 1e-9).
// Inputs of any float type are computed in double and rounded once on store, except
// float32 LayerNormalization, which runs the SIMD library's vectorized rows
// (simd/layernorm.hpp: float accumulation in several lanes, two passes).
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../dispatch.hpp"
#include "../host_threads.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "broadcast.hpp"
#include "nn_util.hpp"
#include "simd/layernorm.hpp"

namespace infer::cpu::kernels {
namespace {

template <typename T>
double ld(const T* p, int64_t i) {
  return load_f64(p, i);
}
template <typename T>
T st(double v) {
  return store_f64<T>(v);
}

// Mean and population variance of n elements spaced `step` apart.
template <typename T>
void moments(const T* x, int64_t n, int64_t step, double* mean, double* var) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += ld(x, i * step);
  const double m = n ? s / static_cast<double>(n) : 0.0;
  double q = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = ld(x, i * step) - m;
    q += d * d;
  }
  *mean = m;
  *var = n ? q / static_cast<double>(n) : 0.0;
}

// `t` broadcast (numpy rules) to `dims`, as doubles in row-major order.
template <typename T>
Result<std::vector<double>> expand_to(const Tensor& t, const Dims& dims, const char* what) {
  auto plan = make_broadcast_plan_to({&t.dims}, dims);
  if (!plan.is_ok())
    return invalid(what, " of shape ", dims_str(t.dims), " does not broadcast to ", dims_str(dims));
  const BroadcastPlan& p = plan.value();
  std::vector<double> out(static_cast<size_t>(p.total));
  const T* src = t.as<T>();
  for_each_segment(p, 0, p.total, [&](int64_t o, const int64_t* offs, int64_t len) {
    for (int64_t i = 0; i < len; ++i) out[o + i] = ld(src, offs[0] + i * p.inner_step[0]);
  });
  return out;
}

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, double epsilon, infer_dtype stat_dtype)
      : axis_(axis), epsilon_(epsilon), stat_dtype_(stat_dtype) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& S = *ctx.input(1);
    const Tensor* B = ctx.input(2);
    const int64_t rank = static_cast<int64_t>(X.rank());
    if (rank == 0) return invalid("X must have at least 1 dim");
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
    const Dims norm(X.dims.begin() + axis, X.dims.end());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
    const int64_t inner = sdk::element_count(norm.data(), norm.size());
    Dims stat_dims(X.dims.begin(), X.dims.begin() + axis);
    stat_dims.resize(static_cast<size_t>(rank), 1);
    const infer_dtype stat_dtype = stat_dtype_ == INFER_DTYPE_UNDEFINED ? X.dtype : stat_dtype_;
    return dispatch_float(X.dtype, "X", [&]<typename T>(Tag<T>) -> Status {
      if (S.dtype != X.dtype || (B && B->dtype != X.dtype))
        return invalid("Scale and B must have X's dtype ", dtype_name(X.dtype));
      CPU_ASSIGN_OR_RETURN(std::vector<double> scale, expand_to<T>(S, norm, "Scale"));
      std::vector<double> bias;
      if (B) {
        CPU_ASSIGN_OR_RETURN(bias, expand_to<T>(*B, norm, "B"));
      }
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
      std::vector<double> means(static_cast<size_t>(outer)), invs(static_cast<size_t>(outer));
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      if constexpr (std::is_same_v<T, float>) {
        // Scale and B hold `inner` values in row order (they broadcast to the normalized
        // dims, checked above, with as many elements, so only leading 1s can differ).
        if (S.numel() == inner && (B == nullptr || B->numel() == inner) && inner > 0) {
          const simd::Isa isa = kernel_isa();
          const float* g = S.as<float>();
          const float* bb = B ? B->as<float>() : nullptr;
          const float eps = static_cast<float>(epsilon_);
          ctx.parallel_for(static_cast<size_t>(outer), grain_for(static_cast<size_t>(inner) * 4),
                           [&](size_t o0, size_t o1) {
                             for (size_t o = o0; o < o1; ++o) {
                               const int64_t off = static_cast<int64_t>(o) * inner;
                               float mean, inv;
                               simd::layernorm_row(isa, x + off, y + off, static_cast<size_t>(inner),
                                                   g, bb, eps, &mean, &inv);
                               means[o] = mean;
                               invs[o] = inv;
                             }
                           });
          CPU_RETURN_IF_ERROR(write_stat(ctx, 1, stat_dtype, stat_dims, means));
          return write_stat(ctx, 2, stat_dtype, stat_dims, invs);
        }
      }
      ctx.parallel_for(static_cast<size_t>(outer), grain_for(static_cast<size_t>(inner) * 4),
                       [&](size_t o0, size_t o1) {
                         for (size_t o = o0; o < o1; ++o) {
                           const int64_t off = static_cast<int64_t>(o) * inner;
                           double mean, var;
                           moments(x + off, inner, 1, &mean, &var);
                           const double inv = 1.0 / std::sqrt(var + epsilon_);
                           means[o] = mean;
                           invs[o] = inv;
                           for (int64_t i = 0; i < inner; ++i) {
                             const double v = (ld(x, off + i) - mean) * inv * scale[i];
                             y[off + i] = st<T>(B ? v + bias[i] : v);
                           }
                         }
                       });
      CPU_RETURN_IF_ERROR(write_stat(ctx, 1, stat_dtype, stat_dims, means));
      return write_stat(ctx, 2, stat_dtype, stat_dims, invs);
    });
  }

 private:
  static Status write_stat(KernelContext& ctx, size_t i, infer_dtype dtype, const Dims& dims,
                           const std::vector<double>& v) {
    if (!ctx.has_output(i)) return Status::ok();
    CPU_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(i, dtype, dims));
    return dispatch_float(dtype, "statistics output", [&]<typename U>(Tag<U>) {
      U* p = t->mut<U>();
      for (size_t k = 0; k < v.size(); ++k) p[k] = st<U>(v[k]);
      return Status::ok();
    });
  }

  int64_t axis_;
  double epsilon_;
  infer_dtype stat_dtype_;  // UNDEFINED: same as X
};

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(double epsilon) : epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& S = *ctx.input(1);
    const Tensor& B = *ctx.input(2);
    if (X.rank() < 3)
      return invalid("input must have at least 3 dims (N, C, D1, ...), got ", dims_str(X.dims));
    const int64_t N = X.dims[0], C = X.dims[1];
    const int64_t inner = N * C != 0 ? X.numel() / (N * C) : 0;
    if (S.rank() != 1 || S.dims[0] != C || B.rank() != 1 || B.dims[0] != C)
      return invalid("scale ", dims_str(S.dims), " and B ", dims_str(B.dims), " must be [", C,
                     "] for input ", dims_str(X.dims));
    if (S.dtype != X.dtype || B.dtype != X.dtype)
      return invalid("scale and B must have the input's dtype ", dtype_name(X.dtype));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    return dispatch_float(X.dtype, "input", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      ctx.parallel_for(static_cast<size_t>(N * C), grain_for(static_cast<size_t>(inner) * 4),
                       [&](size_t r0, size_t r1) {
                         for (size_t r = r0; r < r1; ++r) {
                           const int64_t c = static_cast<int64_t>(r) % C;
                           const int64_t off = static_cast<int64_t>(r) * inner;
                           double mean, var;
                           moments(x + off, inner, 1, &mean, &var);
                           const double mul = ld(S.as<T>(), c) / std::sqrt(var + epsilon_);
                           const double add = ld(B.as<T>(), c);
                           for (int64_t i = 0; i < inner; ++i)
                             y[off + i] = st<T>((ld(x, off + i) - mean) * mul + add);
                         }
                       });
      return Status::ok();
    });
  }

 private:
  double epsilon_;
};

class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(Dims axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    std::vector<char> reduced(static_cast<size_t>(rank), 0);
    for (int64_t a : axes_) {
      CPU_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, "axes value"));
      reduced[ax] = 1;
    }
    // Each element's group is its index in the shape with the reduced dims removed.
    Dims group_dims;
    for (int64_t d = 0; d < rank; ++d) group_dims.push_back(reduced[d] ? 1 : X.dims[d]);
    const Dims gstr = strides_of(group_dims);
    const int64_t groups = sdk::element_count(group_dims.data(), group_dims.size());
    const int64_t total = X.numel();
    const int64_t per_group = groups ? total / groups : 0;
    std::vector<int64_t> gid(static_cast<size_t>(total));
    Dims idx(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t g = 0;
      for (int64_t d = 0; d < rank; ++d)
        if (!reduced[d]) g += idx[d] * gstr[d];
      gid[i] = g;
      for (int64_t d = rank; d-- > 0;) {
        if (++idx[d] < X.dims[d]) break;
        idx[d] = 0;
      }
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    return dispatch_float(X.dtype, "input", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      std::vector<double> mean(static_cast<size_t>(groups), 0.0), sq(mean);
      for (int64_t i = 0; i < total; ++i) mean[gid[i]] += ld(x, i);
      for (double& m : mean) m /= static_cast<double>(per_group);
      for (int64_t i = 0; i < total; ++i) {
        const double d = ld(x, i) - mean[gid[i]];
        sq[gid[i]] += d * d;
      }
      for (double& s : sq) s = std::sqrt(s / static_cast<double>(per_group)) + 1e-9;
      for (int64_t i = 0; i < total; ++i) y[i] = st<T>((ld(x, i) - mean[gid[i]]) / sq[gid[i]]);
      return Status::ok();
    });
  }

 private:
  Dims axes_;
};

}  // namespace

Status layer_norm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "X"));
  const int64_t stash = attr_i(node, "stash_type", 1);
  if (stash != 1 && stash != 11 && stash != 10 && stash != 16)
    return unsupported("LayerNormalization stash_type ", stash, " is not a float type");
  return Status::ok();
}

Result<KernelPtr> layer_norm_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  // The statistics outputs have the stash type; the graph's declared dtype wins.
  infer_dtype stat = static_cast<infer_dtype>(attr_i(n, "stash_type", 1));
  for (size_t i = 1; i < 3; ++i) {
    const infer_value_view* o = node_output(n, i);
    if (o != nullptr && o->dtype != INFER_DTYPE_UNDEFINED) stat = o->dtype;
  }
  return KernelPtr(new LayerNormKernel(attr_i(n, "axis", -1), attr_f(n, "epsilon", 1e-5), stat));
}

Status instance_norm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  return check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the input");
}

Result<KernelPtr> instance_norm_create(const KernelInit& init) {
  return KernelPtr(new InstanceNormKernel(attr_f(*init.node, "epsilon", 1e-5)));
}

Status mvn_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  return check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the input");
}

Result<KernelPtr> mvn_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  Dims axes = has_attr(n, "axes") ? attr_ints(n, "axes") : Dims{0, 2, 3};
  return KernelPtr(new MvnKernel(std::move(axes)));
}

}  // namespace infer::cpu::kernels
