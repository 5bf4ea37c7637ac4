// MatMul with numpy semantics: 1-D operands are promoted (A to [1, K], B to [K, 1]) and
// the promoted dim removed from the result; leading batch dims broadcast. A B without
// batch dims is shared by every batch, so the batches fold into one tall product (and a
// constant float32 B is packed once at compile time, or the host's prepacked copy used);
// otherwise many small matrices run one per thread and large ones one after another,
// each spread over the threads by sgemm. FusedMatMul is this kernel with a bias along the
// last axis and an activation, applied in sgemm's epilogue for float32. Dtypes other than
// float32 (float64, float16, bfloat16 and, from opset 9, the 32/64-bit integers) use the
// plain loop of nn_gemm_generic.hpp, then one elementwise pass for the fused extras.
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "../precision.hpp"
#include "fused_common.hpp"
#include "gemm_core.hpp"
#include "nn_gemm_generic.hpp"

namespace infer::cpu::kernels {
namespace {

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(PackedGemmB packed_b, int bias_input, Activation act)
      : packed_b_(std::move(packed_b)), bias_input_(bias_input), act_(act) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& A = *ctx.input(0);
    const Tensor& B = *ctx.input(1);
    if (A.dtype != B.dtype)
      return invalid("A and B must have the same dtype, got ", dtype_name(A.dtype), " and ",
                     dtype_name(B.dtype));
    if (A.rank() == 0 || B.rank() == 0)
      return invalid("operands must have at least 1 dim, got ", dims_str(A.dims), " and ",
                     dims_str(B.dims));
    Dims a = A.dims, b = B.dims;
    const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) b.push_back(1);
    const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K)
      return invalid("inner dims differ: A ", dims_str(A.dims), " and B ", dims_str(B.dims));
    Dims a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
    CPU_ASSIGN_OR_RETURN(Dims batch, broadcast_shapes({&a_batch, &b_batch}));
    Dims out = batch;
    if (!a_vec) out.push_back(M);
    if (!b_vec) out.push_back(N);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, A.dtype, out));
    const int64_t nb = sdk::element_count(batch.data(), batch.size());
    const Tensor* bias = bias_input_ >= 0 ? ctx.input(static_cast<size_t>(bias_input_)) : nullptr;
    if (bias != nullptr) {
      if (bias->dtype != Y->dtype)
        return invalid("bias is ", dtype_name(bias->dtype), ", expected ", dtype_name(Y->dtype),
                       " like A and B");
      if (Y->rank() == 0)
        return invalid("bias ", dims_str(bias->dims),
                       " needs a product of rank 1 or more, but A and B give a scalar");
      if (bias->rank() != 1 || bias->dims[0] != Y->dims.back())
        return invalid("bias has shape ", dims_str(bias->dims), ", expected [", Y->dims.back(),
                       "] (the last dim of the product ", dims_str(Y->dims), ")");
    }
    if (Y->numel() == 0) return Status::ok();

    // Element offsets of each batch's matrices, honouring broadcast batch dims.
    const Dims a_str = batch_strides(a_batch, batch, M * K),
               b_str = batch_strides(b_batch, batch, K * N);
    auto offsets = [&](int64_t bi, int64_t* ao, int64_t* bo) {
      *ao = *bo = 0;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t idx = bi % batch[d];
        bi /= batch[d];
        *ao += idx * a_str[d];
        *bo += idx * b_str[d];
      }
    };
    if (A.dtype != INFER_DTYPE_FLOAT32) {
      CPU_RETURN_IF_ERROR(dispatch(A.dtype, dtypes::kAllNum, "A", [&]<typename T>(Tag<T>) -> Status {
        std::vector<gemm_acc_t<T>> acc(static_cast<size_t>(M * N));
        T* py = Y->mut<T>();
        for (int64_t bi = 0; bi < nb; ++bi) {
          int64_t ao, bo;
          offsets(bi, &ao, &bo);
          naive_gemm<T>(M, N, K, A.as<T>() + ao, K, 1, B.as<T>() + bo, N, 1, acc.data());
          for (int64_t i = 0; i < M * N; ++i) py[bi * M * N + i] = gemm_store<T>(acc[i]);
        }
        return Status::ok();
      }));
      return apply_epilogue(ctx, *Y, nullptr, bias, act_);
    }
    // The fused extras go into sgemm's epilogue: the bias runs along Y's last dim, which
    // is N, or M when B is a vector (its dim removed); with both vectors it would run
    // along a batch dim, so that rare case takes a second pass.
    simd::GemmEpilogue ep;
    const bool extras_after = bias != nullptr && a_vec && b_vec;
    if (!extras_after) {
      ep.act = to_simd_act(act_);
      if (bias != nullptr) {
        ep.bias = bias->as<float>();
        ep.bias_mode = b_vec ? simd::GemmEpilogue::Bias::kPerRow : simd::GemmEpilogue::Bias::kPerCol;
      }
    }
    const float* pa = A.as<float>();
    const float* pb = B.as<float>();
    float* py = Y->mut<float>();
    const bool packed =
        !packed_b_.empty() && B.rank() == 2 && packed_b_.K() == K && packed_b_.N() == N;
    // B's bytes freed by the host for a packed form that does not fit:
    if (!packed && pb == nullptr && B.numel() > 0)
      return internal("B ", dims_str(B.dims), " has no data and no usable packed form");
    if (b_batch.empty() && (nb == 1 || ep.bias_mode != simd::GemmEpilogue::Bias::kPerRow)) {
      // Every batch multiplies the same B: one [nb * M, K] x [K, N] product (unless a row
      // bias would have to restart at each batch).
      GemmArgs g;
      g.M = nb * M;
      g.N = N;
      g.K = K;
      g.A = pa;
      g.a_row_stride = K;
      g.a_col_stride = 1;
      if (packed) {
        g.packed_b = packed_b_.data();
      } else {
        g.B = pb;
        g.ldb = N;
      }
      g.C = py;
      g.ldc = N;
      g.epilogue = ep;
      sgemm(ctx.host(), g);
      if (extras_after) return apply_epilogue(ctx, *Y, nullptr, bias, act_);
      return Status::ok();
    }
    auto one = [&](int64_t bi, bool parallel) {
      int64_t ao, bo;
      offsets(bi, &ao, &bo);
      GemmArgs g;
      g.M = M;
      g.N = N;
      g.K = K;
      g.A = pa + ao;
      g.a_row_stride = K;
      g.a_col_stride = 1;
      g.B = pb + bo;
      g.ldb = N;
      g.C = py + bi * M * N;
      g.ldc = N;
      g.epilogue = ep;
      sgemm(ctx.host(), g, parallel);
    };
    const double flops_each =
        2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    if (nb > 1 && flops_each < 4e6) {
      ctx.parallel_for(static_cast<size_t>(nb),
                       grain_for(static_cast<size_t>(flops_each) + 1, 1 << 20),
                       [&](size_t b0, size_t b1) {
                         for (size_t bi = b0; bi < b1; ++bi) one(static_cast<int64_t>(bi), false);
                       });
    } else {
      for (int64_t bi = 0; bi < nb; ++bi) one(bi, true);
    }
    if (extras_after) return apply_epilogue(ctx, *Y, nullptr, bias, act_);
    return Status::ok();
  }

 private:
  // Strides (in elements) of an operand's batch dims within the broadcast batch shape;
  // 0 where the operand broadcasts.
  static Dims batch_strides(const Dims& own, const Dims& batch, int64_t matrix) {
    Dims s(batch.size(), 0);
    int64_t stride = matrix;
    for (size_t i = own.size(); i-- > 0;) {
      const size_t d = batch.size() - own.size() + i;
      if (own[i] != 1) s[d] = stride;
      stride *= own[i];
    }
    return s;
  }

  PackedGemmB packed_b_;  // a constant float32 2-D B, packed at compile time (may be empty)
  int bias_input_;        // FusedMatMul's bias input, -1 for MatMul
  Activation act_;        // FusedMatMul's; kNone for MatMul
};

}  // namespace

Status matmul_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  const uint32_t types = node.opset >= 9
                             ? dtypes::kAllFloat | dtypes::kInts | dtype_bit(INFER_DTYPE_UINT32) |
                                   dtype_bit(INFER_DTYPE_UINT64)
                             : dtypes::kAllFloat;
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), types, "A"));
  return check_dtype(node, node_input(node, 1), types, "B");
}

// The MatMul kernel, with FusedMatMul's bias input (-1: none) and activation; the
// constant B is looked up on `weights_node` (the original node, whose prepacked copy the
// host may hold).
Result<KernelPtr> matmul_create_fused(const KernelInit& init, const infer_node_view& weights_node,
                                      int bias_input, const Activation& act) {
  PackedGemmB packed;
  CPU_RETURN_IF_ERROR(pack_gemm_weight(weights_node, packed, weight_precision(*init.host)));
  return KernelPtr(new MatMulKernel(std::move(packed), bias_input, act));
}

Result<KernelPtr> matmul_create(const KernelInit& init) {
  return matmul_create_fused(init, *init.node, -1, Activation{});
}

}  // namespace infer::cpu::kernels
