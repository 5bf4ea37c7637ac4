// The Winograd tile transforms compiled for avx512: GCC vectors of 16 floats; the
// gather of input tiles into lane order and the scatter of output tiles back into rows
// with intrinsics (the portable loops stay scalar for rows of fewer than 16 tiles).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "winograd_impl.hpp"
#include "winograd_kernels.hpp"

namespace infer::cpu::simd {
namespace {
typedef float Vec __attribute__((vector_size(16 * sizeof(float))));

// The first min(max(n, 0), 16) lanes.
inline __mmask16 float_mask(int64_t n) {
  if (n >= 16) return static_cast<__mmask16>(0xFFFF);
  return n <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << n) - 1u);
}
}  // namespace

void winograd_input_avx512(const float* in, int64_t Tp, float* out, int64_t out_stride) {
  winograd_impl::input_transform<Vec, 16>(in, Tp, out, out_stride);
}
void winograd_output_avx512(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out) {
  winograd_impl::output_transform<Vec, 16>(in, in_stride, Tp, bias, out);
}

// 16 tiles per step, masked to the tiles left: columns 0..3 of the tiles are a 4-way
// deinterleave of 64 floats (two permutes each and a 256-bit merge), columns 4 and 5 the
// same of the floats 4 further on.
void winograd_gather_avx512(const float* R, int64_t TW, float* dst, int64_t Tp) {
  const __m512i idx0 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  const __m512i idx1 = _mm512_setr_epi32(1, 5, 9, 13, 17, 21, 25, 29, 1, 5, 9, 13, 17, 21, 25, 29);
  const __m512i idx2 =
      _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30);
  const __m512i idx3 =
      _mm512_setr_epi32(3, 7, 11, 15, 19, 23, 27, 31, 3, 7, 11, 15, 19, 23, 27, 31);
  for (int64_t tx = 0; tx < TW; tx += 16) {
    const int64_t n = std::min<int64_t>(16, TW - tx);
    const float* src = R + 4 * tx;
    // Floats [0, 4n + 2) of src are inside R.
    __m512 v[4], w[4];
    for (int q = 0; q < 4; ++q) {
      v[q] = _mm512_maskz_loadu_ps(float_mask(4 * n + 2 - 16 * q), src + 16 * q);
      w[q] = _mm512_maskz_loadu_ps(float_mask(4 * n - 2 - 16 * q), src + 4 + 16 * q);
    }
    auto column = [](const __m512* u, __m512i ix) {
      const __m512 a = _mm512_permutex2var_ps(u[0], ix, u[1]);
      const __m512 b = _mm512_permutex2var_ps(u[2], ix, u[3]);
      return _mm512_shuffle_f32x4(a, b, 0x44);
    };
    const __mmask16 m = float_mask(n);
    float* d = dst + tx;
    _mm512_mask_storeu_ps(d, m, column(v, idx0));
    _mm512_mask_storeu_ps(d + Tp, m, column(v, idx1));
    _mm512_mask_storeu_ps(d + 2 * Tp, m, column(v, idx2));
    _mm512_mask_storeu_ps(d + 3 * Tp, m, column(v, idx3));
    _mm512_mask_storeu_ps(d + 4 * Tp, m, column(w, idx0));
    _mm512_mask_storeu_ps(d + 5 * Tp, m, column(w, idx1));
  }
}

// 16 tiles (64 outputs) per step: the 4 rows of Q are transposed 4 x 4 within each
// 128-bit lane, then the lanes 4 x 4 across the vectors; the residual is loaded just
// before each vector of y is stored (it may be y itself).
void winograd_scatter_avx512(const float* q, int64_t Tp, int64_t OW, const float* res, float* y) {
  const int64_t tiles = (OW + 3) / 4;
  for (int64_t tx = 0; tx < tiles; tx += 16) {
    const __mmask16 m = float_mask(tiles - tx);
    const __m512 q0 = _mm512_maskz_loadu_ps(m, q + tx), q1 = _mm512_maskz_loadu_ps(m, q + Tp + tx);
    const __m512 q2 = _mm512_maskz_loadu_ps(m, q + 2 * Tp + tx);
    const __m512 q3 = _mm512_maskz_loadu_ps(m, q + 3 * Tp + tx);
    const __m512 t0 = _mm512_unpacklo_ps(q0, q1), t1 = _mm512_unpackhi_ps(q0, q1);
    const __m512 t2 = _mm512_unpacklo_ps(q2, q3), t3 = _mm512_unpackhi_ps(q2, q3);
    // u[e], 128-bit lane b: columns 0..3 of tile 4b + e.
    const __m512 u0 = _mm512_shuffle_ps(t0, t2, 0x44), u1 = _mm512_shuffle_ps(t0, t2, 0xEE);
    const __m512 u2 = _mm512_shuffle_ps(t1, t3, 0x44), u3 = _mm512_shuffle_ps(t1, t3, 0xEE);
    const __m512 x0 = _mm512_shuffle_f32x4(u0, u1, 0x44), x1 = _mm512_shuffle_f32x4(u0, u1, 0xEE);
    const __m512 x2 = _mm512_shuffle_f32x4(u2, u3, 0x44), x3 = _mm512_shuffle_f32x4(u2, u3, 0xEE);
    const __m512 out[4] = {_mm512_shuffle_f32x4(x0, x2, 0x88), _mm512_shuffle_f32x4(x0, x2, 0xDD),
                           _mm512_shuffle_f32x4(x1, x3, 0x88), _mm512_shuffle_f32x4(x1, x3, 0xDD)};
    for (int k = 0; k < 4; ++k) {
      const int64_t o = 4 * tx + 16 * k;
      if (o >= OW) break;
      const __mmask16 mk = float_mask(OW - o);
      __m512 v = out[k];
      if (res != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, res + o));
      _mm512_mask_storeu_ps(y + o, mk, v);
    }
  }
}

}  // namespace infer::cpu::simd
