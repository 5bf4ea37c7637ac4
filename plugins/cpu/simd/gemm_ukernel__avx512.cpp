// AVX-512 GEMM kernels: a 14 x 32 register tile (28 zmm accumulators, two zmm of B and
// one broadcast of A: 31 of the 32 registers), with a 14 x 16 variant for a right-edge
// panel of at most 16 columns, a rows-along-the-vector one for at most 4, and both for
// 17..20, each also compiled for every shorter bottom edge (1..13 live rows); the A and B
// panel packers (with in-register 16 x 16 transposes for row-major A and transposed B);
// the GEMV loops. The tile does 28 FMAs per K step against two B loads and 14
// broadcasts: far from the load ports' limit, and its 28 independent chains cover the
// 4-cycle FMA latency even on a core with two full 512-bit FMA pipes. The tile and the
// GEMV prefetch the operand they stream into L1 (a model's weights are read once per run,
// often from memory, and the hardware prefetchers lose the stream at each panel jump).
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <utility>

#include "gemm_kernels.hpp"
#include "gemm_tile.hpp"
#include "transpose16_avx512.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kMr = 14;
constexpr int kNr = 32;
// The register tile prefetches its A (14 floats per K step) this many K steps ahead.
constexpr int64_t kPrefetchSteps = 64;
// The GEMV streams W once (a classifier's weights, from memory): each K step prefetches
// the W row this many steps ahead (past the end near the last steps: a prefetch never
// faults).
constexpr int64_t kGemvPrefetchSteps = 16;

// Prefetches the line holding base[offset] into L1. The address is formed as an integer:
// it may lie past the end of the array (a prefetch never faults).
inline void prefetch(const float* base, int64_t offset) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(base) +
                                             static_cast<uintptr_t>(offset * 4)),
               _MM_HINT_T0);
}

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

// The epilogue straight from the accumulators: the finished rows are written with masked
// stores (nr < 32 at the right edge), so a tile never goes through a stack buffer and
// back. Same order of operations as finish_tile: alpha, beta * C, bias, residual, act.
// Activations other than Relu/Clip/None run afterwards on the stored rows (in L1). Inlined
// into each tile routine, so the accumulators go straight from registers to C instead of
// through the stack.
__attribute__((always_inline)) inline void finish_in_registers(__m512* c0, __m512* c1,
                                                               const TileJob& t) {
  const __mmask16 m0 = tail_mask(t.nr), m1 = t.nr > 16 ? tail_mask(t.nr - 16) : 0;
  const GemmEpilogue* ep = t.ep;
  const __m512 alpha = _mm512_set1_ps(t.alpha), beta = _mm512_set1_ps(t.beta);
  const bool scale = t.alpha != 1.0f;
  const int beta_mode = t.beta == 0.0f ? 0 : (t.beta == 1.0f ? 1 : 2);
  bool row_bias = false, col_bias = false, relu = false, clip = false, other_act = false;
  const float* res = nullptr;
  __m512 cb0 = _mm512_setzero_ps(), cb1 = cb0, lo = cb0, hi = cb0;
  if (ep != nullptr) {
    row_bias = ep->bias_mode == GemmEpilogue::Bias::kPerRow;
    col_bias = ep->bias_mode == GemmEpilogue::Bias::kPerCol;
    if (col_bias) {
      cb0 = _mm512_maskz_loadu_ps(m0, ep->bias + t.col0);
      cb1 = _mm512_maskz_loadu_ps(m1, ep->bias + t.col0 + 16);
    }
    if (ep->residual != nullptr) res = ep->residual + t.row0 * ep->ldr + t.col0;
    relu = ep->act.kind == ActKind::kRelu;
    clip = ep->act.kind == ActKind::kClip;
    other_act = !relu && !clip && ep->act.kind != ActKind::kNone;
    if (clip) {
      lo = _mm512_set1_ps(ep->act.p0);
      hi = _mm512_set1_ps(ep->act.p1);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) {
    if (r < t.mr) {
      float* c = t.c + r * t.ldc;
      __m512 v0 = c0[r], v1 = c1[r];
      if (scale) {
        v0 = _mm512_mul_ps(alpha, v0);
        v1 = _mm512_mul_ps(alpha, v1);
      }
      if (beta_mode == 1) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, c));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, c + 16));
      } else if (beta_mode == 2) {
        v0 = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m0, c), v0);
        v1 = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m1, c + 16), v1);
      }
      if (row_bias) {
        const __m512 b = _mm512_set1_ps(ep->bias[t.row0 + r]);
        v0 = _mm512_add_ps(v0, b);
        v1 = _mm512_add_ps(v1, b);
      } else if (col_bias) {
        v0 = _mm512_add_ps(v0, cb0);
        v1 = _mm512_add_ps(v1, cb1);
      }
      if (res != nullptr) {
        const float* rr = res + r * ep->ldr;
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, rr));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, rr + 16));
      }
      if (relu) {
        v0 = _mm512_max_ps(v0, zero);
        v1 = _mm512_max_ps(v1, zero);
      } else if (clip) {
        v0 = _mm512_min_ps(_mm512_max_ps(v0, lo), hi);
        v1 = _mm512_min_ps(_mm512_max_ps(v1, lo), hi);
      }
      _mm512_mask_storeu_ps(c, m0, v0);
      _mm512_mask_storeu_ps(c + 16, m1, v1);
    }
  }
  if (other_act)
    for (int r = 0; r < t.mr; ++r) apply_activation(t.isa, ep->act, t.c + r * t.ldc, static_cast<size_t>(t.nr));
}

