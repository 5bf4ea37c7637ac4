// LRN (local response normalization across channels), input [N, C, D1, ...]:
//   square_sum[n, c, d] = sum of x[n, j, d]^2 for j in
//                         [max(0, c - floor((size - 1) / 2)), min(C - 1, c + ceil((size - 1) / 2))]
//   y = x / (bias + alpha / size * square_sum) ^ beta
// Computed in double, rounded once on store.
#include <algorithm>
#include <cmath>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"

namespace infer::cpu::kernels {
namespace {

class LrnKernel final : public Kernel {
 public:
  LrnKernel(double alpha, double beta, double bias, int64_t size)
      : alpha_(alpha), beta_(beta), bias_(bias), size_(size) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() < 2)
      return invalid("input must have at least 2 dims (N, C, ...), got ", dims_str(X.dims));
    const int64_t N = X.dims[0], C = X.dims[1];
    const int64_t inner = N * C != 0 ? X.numel() / (N * C) : 0;
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;  // floor and ceil of (size-1)/2
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    return dispatch_float(X.dtype, "input", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      const double scale = alpha_ / static_cast<double>(size_);
      ctx.parallel_for(
          static_cast<size_t>(N * C), grain_for(static_cast<size_t>(inner * size_)),
          [&](size_t r0, size_t r1) {
            for (size_t r = r0; r < r1; ++r) {
              const int64_t n = static_cast<int64_t>(r) / C, c = static_cast<int64_t>(r) % C;
              const int64_t c0 = std::max<int64_t>(0, c - lo), c1 = std::min(C - 1, c + hi);
              for (int64_t i = 0; i < inner; ++i) {
                double sq = 0;
                for (int64_t j = c0; j <= c1; ++j) {
                  const double v = static_cast<double>(to_compute(x[(n * C + j) * inner + i]));
                  sq += v * v;
                }
                const int64_t at = (n * C + c) * inner + i;
                const double v = static_cast<double>(to_compute(x[at]));
                y[at] = from_compute<T>(
                    static_cast<compute_t<T>>(v / std::pow(bias_ + scale * sq, beta_)));
              }
            }
          });
      return Status::ok();
    });
  }

 private:
  double alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

Status lrn_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the input"));
  if (!has_attr(node, "size")) return unsupported("LRN needs the size attribute");
  if (attr_i(node, "size", 0) < 1)
    return unsupported("LRN size must be at least 1, got ", attr_i(node, "size", 0));
  return Status::ok();
}

Result<KernelPtr> lrn_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new LrnKernel(attr_f(n, "alpha", 1e-4), attr_f(n, "beta", 0.75),
                                 attr_f(n, "bias", 1.0), attr_i(n, "size", 1)));
}

}  // namespace infer::cpu::kernels
