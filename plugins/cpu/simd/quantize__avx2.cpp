// The loops of quantize.hpp compiled with the AVX2 flags (quantize_impl.hpp).
#include "quantize_impl.hpp"

namespace infer::cpu::simd::quantize_detail {

void quantize_u8_avx2(const float* x, size_t n, float s, int32_t z, uint8_t* y) {
  quantize<uint8_t>(x, n, s, z, y);
}
void quantize_s8_avx2(const float* x, size_t n, float s, int32_t z, int8_t* y) {
  quantize<int8_t>(x, n, s, z, y);
}
void dequantize_u8_avx2(const uint8_t* x, size_t n, float s, int32_t z, float* y) {
  dequantize<uint8_t>(x, n, s, z, y);
}
void dequantize_s8_avx2(const int8_t* x, size_t n, float s, int32_t z, float* y) {
  dequantize<int8_t>(x, n, s, z, y);
}
void range_with_zero_avx2(const float* x, size_t n, float* lo, float* hi) {
  range_with_zero(x, n, lo, hi);
}

void qlinear_binary_u8_avx2(QBinaryOp op, const uint8_t* a, size_t as, QParams pa, const uint8_t* b,
                            size_t bs, QParams pb, QParams pc, uint8_t* y, size_t n) {
  qlinear_binary<uint8_t>(op, a, as, pa, b, bs, pb, pc, y, n);
}
void qlinear_binary_s8_avx2(QBinaryOp op, const int8_t* a, size_t as, QParams pa, const int8_t* b,
                            size_t bs, QParams pb, QParams pc, int8_t* y, size_t n) {
  qlinear_binary<int8_t>(op, a, as, pa, b, bs, pb, pc, y, n);
}

}  // namespace infer::cpu::simd::quantize_detail
