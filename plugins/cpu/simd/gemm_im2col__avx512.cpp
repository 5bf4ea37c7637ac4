// The AVX-512 implicit-im2col packer. A 32-column panel with column stride 1 or 2 whose
// output positions span at most 8 output rows (every panel of an image at least 5
// columns wide) is read with masked contiguous loads, one per output row it touches
// (PanelPlan); gathers cost several times more per element, and were a third of a
// 3x3 convolution's time at 64 channels. Other panels keep the input row and column of
// every output position in vectors, and each K step (channel, kernel offset) is two
// bounds checks and two masked gathers (padding lanes are masked off and read as 0).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "gemm_im2col.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kNr = 32;
// A panel whose 32 output positions cover at most this many output rows, of a kernel of
// at most kMaxTaps offsets, is read with masked contiguous loads (see PanelPlan).
constexpr int kMaxSegments = 8;
constexpr int kMaxTaps = 64;

// 32 bits spread to the even bits of 64 (bit j to bit 2j).
inline uint64_t spread_even(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

// How one 32-column panel reads its K steps without gathers, for column stride SW (1 or
// 2). The panel's output positions fall into runs of consecutive output columns, one run
// per output row (a segment); for a kernel offset, each segment reads SW-strided input
// columns of one input row. With SW == 1 a 16-lane half of the panel is the union of
// masked loads, one per segment it touches, each from that segment's row shifted so
// that lane j reads the element of output position j (lanes outside the segment, and
// padding, are masked off and read as 0; a masked-off lane touches no memory). With
// SW == 2 the panel is read as 4 raw vectors of 16 consecutive floats, the data in their
// even lanes, and compacted by two permutes. The plan holds the loads per kernel offset
// (tap); every input channel reuses it.
template <int SW>
struct PanelPlan {
  static constexpr int kRaw = 2 * SW;
  struct Tap {
    int8_t count[kRaw];
    __mmask16 mask[kRaw][kMaxSegments];
    int64_t offset[kRaw][kMaxSegments];  // floats from the channel plane's start
  };
  Tap taps[kMaxTaps];

  // False (plan unusable: gather instead) when the panel covers more than kMaxSegments
  // output rows or the kernel has more than kMaxTaps offsets. Row validity and offset
  // depend on the segment and kh only, the lanes inside the row and their column on the
  // segment and kw only: both are computed once, and a tap combines them.
  bool build(const Im2colGeom& g, int64_t n0, int cols) {
    if (g.KH * g.KW > kMaxTaps) return false;  // (so KH and KW index the per-kh/kw tables)
    int seg_begin[kMaxSegments + 1];
    int64_t seg_oh[kMaxSegments], seg_ow[kMaxSegments];
    int nseg = 0;
    for (int j = 0; j < cols;) {
      if (nseg == kMaxSegments) return false;
      const int64_t n = n0 + j;
      seg_begin[nseg] = j;
      seg_oh[nseg] = n / g.OW;
      seg_ow[nseg] = n % g.OW;
      j += static_cast<int>(std::min<int64_t>(g.OW - seg_ow[nseg], cols - j));
      ++nseg;
    }
    seg_begin[nseg] = cols;
    // Per kw and segment: the lanes whose input column is inside the row (0: none) and
    // the column lane 0 would read; per kh and segment: the row's offset, -1 if outside.
    uint64_t col_bits[kMaxTaps][kMaxSegments];
    int64_t col_base[kMaxTaps][kMaxSegments], row_off[kMaxTaps][kMaxSegments];
    for (int64_t kw = 0; kw < g.KW; ++kw)
      for (int s = 0; s < nseg; ++s) {
        // Lane j of the segment reads input column iw0 + SW * (j - j0).
        const int j0 = seg_begin[s], j1 = seg_begin[s + 1];
        const int64_t iw0 = seg_ow[s] * SW - g.pw + kw * g.dw;
        const int64_t lo = iw0 >= 0 ? j0 : j0 + (-iw0 + SW - 1) / SW;
        const int64_t hi = iw0 > g.W - 1 ? j0 - 1 : j0 + (g.W - 1 - iw0) / SW;  // inclusive
        const int64_t a = std::max<int64_t>(lo, j0), b = std::min<int64_t>(hi, j1 - 1);
        uint64_t bits = 0;
        if (a <= b) {
          const auto lanes =
              static_cast<uint32_t>(((uint64_t{1} << (b + 1)) - 1) & ~((uint64_t{1} << a) - 1));
          bits = SW == 1 ? lanes : spread_even(lanes);
        }
        col_bits[kw][s] = bits;
        col_base[kw][s] = iw0 - SW * j0;
      }
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int s = 0; s < nseg; ++s) {
        const int64_t ih = seg_oh[s] * g.sh - g.ph + kh * g.dh;
        row_off[kh][s] = ih >= 0 && ih < g.H ? ih * g.W : -1;
      }
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        Tap& tap = taps[kh * g.KW + kw];
        for (int q = 0; q < kRaw; ++q) tap.count[q] = 0;
        for (int s = 0; s < nseg; ++s) {
          const uint64_t bits = col_bits[kw][s];
          if (row_off[kh][s] < 0 || bits == 0) continue;
          const int64_t base = row_off[kh][s] + col_base[kw][s];  // lane j reads base + SW * j
          for (int q = 0; q < kRaw; ++q) {
            const auto m = static_cast<__mmask16>(bits >> (16 * q));
            if (m == 0) continue;
            tap.mask[q][tap.count[q]] = m;
            tap.offset[q][tap.count[q]] = base + 16 * q;
            ++tap.count[q];
          }
        }
      }
    return true;
  }

  // Packs K steps [k0, k0 + kc) of the panel into d (kc x 32 floats).
  void pack(const Im2colGeom& g, int64_t k0, int64_t kc, float* d) const {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const int64_t plane = g.H * g.W;
    Im2colTap it(g, k0);
    for (int64_t k = 0; k < kc; ++k, d += kNr) {
      // Lanes masked off read nothing, so an address may lie outside the plane.
      const uintptr_t xc = reinterpret_cast<uintptr_t>(g.x + it.c * plane);
      const Tap& tap = taps[it.kh * g.KW + it.kw];
      __m512 raw[kRaw];
#pragma GCC unroll 4
      for (int q = 0; q < kRaw; ++q) {
        raw[q] = _mm512_setzero_ps();
        for (int i = 0; i < tap.count[q]; ++i)
          raw[q] = _mm512_mask_loadu_ps(
              raw[q], tap.mask[q][i],
              reinterpret_cast<const float*>(xc + static_cast<uintptr_t>(tap.offset[q][i] * 4)));
      }
      if constexpr (SW == 1) {
        _mm512_storeu_ps(d, raw[0]);
        _mm512_storeu_ps(d + 16, raw[1]);
      } else {
        _mm512_storeu_ps(d, _mm512_permutex2var_ps(raw[0], even, raw[1]));
        _mm512_storeu_ps(d + 16, _mm512_permutex2var_ps(raw[2], even, raw[3]));
      }
      it.next(g);
    }
  }
};

