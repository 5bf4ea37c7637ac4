// AVX-512 integer GEMM kernels (layouts in qgemm_kernels.hpp).
//
// With AVX512-VNNI: an 8 x 48 register tile, 24 zmm accumulators (8 rows x 3 vectors of
// 16 columns), three B vectors and one broadcast of A: 28 of the 32 registers. Each
// group of 4 k is 3 B loads, 8 broadcasts and 24 vpdpbusd (64 multiply-adds each): the
// load ports stay well under their limit, and 24 independent chains cover vpdpbusd's
// latency on two pipes.
//
// Without it (AVX-512BW only): an 8 x 32 tile on vpmaddwd. B's bytes 0 and 2 of each
// 4-byte group are zero-extended to int16 (an AND) and bytes 1 and 3 (a shift), A's
// broadcast bytes sign-extended the same way (shifts), and two vpmaddwd per vector give
// the 4 products' sum exactly (vpmaddubsw would saturate).
//
// Both are compiled for every bottom edge (1..8 live rows) and right edge (1..3 or 1..2
// live vectors), and finish in registers: the zero-point corrections, the output stage of
// qgemm_kernels.hpp (the same operations in the same order, so the results are the
// scalar ones bit for bit) and masked stores, or a stack buffer and strided stores when C
// is not row-contiguous. The VNNI functions carry a target attribute, so that nothing
// else in this file can use VNNI instructions on a CPU without them.
#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "narrow_avx512.hpp"
#include "qgemm_kernels.hpp"
#include "transpose16_avx512.hpp"

namespace infer::cpu::simd::qgemm_detail {
namespace {

constexpr int kMr = 8;
constexpr int kNrVnni = 48;
constexpr int kNrBw = 32;

inline __mmask16 tail_mask(int left) {
  return left >= 16
             ? static_cast<__mmask16>(0xFFFF)
             : (left <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << left) - 1u));
}

inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Writes the finished tile held in buf (ROWS x t.cols values of 4 bytes, row stride NR;
// the int32 results for uint8 / int8 C) to a C that is not row-contiguous. A transposed C
// (rs == 1: Y^T of a MatMul, each column's rows contiguous) goes 16 columns at a time
// through a 16 x 16 transpose, and each column's rows are one masked store.
template <int NR, int ROWS>
void store_dwords(const uint32_t* buf, const QTileJob& t) {
  const size_t elem = t.st->elem;
  if (t.rs == 1) {
    const __mmask16 rows = static_cast<__mmask16>((1u << ROWS) - 1u);
    for (int j0 = 0; j0 < t.cols; j0 += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = i < ROWS ? _mm512_load_ps(reinterpret_cast<const float*>(buf) + i * NR + j0)
                        : _mm512_setzero_ps();
      transpose16(r);
      const int n = t.cols - j0 < 16 ? t.cols - j0 : 16;
      if (elem == 4) {
        float* c = static_cast<float*>(t.c) + j0 * t.cs;
        for (int j = 0; j < n; ++j) _mm512_mask_storeu_ps(c + j * t.cs, rows, r[j]);
      } else {
        int8_t* c = static_cast<int8_t*>(t.c) + j0 * t.cs;
        for (int j = 0; j < n; ++j)
          store_low_bytes(c + j * t.cs, rows, _mm512_castps_si512(r[j]));
      }
    }
    return;
  }
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < t.cols; ++j) {
      const uint32_t v = buf[r * NR + j];
      const int64_t at = r * t.rs + j * t.cs;
      if (elem == 4)
        static_cast<uint32_t*>(t.c)[at] = v;
      else
        static_cast<uint8_t*>(t.c)[at] = static_cast<uint8_t>(v);
    }
}

