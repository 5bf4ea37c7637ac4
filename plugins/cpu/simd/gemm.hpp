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
//
// Compute precision: float32, or bfloat16 products accumulated in float32 (AVX512_BF16's
// vdpbf16ps, about twice the multiply rate of float32 FMAs and half the packed bytes). The
// precision is a property of a packed operand: pack_a / pack_b with kBfloat16 round the
// operand to bfloat16 (round to nearest even, as vcvtneps2bf16 does: NaN stays NaN,
// float32 subnormals become signed zeros), and an sgemm given a bfloat16 packed operand
// rounds its other operand the same way while packing it. The epilogue (alpha, beta,
// bias, residual, activation) stays in float32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "activation.hpp"
#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

// A B operand that is never materialized: sgemm asks it for the packed panels of each
// block it needs (the layout of gemm_kernels.hpp: ceil(cols / nr) panels of kc x nr
// floats, zero-padded past column `cols`; always float32, which a bfloat16 sgemm then
// converts). A convolution's im2col columns are one: the
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

enum class GemmPrecision : uint32_t { kFloat32 = 0, kBfloat16 = 1 };
const char* gemm_precision_name(GemmPrecision p);  // "float32" / "bfloat16"
// Whether sgemm runs precision `p` for `isa` on this CPU: always for kFloat32; kBfloat16
// needs Isa::kAvx512 on a CPU with AVX512_BF16 (cpu_has_avx512_bf16). Packing a bfloat16
// operand where this is false is a caller's bug (pack_a / pack_b abort saying so).
bool gemm_precision_supported(Isa isa, GemmPrecision p);

struct GemmEpilogue {
  enum class Bias { kNone, kPerRow, kPerCol };
  Bias bias_mode = Bias::kNone;
  const float* bias = nullptr;      // kPerRow: bias[m] (conv channels); kPerCol: bias[n]
  const float* residual = nullptr;  // added after bias, before act; same shape as C
  int64_t ldr = 0;                  // elements between residual rows
  Act act;
};

// Bytes of the packed form of A (M x K) or B (K x N) for `isa` and precision `p`; the
// packed buffers describe their own layout (isa, dims, precision) well enough for sgemm to
// check them.
size_t packed_a_bytes(Isa isa, int64_t M, int64_t K, GemmPrecision p = GemmPrecision::kFloat32);
size_t packed_b_bytes(Isa isa, int64_t K, int64_t N, GemmPrecision p = GemmPrecision::kFloat32);
// dst must be 64-byte aligned and packed_*_bytes long. kBfloat16 rounds the operand to
// bfloat16 (see above) and aborts where gemm_precision_supported(isa, p) is false.
void pack_a(Isa isa, int64_t M, int64_t K, const GemmOperand& A, void* dst,
            GemmPrecision p = GemmPrecision::kFloat32);
void pack_b(Isa isa, int64_t K, int64_t N, const GemmOperand& B, void* dst,
            GemmPrecision p = GemmPrecision::kFloat32);
// Whether `packed` (`bytes` long, e.g. a buffer the host kept from the prepack hook) is
// exactly what pack_a / pack_b make for this isa, these dims and this precision, so it can
// be passed to sgemm as is. sgemm itself checks the header of every packed operand and
// aborts with a message naming both sides on a mismatch: packing for another isa or dims
// is a bug.
bool packed_matches_a(const void* packed, size_t bytes, Isa isa, int64_t M, int64_t K,
                      GemmPrecision p = GemmPrecision::kFloat32);
bool packed_matches_b(const void* packed, size_t bytes, Isa isa, int64_t K, int64_t N,
                      GemmPrecision p = GemmPrecision::kFloat32);

// Runs on `threads` (pass a SerialThreads from inside another parallel loop). beta is
// 0 (C is write-only and may hold garbage) or any other value (C is read). K == 0 gives
// C = beta * C followed by the epilogue. The residual must not overlap C (use beta = 1 to
// accumulate into C). Problems under ~1 MFLOP run on the calling thread only.
// Precision: that of the packed operands (float32 when neither is packed); a bfloat16
// packed operand with a float32 packed other operand is a caller's bug (aborts).
// Scratch: sgemm uses the kPackA, kPackB, kSharedA, kSharedB and kConvert slots
// (scratch.hpp) of the threads it runs on; a caller must not hold pointers into those
// slots across the call.
void sgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, float alpha,
           const GemmOperand& A, const GemmOperand& B, float beta, float* C, int64_t ldc,
           const GemmEpilogue& epilogue = {});

}  // namespace infer::cpu::simd
