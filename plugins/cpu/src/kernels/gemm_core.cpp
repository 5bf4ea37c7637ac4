#include "gemm_core.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../host_threads.hpp"
#include "../node_util.hpp"

namespace infer::cpu {

void sgemm(const sdk::Host& host, const GemmArgs& g, bool parallel) {
  if (g.M <= 0 || g.N <= 0) return;
  const simd::GemmOperand A = simd::GemmOperand::raw(g.A, g.a_row_stride, g.a_col_stride);
  const simd::GemmOperand B = g.packed_b != nullptr
                                  ? simd::GemmOperand::prepacked(g.packed_b)
                                  : simd::GemmOperand::raw(g.B, g.ldb, g.b_col_stride);
  const float beta = g.accumulate ? 1.0f : 0.0f;
  if (parallel) {
    HostThreads threads(host);
    simd::sgemm(kernel_isa(), threads, g.M, g.N, g.K, g.alpha, A, B, beta, g.C, g.ldc, g.epilogue);
  } else {
    simd::SerialThreads threads;
    simd::sgemm(kernel_isa(), threads, g.M, g.N, g.K, g.alpha, A, B, beta, g.C, g.ldc, g.epilogue);
  }
}

void transpose_2d(const float* src, int64_t rows, int64_t cols, float* dst) {
  constexpr int64_t kBlock = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const int64_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
    }
}

void PackedGemmB::Free::operator()(void* p) const { std::free(p); }

PackedGemmB::PackedGemmB(const float* b, int64_t K, int64_t N, int64_t ldb, int64_t col_stride,
                         simd::GemmPrecision precision)
    : K_(K), N_(N) {
  const simd::Isa isa = kernel_isa();
  const size_t bytes = simd::packed_b_bytes(isa, K, N, precision);
  owned_.reset(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  if (owned_ == nullptr) throw std::bad_alloc();
  simd::pack_b(isa, K, N, simd::GemmOperand::raw(b, ldb, col_stride), owned_.get(), precision);
}

bool PackedGemmB::adopt(const void* data, size_t size, int64_t K, int64_t N,
                        simd::GemmPrecision precision) {
  // The panels are read as floats: the host's copy must keep float alignment.
  if (data == nullptr || reinterpret_cast<uintptr_t>(data) % alignof(float) != 0) return false;
  if (!simd::packed_matches_b(data, size, kernel_isa(), K, N, precision)) return false;
  owned_.reset();
  external_ = data;
  K_ = K;
  N_ = N;
  return true;
}

namespace {

// The weight of a node as a raw K x N operand, or false when it is not a packable one.
struct WeightView {
  const float* data = nullptr;
  int64_t K = 0, N = 0, ldb = 0, col_stride = 1;
};

bool weight_view(const infer_node_view& node, size_t input_index, WeightView& w) {
  if (input_index != 1) return false;
  const bool gemm = is_op(node, "", "Gemm") || is_op(node, "ai.infer", "FusedGemm");
  const bool matmul = is_op(node, "", "MatMul") || is_op(node, "ai.infer", "FusedMatMul");
  if (!gemm && !matmul) return false;
  const infer_value_view* b = node_input(node, 1);
  if (!(is_const(b) || is_prepacked_only(b)) || b->dtype != INFER_DTYPE_FLOAT32 || b->rank != 2 ||
      b->dims[0] <= 0 || b->dims[1] <= 0)
    return false;
  if (b->const_size != static_cast<size_t>(b->dims[0] * b->dims[1]) * sizeof(float)) return false;
  // MatMul needs a float32 A as well to run sgemm; a non-float A fails at run time anyway.
  const bool trans_b = gemm && attr_i(node, "transB", 0) != 0;
  w.data = static_cast<const float*>(b->const_data);  // NULL when prepacked only
  if (trans_b) {
    w.N = b->dims[0];
    w.K = b->dims[1];
    w.ldb = 1;
    w.col_stride = w.K;
  } else {
    w.K = b->dims[0];
    w.N = b->dims[1];
    w.ldb = w.N;
    w.col_stride = 1;
  }
  return true;
}

}  // namespace

void* prepack_gemm_weight(const infer_node_view& node, size_t input_index,
                          const PackAlloc& alloc, size_t* size, simd::GemmPrecision precision) {
  WeightView w;
  if (!weight_view(node, input_index, w) || w.data == nullptr) return nullptr;
  const simd::Isa isa = kernel_isa();
  const size_t bytes = simd::packed_b_bytes(isa, w.K, w.N, precision);
  void* dst = alloc(bytes);  // 64-byte aligned, as pack_b wants for its stores
  if (dst == nullptr) throw std::bad_alloc();
  simd::pack_b(isa, w.K, w.N, simd::GemmOperand::raw(w.data, w.ldb, w.col_stride), dst, precision);
  *size = bytes;
  return dst;
}

bool gemm_weight_packable(const infer_node_view& node) {
  WeightView w;
  const infer_value_view* a = node_input(node, 0);
  return a != nullptr && a->dtype == INFER_DTYPE_FLOAT32 && weight_view(node, 1, w);
}

Status pack_gemm_weight(const infer_node_view& node, PackedGemmB& packed,
                        simd::GemmPrecision precision) {
  WeightView w;
  if (!weight_view(node, 1, w)) return Status::ok();
  const infer_value_view* b = node_input(node, 1);
  if (packed.adopt(b->prepacked_data, b->prepacked_size, w.K, w.N, precision)) return Status::ok();
  if (w.data == nullptr)
    return internal("the host freed weight '", b->name ? b->name : "", "' for its prepacked form (",
                    b->prepacked_size, " bytes), which does not fit this node (K ", w.K, ", N ",
                    w.N, ")");
  packed = PackedGemmB(w.data, w.K, w.N, w.ldb, w.col_stride, precision);
  return Status::ok();
}

}  // namespace infer::cpu