// The corrections and the output stage of rows [0, ROWS) x vectors [0, NV) of the tile,
// then the stores. acc: the raw sums of A * B, stored by the tile (row r, vector v at
// acc[r * NV + v]). Not inlined on purpose: inlined, its constants and the 24
// accumulators overflowed the 32 registers, and GCC 12 placed the spill stores of the
// accumulators inside the K loop (twice as slow).
template <int NR, int ROWS, int NV>
__attribute__((noinline)) void finish(const __m512i* acc, const QTileJob& t) {
  const OutStage& st = *t.st;
  __m512i csum[NV];
  const bool col_term = t.neg_az != nullptr;
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v)
    csum[v] = col_term ? _mm512_loadu_si512(t.col_sum + 16 * v) : _mm512_setzero_si512();
  const bool direct = t.cs == 1;
  __mmask16 mask[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) mask[v] = tail_mask(t.cols - 16 * v);
  // The strided case: the finished tile goes through this buffer (4 bytes per element,
  // the int32 result before narrowing for uint8 / int8; row stride NR).
  alignas(64) uint32_t buf[kMr * NR];
  char* const c = static_cast<char*>(t.c);
  const int64_t row_bytes = t.rs * static_cast<int64_t>(st.elem);
  const QGemmOutput::Kind kind = st.kind;
  const __m512 zero = _mm512_setzero_ps();
  const __m512 flo = _mm512_set1_ps(st.flo), fhi = _mm512_set1_ps(st.fhi);
  const __m512i oz = _mm512_set1_epi32(st.out_zero);
#pragma GCC unroll 8
  for (int r = 0; r < ROWS; ++r) {
    __m512i x[NV];
    const __m512i add = _mm512_set1_epi32(t.row_add[r]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      x[v] = _mm512_add_epi32(acc[r * NV + v], add);
      if (col_term)
        x[v] = _mm512_add_epi32(x[v], _mm512_mullo_epi32(csum[v], _mm512_set1_epi32(t.neg_az[r])));
    }
    char* crow = c + r * row_bytes;
    if (kind == QGemmOutput::Kind::kInt32) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        if (direct)
          _mm512_mask_storeu_epi32(crow + 64 * v, mask[v], x[v]);
        else
          _mm512_store_si512(buf + r * NR + 16 * v, x[v]);
      }
    } else if (kind == QGemmOutput::Kind::kFloat) {
      const __m512 scale = _mm512_set1_ps(t.scale[r]);
      const __m512 fb = _mm512_set1_ps(t.fbias != nullptr ? t.fbias[r] : 0.0f);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(x[v]), scale);
        if (t.fbias != nullptr) f = _mm512_add_ps(f, fb);
        if (st.relu) f = _mm512_max_ps(f, zero);
        if (direct)
          _mm512_mask_storeu_ps(crow + 64 * v, mask[v], f);
        else
          _mm512_store_ps(reinterpret_cast<float*>(buf) + r * NR + 16 * v, f);
      }
    } else {
      const __m512 scale = _mm512_set1_ps(t.scale[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(x[v]), scale);
        f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
        // In [lo, hi] already (OutStage::flo): no integer clamp.
        const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), oz);
        if (direct)
          store_low_bytes(crow + 16 * v, mask[v], q);
        else
          _mm512_store_si512(buf + r * NR + 16 * v, q);
      }
    }
  }
  if (!direct) store_dwords<NR, ROWS>(buf, t);
}

