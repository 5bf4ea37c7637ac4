// The single-precision matrix multiply under Gemm, MatMul, Conv (im2col) and attention:
//   C[M,N] = alpha * A[M,K] * B[K,N]  (+ C when accumulate), then an optional epilogue
// A is read through row/column strides (so a transposed A costs nothing), B through
// ldb (rows) and b_col_stride, or from a buffer made by pack_b / prepack_gemm_weight. It
// runs the packed, register-blocked simd::sgemm (simd/gemm.hpp) for the plugin's ISA on
// the host's threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "infer/plugin.hpp"
#include "../prepack.hpp"
#include "simd/gemm.hpp"
#include "status.hpp"

namespace infer::cpu {

struct GemmArgs {
  int64_t M = 0, N = 0, K = 0;
  const float* A = nullptr;
  int64_t a_row_stride = 0;  // elements between A(i,k) and A(i+1,k)
  int64_t a_col_stride = 1;  // elements between A(i,k) and A(i,k+1)
  const float* B = nullptr;
  int64_t ldb = 0;           // elements between B(k,n) and B(k+1,n)
  int64_t b_col_stride = 1;  // elements between B(k,n) and B(k,n+1)
  // Set: B as packed by packed_gemm_b() / prepack_gemm_weight() for these K, N (B and the
  // strides are then ignored).
  const void* packed_b = nullptr;
  float* C = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  bool accumulate = false;
  simd::GemmEpilogue epilogue;  // bias / residual / activation on the finished C
};

// Runs on the host's threads (pass parallel = false from inside another parallel loop).
void sgemm(const sdk::Host& host, const GemmArgs& g, bool parallel = true);

// dst[c, r] = src[r, c] for a rows x cols row-major matrix.
void transpose_2d(const float* src, int64_t rows, int64_t cols, float* dst);

// A B operand packed once (at kernel creation) for the plugin's ISA, in float32 or (the
// session's reduced precision, see precision.hpp) bfloat16: either a buffer the host kept
// from the prepack hook, used in place, or one packed here. sgemm computes in the
// precision of the packed operand.
class PackedGemmB {
 public:
  PackedGemmB() = default;
  // Packs B (K x N, element (k, n) at b[k * ldb + n * col_stride]).
  PackedGemmB(const float* b, int64_t K, int64_t N, int64_t ldb, int64_t col_stride,
              simd::GemmPrecision precision = simd::GemmPrecision::kFloat32);
  // Uses `data` (`size` bytes, valid as long as this object) in place when it is exactly
  // what pack_b makes for K x N in `precision`; returns whether it did.
  bool adopt(const void* data, size_t size, int64_t K, int64_t N,
             simd::GemmPrecision precision = simd::GemmPrecision::kFloat32);
  const void* data() const { return external_ != nullptr ? external_ : owned_.get(); }
  bool empty() const { return data() == nullptr; }
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> owned_;
  const void* external_ = nullptr;
  int64_t K_ = 0, N_ = 0;
};

// The weight (constant B) of a Gemm / MatMul / FusedGemm / FusedMatMul node, packed for
// the plugin's ISA: false when input `input_index` of `node` is not such a weight (not
// input 1, not a float32 constant, not 2-D, ...: nullptr); else what pack_b makes for it
// (transB honoured), written into memory from `alloc` (see prepack.hpp), with its size in
// *size. The ABI's prepack hook calls this; the kernels use the hook's result in place
// when the host hands it back, else pack the same way themselves.
void* prepack_gemm_weight(const infer_node_view& node, size_t input_index,
                          const PackAlloc& alloc, size_t* size, simd::GemmPrecision precision);

// Whether `node` is a Gemm / MatMul / FusedGemm / FusedMatMul with a float32 A and a
// constant weight B that its kernel packs (so it computes in the packed precision).
bool gemm_weight_packable(const infer_node_view& node);

// Packs the constant weight of `node` (see prepack_gemm_weight) into `packed`, or adopts
// the host's prepacked copy; leaves `packed` empty when B is not a packable weight. Fails
// only when the host freed B's bytes and its prepacked copy does not fit.
Status pack_gemm_weight(const infer_node_view& node, PackedGemmB& packed,
                        simd::GemmPrecision precision);

}  // namespace infer::cpu
