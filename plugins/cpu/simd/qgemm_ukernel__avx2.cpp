// AVX2 integer GEMM kernels (layouts in qgemm_kernels.hpp).
//
// With AVX-VNNI (Alder Lake, Zen 5): a 6 x 16 register tile, 12 ymm accumulators (6 rows
// x 2 vectors of 8 columns), two B vectors and one broadcast: 15 of the 16 registers, on
// the VEX vpdpbusd. Without it: a 4 x 16 tile on vpmaddwd over bytes widened to int16
// (B's bytes 0 and 2 of each 4-byte group by an AND, bytes 1 and 3 by a shift; A's
// sign-extended by shifts): exact, where vpmaddubsw would saturate. Both are compiled for
// every bottom edge and for 1 or 2 live vectors, and finish in registers with the output
// stage of qgemm_kernels.hpp (the same operations in the same order as the scalar one);
// a full-width tile of a row-contiguous C is stored directly, anything else through a
// stack buffer. The VNNI functions carry a target attribute, so nothing else in this
// file can use AVX-VNNI instructions.
#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "qgemm_kernels.hpp"

namespace infer::cpu::simd::qgemm_detail {
namespace {

constexpr int kMrVnni = 6;
constexpr int kMrPlain = 4;
constexpr int kNr = 16;

inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The corrections and the output stage of rows [0, ROWS) x vectors [0, NV) of the tile,
// then the stores. acc: the raw sums of A * B, stored by the tile (row r, vector v at
// acc[r * NV + v]). Not inlined, so that its registers do not make GCC spill the
// accumulators inside the K loop (see qgemm_ukernel__avx512.cpp).
template <int ROWS, int NV>
__attribute__((noinline)) void finish(const __m256i* acc, const QTileJob& t) {
  const OutStage& st = *t.st;
  __m256i csum[NV];
  const bool col_term = t.neg_az != nullptr;
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
    csum[v] = col_term ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.col_sum + 8 * v))
                       : _mm256_setzero_si256();
  const bool direct = t.cs == 1 && t.cols == 8 * NV;
  alignas(32) uint32_t buf[kMrVnni * kNr];
  char* const c = static_cast<char*>(t.c);
  const int64_t row_bytes = t.rs * static_cast<int64_t>(st.elem);
  const QGemmOutput::Kind kind = st.kind;
  const __m256 zero = _mm256_setzero_ps();
  const __m256 flo = _mm256_set1_ps(st.flo), fhi = _mm256_set1_ps(st.fhi);
  const __m256i oz = _mm256_set1_epi32(st.out_zero), lo = _mm256_set1_epi32(st.lo),
                hi = _mm256_set1_epi32(st.hi);
#pragma GCC unroll 8
  for (int r = 0; r < ROWS; ++r) {
    __m256i x[NV];
    const __m256i add = _mm256_set1_epi32(t.row_add[r]);
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      x[v] = _mm256_add_epi32(acc[r * NV + v], add);
      if (col_term)
        x[v] = _mm256_add_epi32(x[v], _mm256_mullo_epi32(csum[v], _mm256_set1_epi32(t.neg_az[r])));
    }
    char* const dst = direct
                          ? c + r * row_bytes
                          : reinterpret_cast<char*>(buf) + r * kNr * static_cast<int64_t>(st.elem);
    if (kind == QGemmOutput::Kind::kInt32) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * v), x[v]);
    } else if (kind == QGemmOutput::Kind::kFloat) {
      const __m256 scale = _mm256_set1_ps(t.scale[r]);
      const __m256 fb = _mm256_set1_ps(t.fbias != nullptr ? t.fbias[r] : 0.0f);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(x[v]), scale);
        if (t.fbias != nullptr) f = _mm256_add_ps(f, fb);
        if (st.relu) f = _mm256_max_ps(f, zero);
        _mm256_storeu_ps(reinterpret_cast<float*>(dst + 32 * v), f);
      }
    } else {
      const __m256 scale = _mm256_set1_ps(t.scale[r]);
      const bool is_u8 = kind == QGemmOutput::Kind::kUint8;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(x[v]), scale);
        f = _mm256_min_ps(_mm256_max_ps(f, flo), fhi);
        __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(f), oz);
        q = _mm256_min_epi32(_mm256_max_epi32(q, lo), hi);
        // In range already: the saturating packs only narrow.
        const __m128i w =
            _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        const __m128i bytes = is_u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 8 * v), bytes);
      }
    }
  }
  if (!direct) store_strided(buf, kNr, ROWS, t.cols, t);
}