template <int ROWS, int NV>
__attribute__((target("avx512vnni"))) void tile_vnni(const QTileJob& t) {
  // Short tiles run two sets of accumulators over even and odd groups, so that at least
  // 8 chains cover the latency.
  constexpr int kSets = ROWS * NV < 8 ? 2 : 1;
  constexpr int kAcc = ROWS * NV;
  __m512i acc[kSets * kAcc];
#pragma GCC unroll 48
  for (int i = 0; i < kSets * kAcc; ++i) acc[i] = _mm512_setzero_si512();
  const int8_t* a = t.a;
  const uint8_t* b = t.b;
  int64_t g = 0;
  if constexpr (kSets == 2) {
    for (; g + 2 <= t.kg; g += 2, a += 2 * kMr * 4, b += 2 * kNrVnni * 4) {
#pragma GCC unroll 8
      for (int r = 0; r < ROWS; ++r) {
        const __m512i a0 = broadcast4(a + 4 * r), a1 = broadcast4(a + kMr * 4 + 4 * r);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          acc[r * NV + v] =
              _mm512_dpbusd_epi32(acc[r * NV + v], _mm512_loadu_si512(b + 64 * v), a0);
          acc[kAcc + r * NV + v] = _mm512_dpbusd_epi32(
              acc[kAcc + r * NV + v], _mm512_loadu_si512(b + kNrVnni * 4 + 64 * v), a1);
        }
      }
    }
  }
  for (; g < t.kg; ++g, a += kMr * 4, b += kNrVnni * 4) {
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + 64 * v);
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r) {
      const __m512i av = broadcast4(a + 4 * r);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r * NV + v] = _mm512_dpbusd_epi32(acc[r * NV + v], bv[v], av);
    }
  }
  if constexpr (kSets == 2) {
#pragma GCC unroll 48
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_add_epi32(acc[i], acc[kAcc + i]);
  }
  alignas(64) __m512i sums[kAcc];
#pragma GCC unroll 48
  for (int i = 0; i < kAcc; ++i) _mm512_store_si512(sums + i, acc[i]);
  finish<kNrVnni, ROWS, NV>(sums, t);
}

template <int ROWS, int NV>
void tile_bw(const QTileJob& t) {
  __m512i acc[ROWS * NV];
#pragma GCC unroll 48
  for (int i = 0; i < ROWS * NV; ++i) acc[i] = _mm512_setzero_si512();
  const __m512i low_bytes = _mm512_set1_epi16(0x00FF);
  const int8_t* a = t.a;
  const uint8_t* b = t.b;
  for (int64_t g = 0; g < t.kg; ++g, a += kMr * 4, b += kNrBw * 4) {
    __m512i be[NV], bo[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __m512i bv = _mm512_loadu_si512(b + 64 * v);
      be[v] = _mm512_and_si512(bv, low_bytes);  // bytes 0 and 2 of each group, as int16
      bo[v] = _mm512_srli_epi16(bv, 8);         // bytes 1 and 3
    }
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r) {
      const __m512i av = broadcast4(a + 4 * r);
      const __m512i ae = _mm512_srai_epi16(_mm512_slli_epi16(av, 8), 8);
      const __m512i ao = _mm512_srai_epi16(av, 8);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r * NV + v] = _mm512_add_epi32(
            acc[r * NV + v],
            _mm512_add_epi32(_mm512_madd_epi16(be[v], ae), _mm512_madd_epi16(bo[v], ao)));
    }
  }
  alignas(64) __m512i sums[ROWS * NV];
#pragma GCC unroll 48
  for (int i = 0; i < ROWS * NV; ++i) _mm512_store_si512(sums + i, acc[i]);
  finish<kNrBw, ROWS, NV>(sums, t);
}

