// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and normalized over the flattened trailing block; from opset 13 the
// normalization runs along the single dim `axis` (default -1). Both reduce to: for each
// (outer, inner) position, normalize the `n` elements spaced `inner` apart.
// Half-precision inputs are computed in float and rounded once on store; the sum of
// exponentials is accumulated in double so long rows keep their precision.
// float32 Softmax/LogSoftmax over contiguous rows (the last axis, the usual case) run the
// SIMD library's vectorized rows (simd/softmax.hpp).
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../dispatch.hpp"
#include "../host_threads.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"
#include "simd/softmax.hpp"
#include "softmax_row.hpp"

namespace infer::cpu::kernels {
namespace {

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(SoftmaxMode mode, bool legacy, int64_t axis)
      : mode_(mode), legacy_(legacy), axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
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
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (Y->numel() == 0) return Status::ok();
    const SoftmaxMode mode = mode_;
    if (X.dtype == INFER_DTYPE_FLOAT32 && inner == 1 && mode != SoftmaxMode::kHardmax) {
      HostThreads threads(ctx.host());
      simd::softmax_rows(kernel_isa(), threads, X.as<float>(), Y->mut<float>(),
                         static_cast<size_t>(outer), static_cast<size_t>(n),
                         mode == SoftmaxMode::kLogSoftmax);
      return Status::ok();
    }
    return dispatch_float(X.dtype, "input", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      ctx.parallel_for(static_cast<size_t>(outer * inner), grain_for(static_cast<size_t>(n) * 4),
                       [&](size_t r0, size_t r1) {
                         for (size_t r = r0; r < r1; ++r) {
                           const int64_t o = static_cast<int64_t>(r) / inner,
                                         i = static_cast<int64_t>(r) % inner;
                           softmax_row(x + o * n * inner + i, y + o * n * inner + i, n, inner,
                                       mode);
                         }
                       });
      return Status::ok();
    });
  }

 private:
  SoftmaxMode mode_;
  bool legacy_;
  int64_t axis_;
};

}  // namespace

Status softmax_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  return check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the input");
}

Result<KernelPtr> softmax_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const bool legacy = n.opset < 13;
  const SoftmaxMode mode = std::strcmp(n.op_type, "LogSoftmax") == 0 ? SoftmaxMode::kLogSoftmax
                           : std::strcmp(n.op_type, "Hardmax") == 0  ? SoftmaxMode::kHardmax
                                                                     : SoftmaxMode::kSoftmax;
  return KernelPtr(new SoftmaxKernel(mode, legacy, attr_i(n, "axis", legacy ? 1 : -1)));
}

}  // namespace infer::cpu::kernels
