// DynamicQuantizeLinear (opsets 11-21): quantizes float32 x to uint8 with a scale and
// zero point computed from x's range, widened to include 0:
//   scale = (max(0, max x) - min(0, min x)) / 255
//   zero_point = saturate(round_half_even(0 - min / scale))
//   y = saturate(round_half_even(x / scale) + zero_point)
// NaNs are ignored when taking the range. An all-zero x has scale 0: its zero point and
// every y are then 0 (the formulas would divide by zero).
#include "../host_threads.hpp"
#include "quant_common.hpp"
#include "simd/quantize.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace quant;  // NOLINT: short names for the helpers

class DynamicQuantizeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    if (X == nullptr) return invalid("x is required");
    if (X->dtype != INFER_DTYPE_FLOAT32)
      return invalid("x must be float32, got ", dtype_name(X->dtype));
    const float* x = X->as<float>();
    const size_t n = static_cast<size_t>(X->numel());
    // The range, in parallel chunks.
    constexpr size_t kChunk = 1 << 16;
    const size_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<float> los(chunks, 0.0f), his(chunks, 0.0f);
    ctx.parallel_for(chunks, 1, [&](size_t b, size_t e) {
      for (size_t c = b; c < e; ++c)
        simd::range_with_zero(kernel_isa(), x + c * kChunk, std::min(kChunk, n - c * kChunk),
                              &los[c], &his[c]);
    });
    float lo = 0.0f, hi = 0.0f;
    for (size_t c = 0; c < chunks; ++c) {
      lo = std::min(lo, los[c]);
      hi = std::max(hi, his[c]);
    }
    if (std::isinf(lo) || std::isinf(hi))
      return invalid("x holds an infinity: no finite scale covers its range");
    const float scale = (hi - lo) / 255.0f;
    uint8_t zp = 0;
    if (scale > 0) zp = saturate_round<uint8_t>((0.0f - lo / scale), 0);

    if (ctx.has_output(0)) {
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_UINT8, X->dims));
      uint8_t* y = Y->mut<uint8_t>();
      if (scale > 0) {
        ctx.parallel_for(
            n, 16384, [&](size_t b, size_t e) { quantize_8bit(x + b, e - b, scale, zp, y + b); });
      } else if (n > 0) {
        std::fill_n(y, n, uint8_t{0});
      }
    }
    if (ctx.has_output(1)) {
      CPU_ASSIGN_OR_RETURN(Tensor * S, ctx.allocate_output(1, INFER_DTYPE_FLOAT32, {}));
      *S->mut<float>() = scale;
    }
    if (ctx.has_output(2)) {
      CPU_ASSIGN_OR_RETURN(Tensor * Z, ctx.allocate_output(2, INFER_DTYPE_UINT8, {}));
      *Z->mut<uint8_t>() = zp;
    }
    return Status::ok();
  }
};

}  // namespace

Status quant_dynamic_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  return check_dtype(node, node_input(node, 0), dtypes::kF32, "x");
}

Result<KernelPtr> quant_dynamic_create(const KernelInit&) {
  return KernelPtr(new DynamicQuantizeKernel());
}

}  // namespace infer::cpu::kernels
