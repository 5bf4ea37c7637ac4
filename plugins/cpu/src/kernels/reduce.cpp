// ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceProd. Axes come from the
// `axes` attribute before the opset where they became an input (13 for ReduceSum, 18
// for the others); keepdims and noop_with_empty_axes follow ONNX. Dims are grouped into
// alternating runs of kept and reduced dims; each output element then walks its reduced
// runs with an odometer and a tight innermost loop.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd };

Kind kind_of(const char* op) {
  if (std::strcmp(op, "ReduceSum") == 0) return Kind::kSum;
  if (std::strcmp(op, "ReduceMean") == 0) return Kind::kMean;
  if (std::strcmp(op, "ReduceMax") == 0) return Kind::kMax;
  if (std::strcmp(op, "ReduceMin") == 0) return Kind::kMin;
  return Kind::kProd;
}

// The opset from which axes are an input rather than an attribute.
int64_t axes_input_opset(Kind k) { return k == Kind::kSum ? 13 : 18; }

struct Runs {
  Dims kept_sizes, kept_strides, red_sizes, red_strides;
  int64_t red_count = 1;
};

template <typename T, Kind K>
void reduce_range(const T* x, const Runs& r, T* y, int64_t o0, int64_t o1) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  const size_t nk = r.kept_sizes.size(), nr = r.red_sizes.size();
  const int64_t inner_n = nr ? r.red_sizes[nr - 1] : 1;
  const int64_t inner_s = nr ? r.red_strides[nr - 1] : 0;
  const int64_t outer_red = inner_n ? r.red_count / inner_n : 0;
  int64_t idx[16];
  for (int64_t o = o0; o < o1; ++o) {
    int64_t base = 0, rem = o;
    for (size_t d = nk; d-- > 0;) {
      base += (rem % r.kept_sizes[d]) * r.kept_strides[d];
      rem /= r.kept_sizes[d];
    }
    Acc acc;
    if constexpr (K == Kind::kMax)
      acc = std::numeric_limits<T>::lowest();
    else if constexpr (K == Kind::kMin)
      acc = std::numeric_limits<T>::max();
    else if constexpr (K == Kind::kProd)
      acc = 1;
    else
      acc = 0;
    for (size_t d = 0; d + 1 < nr; ++d) idx[d] = 0;
    for (int64_t q = 0; q < outer_red; ++q) {
      int64_t off = base;
      for (size_t d = 0; d + 1 < nr; ++d) off += idx[d] * r.red_strides[d];
      const T* p = x + off;
      for (int64_t i = 0; i < inner_n; ++i) {
        const T v = p[i * inner_s];
        if constexpr (K == Kind::kMax) {
          acc = (v > acc || std::isnan(static_cast<double>(v))) ? v : acc;
        } else if constexpr (K == Kind::kMin) {
          acc = (v < acc || std::isnan(static_cast<double>(v))) ? v : acc;
        } else if constexpr (K == Kind::kProd) {
          if constexpr (std::is_integral_v<T>)
            acc = static_cast<T>(static_cast<std::make_unsigned_t<T>>(acc) *
                                 static_cast<std::make_unsigned_t<T>>(v));
          else
            acc *= v;
        } else {
          if constexpr (std::is_integral_v<T>)
            acc = static_cast<T>(static_cast<std::make_unsigned_t<T>>(acc) +
                                 static_cast<std::make_unsigned_t<T>>(v));
          else
            acc += v;
        }
      }
      if (nr > 1) {
        for (size_t d = nr - 1; d-- > 0;) {  // advance the odometer over the outer runs
          if (++idx[d] < r.red_sizes[d]) break;
          idx[d] = 0;
        }
      }
    }
    if constexpr (K == Kind::kMean) {
      if constexpr (std::is_floating_point_v<T>)
        y[o] = static_cast<T>(acc / static_cast<double>(r.red_count));
      else
        y[o] = r.red_count ? static_cast<T>(acc / static_cast<T>(r.red_count)) : T(0);
    } else {
      y[o] = static_cast<T>(acc);
    }
  }
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(Kind kind, bool axes_from_input, Dims axes_attr, bool keepdims, bool noop_empty)
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
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out_dims));
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
    if (r.red_sizes.size() > 16) return internal("too many reduced runs");
    const int64_t outputs = Y->numel();
    switch (X.dtype) {
      case INFER_DTYPE_FLOAT32:
        return dispatch<float>(ctx, X, r, *Y, outputs);
      case INFER_DTYPE_INT32:
        return dispatch<int32_t>(ctx, X, r, *Y, outputs);
      case INFER_DTYPE_INT64:
        return dispatch<int64_t>(ctx, X, r, *Y, outputs);
      default:
        return invalid("dtype ", dtype_name(X.dtype), " not supported");
    }
  }

 private:
  template <typename T>
  Status dispatch(KernelContext& ctx, const Tensor& X, const Runs& r, const Tensor& Y,
                  int64_t outputs) const {
    const T* x = X.as<T>();
    T* y = Y.mut<T>();
    auto go = [&](auto fn) {
      ctx.parallel_for(static_cast<size_t>(outputs), grain_for(static_cast<size_t>(r.red_count)),
                       [&](size_t b, size_t e) {
                         fn(x, r, y, static_cast<int64_t>(b), static_cast<int64_t>(e));
                       });
    };
    switch (kind_) {
      case Kind::kSum:
        go(reduce_range<T, Kind::kSum>);
        break;
      case Kind::kMean:
        go(reduce_range<T, Kind::kMean>);
        break;
      case Kind::kMax:
        go(reduce_range<T, Kind::kMax>);
        break;
      case Kind::kMin:
        go(reduce_range<T, Kind::kMin>);
        break;
      case Kind::kProd:
        go(reduce_range<T, Kind::kProd>);
        break;
    }
    return Status::ok();
  }

  static Status identity(KernelContext& ctx, const Tensor& X) {
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (X.bytes()) std::memcpy(Y->data, X.data, X.bytes());
    return Status::ok();
  }

  Kind kind_;
  bool axes_from_input_;
  Dims axes_attr_;
  bool keepdims_, noop_empty_;
};

}  // namespace

Status reduce_check(const infer_node_view& node) {
  const Kind k = kind_of(node.op_type);
  const bool from_input = node.opset >= axes_input_opset(k);
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, from_input ? 2 : 1));
  if (from_input) CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "axes"));
  return Status::ok();
}

Result<KernelPtr> reduce_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const Kind k = kind_of(n.op_type);
  const bool from_input = n.opset >= axes_input_opset(k);
  return KernelPtr(new ReduceKernel(k, from_input, from_input ? Dims{} : attr_ints(n, "axes"),
                                    attr_i(n, "keepdims", 1) != 0,
                                    from_input && attr_i(n, "noop_with_empty_axes", 0) != 0));
}

}  // namespace infer::cpu::kernels
