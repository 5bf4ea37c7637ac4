// The loops of quantize.hpp compiled with the AVX512 flags (quantize_impl.hpp).
#include <immintrin.h>

#include <limits>
#include <type_traits>

#include "narrow_avx512.hpp"
#include "quantize_impl.hpp"

namespace infer::cpu::simd::quantize_detail {

// The end of every quantizing loop below, with the same operations as Rounder: NaN
// lanes to the zero point, the others held to [-512, 512], rounded half to even, the
// zero point added, saturated to Q and stored (the first lanes of mask m).
template <typename Q>
struct QuantizeStore {
  __m512 lim_lo = _mm512_set1_ps(-512.0f), lim_hi = _mm512_set1_ps(512.0f);
  __m512i z, lo = _mm512_set1_epi32(std::numeric_limits<Q>::min()),
             hi = _mm512_set1_epi32(std::numeric_limits<Q>::max());
  explicit QuantizeStore(int32_t zp) : z(_mm512_set1_epi32(zp)) {}
  __m512i saturated(__m512 q) const {
    const __mmask16 ordered = _mm512_cmp_ps_mask(q, q, _CMP_ORD_Q);
    const __m512 v = _mm512_maskz_mov_ps(ordered, _mm512_min_ps(_mm512_max_ps(q, lim_lo), lim_hi));
    const __m512i r = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(r, z), lo), hi);
  }
  void operator()(__m512 q, __mmask16 m, Q* y) const { store_low_bytes(y, m, saturated(q)); }
  // All 16 lanes: an unmasked store (on Zen 4 a masked one in the loop cost a third of
  // QLinearAdd's time).
  void operator()(__m512 q, Q* y) const { store_low_bytes(y, saturated(q)); }
};

// QuantizeLinear's loop in intrinsics (GCC's vectorization of the generic one spends most
// of its time on the rounding's selects), with the same operations as Rounder: the
// division, NaN to the zero point, the clamp to [-512, 512], rounding half to even, the
// zero point and the saturation.
template <typename Q>
void quantize_avx512(const float* x, size_t n, float scale, int32_t zp, Q* y) {
  const __m512 s = _mm512_set1_ps(scale);
  const QuantizeStore<Q> store(zp);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) store(_mm512_div_ps(_mm512_loadu_ps(x + i), s), y + i);
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    store(_mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s), m, y + i);
  }
}

void quantize_u8_avx512(const float* x, size_t n, float s, int32_t z, uint8_t* y) {
  quantize_avx512<uint8_t>(x, n, s, z, y);
}
void quantize_s8_avx512(const float* x, size_t n, float s, int32_t z, int8_t* y) {
  quantize_avx512<int8_t>(x, n, s, z, y);
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

// QLinearAdd / QLinearMul in intrinsics: GCC's vectorization of the generic loop spends
// most of its time on the rounding's selects. The same float operations in the same
// order, so the same bits: the clamp to [-512, 512] and the NaN test of the generic
// rounding become vmaxps/vminps and a mask, and the rounding half to even is vcvtps2dq
// with an explicit rounding mode.
template <typename Q>
struct QBinaryLanes {
  // 16 elements (the first `m` of them; all 16 when kFull) as int32.
  template <bool kFull>
  static __m512i load(const Q* p, __mmask16 m) {
    const __m128i v =
        kFull ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_maskz_loadu_epi8(m, p);
    if constexpr (std::is_same_v<Q, uint8_t>)
      return _mm512_cvtepu8_epi32(v);
    else
      return _mm512_cvtepi8_epi32(v);
  }
};

template <typename Q, bool kMul, bool kABroadcast, bool kBBroadcast>
void qlinear_binary_avx512(const Q* a, QParams pa, const Q* b, QParams pb, QParams pc, Q* y,
                           size_t n) {
  const __m512 sa = _mm512_set1_ps(pa.scale), sb = _mm512_set1_ps(pb.scale);
  const __m512i za = _mm512_set1_epi32(pa.zero), zb = _mm512_set1_epi32(pb.zero);
  const __m512 sc = _mm512_set1_ps(pc.scale);
  const QuantizeStore<Q> store(pc.zero);
  // A broadcast operand is scaled once (the same float multiply as the lanes do).
  const __m512 fa0 =
      _mm512_set1_ps(static_cast<float>(static_cast<int32_t>(a[0]) - pa.zero) * pa.scale);
  const __m512 fb0 =
      _mm512_set1_ps(static_cast<float>(static_cast<int32_t>(b[0]) - pb.zero) * pb.scale);
  auto step = [&]<bool kFull>(size_t i, __mmask16 m) {
    const __m512 fa = kABroadcast ? fa0
                                  : _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                                                      QBinaryLanes<Q>::template load<kFull>(a + i, m), za)),
                                                  sa);
    const __m512 fb = kBBroadcast ? fb0
                                  : _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                                                      QBinaryLanes<Q>::template load<kFull>(b + i, m), zb)),
                                                  sb);
    const __m512 q = _mm512_div_ps(kMul ? _mm512_mul_ps(fa, fb) : _mm512_add_ps(fa, fb), sc);
    if constexpr (kFull)
      store(q, y + i);
    else
      store(q, m, y + i);
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) step.template operator()<true>(i, __mmask16(0xFFFF));
  if (i < n) step.template operator()<false>(i, __mmask16((1u << (n - i)) - 1));
}