// ROWS live rows of the 14-row panel (a bottom edge, e.g. the last 2 of M = 128 tokens,
// runs only their FMAs instead of all 14); NV = 1: the panel has at most 16 live columns
// (the right edge of C, e.g. 4 of them when N = 196), so only the first zmm of each row
// is computed, half the FMAs of a full tile. Below 8 accumulators the 4-cycle FMA latency
// would stall the two pipes, so short tiles run two sets over even and odd K steps.
template <int ROWS, int NV>
void tile_impl(const TileJob& t) {
  constexpr int kSets = ROWS * NV < 8 ? 2 : 1;
  __m512 c0[kMr], c1[kMr];
#pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  const float* __restrict a = t.a;
  const float* __restrict b = t.b;
  int64_t k = 0;
  if constexpr (kSets == 2) {
    __m512 d0[ROWS], d1[ROWS];
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) d0[r] = d1[r] = _mm512_setzero_ps();
    for (; k + 2 <= t.kc; k += 2, a += 2 * kMr, b += 2 * kNr) {
      const __m512 b0 = _mm512_loadu_ps(b), e0 = _mm512_loadu_ps(b + kNr);
#pragma GCC unroll 16
      for (int r = 0; r < ROWS; ++r) {
        const __m512 av = _mm512_set1_ps(a[r]), aw = _mm512_set1_ps(a[kMr + r]);
        c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
        d0[r] = _mm512_fmadd_ps(aw, e0, d0[r]);
        if constexpr (NV == 2) {
          c1[r] = _mm512_fmadd_ps(av, _mm512_loadu_ps(b + 16), c1[r]);
          d1[r] = _mm512_fmadd_ps(aw, _mm512_loadu_ps(b + kNr + 16), d1[r]);
        }
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      c0[r] = _mm512_add_ps(c0[r], d0[r]);
      if constexpr (NV == 2) c1[r] = _mm512_add_ps(c1[r], d1[r]);
    }
  }
  // A streams (prepacked weights come from DRAM): each step prefetches the A of the step
  // kPrefetchSteps ahead, running on into the next tile's panel near the end.
  const int64_t k_switch = t.kc - kPrefetchSteps;
  const float* pf = k_switch > k || t.a_next == nullptr ? a : t.a_next;
  int64_t pf_off = k_switch > k || t.a_next == nullptr ? kPrefetchSteps * kMr : 0;
  for (; k < t.kc; ++k, a += kMr, b += kNr, pf_off += kMr) {
    if (k == k_switch && t.a_next != nullptr) {
      pf = t.a_next;
      pf_off = 0;
    }
    prefetch(pf, pf_off);
    const __m512 b0 = _mm512_loadu_ps(b);
    if constexpr (NV == 1) {
#pragma GCC unroll 16
      for (int r = 0; r < ROWS; ++r) c0[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), b0, c0[r]);
    } else {
      const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
      for (int r = 0; r < ROWS; ++r) {
        const __m512 av = _mm512_set1_ps(a[r]);
        c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
      }
    }
  }
  finish_in_registers(c0, c1, t);
}

// tile_impl by live rows (index t.mr - 1) for one NV.
template <int NV, int... R>
constexpr std::array<TileFn, sizeof...(R)> tiles_by_rows(std::integer_sequence<int, R...>) {
  return {&tile_impl<R + 1, NV>...};
}
constexpr auto kTiles1 = tiles_by_rows<1>(std::make_integer_sequence<int, kMr>{});
constexpr auto kTiles2 = tiles_by_rows<2>(std::make_integer_sequence<int, kMr>{});

