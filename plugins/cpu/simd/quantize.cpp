#include "quantize.hpp"

#include "quantize_impl.hpp"

namespace infer::cpu::simd {
namespace quantize_detail {
// Defined in quantize__avx2.cpp / quantize__avx512.cpp (x86-64 builds only).
void quantize_u8_avx2(const float*, size_t, float, int32_t, uint8_t*);
void quantize_s8_avx2(const float*, size_t, float, int32_t, int8_t*);
void dequantize_u8_avx2(const uint8_t*, size_t, float, int32_t, float*);
void dequantize_s8_avx2(const int8_t*, size_t, float, int32_t, float*);
void range_with_zero_avx2(const float*, size_t, float*, float*);
void quantize_u8_avx512(const float*, size_t, float, int32_t, uint8_t*);
void quantize_s8_avx512(const float*, size_t, float, int32_t, int8_t*);
void dequantize_u8_avx512(const uint8_t*, size_t, float, int32_t, float*);
void dequantize_s8_avx512(const int8_t*, size_t, float, int32_t, float*);
void range_with_zero_avx512(const float*, size_t, float*, float*);
void qlinear_binary_u8_avx2(QBinaryOp, const uint8_t*, size_t, QParams, const uint8_t*, size_t,
                            QParams, QParams, uint8_t*, size_t);
void qlinear_binary_s8_avx2(QBinaryOp, const int8_t*, size_t, QParams, const int8_t*, size_t,
                            QParams, QParams, int8_t*, size_t);
void qlinear_binary_u8_avx512(QBinaryOp, const uint8_t*, size_t, QParams, const uint8_t*, size_t,
                              QParams, QParams, uint8_t*, size_t);
void qlinear_binary_s8_avx512(QBinaryOp, const int8_t*, size_t, QParams, const int8_t*, size_t,
                              QParams, QParams, int8_t*, size_t);
void lookup_8bit_avx512vbmi(const uint8_t*, size_t, uint8_t, const uint8_t*, uint8_t*);
}  // namespace quantize_detail

using namespace quantize_detail;  // NOLINT

#if defined(__x86_64__) || defined(_M_X64)
#define INFER_QUANTIZE_DISPATCH(name, ...) \
  switch (isa) {                           \
    case Isa::kAvx512:                     \
      return name##_avx512(__VA_ARGS__);   \
    case Isa::kAvx2:                       \
      return name##_avx2(__VA_ARGS__);     \
    default:                               \
      break;                               \
  }
#else
#define INFER_QUANTIZE_DISPATCH(name, ...) (void)isa;
#endif

void quantize_u8(Isa isa, const float* x, size_t n, float scale, int32_t zp, uint8_t* y) {
  INFER_QUANTIZE_DISPATCH(quantize_u8, x, n, scale, zp, y)
  quantize<uint8_t>(x, n, scale, zp, y);
}
void quantize_s8(Isa isa, const float* x, size_t n, float scale, int32_t zp, int8_t* y) {
  INFER_QUANTIZE_DISPATCH(quantize_s8, x, n, scale, zp, y)
  quantize<int8_t>(x, n, scale, zp, y);
}
void dequantize_u8(Isa isa, const uint8_t* x, size_t n, float scale, int32_t zp, float* y) {
  INFER_QUANTIZE_DISPATCH(dequantize_u8, x, n, scale, zp, y)
  dequantize<uint8_t>(x, n, scale, zp, y);
}
void dequantize_s8(Isa isa, const int8_t* x, size_t n, float scale, int32_t zp, float* y) {
  INFER_QUANTIZE_DISPATCH(dequantize_s8, x, n, scale, zp, y)
  dequantize<int8_t>(x, n, scale, zp, y);
}
void range_with_zero(Isa isa, const float* x, size_t n, float* lo, float* hi) {
  INFER_QUANTIZE_DISPATCH(range_with_zero, x, n, lo, hi)
  quantize_detail::range_with_zero(x, n, lo, hi);
}

void qlinear_binary_u8(Isa isa, QBinaryOp op, const uint8_t* a, size_t a_step, QParams pa,
                       const uint8_t* b, size_t b_step, QParams pb, QParams pc, uint8_t* y,
                       size_t n) {
  INFER_QUANTIZE_DISPATCH(qlinear_binary_u8, op, a, a_step, pa, b, b_step, pb, pc, y, n)
  qlinear_binary<uint8_t>(op, a, a_step, pa, b, b_step, pb, pc, y, n);
}
void qlinear_binary_s8(Isa isa, QBinaryOp op, const int8_t* a, size_t a_step, QParams pa,
                       const int8_t* b, size_t b_step, QParams pb, QParams pc, int8_t* y,
                       size_t n) {
  INFER_QUANTIZE_DISPATCH(qlinear_binary_s8, op, a, a_step, pa, b, b_step, pb, pc, y, n)
  qlinear_binary<int8_t>(op, a, a_step, pa, b, b_step, pb, pc, y, n);
}

void lookup_8bit(Isa isa, const uint8_t* x, size_t n, uint8_t flip, const uint8_t* table,
                 uint8_t* y) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == Isa::kAvx512 && cpu_has_avx512_vbmi())
    return lookup_8bit_avx512vbmi(x, n, flip, table, y);
#else
  (void)isa;
#endif
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t t0 = table[x[i] ^ flip], t1 = table[x[i + 1] ^ flip];
    const uint8_t t2 = table[x[i + 2] ^ flip], t3 = table[x[i + 3] ^ flip];
    y[i] = t0;
    y[i + 1] = t1;
    y[i + 2] = t2;
    y[i + 3] = t3;
  }
  for (; i < n; ++i) y[i] = table[x[i] ^ flip];
}

}  // namespace infer::cpu::simd
