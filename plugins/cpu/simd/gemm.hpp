// Single-precision GEMM with packed operands, register-blocked microkernels per ISA and a
// fused epilogue:
//
//   C[M,N] = act( alpha * A[M,K] * B[K,N] + beta * C + bias + residual )
//
// Either operand may be given raw (any row/column strides, so a transposed operand costs
// nothing) or prepacked by pack_a / pack_b for the same ISA and dims (constant weights are
// packed once at compile time, possibly by the host through the ABI's prepack hook, and
// reused by every run). Raw operands are packed tile by tile inside sgemm.
//
// Callers: Gemm, MatMul, FusedGemm/FusedMatMul (B = weights), Conv (A = weights,
// B = input or its im2col), attention.
#pragma once

#include <cstddef>
#include <cstdint>

#include "activation.hpp"
#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

// A B operand that is never materialized: sgemm asks it for the packed panels of each
// block it needs (the layout of gemm_kernels.hpp: ceil(cols / nr) panels of kc x nr
// floats, zero-padded past column `cols`). A convolution's im2col columns are one: the
// panels are gathered straight from the image, so the column matrix is never written.
// pack_block runs concurrently on sgemm's threads for disjoint blocks.
class GemmBSource {
 public:
  virtual ~GemmBSource() = default;
  virtual void pack_block(Isa isa, int64_t k0, int64_t kc, int64_t n0, int64_t cols, int nr,
                          float* dst) const = 0;
};

// One operand: raw (data + strides), packed (packed != nullptr, made by pack_a/pack_b
// with the same isa and dims; data and strides are then ignored) or, for B only, a source
// that packs itself (source != nullptr).
struct GemmOperand {
  const float* data = nullptr;
  int64_t row_stride = 0;  // elements between element (r, c) and (r + 1, c)
  int64_t col_stride = 1;  // elements between element (r, c) and (r, c + 1)
  const void* packed = nullptr;
  const GemmBSource* source = nullptr;

  static GemmOperand raw(const float* d, int64_t rs, int64_t cs = 1) { return {d, rs, cs, nullptr, nullptr}; }
  static GemmOperand prepacked(const void* p) { return {nullptr, 0, 1, p, nullptr}; }
  static GemmOperand from_source(const GemmBSource* s) { return {nullptr, 0, 1, nullptr, s}; }
};

struct GemmEpilogue {
  enum class Bias { kNone, kPerRow, kPerCol };
  Bias bias_mode = Bias::kNone;
  const float* bias = nullptr;      // kPerRow: bias[m] (conv channels); kPerCol: bias[n]
  const float* residual = nullptr;  // added after bias, before act; same shape as C
  int64_t ldr = 0;                  // elements between residual rows
  Act act;
};

// Bytes of the packed form of A (M x K) or B (K x N) for `isa`; the packed buffers
// describe their own layout well enough for sgemm to check isa and dims.
size_t packed_a_bytes(Isa isa, int64_t M, int64_t K);
size_t packed_b_bytes(Isa isa, int64_t K, int64_t N);
// dst must be 64-byte aligned and packed_*_bytes long.
void pack_a(Isa isa, int64_t M, int64_t K, const GemmOperand& A, void* dst);
void pack_b(Isa isa, int64_t K, int64_t N, const GemmOperand& B, void* dst);
// Whether `packed` (`bytes` long, e.g. a buffer the host kept from the prepack hook) is
// exactly what pack_a / pack_b make for this isa and these dims, so it can be passed to
// sgemm as is. sgemm itself checks the header of every packed operand and aborts with a
// message naming both sides on a mismatch: packing for another isa or dims is a bug.
bool packed_matches_a(const void* packed, size_t bytes, Isa isa, int64_t M, int64_t K);
bool packed_matches_b(const void* packed, size_t bytes, Isa isa, int64_t K, int64_t N);

// Runs on `threads` (pass a SerialThreads from inside another parallel loop). beta is
// 0 (C is write-only and may hold garbage) or any other value (C is read). K == 0 gives
// C = beta * C followed by the epilogue. The residual must not overlap C (use beta = 1 to
// accumulate into C). Problems under ~1 MFLOP run on the calling thread only.
// Scratch: sgemm uses the kPackA and kPackB slots (scratch.hpp) of the threads it runs
// on; a caller must not hold pointers into those slots across the call.
void sgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, float alpha,
           const GemmOperand& A, const GemmOperand& B, float beta, float* C, int64_t ldc,
           const GemmEpilogue& epilogue = {});

}  // namespace infer::cpu::simd