// An edge panel of NC <= 4 live columns (N = 49 = 32 + 16 + 1, N = 196 = 6 * 32 + 4):
// the 14 rows of A go along the vector (one masked load per K step) and each column gets
// its own accumulators, split over sets of K steps (4 for one column, else 2) so that at
// least 4 FMA chains run: the panel costs about NC FMAs per K step instead of a 14 x 16
// tile's 14 (a single column on 2 chains was latency-bound: N = 49 ran 23% slower than
// N = 48). The sums are transposed through a small buffer and finished by the generic
// epilogue.
template <int NC>
void tile_narrow(const TileJob& t) {
  constexpr __mmask16 kRows = static_cast<__mmask16>((1u << kMr) - 1u);
  // Independent FMA chains per column: at least 4 in all, so that the 4-cycle latency
  // does not leave a single column at a quarter of the FMA rate.
  constexpr int kSets = NC == 1 ? 4 : 2;
  __m512 s[kSets][NC];
#pragma GCC unroll 4
  for (int q = 0; q < kSets; ++q)
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) s[q][j] = _mm512_setzero_ps();
  const float* __restrict a = t.a;
  const float* __restrict b = t.b;
  int64_t k = 0;
  for (; k + kSets <= t.kc; k += kSets, a += kSets * kMr, b += kSets * kNr) {
#pragma GCC unroll 4
    for (int q = 0; q < kSets; ++q) {
      const __m512 av = _mm512_maskz_loadu_ps(kRows, a + q * kMr);
#pragma GCC unroll 4
      for (int j = 0; j < NC; ++j)
        s[q][j] = _mm512_fmadd_ps(av, _mm512_set1_ps(b[q * kNr + j]), s[q][j]);
    }
  }
  for (; k < t.kc; ++k, a += kMr, b += kNr) {
    const __m512 av = _mm512_maskz_loadu_ps(kRows, a);
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) s[0][j] = _mm512_fmadd_ps(av, _mm512_set1_ps(b[j]), s[0][j]);
  }
  alignas(64) float cols[NC][16];
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j) {
    __m512 sum = s[0][j];
#pragma GCC unroll 4
    for (int q = 1; q < kSets; ++q) sum = _mm512_add_ps(sum, s[q][j]);
    _mm512_store_ps(cols[j], sum);
  }
  float acc[kMr * NC];
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < NC; ++j) acc[r * NC + j] = cols[j][r];
  finish_tile(acc, NC, t);
}

// The tile for a panel of nr <= 4 live columns; false for wider ones.
bool narrow_tile(const TileJob& t) {
  switch (t.nr) {
    case 1:
      tile_narrow<1>(t);
      return true;
    case 2:
      tile_narrow<2>(t);
      return true;
    case 3:
      tile_narrow<3>(t);
      return true;
    case 4:
      tile_narrow<4>(t);
      return true;
    default:
      return false;
  }
}

void tile(const TileJob& t) {
  if (narrow_tile(t)) return;
  const int rows = t.mr - 1;
  if (t.nr <= 16) {
    kTiles1[rows](t);
  } else if (t.nr <= 20) {
    // 17..20 columns (N = 49 = 32 + 17 in ResNet's last stage): a half-width tile on the
    // first 16 and a narrow one on the rest, about 15 FMAs per K step instead of 28.
    TileJob half = t;
    half.nr = 16;
    kTiles1[rows](half);
    TileJob rest = t;
    rest.nr = t.nr - 16;
    rest.b = t.b + 16;
    rest.c = t.c + 16;
    rest.col0 = t.col0 + 16;
    narrow_tile(rest);
  } else {
    kTiles2[rows](t);
  }
}

// pack_b_rows for 32-wide panels: two (masked) vector loads and two stores per K step.
void pack_b_rows(const float* src, int64_t rs, int64_t kc, int cols, float* dst) {
  if (cols == kNr) {
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2, src += 2 * rs, dst += 2 * kNr) {
      const __m512 a0 = _mm512_loadu_ps(src), a1 = _mm512_loadu_ps(src + 16);
      const __m512 b0 = _mm512_loadu_ps(src + rs), b1 = _mm512_loadu_ps(src + rs + 16);
      _mm512_storeu_ps(dst, a0);
      _mm512_storeu_ps(dst + 16, a1);
      _mm512_storeu_ps(dst + kNr, b0);
      _mm512_storeu_ps(dst + kNr + 16, b1);
    }
    if (k < kc) {
      _mm512_storeu_ps(dst, _mm512_loadu_ps(src));
      _mm512_storeu_ps(dst + 16, _mm512_loadu_ps(src + 16));
    }
    return;
  }
  const __mmask16 m0 = tail_mask(cols), m1 = cols > 16 ? tail_mask(cols - 16) : 0;
  for (int64_t k = 0; k < kc; ++k, src += rs, dst += kNr) {
    _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m0, src));
    _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
  }
}

