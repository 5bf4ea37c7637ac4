// Internal to the integer GEMM (qgemm.cpp and the qgemm_ukernel* files): the packed
// layouts, the per-variant register tiles and B packers, and the scalar output stage that
// every variant must match bit for bit.
//
// Packed layouts. K is padded to K4 = a multiple of 4 with zeros and cut into K4 / 4
// groups of 4 consecutive k. A (int8) is cut into panels of MR rows: group g of panel p
// holds, for each of its MR rows r, the 4 bytes A(p*MR + r, 4g .. 4g+3) (zero past the
// last row), so panel p of A holds A(p*MR + r, 4g + q) at [(g * MR + r) * 4 + q]. B
// (uint8) is cut into panels of NR columns the same way: [(g * NR + j) * 4 + q] holds
// B(4g + q, j). A register tile broadcasts one row's 4 bytes of A (as an int32) and
// multiplies them into a vector of 4-byte groups of B: vpdpbusd (u8 x s8 -> s32, 4 at a
// time) where the CPU has it, or both operands widened to int16 and vpmaddwd (exact)
// elsewhere.
//
// A packed A buffer: a 64-byte header (QPackHeader), the panels (ceil(M / MR) of
// K4 * MR bytes), then ceil(M / MR) * MR int32 row sums (sum_k A(m, k), 0 for padding
// rows) at the next 64-byte boundary.
//
// The zero points never reach the inner loop:
//   sum_k (A - az)(B - bz) = sum_k A*B - bz * rowsumA[m] - az[m] * colsumB[n] + K*az[m]*bz
// (mod 2^32, like the accumulation itself; a variant whose packed B is B - b_shift adds
// b_shift * rowsumA[m] as well). The driver folds the per-row terms (and, past
// kInt32, the bias) into row_add[r], and the tile adds row_add[r] + neg_az[r] *
// col_sum[j] to its accumulators before the output stage.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "qgemm.hpp"

