// AVX-512 GEMM kernels, bfloat16 (AVX512_BF16): the 14 x 32 register tile of
// gemm_tile_avx512.hpp over vdpbf16ps, each K step a pair of K indices (the layout of
// gemm_kernels.hpp), and the conversion of float32 rows into those pairs. Built with the
// AVX-512 flags plus -mavx512bf16; run only where cpu_has_avx512_bf16() (gemm.cpp checks).
// A pair step does per row the work of two float32 steps in one instruction, against the
// same loads and broadcasts.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "gemm_kernels.hpp"
#include "gemm_tile_avx512.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

// The bfloat16 multiply of the register tile: a unit holds the bfloat16 of K steps k
// (low half) and k + 1 (high half), and vdpbf16ps adds both products to the float32 lane
// (inputs' subnormals read as zero, round to nearest even).
struct Bf16Ops {
  static __m512bh load(const float* p) { return (__m512bh)_mm512_loadu_si512(p); }
  static __m512bh load_masked(__mmask16 m, const float* p) {
    return (__m512bh)_mm512_maskz_loadu_epi32(m, p);
  }
  static __m512bh bcast(const float* p) {
    int32_t u;
    std::memcpy(&u, p, sizeof u);
    return (__m512bh)_mm512_set1_epi32(u);
  }
  static __m512 madd(__m512 acc, __m512bh v, __m512bh s) { return _mm512_dpbf16_ps(acc, v, s); }
};

// dst[p * width + c] = bf16(src[2p * rs + c]) | bf16(src[(2p + 1) * rs + c]) << 16 for the
// ceil(kc / 2) pair steps p and c < width; row kc (odd kc) and columns past `cols` read
// as 0 and are never touched in memory (src may be a caller's matrix). Per 16 columns:
// one vcvtne2ps2bf16 of rows 2p and 2p + 1 gives their 32 bfloat16 one row after the
// other, and one vpermw interleaves them into pairs.
void convert_pairs(const float* src, int64_t rs, int64_t kc, int cols, int width, uint32_t* dst) {
  const __m512i interleave =
      _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                       21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512 zero = _mm512_setzero_ps();
  for (int c0 = 0; c0 < width; c0 += 16) {
    const __mmask16 load = c0 < cols ? tail_mask(cols - c0) : static_cast<__mmask16>(0);
    const __mmask16 store = tail_mask(width - c0);
    const float* s = src + c0;
    uint32_t* d = dst + c0;
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2, s += 2 * rs, d += width) {
      const __m512 lo = _mm512_maskz_loadu_ps(load, s), hi = _mm512_maskz_loadu_ps(load, s + rs);
      const __m512i pairs =
          _mm512_permutexvar_epi16(interleave, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
      _mm512_mask_storeu_epi32(d, store, pairs);
    }
    if (k < kc) {
      const __m512 lo = _mm512_maskz_loadu_ps(load, s);
      const __m512i pairs =
          _mm512_permutexvar_epi16(interleave, (__m512i)_mm512_cvtne2ps_pbh(zero, lo));
      _mm512_mask_storeu_epi32(d, store, pairs);
    }
  }
}

}  // namespace

const Bf16Kernels& kernels_avx512bf16() {
  static const Bf16Kernels k{tile<Bf16Ops>, convert_pairs};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