// pack_a_rows for 14-row panels: 16 K steps at a time, the panel's rows (zeros past
// `rows`, and for the two rows of the 16 x 16 block past the panel) are loaded, transposed
// in registers and stored as 16 runs of 14 floats, instead of one scalar store per element.
void pack_a_rows(const float* src, int64_t rs, int64_t kc, int rows, float* dst) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 r[16];
  for (int64_t k = 0; k < kc; k += 16, dst += 16 * kMr) {
    const int64_t left = kc - k;
    const __mmask16 m = tail_mask(left);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_maskz_loadu_ps(m, src + i * rs + k) : zero;
    transpose16(r);
    constexpr __mmask16 kPanel = static_cast<__mmask16>((1u << kMr) - 1u);
    if (left >= 16) {
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) _mm512_mask_storeu_ps(dst + j * kMr, kPanel, r[j]);
    } else {
      for (int j = 0; j < left; ++j) _mm512_mask_storeu_ps(dst + j * kMr, kPanel, r[j]);
    }
  }
}

// pack_b_cols for 32-wide panels: per half panel of 16 columns and 16 K steps, the columns
// (contiguous along K; zeros past `cols`) are loaded, transposed in registers and stored
// as 16 rows of the panel.
void pack_b_cols(const float* src, int64_t cs, int64_t kc, int cols, float* dst) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 r[16];
  for (int h = 0; h < 2; ++h) {
    const int c0 = 16 * h;
    float* d = dst + c0;
    for (int64_t k = 0; k < kc; k += 16, d += 16 * kNr) {
      const int64_t left = kc - k;
      const __mmask16 m = tail_mask(left);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = c0 + i < cols ? _mm512_maskz_loadu_ps(m, src + (c0 + i) * cs + k) : zero;
      transpose16(r);
      if (left >= 16) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) _mm512_storeu_ps(d + j * kNr, r[j]);
      } else {
        for (int j = 0; j < left; ++j) _mm512_storeu_ps(d + j * kNr, r[j]);
      }
    }
  }
}

void gemv_rows(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw, int64_t n,
               float* y) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    for (int64_t k = 0; k < K; ++k, p += ldw) {
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) prefetch(p, kGemvPrefetchSteps * ldw + 16 * l);
      const __m512 xv = _mm512_set1_ps(x[k * incx]);
      s0 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p), s0);
      s1 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p + 16), s1);
      s2 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p + 32), s2);
      s3 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p + 48), s3);
    }
    _mm512_storeu_ps(y + j, s0);
    _mm512_storeu_ps(y + j + 16, s1);
    _mm512_storeu_ps(y + j + 32, s2);
    _mm512_storeu_ps(y + j + 48, s3);
  }
  // Up to 32 columns at a time, two K steps per iteration so that four chains run.
  for (; j < n; j += 32) {
    const __mmask16 m0 = tail_mask(n - j), m1 = n - j > 16 ? tail_mask(n - j - 16) : 0;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, p += 2 * ldw) {
      prefetch(p, kGemvPrefetchSteps * ldw);
      prefetch(p, kGemvPrefetchSteps * ldw + 16);
      prefetch(p, (kGemvPrefetchSteps + 1) * ldw);
      prefetch(p, (kGemvPrefetchSteps + 1) * ldw + 16);
      const __m512 x0 = _mm512_set1_ps(x[k * incx]);
      const __m512 x1 = _mm512_set1_ps(x[(k + 1) * incx]);
      s0 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m0, p), s0);
      s1 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m1, p + 16), s1);
      s2 = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(m0, p + ldw), s2);
      s3 = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(m1, p + ldw + 16), s3);
    }
    if (k < K) {
      const __m512 x0 = _mm512_set1_ps(x[k * incx]);
      s0 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m0, p), s0);
      s1 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m1, p + 16), s1);
    }
    _mm512_mask_storeu_ps(y + j, m0, _mm512_add_ps(s0, s2));
    _mm512_mask_storeu_ps(y + j + 16, m1, _mm512_add_ps(s1, s3));
  }
}

// GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized, so reduce by hand.
inline float hsum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

void gemv_dots(int64_t K, const float* w, int64_t ldw, int64_t n, const float* x, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 64 <= K; k += 64) {
      s0 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k), _mm512_loadu_ps(x + k), s0);
      s1 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k + 16), _mm512_loadu_ps(x + k + 16), s1);
      s2 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k + 32), _mm512_loadu_ps(x + k + 32), s2);
      s3 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k + 48), _mm512_loadu_ps(x + k + 48), s3);
    }
    for (; k < K; k += 16) {
      const __mmask16 m = tail_mask(K - k);
      s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row + k), _mm512_maskz_loadu_ps(m, x + k), s0);
    }
    y[j] = hsum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  }
}

}  // namespace

const Kernels& kernels_avx512() {
  static const Kernels k{tile, gemv_rows, gemv_dots, pack_b_rows, pack_a_rows, pack_b_cols};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