template <typename Q, bool kMul>
void qlinear_binary_avx512_steps(const Q* a, size_t as, QParams pa, const Q* b, size_t bs,
                                 QParams pb, QParams pc, Q* y, size_t n) {
  if (as != 0 && bs != 0)
    qlinear_binary_avx512<Q, kMul, false, false>(a, pa, b, pb, pc, y, n);
  else if (as != 0)
    qlinear_binary_avx512<Q, kMul, false, true>(a, pa, b, pb, pc, y, n);
  else if (bs != 0)
    qlinear_binary_avx512<Q, kMul, true, false>(a, pa, b, pb, pc, y, n);
  else
    qlinear_binary_avx512<Q, kMul, true, true>(a, pa, b, pb, pc, y, n);
}

template <typename Q>
void qlinear_binary_avx512_op(QBinaryOp op, const Q* a, size_t as, QParams pa, const Q* b,
                              size_t bs, QParams pb, QParams pc, Q* y, size_t n) {
  if (n == 0) return;
  if (op == QBinaryOp::kMul)
    qlinear_binary_avx512_steps<Q, true>(a, as, pa, b, bs, pb, pc, y, n);
  else
    qlinear_binary_avx512_steps<Q, false>(a, as, pa, b, bs, pb, pc, y, n);
}

void qlinear_binary_u8_avx512(QBinaryOp op, const uint8_t* a, size_t as, QParams pa,
                              const uint8_t* b, size_t bs, QParams pb, QParams pc, uint8_t* y,
                              size_t n) {
  qlinear_binary_avx512_op<uint8_t>(op, a, as, pa, b, bs, pb, pc, y, n);
}
void qlinear_binary_s8_avx512(QBinaryOp op, const int8_t* a, size_t as, QParams pa, const int8_t* b,
                              size_t bs, QParams pb, QParams pc, int8_t* y, size_t n) {
  qlinear_binary_avx512_op<int8_t>(op, a, as, pa, b, bs, pb, pc, y, n);
}

#define INFER_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

// 64 lookups: vpermi2b looks each index up in two 128-byte halves of the table, and the
// index's top bit picks the half.
INFER_VBMI inline __m512i lookup64(__m512i idx, __m512i t0, __m512i t1, __m512i t2, __m512i t3) {
  const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
  const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi);
}

// y[i] = table[x[i] ^ flip], 64 bytes per step.
INFER_VBMI void lookup_8bit_avx512vbmi(const uint8_t* x, size_t n, uint8_t flip,
                                       const uint8_t* table, uint8_t* y) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i idx = _mm512_xor_si512(_mm512_loadu_si512(x + i), f);
    _mm512_storeu_si512(y + i, lookup64(idx, t0, t1, t2, t3));
  }
  if (i < n) {
    const __mmask64 m = ~0ULL >> (64 - (n - i));  // 1 <= n - i < 64
    const __m512i idx = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), f);
    _mm512_mask_storeu_epi8(y + i, m, lookup64(idx, t0, t1, t2, t3));
  }
}
#undef INFER_VBMI

}  // namespace infer::cpu::simd::quantize_detail
