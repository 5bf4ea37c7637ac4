// Gelu (ai.infer, sdk/FUSED_OPS.md; the ONNX Gelu-20 semantics): approximate = "none"
// gives 0.5·x·(1 + erf(x/√2)), "tanh" the tanh approximation. Every float type, computed
// in float for float16/bfloat16 and rounded once on store; float32 runs the SIMD
// library's vectorized form (simd/vec.hpp: erf and tanh within a few ulp of std::).
#include "../host_threads.hpp"
#include "../node_util.hpp"
#include "fused_common.hpp"
#include "nn_util.hpp"
#include "simd/vec.hpp"

namespace infer::cpu::kernels {
namespace {

class GeluKernel final : public Kernel {
 public:
  explicit GeluKernel(bool tanh_form) : tanh_form_(tanh_form) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (Y->numel() == 0) return Status::ok();
    if (X.dtype == INFER_DTYPE_FLOAT32) {
      const float* x = X.as<float>();
      float* y = Y->mut<float>();
      const simd::Isa isa = kernel_isa();
      const simd::UnaryOp op = tanh_form_ ? simd::UnaryOp::kGeluTanh : simd::UnaryOp::kGelu;
      ctx.parallel_for(static_cast<size_t>(X.numel()), 16384, [&](size_t i0, size_t i1) {
        simd::vec_unary(isa, op, x + i0, y + i0, i1 - i0);
      });
      return Status::ok();
    }
    return dispatch_float(X.dtype, "X", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      const bool tanh_form = tanh_form_;
      ctx.parallel_for(static_cast<size_t>(X.numel()), 16384, [&](size_t i0, size_t i1) {
        for (size_t i = i0; i < i1; ++i) {
          const compute_t<T> v = to_compute(x[i]);
          y[i] = from_compute<T>(tanh_form ? gelu_tanh(v) : gelu_erf(v));
        }
      });
      return Status::ok();
    });
  }

 private:
  bool tanh_form_;
};

}  // namespace

Status fused_gelu_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  const infer_attr_view* a = sdk::find_attr(&node, "approximate");
  if (a != nullptr && a->type != INFER_ATTR_STRING)
    return unsupported(node_label(node), ": attribute 'approximate' must be a string");
  const std::string approx = attr_s(node, "approximate", "none");
  if (approx != "none" && approx != "tanh")
    return unsupported(node_label(node), ": attribute 'approximate' is '", approx,
                       "', expected 'none' or 'tanh'");
  return Status::ok();
}

Result<KernelPtr> fused_gelu_create(const KernelInit& init) {
  return KernelPtr(new GeluKernel(attr_s(*init.node, "approximate", "none") == "tanh"));
}

}  // namespace infer::cpu::kernels