// The narrow tile's output stage: P panels of 8 rows (rows along the ymm lanes) x NC
// columns. acc[p * NC + c]: the raw sums of panel p, column c.
template <int P, int NC>
__attribute__((noinline)) void finish_narrow(const __m256i* acc, const QTileJob& t) {
  const OutStage& st = *t.st;
  const QGemmOutput::Kind kind = st.kind;
  const size_t elem = st.elem;
  const bool col_term = t.neg_az != nullptr;
  char* const c = static_cast<char*>(t.c);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 flo = _mm256_set1_ps(st.flo), fhi = _mm256_set1_ps(st.fhi);
  const __m256i oz = _mm256_set1_epi32(st.out_zero), lo = _mm256_set1_epi32(st.lo),
                hi = _mm256_set1_epi32(st.hi);
  for (int p = 0; p < P; ++p) {
    const int live = t.rows - 8 * p < 8 ? t.rows - 8 * p : 8;
    const __mmask8 rows = static_cast<__mmask8>((1u << live) - 1u);
    const __m256i add = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.row_add + 8 * p));
    const __m256i naz = col_term
                            ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.neg_az + 8 * p))
                            : _mm256_setzero_si256();
    __m256 scale = zero, fb = zero;
    if (kind != QGemmOutput::Kind::kInt32) scale = _mm256_maskz_loadu_ps(rows, t.scale + 8 * p);
    if (t.fbias != nullptr) fb = _mm256_maskz_loadu_ps(rows, t.fbias + 8 * p);
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) {
      __m256i x = _mm256_add_epi32(acc[p * NC + j], add);
      if (col_term)
        x = _mm256_add_epi32(x, _mm256_mullo_epi32(naz, _mm256_set1_epi32(t.col_sum[j])));
      if (kind == QGemmOutput::Kind::kFloat) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(x), scale);
        if (t.fbias != nullptr) f = _mm256_add_ps(f, fb);
        if (st.relu) f = _mm256_max_ps(f, zero);
        x = _mm256_castps_si256(f);
      } else if (kind != QGemmOutput::Kind::kInt32) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(x), scale);
        f = _mm256_min_ps(_mm256_max_ps(f, flo), fhi);
        x = _mm256_add_epi32(_mm256_cvtps_epi32(f), oz);
        x = _mm256_min_epi32(_mm256_max_epi32(x, lo), hi);
      }
      // C(8p + r, j): contiguous rows when C is transposed (rs == 1).
      char* dst = c + (8 * p * t.rs + j * t.cs) * static_cast<int64_t>(elem);
      if (t.rs == 1) {
        if (elem == 4)
          _mm256_mask_storeu_epi32(dst, rows, x);
        else
          store_low_bytes(dst, rows, x);
      } else {
        alignas(32) uint32_t v[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(v), x);
        for (int r = 0; r < live; ++r) {
          if (elem == 4)
            std::memcpy(dst + r * t.rs * 4, &v[r], 4);
          else
            dst[r * t.rs] = static_cast<char>(static_cast<uint8_t>(v[r]));
        }
      }
    }
  }
}

// One K group of the narrow tile into acc[P * NC]. A function rather than a lambda: clang
// does not give a lambda its enclosing function's target attribute.
template <int P, int NC>
__attribute__((target("avx512vnni"), always_inline)) inline void narrow_step(__m256i* acc,
                                                                             const int8_t* ag,
                                                                             const uint8_t* bg,
                                                                             int64_t as) {
  __m256i bc[NC];
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j) {
    int32_t v;
    std::memcpy(&v, bg + 4 * j, 4);
    bc[j] = _mm256_set1_epi32(v);
  }
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ag + p * as));
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) acc[p * NC + j] = _mm256_dpbusd_epi32(acc[p * NC + j], bc[j], av);
  }
}

// The narrow tile: P panels (8 rows each, a_stride bytes apart) x NC <= 4 columns, the
// rows along ymm vectors (one 32-byte load per panel and group) and each column's 4
// bytes of B broadcast: vpdpbusd's unsigned operand is then the broadcast.
template <int P, int NC>
__attribute__((target("avx512vnni"))) void narrow_vnni(const QTileJob& t) {
  constexpr int kAcc = P * NC;
  constexpr int kSets = kAcc < 8 ? 2 : 1;
  __m256i acc[kSets * kAcc];
#pragma GCC unroll 32
  for (int i = 0; i < kSets * kAcc; ++i) acc[i] = _mm256_setzero_si256();
  const int8_t* a = t.a;
  const uint8_t* b = t.b;
  const int64_t as = t.a_stride;
  int64_t g = 0;
  if constexpr (kSets == 2)
    for (; g + 2 <= t.kg; g += 2, a += 2 * kMr * 4, b += 2 * kNrVnni * 4) {
      narrow_step<P, NC>(acc, a, b, as);
      narrow_step<P, NC>(acc + kAcc, a + kMr * 4, b + kNrVnni * 4, as);
    }
  for (; g < t.kg; ++g, a += kMr * 4, b += kNrVnni * 4) narrow_step<P, NC>(acc, a, b, as);
  alignas(32) __m256i sums[kAcc];
#pragma GCC unroll 16
  for (int i = 0; i < kAcc; ++i)
    _mm256_store_si256(sums + i,
                       kSets == 2 ? _mm256_add_epi32(acc[i], acc[(kSets - 1) * kAcc + i]) : acc[i]);
  finish_narrow<P, NC>(sums, t);
}

