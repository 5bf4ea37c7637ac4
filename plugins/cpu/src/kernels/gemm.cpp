// Gemm: Y = alpha * A' * B' + beta * C, with A' = transA ? A^T : A and B' = transB ? B^T
// : B, both read through strides. A constant float32 B is packed once at compile time
// for the packed sgemm (or the host's prepacked copy is used in place). C broadcasts
// unidirectionally to [M, N]; for float32 a row/column/scalar C becomes the sgemm
// epilogue's bias and a full C its residual, so Y is written once. FusedGemm is this
// kernel with an activation, also applied in the epilogue.
// float32 runs on sgemm; the other dtypes (float64, float16, bfloat16 and, from opset 9,
// the 32/64-bit integers) on the plain loop of nn_gemm_generic.hpp.
#include <cmath>
#include <cstring>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "../precision.hpp"
#include "broadcast.hpp"
#include "fused_common.hpp"
#include "gemm_core.hpp"
#include "nn_gemm_generic.hpp"

namespace infer::cpu::kernels {
namespace {

class GemmKernel final : public Kernel {
 public:
  GemmKernel(float alpha, float beta, bool trans_a, bool trans_b, PackedGemmB packed_b,
             Activation act)
      : alpha_(alpha),
        beta_(beta),
        trans_a_(trans_a),
        trans_b_(trans_b),
        packed_b_(std::move(packed_b)),
        act_(act) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& A = *ctx.input(0);
    const Tensor& B = *ctx.input(1);
    const Tensor* C = ctx.input(2);
    if (B.dtype != A.dtype || (C != nullptr && C->dtype != A.dtype))
      return invalid("A, B and C must have the same dtype, got ", dtype_name(A.dtype), ", ",
                     dtype_name(B.dtype), C ? cat(", ", dtype_name(C->dtype)) : "");
    if (A.rank() != 2 || B.rank() != 2)
      return invalid("A ", dims_str(A.dims), " and B ", dims_str(B.dims), " must be 2-D");
    const int64_t M = trans_a_ ? A.dims[1] : A.dims[0];
    const int64_t K = trans_a_ ? A.dims[0] : A.dims[1];
    const int64_t Kb = trans_b_ ? B.dims[1] : B.dims[0];
    const int64_t N = trans_b_ ? B.dims[0] : B.dims[1];
    if (K != Kb)
      return invalid("inner dims differ: A", trans_a_ ? "^T" : "", " ", dims_str(A.dims), " and B",
                     trans_b_ ? "^T" : "", " ", dims_str(B.dims), " give K = ", K, " and ", Kb);
    if (A.dtype != INFER_DTYPE_FLOAT32) return run_generic(ctx, A, B, C, M, N, K);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, Dims{M, N}));
    float* y = Y->mut<float>();
    GemmArgs g;
    g.M = M;
    g.N = N;
    g.K = K;
    g.A = A.as<float>();
    g.a_row_stride = trans_a_ ? 1 : K;
    g.a_col_stride = trans_a_ ? M : 1;
    if (!packed_b_.empty() && packed_b_.K() == K && packed_b_.N() == N) {
      g.packed_b = packed_b_.data();
    } else {
      // B's bytes freed by the host for a packed form that does not fit:
      if (B.data == nullptr && B.numel() > 0)
        return internal("B ", dims_str(B.dims), " has no data and no usable packed form");
      g.B = B.as<float>();
      g.ldb = trans_b_ ? 1 : N;
      g.b_col_stride = trans_b_ ? K : 1;
    }
    g.C = y;
    g.ldc = N;
    g.alpha = alpha_;
    g.epilogue.act = to_simd_act(act_);
    std::vector<float> scaled;  // beta * C when C becomes a bias and beta != 1
    if (C != nullptr && beta_ != 0.0f) {
      CPU_ASSIGN_OR_RETURN(BroadcastPlan p, make_broadcast_plan_to({&C->dims}, Y->dims));
      const float* c = C->as<float>();
      const int64_t cn = C->numel();
      const bool full = C->rank() == 2 && C->dims[0] == M && C->dims[1] == N;
      const bool per_col = !full && cn == N && (C->rank() == 1 || C->dims[0] == 1);
      const bool per_row = !full && !per_col && C->rank() == 2 && C->dims[0] == M && C->dims[1] == 1;
      const bool scalar = !full && !per_col && !per_row && cn == 1;
      if (per_col || per_row || scalar) {
        const int64_t n = per_row ? M : N;
        if (beta_ != 1.0f || scalar) {
          scaled.resize(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) scaled[i] = beta_ * c[scalar ? 0 : i];
          c = scaled.data();
        }
        g.epilogue.bias_mode =
            per_row ? simd::GemmEpilogue::Bias::kPerRow : simd::GemmEpilogue::Bias::kPerCol;
        g.epilogue.bias = c;
      } else if (full && beta_ == 1.0f) {
        g.epilogue.residual = c;
        g.epilogue.ldr = N;
      } else {
        const float beta = beta_;
        for_each_segment(p, 0, p.total, [&](int64_t o, const int64_t* offs, int64_t len) {
          const float* pc = c + offs[0];
          const int64_t step = p.inner_step[0];
          for (int64_t i = 0; i < len; ++i) y[o + i] = beta * pc[i * step];
        });
        g.accumulate = true;
      }
    }
    sgemm(ctx.host(), g);
    return Status::ok();
  }

 private:
  Status run_generic(KernelContext& ctx, const Tensor& A, const Tensor& B, const Tensor* C,
                     int64_t M, int64_t N, int64_t K) const {
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, A.dtype, Dims{M, N}));
    if (Y->numel() == 0) return Status::ok();
    BroadcastPlan plan;
    const bool with_c = C != nullptr && beta_ != 0.0f;
    if (with_c) {
      CPU_ASSIGN_OR_RETURN(plan, make_broadcast_plan_to({&C->dims}, Y->dims));
    }
    CPU_RETURN_IF_ERROR(dispatch(A.dtype, dtypes::kAllNum, "A", [&]<typename T>(Tag<T>) -> Status {
      using Acc = gemm_acc_t<T>;
      std::vector<Acc> acc(static_cast<size_t>(M * N));
      naive_gemm<T>(M, N, K, A.as<T>(), trans_a_ ? 1 : K, trans_a_ ? M : 1, B.as<T>(),
                    trans_b_ ? 1 : N, trans_b_ ? K : 1, acc.data());
      // Integers scale through double only when alpha or beta is not 1.
      auto scale = [](Acc v, float f) -> Acc {
        if constexpr (is_float_v<T>) {
          return v * static_cast<double>(f);
        } else {
          if (f == 1.0f) return v;
          const double d = static_cast<double>(static_cast<int64_t>(v)) * static_cast<double>(f);
          if (!(std::fabs(d) < 9.2e18)) return 0;  // NaN or beyond int64: no defined value
          return static_cast<Acc>(static_cast<int64_t>(d));
        }
      };
      for (Acc& v : acc) v = scale(v, alpha_);
      if (with_c) {
        const T* c = C->as<T>();
        for_each_segment(plan, 0, plan.total, [&](int64_t o, const int64_t* offs, int64_t len) {
          for (int64_t i = 0; i < len; ++i)
            acc[o + i] += scale(gemm_load(c[offs[0] + i * plan.inner_step[0]]), beta_);
        });
      }
      T* y = Y->mut<T>();
      for (size_t i = 0; i < acc.size(); ++i) y[i] = gemm_store<T>(acc[i]);
      return Status::ok();
    }));
    return apply_epilogue(ctx, *Y, nullptr, nullptr, act_);
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_;
  PackedGemmB packed_b_;  // a constant float32 B, packed at compile time (may be empty)
  Activation act_;        // FusedGemm's; kNone for Gemm
};

}  // namespace

