// The elementwise quantized ops of the ai.infer domain (sdk/FUSED_OPS.md), which the
// optimizer makes from QDQ chains so that activations stay 8-bit between quantized ops:
//   QLinearAdd / QLinearMul (A, A_scale, A_zero_point, B, B_scale, B_zero_point,
//     C_scale, C_zero_point) -> C: DequantizeLinear both, Add or Mul (numpy broadcasting),
//     QuantizeLinear, in float32 exactly as those ops compute it (simd/quantize.hpp);
//   QLinearLookup (X, table) -> Y: Y = table[X] over the 256 values of X's type.
// A, B and C share one 8-bit type; every scale and zero point is per tensor.
#include "../host_threads.hpp"
#include "broadcast.hpp"
#include "quant_common.hpp"
#include "simd/quantize.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace quant;  // NOLINT: short names for the dtype sets

// One per-tensor scale and zero point, checked like QuantizeLinear's and
// DequantizeLinear's own.
Result<simd::QParams> read_params(const Tensor* scale, const Tensor* zero, infer_dtype data,
                                  const char* sname, const char* zname, ScaleUse use) {
  if (scale == nullptr) return invalid(sname, " is required");
  if (scale->numel() != 1)
    return invalid(sname, " has shape ", dims_str(scale->dims),
                   ", expected one element (per-tensor quantization)");
  simd::QParams p;
  CPU_ASSIGN_OR_RETURN(std::vector<float> s, read_scales(*scale, sname, use));
  p.scale = s[0];
  if (zero != nullptr) {
    if (zero->dtype != data)
      return invalid(zname, " is ", dtype_name(zero->dtype), " but the data is ", dtype_name(data),
                     ": they must be the same type");
    if (zero->numel() != 1)
      return invalid(zname, " has shape ", dims_str(zero->dims), ", expected one element");
    CPU_ASSIGN_OR_RETURN(std::vector<int32_t> z, read_ints(*zero, zname));
    p.zero = z[0];
  }
  return p;
}

class QLinearBinaryKernel final : public Kernel {
 public:
  explicit QLinearBinaryKernel(simd::QBinaryOp op) : op_(op) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(3);
    if (A == nullptr || B == nullptr) return invalid("A and B are required");
    if (A->dtype != B->dtype)
      return invalid("A is ", dtype_name(A->dtype), " but B is ", dtype_name(B->dtype),
                     ": they must be the same type");
    CPU_ASSIGN_OR_RETURN(simd::QParams pa,
                         read_params(ctx.input(1), ctx.input(2), A->dtype, "A_scale",
                                     "A_zero_point", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(simd::QParams pb,
                         read_params(ctx.input(4), ctx.input(5), B->dtype, "B_scale",
                                     "B_zero_point", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(simd::QParams pc,
                         read_params(ctx.input(6), ctx.input(7), A->dtype, "C_scale",
                                     "C_zero_point", ScaleUse::kDivisor));
    CPU_ASSIGN_OR_RETURN(BroadcastPlan plan, make_broadcast_plan({&A->dims, &B->dims}));
    CPU_ASSIGN_OR_RETURN(Tensor * C, ctx.allocate_output(0, A->dtype, plan.out_dims));
    if (plan.total == 0) return Status::ok();
    const simd::Isa isa = kernel_isa();
    const simd::QBinaryOp op = op_;
    auto run_as = [&]<typename Q>(const Q* a, const Q* b, Q* c) {
      // Pieces of about 25 us (0.4 ns per element on AVX-512).
      ctx.parallel_for(static_cast<size_t>(plan.total), 65536, [&](size_t i0, size_t i1) {
        for_each_segment(plan, static_cast<int64_t>(i0), static_cast<int64_t>(i1),
                         [&](int64_t out, const int64_t* in, int64_t len) {
                           const size_t as = static_cast<size_t>(plan.inner_step[0]);
                           const size_t bs = static_cast<size_t>(plan.inner_step[1]);
                           if constexpr (std::is_same_v<Q, uint8_t>)
                             simd::qlinear_binary_u8(isa, op, a + in[0], as, pa, b + in[1], bs, pb,
                                                     pc, c + out, static_cast<size_t>(len));
                           else
                             simd::qlinear_binary_s8(isa, op, a + in[0], as, pa, b + in[1], bs, pb,
                                                     pc, c + out, static_cast<size_t>(len));
                         });
      });
    };
    if (A->dtype == INFER_DTYPE_UINT8)
      run_as(A->as<uint8_t>(), B->as<uint8_t>(), C->mut<uint8_t>());
    else
      run_as(A->as<int8_t>(), B->as<int8_t>(), C->mut<int8_t>());
    return Status::ok();
  }

 private:
  simd::QBinaryOp op_;
};

class QLinearLookupKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    const Tensor* T = ctx.input(1);
    if (X == nullptr || T == nullptr) return invalid("X and table are required");
    if (T->numel() != 256 || (T->dtype != INFER_DTYPE_UINT8 && T->dtype != INFER_DTYPE_INT8))
      return invalid("table must hold 256 uint8 or int8 values, got ", dtype_name(T->dtype), " ",
                     dims_str(T->dims));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, T->dtype, X->dims));
    if (Y->numel() == 0) return Status::ok();
    const uint8_t flip = X->dtype == INFER_DTYPE_INT8 ? 0x80 : 0;
    const uint8_t* x = X->as<uint8_t>();  // int8 storage read as bytes, flipped below
    const uint8_t* table = T->as<uint8_t>();
    uint8_t* y = Y->mut<uint8_t>();
    const simd::Isa isa = kernel_isa();
    // Pieces of about 15 us (0.05 ns per byte with vpermi2b): a thread woken for less
    // costs more than it saves.
    ctx.parallel_for(static_cast<size_t>(Y->numel()), 262144, [&](size_t i0, size_t i1) {
      simd::lookup_8bit(isa, x + i0, i1 - i0, flip, table, y + i0);
    });
    return Status::ok();
  }
};

}  // namespace

Status quant_qlinear_binary_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 8, 8));
  const infer_value_view* a = node_input(node, 0);
  CPU_RETURN_IF_ERROR(check_dtype(node, a, k8Bit, "A"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), k8Bit, "B"));
  for (size_t i : {1, 4, 6})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), kScale, "the scales"));
  for (size_t i : {2, 5, 7})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), k8Bit, "the zero points"));
  return Status::ok();
}

Result<KernelPtr> quant_qlinear_binary_create(const KernelInit& init) {
  const bool mul = std::string_view(init.node->op_type) == "QLinearMul";
  return KernelPtr(new QLinearBinaryKernel(mul ? simd::QBinaryOp::kMul : simd::QBinaryOp::kAdd));
}

Status quant_qlinear_lookup_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), k8Bit, "X"));
  return check_dtype(node, node_input(node, 1), k8Bit, "table");
}

Result<KernelPtr> quant_qlinear_lookup_create(const KernelInit&) {
  return KernelPtr(new QLinearLookupKernel());
}

}  // namespace infer::cpu::kernels
