// Softmax and LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and normalized over the flattened trailing block; from opset 13 the
// normalization runs along the single dim `axis` (default -1). Both reduce to: for each
// (outer, inner) position, normalize the `n` elements spaced `inner` apart.
#include <cmath>
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(bool log, bool legacy, int64_t axis) : log_(log), legacy_(legacy), axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.dtype != INFER_DTYPE_FLOAT32) return invalid("only float32 is supported");
    const int64_t rank = static_cast<int64_t>(X.rank());
    int64_t outer = 1, n = 1, inner = 1;
    if (rank == 0) {
      // A scalar normalizes over itself.
    } else {
      CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
      for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
      if (legacy_) {
        for (int64_t d = axis; d < rank; ++d) n *= X.dims[d];
      } else {
        n = X.dims[axis];
        for (int64_t d = axis + 1; d < rank; ++d) inner *= X.dims[d];
      }
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, X.dims));
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    const bool log = log_;
    ctx.parallel_for(static_cast<size_t>(outer * inner), grain_for(static_cast<size_t>(n) * 4),
                     [&](size_t r0, size_t r1) {
                       for (size_t r = r0; r < r1; ++r) {
                         const int64_t o = static_cast<int64_t>(r) / inner,
                                       i = static_cast<int64_t>(r) % inner;
                         const float* xr = x + o * n * inner + i;
                         float* yr = y + o * n * inner + i;
                         float mx = -INFINITY;
                         for (int64_t k = 0; k < n; ++k) mx = std::fmax(mx, xr[k * inner]);
                         double sum = 0;
                         for (int64_t k = 0; k < n; ++k) {
                           const float e = std::exp(xr[k * inner] - mx);
                           if (!log) yr[k * inner] = e;
                           sum += e;
                         }
                         if (log) {
                           const float ls = static_cast<float>(std::log(sum));
                           for (int64_t k = 0; k < n; ++k) yr[k * inner] = xr[k * inner] - mx - ls;
                         } else {
                           const float inv = static_cast<float>(1.0 / sum);
                           for (int64_t k = 0; k < n; ++k) yr[k * inner] *= inv;
                         }
                       }
                     });
    return Status::ok();
  }

 private:
  bool log_, legacy_;
  int64_t axis_;
};

}  // namespace

Status softmax_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }

Result<KernelPtr> softmax_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const bool legacy = n.opset < 13;
  return KernelPtr(new SoftmaxKernel(std::strcmp(n.op_type, "LogSoftmax") == 0, legacy,
                                     attr_i(n, "axis", legacy ? 1 : -1)));
}

}  // namespace infer::cpu::kernels
