// Internal to the GEMM (gemm.cpp and the gemm_ukernel* files): the packed layout, the
// blocking geometry per ISA and the per-ISA tile and GEMV routines the driver calls.
//
// Packed layout (the same for a whole operand made by pack_a/pack_b and for the blocks
// sgemm packs itself): A is cut into panels of MR rows, B into panels of NR columns; a
// panel stores its K steps one after the other, each step holding the panel's MR (or NR)
// values, zero-padded past the matrix edge. So panel p of A holds A(p*MR + r, k) at
// [k*MR + r], and a K block [k0, k0 + kc) of it starts at k0*MR: a whole packed operand
// serves every K blocking without repacking.
//
// The bfloat16 precision (gemm.hpp) keeps that layout with 4-byte units instead of floats:
// each K step of a panel is a pair of K indices (2s, 2s + 1), one unit holding their two
// bfloat16 (low half 2s, high half 2s + 1), K zero-padded to even. So an A panel holds
// ceil(K / 2) x MR units, and the driver runs unchanged over ceil(K / 2) "steps" (its K
// blocks start at even K indices); TileJob::a and b and the panels the driver hands
// around then point at units, typed float* like the float32 ones.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gemm.hpp"

namespace infer::cpu::simd::gemm_detail {

// Register tile and cache blocking of one ISA. kc: K steps per block (the B micro-panel
// kc x NR stays in L1 while the A block streams from L2); mc x kc of A and kc x nc of B
// are the block one task packs (sized to share the 1 MiB L2 of Zen 4).
struct Geometry {
  int mr, nr;
  int64_t kc, mc, nc;
};
Geometry geometry(Isa isa);

// One register tile: C[0..mr) x [0..nr) (pointer c, row stride ldc) from kc steps of a
// packed A micro-panel and a packed B micro-panel:
//   C = alpha * A*B + beta * C     (beta == 0: C is not read)
// and, when ep != nullptr (the last K block), the epilogue: bias (indexed by row0 + r or
// col0 + j), residual, activation.
struct TileJob {
  int64_t kc = 0;
  const float* a = nullptr;
  // The A micro-panel the next tile reads (a prefetch hint, never dereferenced as data;
  // nullptr: none). Prepacked weights come from DRAM on the first tile that reads them,
  // and the hardware prefetchers lose the stream at each jump between panels.
  const float* a_next = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t ldc = 0;
  int mr = 0, nr = 0;
  float alpha = 1.0f, beta = 0.0f;
  const GemmEpilogue* ep = nullptr;
  int64_t row0 = 0, col0 = 0;
  Isa isa = Isa::kScalar;
};
using TileFn = void (*)(const TileJob&);

// y[j] = sum_k x[k * incx] * w[k * ldw + j] for j in [0, n): a GEMV over rows of W
// (row-major B, or a packed panel with ldw = its width).
using GemvRowsFn = void (*)(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw,
                            int64_t n, float* y);
// y[j] = sum_k w[j * ldw + k] * x[k] for j in [0, n): dot products with contiguous x.
using GemvDotsFn = void (*)(int64_t K, const float* w, int64_t ldw, int64_t n, const float* x,
                            float* y);

// Packs one B panel from row-major rows: dst[k * nr + c] = src[k * rs + c] for c < cols
// (cols <= nr, the ISA's panel width) and 0 for c in [cols, nr), for k in [0, kc). The
// hot copy of every raw B (1x1 convolutions, im2col columns, MatMul activations): done
// with the ISA's vectors instead of a memcpy call per K step.
using PackBRowsFn = void (*)(const float* src, int64_t rs, int64_t kc, int cols, float* dst);

// Packs one A panel from row-major rows (column stride 1): dst[k * mr + r] = src[r * rs + k]
// for r < rows (rows <= mr, the ISA's panel height) and 0 for r in [rows, mr), for k in
// [0, kc). A transpose: the activations of a MatMul (BERT's tokens x features) go through
// it on every run. nullptr where the ISA has none (the portable loop runs then).
using PackARowsFn = void (*)(const float* src, int64_t rs, int64_t kc, int rows, float* dst);

// Packs one B panel from a transposed B (row stride 1: each column contiguous along K):
// dst[k * nr + c] = src[c * cs + k] for c < cols (cols <= nr) and 0 for c in [cols, nr),
// for k in [0, kc). Attention's K^T goes through it on every run. nullptr where the ISA
// has none.
using PackBColsFn = void (*)(const float* src, int64_t cs, int64_t kc, int cols, float* dst);

struct Kernels {
  TileFn tile;
  GemvRowsFn gemv_rows;
  GemvDotsFn gemv_dots;
  PackBRowsFn pack_b_rows;
  PackARowsFn pack_a_rows;
  PackBColsFn pack_b_cols;
};
const Kernels& kernels(Isa isa);

// Per-ISA tables (defined only where the ISA's file is built).
const Kernels& kernels_scalar();
const Kernels& kernels_avx2();
const Kernels& kernels_avx512();
const Kernels& kernels_neon();

// Converts float32 rows into bfloat16 pair units (round to nearest even):
//   dst[s * width + c] = bf16(src[2s * rs + c]) | bf16(src[(2s + 1) * rs + c]) << 16
// for the ceil(kc / 2) pair steps s and c < width, where row kc (odd kc) and columns past
// `cols` (cols <= width) read as 0 and are not touched in memory.
using ConvertPairsFn = void (*)(const float* src, int64_t rs, int64_t kc, int cols, int width,
                                uint32_t* dst);

// The bfloat16 precision of an ISA: the register tile over pair steps (the geometry and
// the float32 packers are the ISA's Kernels) and the conversion.
struct Bf16Kernels {
  TileFn tile;
  ConvertPairsFn convert_pairs;
};
// nullptr where gemm_precision_supported(isa, kBfloat16) is false.
const Bf16Kernels* bf16_kernels(Isa isa);
const Bf16Kernels& kernels_avx512bf16();  // gemm_ukernel__avx512bf16.cpp, x86-64 only

// Packs rows [m0, m0 + rows) x K steps [k0, k0 + kc) of raw A into ceil(rows / mr)
// panels of kc * mr floats at dst (zero-padded); row-major panels go through `rows_fn`
// (the ISA's pack_a_rows for this mr) when it is not nullptr.
void pack_a_block(const GemmOperand& A, int64_t m0, int64_t rows, int64_t k0, int64_t kc, int mr,
                  PackARowsFn rows_fn, float* dst);
// Packs K steps [k0, k0 + kc) x columns [n0, n0 + cols) of raw B into ceil(cols / nr)
// panels of kc * nr floats at dst (zero-padded); row-major panels go through `rows`
// (the ISA's pack_b_rows for this nr), transposed ones through `cols_fn` when it is not
// nullptr.
void pack_b_block(const GemmOperand& B, int64_t k0, int64_t kc, int64_t n0, int64_t cols, int nr,
                  PackBRowsFn rows, PackBColsFn cols_fn, float* dst);

// The bfloat16 forms of pack_a_block / pack_b_block: pair steps [k0, k0 + kc) of an
// operand K long (the last pair of an odd K is padded with 0), into panels of kc * mr (kc *
// nr) units. They pack float32 panels in chunks into the kConvert scratch slot with the
// ISA's packers (or B's source) and convert them, except row-major raw B, converted
// straight from its rows.
void pack_a_block_bf16(const GemmOperand& A, int64_t K, int64_t m0, int64_t rows, int64_t k0,
                       int64_t kc, int mr, const Kernels& kn, const Bf16Kernels& kb, uint32_t* dst);
void pack_b_block_bf16(Isa isa, const GemmOperand& B, int64_t K, int64_t k0, int64_t kc, int64_t n0,
                       int64_t cols, int nr, const Kernels& kn, const Bf16Kernels& kb,
                       uint32_t* dst);

}  // namespace infer::cpu::simd::gemm_detail
