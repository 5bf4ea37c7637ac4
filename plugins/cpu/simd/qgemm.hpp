// 8-bit integer GEMM of the quantized ops (ConvInteger, MatMulInteger, QLinearConv,
// QLinearMatMul and the fused quantized ops), with int32 accumulation and a fused
// output stage:
//
//   acc(m, n) = sum_k (A(m, k) - a_zero[m]) * (B(k, n) - b_zero)        (exact, int32)
//   C(m, n)   = acc                                   kInt32
//             = float(acc + bias[m]) * scale[m]       kFloat  (then + fbias[m], relu)
//             = sat(nearbyint(float(acc + bias[m]) * scale[m]) + out_zero)   kUint8 / kInt8
//
// One canonical form: A is int8 (the weights side, packed once by qpack_a) and B is
// uint8 (the activations side, packed tile by tile inside qgemm from any strides). A
// caller with other storage shifts it first, exactly: uint8 weights become int8 by
// subtracting 128 (and their zero points by 128); int8 activations become uint8 by adding
// 128 (XOR 0x80; the zero point + 128). MatMul-like products with weights on the right,
// Y[M, N] = X[M, K] W[K, N], run as Y^T = W^T X^T: A = W^T (qpack_a takes any strides),
// B = X^T (B's strides) and C's strides transposed.
//
// Accumulation wraps modulo 2^32 (as ONNX Runtime's int32 accumulation); only a K in the
// tens of thousands with extreme values reaches it. Every ISA variant gives bit-identical
// results to the scalar one, including the float output stages (the same float
// operations in the same order: acc + bias in int32, one conversion, one multiply, one
// add, then nearbyint in round-to-nearest-even).
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

// Bytes of the packed form of an M x K int8 A for `isa` (it includes the row sums).
size_t qpacked_a_bytes(Isa isa, int64_t M, int64_t K);
// Packs A(m, k) = a[m * rs + k * cs] for m < M, k < K. dst: 64-byte aligned,
// qpacked_a_bytes long. Packed buffers are for the isa and dims they were made for.
void qpack_a(Isa isa, int64_t M, int64_t K, const int8_t* a, int64_t rs, int64_t cs, void* dst);

struct QGemmOutput {
  enum class Kind { kInt32, kFloat, kUint8, kInt8 };
  Kind kind = Kind::kInt32;
  // C(m, n) is element m * rs + n * cs of c (int32_t, float, uint8_t or int8_t by kind).
  void* c = nullptr;
  int64_t rs = 0, cs = 1;
  // Output stages other than kInt32: bias[m] (int32, nullptr = 0) and scale[m] (float,
  // one per row; a per-tensor scale is repeated by the caller).
  const int32_t* bias = nullptr;
  const float* scale = nullptr;
  // kFloat: fbias[m] added after the scale (nullptr = none).
  const float* fbias = nullptr;
  // kUint8 / kInt8: the output zero point, in the output type's range.
  int32_t out_zero = 0;
  // Clamp below at 0 (kFloat) or at out_zero (kUint8 / kInt8): a fused Relu. kInt32
  // ignores it, like bias, scale and fbias (C is the corrected accumulator itself).
  bool relu = false;
};

// C = the output stage of A * B (above). packed_a: made by qpack_a(isa, M, K, ...).
// a_zero: one int32 per row of A (nullptr = all 0). B(k, n) = b[k * b_rs + n * b_cs].
// Runs on `threads` (pass a SerialThreads from inside another parallel loop); K == 0 gives
// acc = 0. Uses the kPackB scratch slot (scratch.hpp) of the threads it runs on.
void qgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, const void* packed_a,
           const int32_t* a_zero, const uint8_t* b, int64_t b_rs, int64_t b_cs, int32_t b_zero,
           const QGemmOutput& out);

// qgemm with B's rows anywhere: B(k, n) = b[b_row_offsets[k] + n] (each row contiguous,
// K offsets). A stride-1 convolution reads its input in place this way: row (c, kh, kw)
// of its im2col matrix is the (padded) image shifted by the tap's offset.
void qgemm_rows(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K,
                const void* packed_a, const int32_t* a_zero, const uint8_t* b,
                const int64_t* b_row_offsets, int32_t b_zero, const QGemmOutput& out);

// Which integer dot-product instructions qgemm uses for `isa` on this CPU, for --explain
// and the benchmarks: "avx512-vnni", "avx-vnni", "avx2", "neon-dotprod", "scalar", ...
const char* qgemm_variant(Isa isa);

}  // namespace infer::cpu::simd