// The panel's 32 output positions share input row ih (before the kernel offset) and read
// input columns iw + j * sw (j < 32) of it.
void pack_one_row(const Im2colGeom& g, int64_t k0, int64_t kc, int32_t ih, int32_t iw, float* d) {
  const __m512i vW = _mm512_set1_epi32(static_cast<int32_t>(g.W));
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i v16 = _mm512_set1_epi32(16);
  const __m512 zero = _mm512_setzero_ps();
  const int64_t plane = g.H * g.W;
  Im2colTap tap(g, k0);
  for (int64_t k = 0; k < kc; ++k, d += kNr) {
    const int64_t y = ih + tap.kh * g.dh;
    if (y < 0 || y >= g.H) {
      _mm512_storeu_ps(d, zero);
      _mm512_storeu_ps(d + 16, zero);
    } else {
      // Input columns x0 + p for p in [0, 32 * sw): masked to the row, so the padding
      // reads as 0 and no load touches memory outside the row.
      const int64_t x0 = iw + tap.kw * g.dw;
      const float* row = g.x + tap.c * plane + y * g.W;
      const __m512i p0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(x0)), iota);
      const __mmask16 m0 = _mm512_cmplt_epu32_mask(p0, vW);
      const __m512i p1 = _mm512_add_epi32(p0, v16);
      const __mmask16 m1 = _mm512_cmplt_epu32_mask(p1, vW);
      // Lanes whose column is outside the row are masked off and read nothing, so the
      // address may point before the row.
      const float* src = reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(row) +
                                                        static_cast<uintptr_t>(x0 * 4));
      if (g.sw == 1) {
        _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(m0, src));
        _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(m1, src + 16));
      } else {
        const __m512i p2 = _mm512_add_epi32(p1, v16), p3 = _mm512_add_epi32(p2, v16);
        const __mmask16 m2 = _mm512_cmplt_epu32_mask(p2, vW), m3 = _mm512_cmplt_epu32_mask(p3, vW);
        const __m512 a0 = _mm512_maskz_loadu_ps(m0, src), a1 = _mm512_maskz_loadu_ps(m1, src + 16);
        const __m512 a2 = _mm512_maskz_loadu_ps(m2, src + 32), a3 = _mm512_maskz_loadu_ps(m3, src + 48);
        _mm512_storeu_ps(d, _mm512_permutex2var_ps(a0, even, a1));
        _mm512_storeu_ps(d + 16, _mm512_permutex2var_ps(a2, even, a3));
      }
    }
    tap.next(g);
  }
}

