// MatMulInteger (opsets 10-21) and QLinearMatMul (opsets 10-21) over uint8/int8
// operands, with MatMul's numpy semantics (1-D operands promoted, batch dims broadcast):
//   MatMulInteger: y = (A - a_zero_point) * (B - b_zero_point) in int32
//   QLinearMatMul: acc as above, then
//                  y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zero_point)
// Zero points and scales of A (and y) are per tensor or per row of A; those of B per
// tensor or per column of B (a 1-D tensor of that length, or the operand's shape with the
// other matrix dim 1).
#include "../host_threads.hpp"
#include "quant_common.hpp"
#include "simd/qgemm.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace quant;  // NOLINT: short names for the helpers

// The int32 product of two zero-point-shifted operands, with what requantization needs
// to find each output's parameters.
struct IntProduct {
  Dims out_dims;
  Dims a_dims, b_dims;  // operands promoted to at least 2-D
  int64_t M = 0, N = 0, K = 0, batches = 0;
  std::vector<int64_t> a_batch, b_batch;  // per output batch: the operands' batch index
  std::vector<uint32_t> acc;              // [batches, M, N], wrapped modulo 2^32
};

Status check_zero_point_type(const Tensor* zp, const Tensor& operand, const char* zname,
                             const char* oname) {
  if (zp != nullptr && zp->dtype != operand.dtype)
    return invalid(zname, " is ", dtype_name(zp->dtype), " but ", oname, " is ",
                   dtype_name(operand.dtype), ": they must be the same type");
  return Status::ok();
}

Result<std::vector<int32_t>> zero_points(const Tensor* zp, const Dims& operand, int vary_dim,
                                         const char* what) {
  std::vector<int32_t> vals = {0};
  Dims dims;
  if (zp != nullptr) {
    CPU_ASSIGN_OR_RETURN(vals, read_ints(*zp, what));
    dims = zp->dims;
  }
  return expand_matrix_param(vals, dims, operand, vary_dim, what);
}

Result<IntProduct> int_product(const KernelContext& ctx, const Tensor& A, const Tensor& B,
                               const Tensor* azp, const Tensor* bzp, const char* aname,
                               const char* bname) {
  const std::string azp_name = cat(aname, "_zero_point"), bzp_name = cat(bname, "_zero_point");
  CPU_RETURN_IF_ERROR(check_zero_point_type(azp, A, azp_name.c_str(), aname));
  CPU_RETURN_IF_ERROR(check_zero_point_type(bzp, B, bzp_name.c_str(), bname));
  if (A.rank() == 0 || B.rank() == 0)
    return invalid(aname, " and ", bname, " must have at least 1 dim, got ", dims_str(A.dims),
                   " and ", dims_str(B.dims));
  IntProduct p;
  p.a_dims = A.dims;
  p.b_dims = B.dims;
  const bool a_vec = A.rank() == 1, b_vec = B.rank() == 1;
  if (a_vec) p.a_dims.insert(p.a_dims.begin(), 1);
  if (b_vec) p.b_dims.push_back(1);
  p.M = p.a_dims[p.a_dims.size() - 2];
  p.K = p.a_dims.back();
  p.N = p.b_dims.back();
  if (p.b_dims[p.b_dims.size() - 2] != p.K)
    return invalid("inner dims differ: ", aname, " ", dims_str(A.dims), " and ", bname, " ",
                   dims_str(B.dims));
  const Dims a_batch(p.a_dims.begin(), p.a_dims.end() - 2),
      b_batch(p.b_dims.begin(), p.b_dims.end() - 2);
  CPU_ASSIGN_OR_RETURN(Dims batch, broadcast_shapes({&a_batch, &b_batch}));
  p.out_dims = batch;
  if (!a_vec) p.out_dims.push_back(p.M);
  if (!b_vec) p.out_dims.push_back(p.N);
  CPU_ASSIGN_OR_RETURN(std::vector<int32_t> az, zero_points(azp, p.a_dims, -2, azp_name.c_str()));
  CPU_ASSIGN_OR_RETURN(std::vector<int32_t> bz, zero_points(bzp, p.b_dims, -1, bzp_name.c_str()));

  // The operands as int32 with their zero points subtracted.
  const int64_t M = p.M, N = p.N, K = p.K;
  std::vector<int32_t> a32, b32;
  CPU_RETURN_IF_ERROR(to_int32(A, &a32, [&](int64_t i) { return az[static_cast<size_t>(i / K)]; }));
  CPU_RETURN_IF_ERROR(to_int32(
      B, &b32, [&](int64_t i) { return bz[static_cast<size_t>((i / (K * N)) * N + i % N)]; }));

  // Each output batch's operand batch indices, honouring broadcast dims.
  p.batches = sdk::element_count(batch.data(), batch.size());
  p.a_batch.resize(static_cast<size_t>(p.batches));
  p.b_batch.resize(static_cast<size_t>(p.batches));
  for (int64_t bi = 0; bi < p.batches; ++bi) {
    int64_t rem = bi, ai = 0, bj = 0, a_mul = 1, b_mul = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      const size_t off = batch.size() - d;  // position from the right
      if (off <= a_batch.size()) {
        const int64_t n = a_batch[a_batch.size() - off];
        if (n != 1) ai += idx * a_mul;
        a_mul *= n;
      }
      if (off <= b_batch.size()) {
        const int64_t n = b_batch[b_batch.size() - off];
        if (n != 1) bj += idx * b_mul;
        b_mul *= n;
      }
    }
    p.a_batch[static_cast<size_t>(bi)] = ai;
    p.b_batch[static_cast<size_t>(bi)] = bj;
  }
  p.acc.assign(static_cast<size_t>(p.batches * M * N), 0u);
  const size_t rows = static_cast<size_t>(p.batches * M);
  ctx.parallel_for(
      rows, grain_for(static_cast<size_t>(N * K) + 1, 1 << 18), [&](size_t r0, size_t r1) {
        for (size_t r = r0; r < r1; ++r) {
          const int64_t bi = static_cast<int64_t>(r) / M, i = static_cast<int64_t>(r) % M;
          const int32_t* a = a32.data() + (p.a_batch[static_cast<size_t>(bi)] * M + i) * K;
          const int32_t* b = b32.data() + p.b_batch[static_cast<size_t>(bi)] * K * N;
          int_gemm(1, N, K, a, K, b, N, p.acc.data() + r * N, N);
        }
      });
  return p;
}

