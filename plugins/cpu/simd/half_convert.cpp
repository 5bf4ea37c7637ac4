#include "half_convert.hpp"

namespace infer::cpu::simd {

#if defined(__x86_64__)
void half_to_float_avx2(const uint16_t* x, float* y, size_t n);
void float_to_half_avx2(const float* x, uint16_t* y, size_t n);
void half_to_float_avx512(const uint16_t* x, float* y, size_t n);
void float_to_half_avx512(const float* x, uint16_t* y, size_t n);
#endif

size_t half_to_float_run(Isa isa, const uint16_t* x, float* y, size_t n) {
#if defined(__x86_64__)
  if (isa_supported(isa)) {
    if (isa == Isa::kAvx512) {
      half_to_float_avx512(x, y, n);
      return n;
    }
    if (isa == Isa::kAvx2) {
      half_to_float_avx2(x, y, n);
      return n;
    }
  }
#endif
  (void)isa, (void)x, (void)y, (void)n;
  return 0;
}

size_t float_to_half_run(Isa isa, const float* x, uint16_t* y, size_t n) {
#if defined(__x86_64__)
  if (isa_supported(isa)) {
    if (isa == Isa::kAvx512) {
      float_to_half_avx512(x, y, n);
      return n;
    }
    if (isa == Isa::kAvx2) {
      float_to_half_avx2(x, y, n);
      return n;
    }
  }
#endif
  (void)isa, (void)x, (void)y, (void)n;
  return 0;
}

}  // namespace infer::cpu::simd
