// The loops of quantize.hpp compiled with the AVX512 flags (quantize_impl.hpp).
#include "quantize_impl.hpp"

namespace infer::cpu::simd::quantize_detail {

void quantize_u8_avx512(const float* x, size_t n, float s, int32_t z, uint8_t* y) {
  quantize<uint8_t>(x, n, s, z, y);
}
void quantize_s8_avx512(const float* x, size_t n, float s, int32_t z, int8_t* y) {
  quantize<int8_t>(x, n, s, z, y);
}
void dequantize_u8_avx512(const uint8_t* x, size_t n, float s, int32_t z, float* y) {
  dequantize<uint8_t>(x, n, s, z, y);
}
void dequantize_s8_avx512(const int8_t* x, size_t n, float s, int32_t z, float* y) {
  dequantize<int8_t>(x, n, s, z, y);
}
void range_with_zero_avx512(const float* x, size_t n, float* lo, float* hi) {
  range_with_zero(x, n, lo, hi);
}

}  // namespace infer::cpu::simd::quantize_detail