// The common case runs on the SIMD library's integer GEMM (simd/qgemm.hpp): B 2-D (the
// weights of a dynamically quantized MatMul, or QLinearMatMul's), a's zero point per
// tensor, b's per tensor or per column. It computes Y^T = B^T A^T, so that B is qgemm's
// packed int8 side (packed once when constant) and A its uint8 side read in place.
struct FastProduct {
  int64_t M = 0, N = 0, K = 0;  // A's rows (all leading dims together), B's columns, inner
  Dims out_dims;
  int32_t a_zero = 0;           // in qgemm's uint8 form
  std::vector<int32_t> b_zero;  // per column of B, in qgemm's int8 form
  QActivations a;
};

// The packed B of a kernel whose B is constant (else null), with what it was packed for.
struct PackedB {
  QWeights w;
  Dims dims;
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;

  void prepack(const infer_value_view* b) {
    if (!is_const(b) || b->rank != 2 || b->dims[0] <= 0 || b->dims[1] <= 0 ||
        (b->dtype != INFER_DTYPE_UINT8 && b->dtype != INFER_DTYPE_INT8) ||
        b->const_size != static_cast<size_t>(b->dims[0] * b->dims[1]))
      return;
    w = pack_qweights(b->const_data, b->dtype, b->dims[1], b->dims[0], 1, b->dims[1]);
    dims = Dims(b->dims, b->dims + 2);
    dtype = b->dtype;
  }
};

