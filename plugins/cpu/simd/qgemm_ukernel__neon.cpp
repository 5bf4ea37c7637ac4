// AArch64 integer GEMM kernels on the dot-product extension (sdot, FEAT_DotProd: Cortex-A76
// and later, Neoverse N1 / V1 / V2, Apple M1). Layouts in qgemm_kernels.hpp.
//
// sdot multiplies signed bytes by signed bytes (the mixed-sign usdot needs the later
// I8MM), so the packed B holds B - 128 (the bytes XOR 0x80): sum_k A * B = sum_k A * (B -
// 128) + 128 * rowsumA, which the driver folds into the per-row term (QKernels::b_shift).
// The column sums stay those of B itself.
//
// An 8 x 12 register tile, as the float GEMM's: 24 q accumulators (8 rows x 3 vectors
// of 4 columns), three q of B (12 columns x 4 bytes) and two q holding the 8 rows' 4-byte
// groups of A, used lane by lane (sdot's indexed form): 29 of the 32 registers. Compiled
// for every bottom edge (1..8 rows) and 1..3 live vectors. The output stage is that of
// qgemm_kernels.hpp with the same operations in the same order: vmaxq_f32 returns NaN for
// a NaN operand where the definition (and vmaxps) does not, so the clamps are compares and
// selects; vcvtnq_s32_f32 rounds to nearest even.
//
// Only the functions that use sdot carry the target attribute: the rest of this file is
// plain ARMv8.0 code.
#include <arm_neon.h>

#include <array>
#include <cstring>
#include <utility>

#include "qgemm_kernels.hpp"

#define INFER_QGEMM_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