Status gemm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, node.opset < 11 ? 3 : 2, 3));
  const uint32_t types = node.opset >= 9
                             ? dtypes::kAllFloat | dtypes::kInts | dtype_bit(INFER_DTYPE_UINT32) |
                                   dtype_bit(INFER_DTYPE_UINT64)
                             : dtypes::kAllFloat;
  for (size_t i = 0; i < node.num_inputs; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[i], types, "its inputs"));
  for (size_t i = 0; i < 2; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v->rank >= 0 && v->rank != 2)
      return unsupported("Gemm input ", i, " must be 2-D, got rank ", v->rank);
  }
  return Status::ok();
}

// The Gemm kernel for `init` (a Gemm node, or the Gemm view of a FusedGemm node) with
// activation `act`; the constant B is looked up on `weights_node` (the original node, so
// that the host's prepacked copy made for it is found).
Result<KernelPtr> gemm_create_fused(const KernelInit& init, const infer_node_view& weights_node,
                                    const Activation& act) {
  const infer_node_view& n = *init.node;
  PackedGemmB packed;
  CPU_RETURN_IF_ERROR(pack_gemm_weight(weights_node, packed, weight_precision(*init.host)));
  return KernelPtr(new GemmKernel(static_cast<float>(attr_f(n, "alpha", 1.0)),
                                  static_cast<float>(attr_f(n, "beta", 1.0)),
                                  attr_i(n, "transA", 0) != 0, attr_i(n, "transB", 0) != 0,
                                  std::move(packed), act));
}

Result<KernelPtr> gemm_create(const KernelInit& init) {
  return gemm_create_fused(init, *init.node, Activation{});
}

}  // namespace infer::cpu::kernels