// Whether the fast path applies; fills `f` when it does. Shapes and zero points it does
// not cover go to the general path, which also words the errors.
Result<bool> fast_product(const Tensor& A, const Tensor& B, const Tensor* azp, const Tensor* bzp,
                          FastProduct* f) {
  CPU_RETURN_IF_ERROR(check_zero_point_type(azp, A, "a_zero_point", "a"));
  CPU_RETURN_IF_ERROR(check_zero_point_type(bzp, B, "b_zero_point", "b"));
  if (B.rank() != 2 || A.rank() < 1 || A.dims.back() != B.dims[0]) return false;
  if ((A.dtype != INFER_DTYPE_UINT8 && A.dtype != INFER_DTYPE_INT8) ||
      (B.dtype != INFER_DTYPE_UINT8 && B.dtype != INFER_DTYPE_INT8))
    return false;
  f->K = B.dims[0];
  f->N = B.dims[1];
  if (azp != nullptr && azp->numel() != 1) return false;
  if (bzp != nullptr && bzp->numel() != 1 && !(bzp->rank() == 1 && bzp->dims[0] == f->N))
    return false;
  f->M = sdk::element_count(A.dims.data(), A.dims.size() - 1);
  f->out_dims.assign(A.dims.begin(), A.dims.end() - 1);
  f->out_dims.push_back(f->N);
  f->a = as_uint8(A);
  f->a_zero = f->a.zero_shift;
  if (azp != nullptr) {
    CPU_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_ints(*azp, "a_zero_point"));
    f->a_zero += v[0];
  }
  const int32_t shift = B.dtype == INFER_DTYPE_UINT8 ? 128 : 0;
  f->b_zero.assign(static_cast<size_t>(f->N), -shift);
  if (bzp != nullptr) {
    CPU_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_ints(*bzp, "b_zero_point"));
    for (int64_t n = 0; n < f->N; ++n)
      f->b_zero[static_cast<size_t>(n)] = v[v.size() == 1 ? 0 : static_cast<size_t>(n)] - shift;
  }
  return true;
}

// Y (M x N, row-major) = the output stage of A * B on qgemm.
void run_fast(KernelContext& ctx, const FastProduct& f, const Tensor& B, const PackedB& packed,
              simd::QGemmOutput out) {
  const void* w = packed.w.packed.get();
  QWeights per_run;
  if (w == nullptr || packed.dims != B.dims || packed.dtype != B.dtype) {
    per_run = pack_qweights(B.data, B.dtype, f.N, f.K, 1, f.N);
    w = per_run.packed.get();
  }
  out.rs = 1;  // C(n, m) of Y^T is Y[m, n]
  out.cs = f.N;
  HostThreads threads(ctx.host());
  simd::qgemm(kernel_isa(), threads, f.N, f.M, f.K, w, f.b_zero.data(), f.a.data, 1, f.K, f.a_zero,
              out);
}

class MatMulIntegerKernel final : public Kernel {
 public:
  explicit MatMulIntegerKernel(const infer_node_view& node) {
    packed_.prepack(node_input(node, 1));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(1);
    if (A == nullptr || B == nullptr) return invalid("A and B are required");
    FastProduct f;
    CPU_ASSIGN_OR_RETURN(bool fast, fast_product(*A, *B, ctx.input(2), ctx.input(3), &f));
    if (fast) {
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT32, f.out_dims));
      if (Y->numel() == 0) return Status::ok();
      simd::QGemmOutput out;
      out.c = Y->data;
      run_fast(ctx, f, *B, packed_, out);
      return Status::ok();
    }
    CPU_ASSIGN_OR_RETURN(IntProduct p,
                         int_product(ctx, *A, *B, ctx.input(2), ctx.input(3), "a", "b"));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT32, p.out_dims));
    int32_t* y = Y->mut<int32_t>();
    for (size_t i = 0; i < p.acc.size(); ++i) y[i] = static_cast<int32_t>(p.acc[i]);
    return Status::ok();
  }

 private:
  PackedB packed_;
};