template <int ROWS, int NV>
__attribute__((target("avxvnni"))) void tile_vnni(const QTileJob& t) {
  constexpr int kSets = ROWS * NV < 6 ? 2 : 1;
  __m256i acc[ROWS][NV], acc2[ROWS][NV];
#pragma GCC unroll 8
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = acc2[r][v] = _mm256_setzero_si256();
  const int8_t* a = t.a;
  const uint8_t* b = t.b;
  int64_t g = 0;
  if constexpr (kSets == 2) {
    for (; g + 2 <= t.kg; g += 2, a += 2 * kMrVnni * 4, b += 2 * kNr * 4) {
#pragma GCC unroll 8
      for (int r = 0; r < ROWS; ++r) {
        const __m256i a0 = broadcast4(a + 4 * r), a1 = broadcast4(a + kMrVnni * 4 + 4 * r);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          acc[r][v] = _mm256_dpbusd_avx_epi32(
              acc[r][v], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * v)), a0);
          acc2[r][v] = _mm256_dpbusd_avx_epi32(
              acc2[r][v],
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + kNr * 4 + 32 * v)), a1);
        }
      }
    }
  }
  for (; g < t.kg; ++g, a += kMrVnni * 4, b += kNr * 4) {
    __m256i bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * v));
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r) {
      const __m256i av = broadcast4(a + 4 * r);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_dpbusd_avx_epi32(acc[r][v], bv[v], av);
    }
  }
  if constexpr (kSets == 2) {
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_add_epi32(acc[r][v], acc2[r][v]);
  }
  alignas(32) __m256i sums[ROWS * NV];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) _mm256_store_si256(sums + r * NV + v, acc[r][v]);
  finish<ROWS, NV>(sums, t);
}

template <int ROWS, int NV>
void tile_plain(const QTileJob& t) {
  __m256i acc[ROWS][NV];
#pragma GCC unroll 8
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_si256();
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  const int8_t* a = t.a;
  const uint8_t* b = t.b;
  for (int64_t g = 0; g < t.kg; ++g, a += kMrPlain * 4, b += kNr * 4) {
    __m256i be[NV], bo[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __m256i bv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * v));
      be[v] = _mm256_and_si256(bv, low_bytes);  // bytes 0 and 2 of each group, as int16
      bo[v] = _mm256_srli_epi16(bv, 8);         // bytes 1 and 3
    }
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r) {
      const __m256i av = broadcast4(a + 4 * r);
      const __m256i ae = _mm256_srai_epi16(_mm256_slli_epi16(av, 8), 8);
      const __m256i ao = _mm256_srai_epi16(av, 8);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_add_epi32(_mm256_madd_epi16(be[v], ae),
                                                                 _mm256_madd_epi16(bo[v], ao)));
    }
  }
  alignas(32) __m256i sums[ROWS * NV];
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) _mm256_store_si256(sums + r * NV + v, acc[r][v]);
  finish<ROWS, NV>(sums, t);
}

template <int... R>
constexpr std::array<std::array<QTileFn, 2>, sizeof...(R)> vnni_table(
    std::integer_sequence<int, R...>) {
  return {{{tile_vnni<R + 1, 1>, tile_vnni<R + 1, 2>}...}};
}
template <int... R>
constexpr std::array<std::array<QTileFn, 2>, sizeof...(R)> plain_table(
    std::integer_sequence<int, R...>) {
  return {{{tile_plain<R + 1, 1>, tile_plain<R + 1, 2>}...}};
}
constexpr auto kVnniTiles = vnni_table(std::make_integer_sequence<int, kMrVnni>());
constexpr auto kPlainTiles = plain_table(std::make_integer_sequence<int, kMrPlain>());

void tile_vnni_any(const QTileJob& t) { kVnniTiles[t.rows - 1][(t.cols + 7) / 8 - 1](t); }
void tile_plain_any(const QTileJob& t) { kPlainTiles[t.rows - 1][(t.cols + 7) / 8 - 1](t); }

