// Narrowing stores for the files compiled with AVX-512 flags (the integer GEMM, the
// quantize loops, the channel-blocked depthwise kernel). Internal linkage: only those
// files include it.
#pragma once

#include <immintrin.h>

namespace infer::cpu::simd {
namespace {

// The low byte of each int32 lane of v into p, for the lanes of mask m: vpmovdb into a
// register, then a masked byte store. Written as one expression, GCC folds the pair into
// vpmovdb's memory form, which AMD's Zen 4 runs several times slower (QLinearAdd's loop
// took 2.2x as long); the empty asm keeps the narrowed bytes in a register.
inline void store_low_bytes(void* p, __mmask16 m, __m512i v) {
  __m128i b = _mm512_cvtepi32_epi8(v);
  asm("" : "+v"(b));
  _mm_mask_storeu_epi8(p, m, b);
}

// All 16 lanes: an unmasked store.
inline void store_low_bytes(void* p, __m512i v) {
  __m128i b = _mm512_cvtepi32_epi8(v);
  asm("" : "+v"(b));
  _mm_storeu_si128(static_cast<__m128i*>(p), b);
}

// The same for the 8 int32 lanes of a ymm.
inline void store_low_bytes(void* p, __mmask8 m, __m256i v) {
  __m128i b = _mm256_cvtepi32_epi8(v);
  asm("" : "+v"(b));
  _mm_mask_storeu_epi8(p, static_cast<__mmask16>(m), b);
}

}  // namespace
}  // namespace infer::cpu::simd