class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const infer_node_view& node) {
    packed_.prepack(node_input(node, 3));
  }

  Status run(KernelContext& ctx) const override {
    for (size_t i = 0; i < 8; ++i)
      if (ctx.input(i) == nullptr) return invalid("input ", i, " is required");
    const Tensor& A = *ctx.input(0);
    const Tensor& B = *ctx.input(3);
    const Tensor& YZ = *ctx.input(7);
    if (YZ.dtype != INFER_DTYPE_UINT8 && YZ.dtype != INFER_DTYPE_INT8)
      return invalid("y_zero_point must be uint8 or int8, got ", dtype_name(YZ.dtype));
    const Tensor &AS = *ctx.input(1), &BS = *ctx.input(4), &YS = *ctx.input(6);
    FastProduct f;
    CPU_ASSIGN_OR_RETURN(bool fast, fast_product(A, B, ctx.input(2), ctx.input(5), &f));
    if (fast && AS.numel() == 1 && YS.numel() == 1 && YZ.numel() == 1 &&
        (BS.numel() == 1 || (BS.rank() == 1 && BS.dims[0] == f.N))) {
      CPU_ASSIGN_OR_RETURN(std::vector<float> as, read_scales(AS, "a_scale", ScaleUse::kFactor));
      CPU_ASSIGN_OR_RETURN(std::vector<float> bs, read_scales(BS, "b_scale", ScaleUse::kFactor));
      CPU_ASSIGN_OR_RETURN(std::vector<float> ys, read_scales(YS, "y_scale", ScaleUse::kDivisor));
      CPU_ASSIGN_OR_RETURN(std::vector<int32_t> yz, read_ints(YZ, "y_zero_point"));
      // The general path's order of operations: a_scale * b_scale / y_scale.
      std::vector<float> mult(static_cast<size_t>(f.N));
      for (int64_t n = 0; n < f.N; ++n)
        mult[static_cast<size_t>(n)] =
            as[0] * bs[bs.size() == 1 ? 0 : static_cast<size_t>(n)] / ys[0];
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, YZ.dtype, f.out_dims));
      if (Y->numel() == 0) return Status::ok();
      simd::QGemmOutput out;
      out.kind = YZ.dtype == INFER_DTYPE_UINT8 ? simd::QGemmOutput::Kind::kUint8
                                               : simd::QGemmOutput::Kind::kInt8;
      out.c = Y->data;
      out.scale = mult.data();
      out.out_zero = yz[0];
      run_fast(ctx, f, B, packed_, out);
      return Status::ok();
    }
    CPU_ASSIGN_OR_RETURN(IntProduct p,
                         int_product(ctx, A, B, ctx.input(2), ctx.input(5), "a", "b"));
    CPU_ASSIGN_OR_RETURN(std::vector<float> as,
                         scales(*ctx.input(1), p.a_dims, -2, "a_scale", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(std::vector<float> bs,
                         scales(*ctx.input(4), p.b_dims, -1, "b_scale", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(std::vector<float> ys,
                         scales(*ctx.input(6), p.a_dims, -2, "y_scale", ScaleUse::kDivisor));
    CPU_ASSIGN_OR_RETURN(std::vector<int32_t> yz_raw, read_ints(YZ, "y_zero_point"));
    CPU_ASSIGN_OR_RETURN(std::vector<int32_t> yz,
                         expand_matrix_param(yz_raw, YZ.dims, p.a_dims, -2, "y_zero_point"));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, YZ.dtype, p.out_dims));
    const int64_t M = p.M, N = p.N;
    return dispatch(YZ.dtype, k8Bit, "y", [&]<typename Q>(Tag<Q>) -> Status {
      if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
        Q* y = Y->mut<Q>();
        for (int64_t bi = 0; bi < p.batches; ++bi) {
          const int64_t ab = p.a_batch[static_cast<size_t>(bi)],
                        bb = p.b_batch[static_cast<size_t>(bi)];
          for (int64_t i = 0; i < M; ++i) {
            const size_t arow = static_cast<size_t>(ab * M + i);
            for (int64_t j = 0; j < N; ++j) {
              const float mult = as[arow] * bs[static_cast<size_t>(bb * N + j)] / ys[arow];
              const size_t k = static_cast<size_t>((bi * M + i) * N + j);
              y[k] = saturate_round<Q>(static_cast<float>(static_cast<int32_t>(p.acc[k])) * mult,
                                       yz[arow]);
            }
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  PackedB packed_;

  static Result<std::vector<float>> scales(const Tensor& t, const Dims& operand, int vary_dim,
                                           const char* what, ScaleUse use) {
    CPU_ASSIGN_OR_RETURN(std::vector<float> v, read_scales(t, what, use));
    return expand_matrix_param(v, t.dims, operand, vary_dim, what);
  }
};

// ai.infer.MatMulIntegerToFloat (sdk/FUSED_OPS.md): Y = float(MatMulInteger(A, B, a_zp,
// b_zp)) * (a_scale * b_scale) [+ bias], on qgemm's float output stage (the same float
// operations as the Cast, Mul and Add it replaces) when the product takes the fast path.
class MatMulIntegerToFloatKernel final : public Kernel {
 public:
  explicit MatMulIntegerToFloatKernel(const infer_node_view& node) {
    packed_.prepack(node_input(node, 1));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(1);
    const Tensor* AS = ctx.input(2);
    const Tensor* BS = ctx.input(3);
    const Tensor* bias = ctx.input(6);
    if (A == nullptr || B == nullptr || AS == nullptr || BS == nullptr)
      return invalid("A, B, a_scale and b_scale are required");
    if (AS->numel() != 1)
      return invalid("a_scale has shape ", dims_str(AS->dims), ", expected one element");
    CPU_ASSIGN_OR_RETURN(std::vector<float> as, read_scales(*AS, "a_scale", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(std::vector<float> bs, read_scales(*BS, "b_scale", ScaleUse::kFactor));
    CPU_ASSIGN_OR_RETURN(IntProductView v, product(ctx, *A, *B));
    const int64_t N = v.N;
    if (bs.size() != 1 && !(BS->rank() == 1 && BS->dims[0] == N))
      return invalid("b_scale has shape ", dims_str(BS->dims), ", expected one element or [", N,
                     "]");
    std::vector<float> scale(static_cast<size_t>(N)), fbias;
    for (int64_t n = 0; n < N; ++n)  // the Mul(a_scale, b_scale) it replaces
      scale[static_cast<size_t>(n)] = as[0] * bs[bs.size() == 1 ? 0 : static_cast<size_t>(n)];
    if (bias != nullptr) {
      if (bias->dtype != INFER_DTYPE_FLOAT32 || bias->rank() != 1 || bias->dims[0] != N)
        return invalid("bias is ", dtype_name(bias->dtype), dims_str(bias->dims),
                       ", expected float32[", N, "]");
      fbias.assign(bias->as<float>(), bias->as<float>() + N);
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, v.out_dims));
    if (Y->numel() == 0) return Status::ok();
    if (v.fast) {
      simd::QGemmOutput out;
      out.kind = simd::QGemmOutput::Kind::kFloat;
      out.c = Y->data;
      out.scale = scale.data();
      out.fbias = fbias.empty() ? nullptr : fbias.data();
      run_fast(ctx, v.f, *B, packed_, out);
      return Status::ok();
    }
    float* y = Y->mut<float>();
    const uint32_t* acc = v.p.acc.data();
    for (size_t i = 0; i < v.p.acc.size(); ++i) {
      const size_t n = i % static_cast<size_t>(N);
      float r = static_cast<float>(static_cast<int32_t>(acc[i])) * scale[n];
      if (!fbias.empty()) r = r + fbias[n];
      y[i] = r;
    }
    return Status::ok();
  }

 private:
  // The integer product on the fast path (f) or the general one (p).
  struct IntProductView {
    bool fast = false;
    FastProduct f;
    IntProduct p;
    Dims out_dims;
    int64_t N = 0;
  };
  static Result<IntProductView> product(KernelContext& ctx, const Tensor& A, const Tensor& B) {
    IntProductView v;
    CPU_ASSIGN_OR_RETURN(v.fast, fast_product(A, B, ctx.input(4), ctx.input(5), &v.f));
    if (v.fast) {
      v.out_dims = v.f.out_dims;
      v.N = v.f.N;
      return v;
    }
    CPU_ASSIGN_OR_RETURN(v.p, int_product(ctx, A, B, ctx.input(4), ctx.input(5), "A", "B"));
    v.out_dims = v.p.out_dims;
    v.N = v.p.N;
    return v;
  }

  PackedB packed_;
};

}  // namespace

Status quant_matmul_integer_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 4));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), k8Bit, "B"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), k8Bit, "a_zero_point"));
  return check_dtype(node, node_input(node, 3), k8Bit, "b_zero_point");
}

Result<KernelPtr> quant_matmul_integer_create(const KernelInit& init) {
  return KernelPtr(new MatMulIntegerKernel(*init.node));
}

Status quant_qlinear_matmul_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 8, 8));
  const uint32_t scale_mask = node.opset < 21 ? dtypes::kF32 : kScale;
  for (size_t i : {1, 4, 6})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), scale_mask, "the scales"));
  for (size_t i : {2, 3, 5, 7})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), k8Bit, "b and the zero points"));
  return Status::ok();
}

Result<KernelPtr> quant_qlinear_matmul_create(const KernelInit& init) {
  return KernelPtr(new QLinearMatMulKernel(*init.node));
}

Status quant_matmul_integer_to_float_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 4, 7));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), k8Bit, "B"));
  for (size_t i : {2, 3})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), kScale, "the scales"));
  for (size_t i : {4, 5})
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), k8Bit, "the zero points"));
  return check_dtype(node, node_input(node, 6), dtypes::kF32, "bias");
}

Result<KernelPtr> quant_matmul_integer_to_float_create(const KernelInit& init) {
  return KernelPtr(new MatMulIntegerToFloatKernel(*init.node));
}

}  // namespace infer::cpu::kernels