namespace infer::cpu::simd::qgemm_detail {

// The kernel variants; a packed A records the one it was made for (their MR differ).
enum class Variant : uint32_t {
  kScalar = 1,
  kAvx2 = 2,        // AVX2, vpmaddwd on widened bytes
  kAvxVnni = 3,     // AVX2 + AVX-VNNI vpdpbusd (VEX)
  kAvx512Bw = 4,    // AVX-512BW, vpmaddwd on widened bytes
  kAvx512Vnni = 5,  // AVX-512 + AVX512-VNNI vpdpbusd
  kNeonDot = 6,     // AArch64 sdot (FEAT_DotProd) on B - 128
};

struct QPackHeader {
  uint32_t magic;
  uint32_t variant;
  uint32_t isa;
  uint32_t mr;
  int64_t M;
  int64_t K;
};
constexpr uint32_t kQPackMagic = 0x31415149;  // "IQA1"
constexpr size_t kQPackHeaderBytes = 64;

// The output stage, resolved once per qgemm call.
struct OutStage {
  QGemmOutput::Kind kind = QGemmOutput::Kind::kInt32;
  const float* scale = nullptr;  // per row (indexed from the tile's first row)
  const float* fbias = nullptr;  // kFloat: per row, nullptr = none
  bool relu = false;             // kFloat: max(v, 0)
  int32_t out_zero = 0;          // kUint8 / kInt8
  int32_t lo = 0, hi = 0;        // kUint8 / kInt8: the saturation range, relu folded into lo
  // kUint8 / kInt8: v is clamped to [flo, fhi] = [lo - out_zero, hi - out_zero] before
  // rounding. The bounds are integers, so rounding the clamped value equals clamping the
  // rounded one: the result + out_zero is already in [lo, hi] (a variant may skip the
  // integer clamp), and the conversion stays in range.
  float flo = 0.0f, fhi = 0.0f;
  size_t elem = 4;  // bytes per element of C
};

// One register tile: C[0, rows) x [0, cols) from kg groups of a packed A micro-panel and
// a packed B micro-panel, corrected and finished by the output stage. A narrow tile
// (QKernels::narrow) reads rows from up to narrow_rows / MR consecutive A panels,
// a_stride bytes apart.
struct QTileJob {
  int64_t kg = 0;
  const int8_t* a = nullptr;
  int64_t a_stride = 0;
  const uint8_t* b = nullptr;
  const int32_t* row_add = nullptr;  // one per row of the tile
  const int32_t* neg_az = nullptr;   // -a_zero per row of the tile; nullptr: no column term
  const int32_t* col_sum = nullptr;  // NR column sums of B (read when neg_az != nullptr)
  const float* scale = nullptr;      // the tile's rows of OutStage::scale / fbias
  const float* fbias = nullptr;
  int rows = 0, cols = 0;
  void* c = nullptr;  // C(row0, col0)
  int64_t rs = 0, cs = 1;
  const OutStage* st = nullptr;
};
using QTileFn = void (*)(const QTileJob&);

// Packs one B panel of `cols` (<= nr) columns: B(k, j) = b[k * rs + j * cs] into the
// layout above (zero past column cols and past row K), and, when col_sum != nullptr,
// col_sum[j] = sum_k B(k, j) for j < nr (0 past cols).
using QPackBFn = void (*)(const uint8_t* b, int64_t rs, int64_t cs, int64_t K, int cols, int nr,
                          uint8_t* dst, int32_t* col_sum);
// The same from rows anywhere: B(k, n) = b[row_off[k] + n].
using QPackBRowsFn = void (*)(const uint8_t* b, const int64_t* row_off, int64_t K, int cols, int nr,
                              uint8_t* dst, int32_t* col_sum);

struct QKernels {
  Variant variant;
  const char* name;  // qgemm_variant()
  int mr, nr;
  QTileFn tile;
  QPackBFn pack_b;
  // Optional (nullptr: none): a tile of up to narrow_rows rows (whole A panels) x
  // narrow_cols columns with the rows along the vectors and B broadcast, for a C of at
  // most narrow_cols columns (a GEMV: a MatMul of one token, a classifier), where the
  // regular tile would compute mostly padding.
  QTileFn narrow = nullptr;
  int narrow_rows = 0, narrow_cols = 0;
  // The packed B holds B - b_shift (sdot multiplies signed bytes only): the driver adds
  // b_shift * rowsumA back through the per-row term. The column sums are those of B.
  int32_t b_shift = 0;
  // Packing from a row offset table (qgemm_rows). nullptr: pack_b_rows_generic, the
  // portable packer of B itself, so a variant with a b_shift must set its own.
  QPackBRowsFn pack_b_rows = nullptr;
};

// The variant qgemm runs for `isa` on this CPU (isa must be supported).
const QKernels& qkernels(Isa isa);

// Per-variant tables (defined only where the ISA's file is built). The x86 ones take
// whether to use the dot-product instructions (the caller checked the CPU).
const QKernels& qkernels_scalar();
const QKernels& qkernels_avx2(bool vnni);
const QKernels& qkernels_avx512(bool vnni);
const QKernels& qkernels_neon_dot();

// For tests: when true, qkernels() ignores the CPU's VNNI / AVX-VNNI / dot product, so the
// fallbacks (vpmaddwd; scalar on AArch64) run on a CPU that has them. Pack and multiply under the
// same setting.
void set_disable_dot_products(bool disable);

// The portable B packer (any strides); the SIMD packers use it for the strides they do
// not special-case.
void pack_b_generic(const uint8_t* b, int64_t rs, int64_t cs, int64_t K, int cols, int nr,
                    uint8_t* dst, int32_t* col_sum);

// Copies a finished tile held in buf (rows x cols elements of st.elem bytes, row stride
// ldbuf elements) to C with its strides.
void pack_b_rows_generic(const uint8_t* b, const int64_t* row_off, int64_t K, int cols, int nr,
                         uint8_t* dst, int32_t* col_sum);

void store_strided(const void* buf, int64_t ldbuf, int rows, int cols, const QTileJob& t);

// The output stage of one corrected accumulator of row r (0-based in the tile): the
// definition every SIMD epilogue reproduces, operation for operation (vmaxps(v, x) is
// v > x ? v : x and vminps(v, x) is v < x ? v : x, NaN included; the conversions round
// to nearest even). Internal linkage on purpose: each file compiles its own copy with its
// own ISA flags, and the linker must not merge them.
namespace {

inline int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrap_mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
inline float stage_float(int32_t acc, float scale, const float* fbias, bool relu) {
  float v = static_cast<float>(acc) * scale;
  if (fbias != nullptr) v = v + *fbias;
  if (relu) v = v > 0.0f ? v : 0.0f;
  return v;
}
inline int32_t stage_int(int32_t acc, float scale, const OutStage& st) {
  float v = static_cast<float>(acc) * scale;
  v = v > st.flo ? v : st.flo;
  v = v < st.fhi ? v : st.fhi;
  int32_t q = static_cast<int32_t>(std::nearbyint(v)) + st.out_zero;
  q = q > st.lo ? q : st.lo;
  q = q < st.hi ? q : st.hi;
  return q;
}
// Writes the finished value of corrected accumulator acc at row r of the tile to dst.
inline void store_one(int32_t acc, int r, const QTileJob& t, void* dst) {
  const OutStage& st = *t.st;
  switch (st.kind) {
    case QGemmOutput::Kind::kInt32:
      *static_cast<int32_t*>(dst) = acc;
      break;
    case QGemmOutput::Kind::kFloat:
      *static_cast<float*>(dst) =
          stage_float(acc, t.scale[r], t.fbias != nullptr ? t.fbias + r : nullptr, st.relu);
      break;
    case QGemmOutput::Kind::kUint8:
      *static_cast<uint8_t*>(dst) = static_cast<uint8_t>(stage_int(acc, t.scale[r], st));
      break;
    case QGemmOutput::Kind::kInt8:
      *static_cast<int8_t*>(dst) = static_cast<int8_t>(stage_int(acc, t.scale[r], st));
      break;
  }
}

}  // namespace

}  // namespace infer::cpu::simd::qgemm_detail
