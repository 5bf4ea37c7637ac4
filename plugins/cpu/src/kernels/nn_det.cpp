// Det (opset 11): determinants of the square matrices in the last two dims of X
// [*, M, M], giving shape [*]. LU decomposition with partial pivoting, in double.
#include <cmath>
#include <utility>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"

namespace infer::cpu::kernels {
namespace {

double determinant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[r * m + c]) > std::fabs(a[piv * m + c])) piv = r;
    if (a[piv * m + c] == 0) return 0;
    if (piv != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[piv * m + k]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      if (f == 0) continue;
      for (int64_t k = c + 1; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const size_t rank = X.rank();
    if (rank < 2 || X.dims[rank - 1] != X.dims[rank - 2])
      return invalid("input must be [*, M, M] (square matrices), got ", dims_str(X.dims));
    const int64_t m = X.dims[rank - 1];
    const Dims out(X.dims.begin(), X.dims.end() - 2);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    const int64_t batch = Y->numel();
    return dispatch_float(X.dtype, "input", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      std::vector<double> a(static_cast<size_t>(m * m));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < m * m; ++i)
          a[i] = static_cast<double>(to_compute(x[b * m * m + i]));
        y[b] = from_compute<T>(static_cast<compute_t<T>>(determinant(a, m)));
      }
      return Status::ok();
    });
  }
};

}  // namespace

Status det_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  return check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the input");
}

Result<KernelPtr> det_create(const KernelInit&) { return KernelPtr(new DetKernel()); }

}  // namespace infer::cpu::kernels