// sum += the column sums of the 8 4-byte groups of z (exact: vpmaddubsw adds two bytes
// times 1, at most 510).
inline __m256i add_group_sums(__m256i sum, __m256i z) {
  const __m256i pairs = _mm256_maddubs_epi16(z, _mm256_set1_epi8(1));
  return _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// A full panel of row-major B (cs == 1, 16 columns): 4 rows interleaved into 16 groups
// per step. Partial panels take the generic packer.
void pack_rows(const uint8_t* b, int64_t rs, int64_t K, uint8_t* dst, int32_t* col_sum) {
  __m256i sum0 = _mm256_setzero_si256(), sum1 = sum0;
  const int64_t groups = (K + 3) / 4;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t kq = K - 4 * g;
    const uint8_t* src = b + 4 * g * rs;
    const __m128i zero = _mm_setzero_si128();
    auto row = [&](int q) {
      return kq > q ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + q * rs)) : zero;
    };
    const __m128i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
    const __m128i t0 = _mm_unpacklo_epi8(r0, r1), t1 = _mm_unpackhi_epi8(r0, r1);
    const __m128i t2 = _mm_unpacklo_epi8(r2, r3), t3 = _mm_unpackhi_epi8(r2, r3);
    const __m256i z0 = _mm256_set_m128i(_mm_unpackhi_epi16(t0, t2), _mm_unpacklo_epi16(t0, t2));
    const __m256i z1 = _mm256_set_m128i(_mm_unpackhi_epi16(t1, t3), _mm_unpacklo_epi16(t1, t3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + g * kNr * 4), z0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + g * kNr * 4 + 32), z1);
    if (col_sum != nullptr) {
      sum0 = add_group_sums(sum0, z0);
      sum1 = add_group_sums(sum1, z1);
    }
  }
  if (col_sum != nullptr) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(col_sum), sum0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(col_sum + 8), sum1);
  }
}

// Transposes the 8 x 8 block of 4-byte words r in place (r[j] becomes column j).
inline void transpose8(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
    r[j + 4] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
  }
}

// B transposed (rs == 1: each column contiguous along K): 8 columns x 8 groups (32 bytes
// of each column) per 8 x 8 transpose of 4-byte words. The last, partial block of K is
// copied through a zeroed buffer.
void pack_cols(const uint8_t* b, int64_t cs, int64_t K, int cols, uint8_t* dst, int32_t* col_sum) {
  const int64_t groups = (K + 3) / 4;
  for (int h = 0; h < kNr / 8; ++h) {
    __m256i sum = _mm256_setzero_si256();
    const int live = cols - 8 * h;  // columns of this half that exist (may be <= 0)
    for (int64_t g0 = 0; g0 < groups; g0 += 8) {
      const int64_t left = K - 4 * g0;  // bytes of each column from here
      __m256i r[8];
      for (int j = 0; j < 8; ++j) {
        const uint8_t* src = b + (8 * h + j) * cs + 4 * g0;
        if (j >= live) {
          r[j] = _mm256_setzero_si256();
        } else if (left >= 32) {
          r[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
        } else {
          alignas(32) uint8_t tmp[32] = {};
          std::memcpy(tmp, src, static_cast<size_t>(left));
          r[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
        }
      }
      transpose8(r);
      const int64_t gn = groups - g0 < 8 ? groups - g0 : 8;
      for (int64_t q = 0; q < gn; ++q) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (g0 + q) * kNr * 4 + 32 * h), r[q]);
        if (col_sum != nullptr) sum = add_group_sums(sum, r[q]);
      }
    }
    if (col_sum != nullptr) _mm256_storeu_si256(reinterpret_cast<__m256i*>(col_sum + 8 * h), sum);
  }
}

void pack_b(const uint8_t* b, int64_t rs, int64_t cs, int64_t K, int cols, int nr, uint8_t* dst,
            int32_t* col_sum) {
  if (cs == 1 && cols == kNr)
    pack_rows(b, rs, K, dst, col_sum);
  else if (rs == 1 && cs != 1)
    pack_cols(b, cs, K, cols, dst, col_sum);
  else
    pack_b_generic(b, rs, cs, K, cols, nr, dst, col_sum);
}

}  // namespace

const QKernels& qkernels_avx2(bool vnni) {
  static const QKernels with{Variant::kAvxVnni, "avx-vnni", kMrVnni, kNr, tile_vnni_any, pack_b};
  static const QKernels without{Variant::kAvx2, "avx2", kMrPlain, kNr, tile_plain_any, pack_b};
  return vnni ? with : without;
}

}  // namespace infer::cpu::simd::qgemm_detail