namespace infer::cpu::simd::qgemm_detail {
namespace {

constexpr int kMr = 8;
constexpr int kNr = 12;

// v > x ? v : x and v < x ? v : x, lane by lane (NaN v gives x, as vmaxps / vminps).
inline float32x4_t max_like_x86(float32x4_t v, float32x4_t x) {
  return vbslq_f32(vcgtq_f32(v, x), v, x);
}
inline float32x4_t min_like_x86(float32x4_t v, float32x4_t x) {
  return vbslq_f32(vcltq_f32(v, x), v, x);
}

// The corrections and the output stage of rows [0, ROWS) x vectors [0, NV); acc: the raw
// sums (row r, vector v at acc[r * NV + v]). The results go to C straight from the
// registers for an int32 / float C with contiguous rows, and through a buffer of 4-byte
// values otherwise.
template <int ROWS, int NV>
__attribute__((noinline)) void finish(const int32x4_t* acc, const QTileJob& t) {
  const OutStage& st = *t.st;
  const QGemmOutput::Kind kind = st.kind;
  const size_t elem = st.elem;
  const bool col_term = t.neg_az != nullptr;
  int32x4_t csum[NV];
  for (int v = 0; v < NV; ++v) csum[v] = col_term ? vld1q_s32(t.col_sum + 4 * v) : vdupq_n_s32(0);
  const bool direct = elem == 4 && t.cs == 1 && t.cols == 4 * NV;
  alignas(16) int32_t buf[kMr * kNr];
  const float32x4_t zero = vdupq_n_f32(0.0f);
  const float32x4_t flo = vdupq_n_f32(st.flo), fhi = vdupq_n_f32(st.fhi);
  const int32x4_t oz = vdupq_n_s32(st.out_zero), lo = vdupq_n_s32(st.lo), hi = vdupq_n_s32(st.hi);
  for (int r = 0; r < ROWS; ++r) {
    const int32x4_t add = vdupq_n_s32(t.row_add[r]);
    const int32x4_t naz = vdupq_n_s32(col_term ? t.neg_az[r] : 0);
    float32x4_t scale = zero, fb = zero;
    if (kind != QGemmOutput::Kind::kInt32) scale = vdupq_n_f32(t.scale[r]);
    if (t.fbias != nullptr) fb = vdupq_n_f32(t.fbias[r]);
    for (int v = 0; v < NV; ++v) {
      int32x4_t x = vaddq_s32(acc[r * NV + v], add);
      if (col_term) x = vaddq_s32(x, vmulq_s32(csum[v], naz));
      if (kind == QGemmOutput::Kind::kFloat) {
        float32x4_t f = vmulq_f32(vcvtq_f32_s32(x), scale);
        if (t.fbias != nullptr) f = vaddq_f32(f, fb);
        if (st.relu) f = max_like_x86(f, zero);
        x = vreinterpretq_s32_f32(f);
      } else if (kind != QGemmOutput::Kind::kInt32) {
        float32x4_t f = vmulq_f32(vcvtq_f32_s32(x), scale);
        f = min_like_x86(max_like_x86(f, flo), fhi);
        x = vaddq_s32(vcvtnq_s32_f32(f), oz);
        x = vminq_s32(vmaxq_s32(x, lo), hi);
      }
      if (direct)
        vst1q_s32(reinterpret_cast<int32_t*>(static_cast<char*>(t.c) + r * t.rs * 4) + 4 * v, x);
      else
        vst1q_s32(buf + r * kNr + 4 * v, x);
    }
  }
  if (direct) return;
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < t.cols; ++j) {
      const int64_t at = r * t.rs + j * t.cs;
      if (elem == 4)
        std::memcpy(static_cast<char*>(t.c) + at * 4, &buf[r * kNr + j], 4);
      else
        static_cast<uint8_t*>(t.c)[at] = static_cast<uint8_t>(buf[r * kNr + j]);
    }
}

// Row R's sdot for every vector: lane R % 4 of the A register holding rows R & ~3.
template <int R, int NV>
INFER_QGEMM_DOTPROD inline void row_dot(int32x4_t* acc, const int8x16_t* bv, int8x16_t a0,
                                        int8x16_t a1) {
  for (int v = 0; v < NV; ++v)
    acc[R * NV + v] = vdotq_laneq_s32(acc[R * NV + v], bv[v], R < 4 ? a0 : a1, R % 4);
}

template <int ROWS, int NV, int... R>
INFER_QGEMM_DOTPROD inline void all_rows(int32x4_t* acc, const int8x16_t* bv, int8x16_t a0,
                                         int8x16_t a1, std::integer_sequence<int, R...>) {
  (row_dot<R, NV>(acc, bv, a0, a1), ...);
}

template <int ROWS, int NV>
INFER_QGEMM_DOTPROD void tile_dot(const QTileJob& t) {
  int32x4_t acc[ROWS * NV];
  for (int i = 0; i < ROWS * NV; ++i) acc[i] = vdupq_n_s32(0);
  const int8_t* a = t.a;
  const int8_t* b = reinterpret_cast<const int8_t*>(t.b);
  for (int64_t g = 0; g < t.kg; ++g, a += kMr * 4, b += kNr * 4) {
    int8x16_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = vld1q_s8(b + 16 * v);
    const int8x16_t a0 = vld1q_s8(a);
    const int8x16_t a1 = ROWS > 4 ? vld1q_s8(a + 16) : a0;
    all_rows<ROWS, NV>(acc, bv, a0, a1, std::make_integer_sequence<int, ROWS>());
  }
  finish<ROWS, NV>(acc, t);
}

template <int... R>
constexpr std::array<std::array<QTileFn, 3>, kMr> dot_table(std::integer_sequence<int, R...>) {
  return {{{tile_dot<R + 1, 1>, tile_dot<R + 1, 2>, tile_dot<R + 1, 3>}...}};
}
constexpr auto kDotTiles = dot_table(std::make_integer_sequence<int, kMr>());

void tile_dot_any(const QTileJob& t) { kDotTiles[t.rows - 1][(t.cols + 3) / 4 - 1](t); }

// A packed panel's bytes as B - 128 (int8), for sdot.
void flip_panel(int64_t K, int nr, uint8_t* dst) {
  const int64_t bytes = (K + 3) / 4 * 4 * nr;
  const uint8x16_t flip = vdupq_n_u8(0x80);
  int64_t i = 0;
  for (; i + 16 <= bytes; i += 16) vst1q_u8(dst + i, veorq_u8(vld1q_u8(dst + i), flip));
  for (; i < bytes; ++i) dst[i] ^= 0x80;
}

// The portable packers (column sums of B itself), then B - 128 as int8.
void pack_b(const uint8_t* b, int64_t rs, int64_t cs, int64_t K, int cols, int nr, uint8_t* dst,
            int32_t* col_sum) {
  pack_b_generic(b, rs, cs, K, cols, nr, dst, col_sum);
  flip_panel(K, nr, dst);
}
void pack_b_rows(const uint8_t* b, const int64_t* row_off, int64_t K, int cols, int nr,
                 uint8_t* dst, int32_t* col_sum) {
  pack_b_rows_generic(b, row_off, K, cols, nr, dst, col_sum);
  flip_panel(K, nr, dst);
}

}  // namespace

const QKernels& qkernels_neon_dot() {
  static const QKernels k = [] {
    QKernels q{
        Variant::kNeonDot, "neon-dotprod", kMr, kNr, tile_dot_any, pack_b, nullptr, 0, 0, 128};
    q.pack_b_rows = pack_b_rows;
    return q;
  }();
  return k;
}

}  // namespace infer::cpu::simd::qgemm_detail