template <int... R>
constexpr std::array<std::array<QTileFn, 3>, kMr> vnni_table(std::integer_sequence<int, R...>) {
  return {{{tile_vnni<R + 1, 1>, tile_vnni<R + 1, 2>, tile_vnni<R + 1, 3>}...}};
}
template <int... R>
constexpr std::array<std::array<QTileFn, 2>, kMr> bw_table(std::integer_sequence<int, R...>) {
  return {{{tile_bw<R + 1, 1>, tile_bw<R + 1, 2>}...}};
}
constexpr auto kVnniTiles = vnni_table(std::make_integer_sequence<int, kMr>());
constexpr auto kBwTiles = bw_table(std::make_integer_sequence<int, kMr>());

template <int... P>
constexpr std::array<std::array<QTileFn, 4>, sizeof...(P)> narrow_table(
    std::integer_sequence<int, P...>) {
  return {{{narrow_vnni<P + 1, 1>, narrow_vnni<P + 1, 2>, narrow_vnni<P + 1, 3>,
            narrow_vnni<P + 1, 4>}...}};
}
constexpr int kNarrowPanels = 4;
constexpr auto kNarrowTiles = narrow_table(std::make_integer_sequence<int, kNarrowPanels>());
void narrow_vnni_any(const QTileJob& t) { kNarrowTiles[(t.rows + 7) / 8 - 1][t.cols - 1](t); }

void tile_vnni_any(const QTileJob& t) { kVnniTiles[t.rows - 1][(t.cols + 15) / 16 - 1](t); }
void tile_bw_any(const QTileJob& t) { kBwTiles[t.rows - 1][(t.cols + 15) / 16 - 1](t); }

// sum[v] += the column sums of the 16 4-byte groups of z (exact: vpmaddubsw adds two
// bytes times 1, at most 510).
inline __m512i add_group_sums(__m512i sum, __m512i z) {
  const __m512i pairs = _mm512_maddubs_epi16(z, _mm512_set1_epi8(1));
  return _mm512_add_epi32(sum, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
}

// B row-major (cs == 1): 4 rows of 16 columns interleaved into 16 groups per step.
// row(k) is the address of row k's first column.
template <int NR, typename Row>
void pack_rows(Row row, int64_t K, int cols, uint8_t* dst, int32_t* col_sum) {
  constexpr int NV = NR / 16;
  __m512i sum[NV];
  __mmask16 mask[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    sum[v] = _mm512_setzero_si512();
    mask[v] = tail_mask(cols - 16 * v);
  }
  const int64_t groups = (K + 3) / 4;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t kq = K - 4 * g;
    const uint8_t* s0 = row(4 * g);
    const uint8_t* s1 = kq > 1 ? row(4 * g + 1) : nullptr;
    const uint8_t* s2 = kq > 2 ? row(4 * g + 2) : nullptr;
    const uint8_t* s3 = kq > 3 ? row(4 * g + 3) : nullptr;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __m128i zero = _mm_setzero_si128();
      const __m128i r0 = _mm_maskz_loadu_epi8(mask[v], s0 + 16 * v);
      const __m128i r1 = kq > 1 ? _mm_maskz_loadu_epi8(mask[v], s1 + 16 * v) : zero;
      const __m128i r2 = kq > 2 ? _mm_maskz_loadu_epi8(mask[v], s2 + 16 * v) : zero;
      const __m128i r3 = kq > 3 ? _mm_maskz_loadu_epi8(mask[v], s3 + 16 * v) : zero;
      const __m128i t0 = _mm_unpacklo_epi8(r0, r1), t1 = _mm_unpackhi_epi8(r0, r1);
      const __m128i t2 = _mm_unpacklo_epi8(r2, r3), t3 = _mm_unpackhi_epi8(r2, r3);
      __m512i z = _mm512_castsi128_si512(_mm_unpacklo_epi16(t0, t2));
      z = _mm512_inserti32x4(z, _mm_unpackhi_epi16(t0, t2), 1);
      z = _mm512_inserti32x4(z, _mm_unpacklo_epi16(t1, t3), 2);
      z = _mm512_inserti32x4(z, _mm_unpackhi_epi16(t1, t3), 3);
      _mm512_storeu_si512(dst + g * NR * 4 + 64 * v, z);
      if (col_sum != nullptr) sum[v] = add_group_sums(sum[v], z);
    }
  }
  if (col_sum != nullptr)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(col_sum + 16 * v, sum[v]);
}

