// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13).
//
// Input scores are [N, C] or [N, C, d1, ..., dk]; target holds class indices of shape
// [N] or [N, d1, ..., dk] (int32/int64); the optional weight [C] scales each class. A
// target equal to ignore_index (when the attribute is given) contributes nothing, not
// even to the mean's denominator; any other target outside [0, C) is an error.
//   loss[n, d] = -weight[t] * input[n, t, d]     with t = target[n, d]
// reduction: "none" keeps that shape, "sum" adds it up, "mean" (the default) divides the
// sum by the sum of the weights used. SoftmaxCrossEntropyLoss first takes the log of the
// softmax over the class dim (optionally returned as its second output, log_prob) and
// then applies the same loss. Arithmetic is in double, rounded once on store.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"

namespace infer::cpu::kernels {
namespace {

enum class LossReduction { kNone, kSum, kMean };

// Reads any float tensor into doubles.
template <typename T>
std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  const T* p = t.as<T>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(to_compute(p[i]));
  return v;
}

class LossKernel final : public Kernel {
 public:
  LossKernel(bool softmax, LossReduction reduction, bool has_ignore, int64_t ignore_index)
      : softmax_(softmax),
        reduction_(reduction),
        has_ignore_(has_ignore),
        ignore_index_(ignore_index) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& Tg = *ctx.input(1);
    const Tensor* W = ctx.input(2);
    if (X.rank() < 2)
      return invalid("scores must have at least 2 dims [N, C, ...], got ", dims_str(X.dims));
    const int64_t N = X.dims[0], C = X.dims[1];
    Dims want_target{N};
    want_target.insert(want_target.end(), X.dims.begin() + 2, X.dims.end());
    if (Tg.dims != want_target)
      return invalid("target has shape ", dims_str(Tg.dims), ", expected ", dims_str(want_target),
                     " for scores ", dims_str(X.dims));
    if (W != nullptr) {
      if (W->rank() != 1 || W->dims[0] != C)
        return invalid("weight has shape ", dims_str(W->dims), ", expected [", C, "]");
      if (W->dtype != X.dtype)
        return invalid("weight is ", dtype_name(W->dtype), ", expected ", dtype_name(X.dtype));
    }
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> target, read_int_list_nd(Tg));
    return dispatch_float(X.dtype, "scores", [&]<typename T>(Tag<T>) -> Status {
      const int64_t D = N == 0 || C == 0 ? 0 : X.numel() / (N * C);
      std::vector<double> x = to_doubles<T>(X);
      std::vector<double> w;
      if (W != nullptr) w = to_doubles<T>(*W);
      // Validate every target before writing anything.
      for (size_t i = 0; i < target.size(); ++i) {
        const int64_t t = target[i];
        if (has_ignore_ && t == ignore_index_) continue;
        if (t < 0 || t >= C)
          return invalid("target value ", t, " at flat index ", i, " is out of range [0, ", C, ")",
                         has_ignore_ ? cat(" and is not ignore_index ", ignore_index_) : "");
      }
      if (softmax_) {
        log_softmax(x, N, C, D);
        if (ctx.has_output(1)) {
          CPU_ASSIGN_OR_RETURN(Tensor * LP, ctx.allocate_output(1, X.dtype, X.dims));
          T* lp = LP->mut<T>();
          for (size_t i = 0; i < x.size(); ++i)
            lp[i] = from_compute<T>(static_cast<compute_t<T>>(x[i]));
        }
      }
      std::vector<double> loss(target.size(), 0.0);
      double weight_sum = 0, loss_sum = 0;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t d = 0; d < D; ++d) {
          const size_t at = static_cast<size_t>(n * D + d);
          const int64_t t = target[at];
          if (has_ignore_ && t == ignore_index_) continue;
          const double wt = w.empty() ? 1.0 : w[static_cast<size_t>(t)];
          loss[at] = -x[static_cast<size_t>((n * C + t) * D + d)] * wt;
          weight_sum += wt;
          loss_sum += loss[at];
        }
      }
      if (reduction_ == LossReduction::kNone) {
        CPU_ASSIGN_OR_RETURN(Tensor * L, ctx.allocate_output(0, X.dtype, Tg.dims));
        T* l = L->mut<T>();
        for (size_t i = 0; i < loss.size(); ++i)
          l[i] = from_compute<T>(static_cast<compute_t<T>>(loss[i]));
      } else {
        CPU_ASSIGN_OR_RETURN(Tensor * L, ctx.allocate_output(0, X.dtype, Dims{}));
        const double v = reduction_ == LossReduction::kSum ? loss_sum : loss_sum / weight_sum;
        *L->mut<T>() = from_compute<T>(static_cast<compute_t<T>>(v));
      }
      return Status::ok();
    });
  }

 private:
  // Targets of any shape as int64 (read_int_list takes 1-D only).
  static Result<std::vector<int64_t>> read_int_list_nd(const Tensor& t) {
    Tensor flat = t;
    flat.dims = {t.numel()};
    return read_int_list(flat, "target");
  }

  // In place: x[n, :, d] = log(softmax(x[n, :, d])).
  static void log_softmax(std::vector<double>& x, int64_t N, int64_t C, int64_t D) {
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t d = 0; d < D; ++d) {
        double* p = x.data() + n * C * D + d;
        double mx = -INFINITY;
        for (int64_t c = 0; c < C; ++c) mx = std::fmax(mx, p[c * D]);
        if (std::isinf(mx) && mx < 0) mx = 0;
        double sum = 0;
        for (int64_t c = 0; c < C; ++c) sum += std::exp(p[c * D] - mx);
        const double ls = std::log(sum);
        for (int64_t c = 0; c < C; ++c) p[c * D] = p[c * D] - mx - ls;
      }
    }
  }

  bool softmax_;
  LossReduction reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

Result<LossReduction> parse_reduction(const infer_node_view& n) {
  const std::string r = attr_s(n, "reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  return unsupported(n.op_type, " reduction '", r, "' is not one of none, sum, mean");
}

}  // namespace

Status loss_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the scores"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kInts, "the target"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kAllFloat, "the weight"));
  return parse_reduction(node).status();
}

Result<KernelPtr> loss_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  CPU_ASSIGN_OR_RETURN(LossReduction r, parse_reduction(n));
  return KernelPtr(new LossKernel(std::strcmp(n.op_type, "SoftmaxCrossEntropyLoss") == 0, r,
                                  has_attr(n, "ignore_index"), attr_i(n, "ignore_index", 0)));
}

}  // namespace infer::cpu::kernels
