// ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceProd / ReduceL1 / ReduceL2 /
// ReduceLogSum / ReduceLogSumExp / ReduceSumSquare. Axes come from the `axes` attribute
// before the opset where they became an input (13 for ReduceSum, 18 for the others);
// keepdims and noop_with_empty_axes follow ONNX. Dims are grouped into alternating runs
// of kept and reduced dims; each output element then walks its reduced runs with an
// odometer and a tight innermost loop.
//
// Floating-point inputs accumulate in double (16-bit floats are decoded first) and are
// rounded once on store. Integer sums, products and squares wrap around like the
// integer arithmetic of numpy; L2, LogSum and LogSumExp of integers are computed in
// double and truncated (saturating) to the integer type. An empty reduction gives the
// identity of the operation: 0 for sums, 1 for products, the lowest (highest) value for
// Max (Min), -inf for LogSum and LogSumExp, NaN for the mean of floats.
// float32 ReduceSum/ReduceMean over trailing contiguous dims (the last axis of a
// transformer's hidden states, say) run the SIMD library's vector sum per output
// (float lanes instead of a double accumulator: a few ulp of difference).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../dispatch.hpp"
#include "../host_threads.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "simd/vec.hpp"

namespace infer::cpu::kernels {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

struct KindName {
  const char* op;
  ReduceKind kind;
};
constexpr KindName kKinds[] = {
    {"ReduceSum", ReduceKind::kSum},
    {"ReduceMean", ReduceKind::kMean},
    {"ReduceMax", ReduceKind::kMax},
    {"ReduceMin", ReduceKind::kMin},
    {"ReduceProd", ReduceKind::kProd},
    {"ReduceL1", ReduceKind::kL1},
    {"ReduceL2", ReduceKind::kL2},
    {"ReduceLogSum", ReduceKind::kLogSum},
    {"ReduceLogSumExp", ReduceKind::kLogSumExp},
    {"ReduceSumSquare", ReduceKind::kSumSquare},
};

ReduceKind reduce_kind_of(const char* op) {
  for (const KindName& k : kKinds)
    if (std::strcmp(k.op, op) == 0) return k.kind;
  return ReduceKind::kSum;
}

// The opset from which axes are an input rather than an attribute.
int64_t axes_input_opset(ReduceKind k) { return k == ReduceKind::kSum ? 13 : 18; }

struct Runs {
  Dims kept_sizes, kept_strides, red_sizes, red_strides;
  int64_t red_count = 1;
};

// Calls fn(element) for every input element reduced into the output element whose
// first input element is at `base`.
template <typename T, typename F>
void visit(const T* x, int64_t base, const Runs& r, F&& fn) {
  const size_t nr = r.red_sizes.size();
  if (nr == 0) {
    fn(x[base]);
    return;
  }
  const int64_t inner_n = r.red_sizes[nr - 1];
  const int64_t inner_s = r.red_strides[nr - 1];
  if (inner_n == 0) return;
  const int64_t outer_red = r.red_count / inner_n;
  int64_t idx[32] = {};
  for (int64_t q = 0; q < outer_red; ++q) {
    int64_t off = base;
    for (size_t d = 0; d + 1 < nr; ++d) off += idx[d] * r.red_strides[d];
    const T* p = x + off;
    for (int64_t i = 0; i < inner_n; ++i) fn(p[i * inner_s]);
    for (size_t d = nr - 1; d-- > 0;) {  // advance the odometer over the outer runs
      if (++idx[d] < r.red_sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// double -> integer type without undefined behaviour: NaN gives 0, out-of-range values
// saturate.
template <typename T>
T saturate_int(double v) {
  if (std::isnan(v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T>
T reduce_from_double(double v) {
  if constexpr (is_float_v<T>)
    return from_compute<T>(static_cast<compute_t<T>>(v));
  else
    return saturate_int<T>(v);
}

template <typename T, ReduceKind K>
T reduce_one(const T* x, int64_t base, const Runs& r) {
  using C = compute_t<T>;
  constexpr bool kFloat = is_float_v<T>;
  if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin) {
    C acc;
    if constexpr (kFloat)
      acc = K == ReduceKind::kMax ? -std::numeric_limits<C>::infinity()
                                  : std::numeric_limits<C>::infinity();
    else
      acc =
          K == ReduceKind::kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    visit(x, base, r, [&](T raw) {
      const C v = to_compute(raw);
      if constexpr (kFloat) {
        if (std::isnan(v) || std::isnan(acc)) {
          acc = std::isnan(acc) ? acc : v;
          return;
        }
      }
      if (K == ReduceKind::kMax ? v > acc : v < acc) acc = v;
    });
    return from_compute<T>(acc);
  } else if constexpr (K == ReduceKind::kLogSumExp) {
    double mx = -INFINITY;
    visit(x, base, r, [&](T raw) { mx = std::fmax(mx, static_cast<double>(to_compute(raw))); });
    if (std::isinf(mx)) return reduce_from_double<T>(mx);  // empty, all -inf, or some +inf
    double sum = 0;
    visit(x, base, r, [&](T raw) { sum += std::exp(static_cast<double>(to_compute(raw)) - mx); });
    return reduce_from_double<T>(mx + std::log(sum));
  } else if constexpr (kFloat || K == ReduceKind::kL2 || K == ReduceKind::kLogSum) {
    double acc = K == ReduceKind::kProd ? 1.0 : 0.0;
    visit(x, base, r, [&](T raw) {
      const double v = static_cast<double>(to_compute(raw));
      if constexpr (K == ReduceKind::kProd)
        acc *= v;
      else if constexpr (K == ReduceKind::kL1)
        acc += std::fabs(v);
      else if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare)
        acc += v * v;
      else
        acc += v;
    });
    if constexpr (K == ReduceKind::kMean) acc /= static_cast<double>(r.red_count);
    if constexpr (K == ReduceKind::kL2) acc = std::sqrt(acc);
    if constexpr (K == ReduceKind::kLogSum) acc = std::log(acc);
    return reduce_from_double<T>(acc);
  } else {
    // Integers: wrap-around arithmetic in the unsigned 64-bit type, truncated on store.
    using U = uint64_t;
    U acc = K == ReduceKind::kProd ? 1 : 0;
    visit(x, base, r, [&](T raw) {
      U v = static_cast<U>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, U>>(raw));
      if constexpr (K == ReduceKind::kL1) {
        if constexpr (std::is_signed_v<T>)
          if (raw < 0) v = U(0) - v;
      }
      if constexpr (K == ReduceKind::kProd)
        acc *= v;
      else if constexpr (K == ReduceKind::kSumSquare)
        acc += v * v;
      else
        acc += v;
    });
    if constexpr (K == ReduceKind::kMean) {
      if (r.red_count == 0) return T(0);
      if constexpr (std::is_signed_v<T>)
        return static_cast<T>(static_cast<int64_t>(acc) / r.red_count);
      else
        return static_cast<T>(acc / static_cast<U>(r.red_count));
    }
    return static_cast<T>(acc);
  }
}

template <typename T, ReduceKind K>
void reduce_range(const T* x, const Runs& r, T* y, int64_t o0, int64_t o1) {
  const size_t nk = r.kept_sizes.size();
  for (int64_t o = o0; o < o1; ++o) {
    int64_t base = 0, rem = o;
    for (size_t d = nk; d-- > 0;) {
      base += (rem % r.kept_sizes[d]) * r.kept_strides[d];
      rem /= r.kept_sizes[d];
    }
    y[o] = reduce_one<T, K>(x, base, r);
  }
}

template <typename T>
using RangeFn = void (*)(const T*, const Runs&, T*, int64_t, int64_t);

template <typename T>
RangeFn<T> range_fn(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum:
      return &reduce_range<T, ReduceKind::kSum>;
    case ReduceKind::kMean:
      return &reduce_range<T, ReduceKind::kMean>;
    case ReduceKind::kMax:
      return &reduce_range<T, ReduceKind::kMax>;
    case ReduceKind::kMin:
      return &reduce_range<T, ReduceKind::kMin>;
    case ReduceKind::kProd:
      return &reduce_range<T, ReduceKind::kProd>;
    case ReduceKind::kL1:
      return &reduce_range<T, ReduceKind::kL1>;
    case ReduceKind::kL2:
      return &reduce_range<T, ReduceKind::kL2>;
    case ReduceKind::kLogSum:
      return &reduce_range<T, ReduceKind::kLogSum>;
    case ReduceKind::kLogSumExp:
      return &reduce_range<T, ReduceKind::kLogSumExp>;
    case ReduceKind::kSumSquare:
      return &reduce_range<T, ReduceKind::kSumSquare>;
  }
  return nullptr;
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceKind kind, bool axes_from_input, Dims axes_attr, bool keepdims,
               bool noop_empty)
      : kind_(kind),
        axes_from_input_(axes_from_input),
        axes_attr_(std::move(axes_attr)),
        keepdims_(keepdims),
        noop_empty_(noop_empty) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    Dims axes = axes_attr_;
    if (axes_from_input_ && ctx.input(1) != nullptr) {
      CPU_ASSIGN_OR_RETURN(axes, read_int_list(*ctx.input(1), "axes"));
    }
    std::vector<char> reduced(static_cast<size_t>(rank), 0);
    if (axes.empty()) {
      if (noop_empty_) return identity(ctx, X);
      std::fill(reduced.begin(), reduced.end(), 1);
    }
    for (int64_t a : axes) {
      CPU_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, "axes value"));
      reduced[ax] = 1;
    }
    Dims out_dims;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d])
        out_dims.push_back(X.dims[d]);
      else if (keepdims_)
        out_dims.push_back(1);
    }
    // Group dims into runs of kept / reduced dims with their strides.
    Runs r;
    const Dims strides = strides_of(X.dims);
    for (int64_t d = 0; d < rank; ++d) {
      Dims& sizes = reduced[d] ? r.red_sizes : r.kept_sizes;
      Dims& strd = reduced[d] ? r.red_strides : r.kept_strides;
      const bool extend = d > 0 && reduced[d] == reduced[d - 1] && !sizes.empty();
      if (extend) {
        sizes.back() *= X.dims[d];
        strd.back() = strides[d];
      } else {
        sizes.push_back(X.dims[d]);
        strd.push_back(strides[d]);
      }
      if (reduced[d]) r.red_count *= X.dims[d];
    }
    if (r.red_sizes.size() > 32) return internal("too many reduced runs");
    if (X.dtype == INFER_DTYPE_FLOAT32 &&
        (kind_ == ReduceKind::kSum || kind_ == ReduceKind::kMean) && r.red_sizes.size() == 1 &&
        r.red_strides[0] == 1 && r.red_count > 0) {
      // One reduced run with stride 1: the trailing dims, each output a contiguous row.
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out_dims));
      const float* x = X.as<float>();
      float* y = Y->mut<float>();
      const size_t n = static_cast<size_t>(r.red_count);
      const float scale =
          kind_ == ReduceKind::kMean ? 1.0f / static_cast<float>(r.red_count) : 1.0f;
      const bool mean = kind_ == ReduceKind::kMean;
      const simd::Isa isa = kernel_isa();
      ctx.parallel_for(static_cast<size_t>(Y->numel()), grain_for(n), [&](size_t b, size_t e) {
        for (size_t o = b; o < e; ++o) {
          const float s = simd::vec_sum(isa, x + o * n, n);
          y[o] = mean ? s * scale : s;
        }
      });
      return Status::ok();
    }
    return dispatch(X.dtype, dtypes::kAllNum, "input", [&]<typename T>(Tag<T>) -> Status {
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out_dims));
      const int64_t outputs = Y->numel();
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      RangeFn<T> fn = range_fn<T>(kind_);
      ctx.parallel_for(static_cast<size_t>(outputs),
                       grain_for(static_cast<size_t>(std::max<int64_t>(r.red_count, 1))),
                       [&](size_t b, size_t e) {
                         fn(x, r, y, static_cast<int64_t>(b), static_cast<int64_t>(e));
                       });
      return Status::ok();
    });
  }

 private:
  static Status identity(KernelContext& ctx, const Tensor& X) {
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (X.bytes()) std::memcpy(Y->data, X.data, X.bytes());
    return Status::ok();
  }

  ReduceKind kind_;
  bool axes_from_input_;
  Dims axes_attr_;
  bool keepdims_, noop_empty_;
};

}  // namespace

Status reduce_check(const infer_node_view& node) {
  const ReduceKind k = reduce_kind_of(node.op_type);
  const bool from_input = node.opset >= axes_input_opset(k);
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, from_input ? 2 : 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllNum, "the data"));
  if (from_input) CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "axes"));
  return Status::ok();
}

Result<KernelPtr> reduce_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const ReduceKind k = reduce_kind_of(n.op_type);
  const bool from_input = n.opset >= axes_input_opset(k);
  return KernelPtr(new ReduceKernel(k, from_input, from_input ? Dims{} : attr_ints(n, "axes"),
                                    attr_i(n, "keepdims", 1) != 0,
                                    from_input && attr_i(n, "noop_with_empty_axes", 0) != 0));
}

}  // namespace infer::cpu::kernels
