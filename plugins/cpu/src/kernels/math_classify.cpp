// Float classification with a bool output: IsNaN, and IsInf with its detect_positive /
// detect_negative attributes (both default to 1).
#include <cmath>
#include <cstring>

#include "../node_util.hpp"
#include "math_common.hpp"

namespace infer::cpu::kernels {
namespace {

class ClassifyKernel final : public Kernel {
 public:
  // nan: IsNaN; otherwise IsInf detecting the signs asked for.
  ClassifyKernel(bool nan, bool pos, bool neg) : nan_(nan), pos_(pos), neg_(neg) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    if (X == nullptr) return invalid("input 0 is required");
    return dispatch(X->dtype, dtypes::kAllFloat, nan_ ? "IsNaN" : "IsInf",
                    [&]<typename T>(Tag<T>) -> Status {
                      if constexpr (is_float_v<T>) {
                        CPU_ASSIGN_OR_RETURN(Tensor * Y,
                                             ctx.allocate_output(0, INFER_DTYPE_BOOL, X->dims));
                        const T* x = X->as<T>();
                        uint8_t* y = Y->mut<uint8_t>();
                        const bool nan = nan_, pos = pos_, neg = neg_;
                        ctx.parallel_for(static_cast<size_t>(X->numel()), 16384,
                                         [&](size_t b, size_t e) {
                                           for (size_t i = b; i < e; ++i) {
                                             const auto v = to_compute(x[i]);
                                             bool r;
                                             if (nan)
                                               r = std::isnan(v);
                                             else
                                               r = std::isinf(v) && (v > 0 ? pos : neg);
                                             y[i] = r ? 1 : 0;
                                           }
                                         });
                        return Status::ok();
                      } else {
                        return internal("IsNaN/IsInf on a non-float dtype");
                      }
                    });
  }

 private:
  bool nan_, pos_, neg_;
};

}  // namespace

Status classify_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  return check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "input 0");
}

Result<KernelPtr> classify_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const bool nan = std::strcmp(n.op_type, "IsNaN") == 0;
  return KernelPtr(new ClassifyKernel(nan, attr_i(n, "detect_positive", 1) != 0,
                                      attr_i(n, "detect_negative", 1) != 0));
}

}  // namespace infer::cpu::kernels
