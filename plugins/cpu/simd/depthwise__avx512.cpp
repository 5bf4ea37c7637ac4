// AVX-512 depthwise row: 32 outputs per step in two vectors, each with two accumulators
// (even and odd kernel rows) so the FMA chains overlap; the tail uses masked loads.
#include <immintrin.h>

#include "depthwise_kernels.hpp"

namespace infer::cpu::simd {

namespace {

// A fixed KH x KW kernel with every weight broadcast into a register once per row and
// the tap loops unrolled; kernel rows in the padding multiply a zero row instead of
// branching. Handles every column; returns the width.
template <int KH, int KW>
int64_t row_fixed(const DepthwiseRow& r, const float* zero_row) {
  __m512 w[KH * KW];
  for (int i = 0; i < KH * KW; ++i) w[i] = _mm512_set1_ps(r.weights[i]);
  // Rows in the padding read the zero row at a fixed place (live = 0), branch-free.
  const float* rows[KH];
  int64_t live[KH];
  for (int kh = 0; kh < KH; ++kh) {
    rows[kh] = r.rows[kh] != nullptr ? r.rows[kh] : zero_row;
    live[kh] = r.rows[kh] != nullptr ? 1 : 0;
  }
  int64_t off[KW];
  for (int kw = 0; kw < KW; ++kw) off[kw] = r.offsets[kw];
  const __m512 bias = _mm512_set1_ps(r.bias);
  int64_t ow = 0;
  for (; ow + 32 <= r.width; ow += 32) {
    __m512 a0 = bias, a1 = bias, b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
    for (int kh = 0; kh < KH; ++kh) {
      for (int kw = 0; kw < KW; ++kw) {
        const float* p = rows[kh] + live[kh] * (ow + off[kw]);
        if (kh & 1) {
          b0 = _mm512_fmadd_ps(w[kh * KW + kw], _mm512_loadu_ps(p), b0);
          b1 = _mm512_fmadd_ps(w[kh * KW + kw], _mm512_loadu_ps(p + 16), b1);
        } else {
          a0 = _mm512_fmadd_ps(w[kh * KW + kw], _mm512_loadu_ps(p), a0);
          a1 = _mm512_fmadd_ps(w[kh * KW + kw], _mm512_loadu_ps(p + 16), a1);
        }
      }
    }
    _mm512_storeu_ps(r.out + ow, _mm512_add_ps(a0, b0));
    _mm512_storeu_ps(r.out + ow + 16, _mm512_add_ps(a1, b1));
  }
  // The rest, one (masked) vector at a time: small images (28, 14, 7 wide) live here.
  for (; ow < r.width; ow += 16) {
    const int64_t left = r.width - ow;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff)
                                   : static_cast<__mmask16>((1u << left) - 1);
    __m512 a = bias, b = _mm512_setzero_ps();
    for (int kh = 0; kh < KH; ++kh) {
      for (int kw = 0; kw < KW; ++kw) {
        const __m512 v = _mm512_maskz_loadu_ps(m, rows[kh] + live[kh] * (ow + off[kw]));
        if (kh & 1) b = _mm512_fmadd_ps(w[kh * KW + kw], v, b);
        else a = _mm512_fmadd_ps(w[kh * KW + kw], v, a);
      }
    }
    _mm512_mask_storeu_ps(r.out + ow, m, _mm512_add_ps(a, b));
  }
  return ow;
}

}  // namespace

void depthwise_row_avx512(const DepthwiseRow& r) {
  // Zero taps for kernel rows in the vertical padding (2 vectors wide).
  alignas(64) static const float zeros[32] = {};
  const int KW = r.kw;
  int64_t ow = 0;
  if (r.kh == 3 && r.kw == 3) ow = row_fixed<3, 3>(r, zeros);
  else if (r.kh == 5 && r.kw == 5) ow = row_fixed<5, 5>(r, zeros);
  for (; ow + 32 <= r.width; ow += 32) {
    __m512 a0 = _mm512_set1_ps(r.bias), a1 = _mm512_set1_ps(r.bias);
    __m512 b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
    for (int kh = 0; kh < r.kh; ++kh) {
      const float* row = r.rows[kh];
      if (row == nullptr) continue;
      const float* wk = r.weights + kh * KW;
      for (int kw = 0; kw < KW; ++kw) {
        const float* p = row + r.offsets[kw] + ow;
        const __m512 wv = _mm512_set1_ps(wk[kw]);
        if (kh & 1) {
          b0 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p), b0);
          b1 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + 16), b1);
        } else {
          a0 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p), a0);
          a1 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + 16), a1);
        }
      }
    }
    _mm512_storeu_ps(r.out + ow, _mm512_add_ps(a0, b0));
    _mm512_storeu_ps(r.out + ow + 16, _mm512_add_ps(a1, b1));
  }
  for (; ow < r.width; ow += 16) {
    const int64_t left = r.width - ow;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff)
                                   : static_cast<__mmask16>((1u << left) - 1);
    __m512 a = _mm512_set1_ps(r.bias), b = _mm512_setzero_ps();
    for (int kh = 0; kh < r.kh; ++kh) {
      const float* row = r.rows[kh];
      if (row == nullptr) continue;
      const float* wk = r.weights + kh * KW;
      for (int kw = 0; kw < KW; ++kw) {
        const __m512 v = _mm512_maskz_loadu_ps(m, row + r.offsets[kw] + ow);
        if (kh & 1) b = _mm512_fmadd_ps(_mm512_set1_ps(wk[kw]), v, b);
        else a = _mm512_fmadd_ps(_mm512_set1_ps(wk[kw]), v, a);
      }
    }
    _mm512_mask_storeu_ps(r.out + ow, m, _mm512_add_ps(a, b));
  }
}

}  // namespace infer::cpu::simd