// B transposed (rs == 1: each column contiguous along K): 16 columns x 16 groups (64
// bytes of each column) per 16 x 16 transpose of 4-byte words.
template <int NR>
void pack_cols(const uint8_t* b, int64_t cs, int64_t K, int cols, uint8_t* dst, int32_t* col_sum) {
  constexpr int NV = NR / 16;
  const int64_t groups = (K + 3) / 4;
  for (int v = 0; v < NV; ++v) {
    __m512i sum = _mm512_setzero_si512();
    const int live = cols - 16 * v;  // columns of this vector that exist (may be <= 0)
    for (int64_t g0 = 0; g0 < groups; g0 += 16) {
      const int64_t left = K - 4 * g0;  // bytes of each column from here
      const __mmask64 kmask = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
      __m512 r[16];
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        r[j] = j < live ? _mm512_castsi512_ps(
                              _mm512_maskz_loadu_epi8(kmask, b + (16 * v + j) * cs + 4 * g0))
                        : _mm512_setzero_ps();
      transpose16(r);
      const int64_t gn = groups - g0 < 16 ? groups - g0 : 16;
      for (int64_t q = 0; q < gn; ++q) {
        const __m512i z = _mm512_castps_si512(r[q]);
        _mm512_storeu_si512(dst + (g0 + q) * NR * 4 + 64 * v, z);
        if (col_sum != nullptr) sum = add_group_sums(sum, z);
      }
    }
    if (col_sum != nullptr) _mm512_storeu_si512(col_sum + 16 * v, sum);
  }
}

template <int NR>
void pack_b(const uint8_t* b, int64_t rs, int64_t cs, int64_t K, int cols, int nr, uint8_t* dst,
            int32_t* col_sum) {
  if (cs == 1)
    pack_rows<NR>([=](int64_t k) { return b + k * rs; }, K, cols, dst, col_sum);
  else if (rs == 1)
    pack_cols<NR>(b, cs, K, cols, dst, col_sum);
  else
    pack_b_generic(b, rs, cs, K, cols, nr, dst, col_sum);
}

template <int NR>
void pack_b_rows(const uint8_t* b, const int64_t* row_off, int64_t K, int cols, int, uint8_t* dst,
                 int32_t* col_sum) {
  pack_rows<NR>([=](int64_t k) { return b + row_off[k]; }, K, cols, dst, col_sum);
}

}  // namespace

const QKernels& qkernels_avx512(bool vnni) {
  static const QKernels with = [] {
    QKernels k{
        Variant::kAvx512Vnni, "avx512-vnni",       kMr, kNrVnni, tile_vnni_any, pack_b<kNrVnni>,
        narrow_vnni_any,      kNarrowPanels * kMr, 4};
    k.pack_b_rows = pack_b_rows<kNrVnni>;
    return k;
  }();
  static const QKernels without = [] {
    QKernels k{Variant::kAvx512Bw, "avx512bw", kMr, kNrBw, tile_bw_any, pack_b<kNrBw>};
    k.pack_b_rows = pack_b_rows<kNrBw>;
    return k;
  }();
  return vnni ? with : without;
}

}  // namespace infer::cpu::simd::qgemm_detail
