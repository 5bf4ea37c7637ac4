// Internal to the AVX-512 GEMM files (gemm_ukernel__avx512.cpp, float32, and
// gemm_ukernel__avx512bf16.cpp, bfloat16): the 14 x 32 register tile, written once over
// the multiply-accumulate of a precision and compiled into each file with its flags.
//
// The tile: 28 zmm accumulators, two zmm of B and one broadcast of A (31 of the 32
// registers), with a 14 x 16 variant for a right-edge panel of at most 16 columns, a
// rows-along-the-vector one for at most 4, and both for 17..20, each also compiled for
// every shorter bottom edge (1..13 live rows). It does 28 multiply-accumulates per K step
// against two B loads and 14 broadcasts: far from the load ports' limit, and its 28
// independent chains cover the FMA latency even on a core with two full 512-bit pipes.
// It prefetches the A it streams into L1 (a model's weights are read once per run, often
// from memory, and the hardware prefetchers lose the stream at each panel jump).
//
// A precision is a struct Ops over 4-byte units (a float, or a pair of bfloat16 along K):
//   Ops::load(p)               16 units at p
//   Ops::load_masked(m, p)     the units of p selected by mask m, zeros elsewhere
//   Ops::bcast(p)              the unit at p in every lane
//   Ops::madd(acc, v, s)       acc + v * s per float32 lane (a pair's two products, in
//                              bfloat16), s being the broadcast operand
// Everything here has internal linkage, like gemm_tile.hpp.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <utility>

#include "gemm_kernels.hpp"
#include "gemm_tile.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kMr = 14;
constexpr int kNr = 32;
// The register tile prefetches its A (14 units per K step) this many K steps ahead.
constexpr int64_t kPrefetchSteps = 64;

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
    for (int r = 0; r < t.mr; ++r)
      apply_activation(t.isa, ep->act, t.c + r * t.ldc, static_cast<size_t>(t.nr));
}

// ROWS live rows of the 14-row panel (a bottom edge, e.g. the last 2 of M = 128 tokens,
// runs only their FMAs instead of all 14); NV = 1: the panel has at most 16 live columns
// (the right edge of C, e.g. 4 of them when N = 196), so only the first zmm of each row
// is computed, half the FMAs of a full tile. Below 8 accumulators the 4-cycle FMA latency
// would stall the two pipes, so short tiles run two sets over even and odd K steps.
template <typename Ops, int ROWS, int NV>
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
      const auto b0 = Ops::load(b), e0 = Ops::load(b + kNr);
#pragma GCC unroll 16
      for (int r = 0; r < ROWS; ++r) {
        const auto av = Ops::bcast(a + r), aw = Ops::bcast(a + kMr + r);
        c0[r] = Ops::madd(c0[r], b0, av);
        d0[r] = Ops::madd(d0[r], e0, aw);
        if constexpr (NV == 2) {
          c1[r] = Ops::madd(c1[r], Ops::load(b + 16), av);
          d1[r] = Ops::madd(d1[r], Ops::load(b + kNr + 16), aw);
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
    const auto b0 = Ops::load(b);
    if constexpr (NV == 1) {
#pragma GCC unroll 16
      for (int r = 0; r < ROWS; ++r) c0[r] = Ops::madd(c0[r], b0, Ops::bcast(a + r));
    } else {
      const auto b1 = Ops::load(b + 16);
#pragma GCC unroll 16
      for (int r = 0; r < ROWS; ++r) {
        const auto av = Ops::bcast(a + r);
        c0[r] = Ops::madd(c0[r], b0, av);
        c1[r] = Ops::madd(c1[r], b1, av);
      }
    }
  }
  finish_in_registers(c0, c1, t);
}

// tile_impl by live rows (index t.mr - 1) for one NV.
template <typename Ops, int NV, int... R>
constexpr std::array<TileFn, sizeof...(R)> tiles_by_rows(std::integer_sequence<int, R...>) {
  return {&tile_impl<Ops, R + 1, NV>...};
}
template <typename Ops>
constexpr auto kTiles1 = tiles_by_rows<Ops, 1>(std::make_integer_sequence<int, kMr>{});
template <typename Ops>
constexpr auto kTiles2 = tiles_by_rows<Ops, 2>(std::make_integer_sequence<int, kMr>{});

// An edge panel of NC <= 4 live columns (N = 49 = 32 + 16 + 1, N = 196 = 6 * 32 + 4):
// the 14 rows of A go along the vector (one masked load per K step) and each column gets
// its own accumulators, split over sets of K steps (4 for one column, else 2) so that at
// least 4 FMA chains run: the panel costs about NC FMAs per K step instead of a 14 x 16
// tile's 14 (a single column on 2 chains was latency-bound: N = 49 ran 23% slower than
// N = 48). The sums are transposed through a small buffer and finished by the generic
// epilogue.
template <typename Ops, int NC>
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
      const auto av = Ops::load_masked(kRows, a + q * kMr);
#pragma GCC unroll 4
      for (int j = 0; j < NC; ++j) s[q][j] = Ops::madd(s[q][j], av, Ops::bcast(b + q * kNr + j));
    }
  }
  for (; k < t.kc; ++k, a += kMr, b += kNr) {
    const auto av = Ops::load_masked(kRows, a);
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) s[0][j] = Ops::madd(s[0][j], av, Ops::bcast(b + j));
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
template <typename Ops>
bool narrow_tile(const TileJob& t) {
  switch (t.nr) {
    case 1:
      tile_narrow<Ops, 1>(t);
      return true;
    case 2:
      tile_narrow<Ops, 2>(t);
      return true;
    case 3:
      tile_narrow<Ops, 3>(t);
      return true;
    case 4:
      tile_narrow<Ops, 4>(t);
      return true;
    default:
      return false;
  }
}

template <typename Ops>
void tile(const TileJob& t) {
  if (narrow_tile<Ops>(t)) return;
  const int rows = t.mr - 1;
  if (t.nr <= 16) {
    kTiles1<Ops>[rows](t);
  } else if (t.nr <= 20) {
    // 17..20 columns (N = 49 = 32 + 17 in ResNet's last stage): a half-width tile on the
    // first 16 and a narrow one on the rest, about 15 FMAs per K step instead of 28.
    TileJob half = t;
    half.nr = 16;
    kTiles1<Ops>[rows](half);
    TileJob rest = t;
    rest.nr = t.nr - 16;
    rest.b = t.b + 16;
    rest.c = t.c + 16;
    rest.col0 = t.col0 + 16;
    narrow_tile<Ops>(rest);
  } else {
    kTiles2<Ops>[rows](t);
  }
}

}  // namespace
}  // namespace infer::cpu::simd::gemm_detail
