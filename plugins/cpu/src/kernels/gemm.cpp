// Gemm: Y = alpha * A' * B' + beta * C, with A' = transA ? A^T : A (read through
// strides) and B' = transB ? B^T : B. A constant transposed B is transposed once at
// compile time; a non-constant one per run. C broadcasts unidirectionally to [M, N].
#include <cstring>
#include <vector>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "broadcast.hpp"
#include "gemm_core.hpp"

namespace infer::cpu::kernels {
namespace {

class GemmKernel final : public Kernel {
 public:
  GemmKernel(float alpha, float beta, bool trans_a, bool trans_b, std::vector<float> packed_b,
             Dims packed_dims)
      : alpha_(alpha),
        beta_(beta),
        trans_a_(trans_a),
        trans_b_(trans_b),
        packed_b_(std::move(packed_b)),
        packed_dims_(std::move(packed_dims)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& A = *ctx.input(0);
    const Tensor& B = *ctx.input(1);
    const Tensor* C = ctx.input(2);
    if (A.dtype != INFER_DTYPE_FLOAT32 || B.dtype != INFER_DTYPE_FLOAT32)
      return invalid("only float32 is supported");
    if (A.rank() != 2 || B.rank() != 2)
      return invalid("A ", dims_str(A.dims), " and B ", dims_str(B.dims), " must be 2-D");
    const int64_t M = trans_a_ ? A.dims[1] : A.dims[0];
    const int64_t K = trans_a_ ? A.dims[0] : A.dims[1];
    const int64_t Kb = trans_b_ ? B.dims[1] : B.dims[0];
    const int64_t N = trans_b_ ? B.dims[0] : B.dims[1];
    if (K != Kb)
      return invalid("inner dims differ: A", trans_a_ ? "^T" : "", " ", dims_str(A.dims), " and B",
                     trans_b_ ? "^T" : "", " ", dims_str(B.dims), " give K = ", K, " and ", Kb);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, Dims{M, N}));
    float* y = Y->mut<float>();
    bool accumulate = false;
    if (C != nullptr && beta_ != 0.0f) {
      if (C->dtype != INFER_DTYPE_FLOAT32) return invalid("C must be float32");
      CPU_ASSIGN_OR_RETURN(BroadcastPlan p, make_broadcast_plan_to({&C->dims}, Y->dims));
      const float* c = C->as<float>();
      const float beta = beta_;
      for_each_segment(p, 0, p.total, [&](int64_t o, const int64_t* offs, int64_t len) {
        const float* pc = c + offs[0];
        const int64_t step = p.inner_step[0];
        for (int64_t i = 0; i < len; ++i) y[o + i] = beta * pc[i * step];
      });
      accumulate = true;
    }
    // B as a row-major [K, N] matrix.
    const float* b = B.as<float>();
    std::vector<float> transposed;
    if (trans_b_) {
      if (!packed_b_.empty() && packed_dims_ == B.dims) {
        b = packed_b_.data();
      } else {
        transposed.resize(static_cast<size_t>(K * N));
        transpose_2d(B.as<float>(), N, K, transposed.data());
        b = transposed.data();
      }
    }
    GemmArgs g;
    g.M = M;
    g.N = N;
    g.K = K;
    g.A = A.as<float>();
    g.a_row_stride = trans_a_ ? 1 : K;
    g.a_col_stride = trans_a_ ? M : 1;
    g.B = b;
    g.ldb = N;
    g.C = y;
    g.ldc = N;
    g.alpha = alpha_;
    g.accumulate = accumulate;
    sgemm(ctx.host(), g);
    return Status::ok();
  }

 private:
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  std::vector<float> packed_b_;  // constant B^T transposed to [K, N] at compile time
  Dims packed_dims_;             // B's dims the packing was made for
};

}  // namespace

Status gemm_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, node.opset < 11 ? 3 : 2, 3));
  for (size_t i = 0; i < node.num_inputs; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[i], dtypes::kF32, "its inputs"));
  for (size_t i = 0; i < 2; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v->rank >= 0 && v->rank != 2)
      return unsupported("Gemm input ", i, " must be 2-D, got rank ", v->rank);
  }
  return Status::ok();
}

Result<KernelPtr> gemm_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const bool trans_b = attr_i(n, "transB", 0) != 0;
  std::vector<float> packed;
  Dims packed_dims;
  const infer_value_view* b = node_input(n, 1);
  if (trans_b && is_const(b) && b->rank == 2 && b->dims[0] >= 0 && b->dims[1] >= 0 &&
      b->const_size == static_cast<size_t>(b->dims[0] * b->dims[1]) * sizeof(float)) {
    packed_dims = {b->dims[0], b->dims[1]};
    packed.resize(static_cast<size_t>(b->dims[0] * b->dims[1]));
    transpose_2d(static_cast<const float*>(b->const_data), b->dims[0], b->dims[1], packed.data());
  }
  return KernelPtr(new GemmKernel(
      static_cast<float>(attr_f(n, "alpha", 1.0)), static_cast<float>(attr_f(n, "beta", 1.0)),
      attr_i(n, "transA", 0) != 0, trans_b, std::move(packed), std::move(packed_dims)));
}

}  // namespace infer::cpu::kernels