// Packs the panel with the plan for stride SW; false when no plan fits it.
// A plan costs a few K steps' packing per kernel offset to build, so a K block that uses
// each offset only once (a 7x7 convolution of 1 channel) keeps the gathers.
template <int SW>
bool pack_planned(const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int cols, float* d) {
  if (kc < 2 * g.KH * g.KW) return false;
  PanelPlan<SW> plan;
  if (!plan.build(g, n0, cols)) return false;
  plan.pack(g, k0, kc, d);
  return true;
}

}  // namespace

void im2col_pack_avx512(const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                        float* dst) {
  // Lanes past the matrix edge start far outside the image (every offset fails the
  // bounds check); in 32-bit, with room for the kernel offsets added to it.
  constexpr int32_t kOutside = -(1 << 30);
  const __m512i vH = _mm512_set1_epi32(static_cast<int32_t>(g.H));
  const __m512i vW = _mm512_set1_epi32(static_cast<int32_t>(g.W));
  const int64_t plane = g.H * g.W;
  for (int64_t p0 = 0; p0 < cols; p0 += kNr, dst += kc * kNr) {
    const int cc = static_cast<int>(std::min<int64_t>(kNr, cols - p0));
    const int64_t first = n0 + p0;
    // A panel inside one output row reads each K step with two loads and no plan: used
    // unless a plan is built (worth it from 4 K steps per kernel offset) and fits.
    const bool one_row =
        (g.sw == 1 || g.sw == 2) && cc == kNr && first / g.OW == (first + kNr - 1) / g.OW;
    const bool planned = (!one_row || kc >= 4 * g.KH * g.KW) &&
                         (g.sw == 1 ? pack_planned<1>(g, k0, kc, first, cc, dst)
                                    : g.sw == 2 && pack_planned<2>(g, k0, kc, first, cc, dst));
    if (planned) continue;
    if (one_row) {
      pack_one_row(g, k0, kc, static_cast<int32_t>(first / g.OW * g.sh - g.ph),
                   static_cast<int32_t>(first % g.OW * g.sw - g.pw), dst);
      continue;
    }
    alignas(64) int32_t ih0[kNr], iw0[kNr];
    for (int j = 0; j < kNr; ++j) {
      if (j < cc) {
        const int64_t n = n0 + p0 + j;
        ih0[j] = static_cast<int32_t>(n / g.OW * g.sh - g.ph);
        iw0[j] = static_cast<int32_t>(n % g.OW * g.sw - g.pw);
      } else {
        ih0[j] = iw0[j] = kOutside;
      }
    }
    const __m512i ih_a = _mm512_load_si512(ih0), ih_b = _mm512_load_si512(ih0 + 16);
    const __m512i iw_a = _mm512_load_si512(iw0), iw_b = _mm512_load_si512(iw0 + 16);
    // Offset of each lane's (ih0, iw0) in the plane; the kernel offset adds dy * W + dx.
    const __m512i base_a = _mm512_add_epi32(_mm512_mullo_epi32(ih_a, vW), iw_a);
    const __m512i base_b = _mm512_add_epi32(_mm512_mullo_epi32(ih_b, vW), iw_b);
    Im2colTap tap(g, k0);
    float* d = dst;
    for (int64_t k = 0; k < kc; ++k, d += kNr) {
      const float* xc = g.x + tap.c * plane;
      const int32_t dy = static_cast<int32_t>(tap.kh * g.dh), dx = static_cast<int32_t>(tap.kw * g.dw);
      const __m512i vdy = _mm512_set1_epi32(dy), vdx = _mm512_set1_epi32(dx);
      const __mmask16 ma = _mm512_cmplt_epu32_mask(_mm512_add_epi32(ih_a, vdy), vH) &
                           _mm512_cmplt_epu32_mask(_mm512_add_epi32(iw_a, vdx), vW);
      const __mmask16 mb = _mm512_cmplt_epu32_mask(_mm512_add_epi32(ih_b, vdy), vH) &
                           _mm512_cmplt_epu32_mask(_mm512_add_epi32(iw_b, vdx), vW);
      const __m512i off = _mm512_set1_epi32(dy * static_cast<int32_t>(g.W) + dx);
      const __m512 zero = _mm512_setzero_ps();
      _mm512_storeu_ps(d, _mm512_mask_i32gather_ps(zero, ma, _mm512_add_epi32(base_a, off), xc, 4));
      _mm512_storeu_ps(d + 16, _mm512_mask_i32gather_ps(zero, mb, _mm512_add_epi32(base_b, off), xc, 4));
      tap.next(g);
    }
  }
}

}  // namespace infer::cpu::simd::gemm_detail
