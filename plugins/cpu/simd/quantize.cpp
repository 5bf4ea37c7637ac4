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

}  // namespace infer::cpu::simd
