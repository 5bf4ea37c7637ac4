// Packing of raw operands into the panel layout of gemm_kernels.hpp (float32 and
// bfloat16 pairs), and the self-describing whole-operand packs of pack_a / pack_b (a
// 64-byte header, then the panels of the whole K range).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gemm_kernels.hpp"
#include "gemm_packed.hpp"
#include "scratch.hpp"

namespace infer::cpu::simd {
namespace gemm_detail {

void pack_a_block(const GemmOperand& A, int64_t m0, int64_t rows, int64_t k0, int64_t kc, int mr,
                  PackARowsFn rows_fn, float* dst) {
  const int64_t rs = A.row_stride, cs = A.col_stride;
  for (int64_t p0 = 0; p0 < rows; p0 += mr, dst += kc * mr) {
    const int rr = static_cast<int>(rows - p0 < mr ? rows - p0 : mr);
    const float* src = A.data + (m0 + p0) * rs + k0 * cs;
    if (cs == 1 && rows_fn != nullptr) {
      rows_fn(src, rs, kc, rr, dst);
      continue;
    }
    if (cs == 1) {
      // Row-major A (weights, activations): read each row contiguously.
      for (int r = 0; r < rr; ++r) {
        const float* s = src + r * rs;
        for (int64_t k = 0; k < kc; ++k) dst[k * mr + r] = s[k];
      }
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int r = 0; r < rr; ++r) dst[k * mr + r] = src[r * rs + k * cs];
    }
    if (rr < mr)
      for (int64_t k = 0; k < kc; ++k)
        for (int r = rr; r < mr; ++r) dst[k * mr + r] = 0.0f;
  }
}

void pack_b_block(const GemmOperand& B, int64_t k0, int64_t kc, int64_t n0, int64_t cols, int nr,
                  PackBRowsFn rows, PackBColsFn cols_fn, float* dst) {
  const int64_t rs = B.row_stride, cs = B.col_stride;
  for (int64_t p0 = 0; p0 < cols; p0 += nr, dst += kc * nr) {
    const int cc = static_cast<int>(cols - p0 < nr ? cols - p0 : nr);
    const float* src = B.data + k0 * rs + (n0 + p0) * cs;
    if (cs == 1) {
      // Row-major B: each K step is a contiguous run of the panel's columns.
      rows(src, rs, kc, cc, dst);
      continue;
    }
    if (rs == 1 && cols_fn != nullptr) {
      cols_fn(src, cs, kc, cc, dst);
      continue;
    }
    if (rs == 1) {
      // Transposed B (Gemm transB, K^T in attention): read each column contiguously.
      for (int c = 0; c < cc; ++c) {
        const float* s = src + c * cs;
        for (int64_t k = 0; k < kc; ++k) dst[k * nr + c] = s[k];
      }
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int c = 0; c < cc; ++c) dst[k * nr + c] = src[k * rs + c * cs];
    }
    if (cc < nr)
      for (int64_t k = 0; k < kc; ++k)
        for (int c = cc; c < nr; ++c) dst[k * nr + c] = 0.0f;
  }
}

namespace {

// Float32 K steps per chunk of a bfloat16 pack (even): the chunk's float32 panel (32 KiB
// for 32-wide panels) stays in L1 between its packing and its conversion, and is long
// enough that the implicit im2col's per-call plan (gemm_im2col__avx512.cpp) pays off.
constexpr int64_t kConvertSteps = 256;

}  // namespace

void pack_a_block_bf16(const GemmOperand& A, int64_t K, int64_t m0, int64_t rows, int64_t k0,
                       int64_t kc, int mr, const Kernels& kn, const Bf16Kernels& kb,
                       uint32_t* dst) {
  const int64_t f0 = 2 * k0, fc = std::min(2 * kc, K - f0);  // float32 K steps
  float* tmp = scratch_as<float>(ScratchSlot::kConvert, static_cast<size_t>(kConvertSteps * mr));
  for (int64_t p0 = 0; p0 < rows; p0 += mr, dst += kc * mr) {
    const int64_t rr = std::min<int64_t>(mr, rows - p0);
    for (int64_t c = 0; c < fc; c += kConvertSteps) {
      const int64_t cc = std::min(kConvertSteps, fc - c);
      pack_a_block(A, m0 + p0, rr, f0 + c, cc, mr, kn.pack_a_rows, tmp);
      kb.convert_pairs(tmp, mr, cc, mr, mr, dst + c / 2 * mr);
    }
  }
}

void pack_b_block_bf16(Isa isa, const GemmOperand& B, int64_t K, int64_t k0, int64_t kc, int64_t n0,
                       int64_t cols, int nr, const Kernels& kn, const Bf16Kernels& kb,
                       uint32_t* dst) {
  const int64_t f0 = 2 * k0, fc = std::min(2 * kc, K - f0);  // float32 K steps
  const bool direct = B.source == nullptr && B.col_stride == 1;
  float* tmp =
      direct ? nullptr
             : scratch_as<float>(ScratchSlot::kConvert, static_cast<size_t>(kConvertSteps * nr));
  for (int64_t p0 = 0; p0 < cols; p0 += nr, dst += kc * nr) {
    const int cc = static_cast<int>(std::min<int64_t>(nr, cols - p0));
    if (direct) {
      // Row-major B (1x1 convolutions, MatMul activations): converted from its rows.
      kb.convert_pairs(B.data + f0 * B.row_stride + n0 + p0, B.row_stride, fc, cc, nr, dst);
      continue;
    }
    for (int64_t c = 0; c < fc; c += kConvertSteps) {
      const int64_t ck = std::min(kConvertSteps, fc - c);
      if (B.source != nullptr)
        B.source->pack_block(isa, f0 + c, ck, n0 + p0, cc, nr, tmp);
      else
        pack_b_block(B, f0 + c, ck, n0 + p0, cc, nr, kn.pack_b_rows, kn.pack_b_cols, tmp);
      kb.convert_pairs(tmp, nr, ck, nr, nr, dst + c / 2 * nr);
    }
  }
}

namespace {

// K steps of a packed operand: floats, or pairs of them in bfloat16.
int64_t k_steps(int64_t K, GemmPrecision p) {
  return p == GemmPrecision::kBfloat16 ? (K + 1) / 2 : K;
}

size_t packed_bytes(int64_t panels, int width, int64_t K) {
  const size_t floats = static_cast<size_t>(panels) * static_cast<size_t>(width) *
                        static_cast<size_t>(K > 0 ? K : 0);
  return kPackHeaderBytes + (floats * sizeof(float) + 63) / 64 * 64;
}

[[noreturn]] void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "infer cpu simd: %s: %s\n", what, detail);
  std::abort();
}

// The bfloat16 kernels of `isa`; aborts naming `who` where this CPU or isa has none.
const Bf16Kernels& require_bf16(Isa isa, const char* who) {
  const Bf16Kernels* kb = bf16_kernels(isa);
  if (kb == nullptr) {
    char msg[200];
    std::snprintf(msg, sizeof msg,
                  "bfloat16 precision asked for isa %s, which has no bfloat16 GEMM on this CPU "
                  "(needs avx512 with AVX512_BF16; check gemm_precision_supported first)",
                  isa_name(isa));
    fail(who, msg);
  }
  return *kb;
}

}  // namespace

const float* check_packed(const void* packed, PackKind kind, Isa isa, int64_t rows, int64_t cols,
                          GemmPrecision* precision) {
  PackHeader h;
  std::memcpy(&h, packed, sizeof h);
  const char* what = kind == PackKind::kA ? "sgemm's packed A" : "sgemm's packed B";
  if (h.magic != kPackMagic) fail(what, "is not a buffer made by pack_a/pack_b");
  if (h.kind != static_cast<uint32_t>(kind))
    fail(what, "was packed as the other operand (pack_a vs pack_b)");
  if (h.isa != static_cast<uint32_t>(isa)) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "was packed for isa %s but sgemm runs isa %s",
                  isa_name(static_cast<Isa>(h.isa)), isa_name(isa));
    fail(what, msg);
  }
  if (h.rows != rows || h.cols != cols) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "was packed for %lld x %lld but sgemm needs %lld x %lld",
                  static_cast<long long>(h.rows), static_cast<long long>(h.cols),
                  static_cast<long long>(rows), static_cast<long long>(cols));
    fail(what, msg);
  }
  if (h.precision > static_cast<uint32_t>(GemmPrecision::kBfloat16))
    fail(what, "has an unknown precision (a corrupt or foreign buffer)");
  *precision = static_cast<GemmPrecision>(h.precision);
  return reinterpret_cast<const float*>(static_cast<const char*>(packed) + kPackHeaderBytes);
}

bool packed_matches(const void* packed, size_t bytes, PackKind kind, Isa isa, int64_t rows,
                    int64_t cols, GemmPrecision precision) {
  if (packed == nullptr || bytes < kPackHeaderBytes) return false;
  PackHeader h;
  std::memcpy(&h, packed, sizeof h);
  if (h.magic != kPackMagic || h.kind != static_cast<uint32_t>(kind) ||
      h.isa != static_cast<uint32_t>(isa) || h.rows != rows || h.cols != cols ||
      h.precision != static_cast<uint32_t>(precision))
    return false;
  return bytes == (kind == PackKind::kA ? packed_a_bytes(isa, rows, cols, precision)
                                        : packed_b_bytes(isa, rows, cols, precision));
}

}  // namespace gemm_detail

using namespace gemm_detail;

const char* gemm_precision_name(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFloat32:
      return "float32";
    case GemmPrecision::kBfloat16:
      return "bfloat16";
  }
  return "unknown";
}

bool gemm_precision_supported(Isa isa, GemmPrecision p) {
  return p == GemmPrecision::kFloat32 || bf16_kernels(isa) != nullptr;
}

size_t packed_a_bytes(Isa isa, int64_t M, int64_t K, GemmPrecision p) {
  const int mr = geometry(isa).mr;
  return packed_bytes((M + mr - 1) / mr, mr, k_steps(K, p));
}

size_t packed_b_bytes(Isa isa, int64_t K, int64_t N, GemmPrecision p) {
  const int nr = geometry(isa).nr;
  return packed_bytes((N + nr - 1) / nr, nr, k_steps(K, p));
}

namespace {

// The header and zeroed panels of a whole packed operand (rows x cols, panels `width`
// wide); returns the panels.
float* start_pack(void* dst, size_t bytes, PackKind kind, Isa isa, int width, int64_t rows,
                  int64_t cols, GemmPrecision p) {
  std::memset(dst, 0, kPackHeaderBytes);
  PackHeader h{};
  h.magic = kPackMagic;
  h.kind = static_cast<uint32_t>(kind);
  h.isa = static_cast<uint32_t>(isa);
  h.width = static_cast<uint32_t>(width);
  h.rows = rows;
  h.cols = cols;
  h.precision = static_cast<uint32_t>(p);
  std::memcpy(dst, &h, sizeof h);
  float* panels = reinterpret_cast<float*>(static_cast<char*>(dst) + kPackHeaderBytes);
  // The rounding of the size to 64 bytes leaves a tail that should not hold garbage.
  std::memset(panels, 0, bytes - kPackHeaderBytes);
  return panels;
}

}  // namespace

void pack_a(Isa isa, int64_t M, int64_t K, const GemmOperand& A, void* dst, GemmPrecision p) {
  if (A.packed != nullptr) fail("pack_a", "A is already packed");
  if (A.source != nullptr) fail("pack_a", "A cannot be a GemmBSource");
  const Bf16Kernels* kb = p == GemmPrecision::kBfloat16 ? &require_bf16(isa, "pack_a") : nullptr;
  const int mr = geometry(isa).mr;
  float* panels = start_pack(dst, packed_a_bytes(isa, M, K, p), PackKind::kA, isa, mr, M, K, p);
  if (M <= 0 || K <= 0) return;
  if (kb != nullptr)
    pack_a_block_bf16(A, K, 0, M, 0, k_steps(K, p), mr, kernels(isa), *kb,
                      reinterpret_cast<uint32_t*>(panels));
  else
    pack_a_block(A, 0, M, 0, K, mr, kernels(isa).pack_a_rows, panels);
}

void pack_b(Isa isa, int64_t K, int64_t N, const GemmOperand& B, void* dst, GemmPrecision p) {
  if (B.packed != nullptr) fail("pack_b", "B is already packed");
  const Bf16Kernels* kb = p == GemmPrecision::kBfloat16 ? &require_bf16(isa, "pack_b") : nullptr;
  const int nr = geometry(isa).nr;
  float* panels = start_pack(dst, packed_b_bytes(isa, K, N, p), PackKind::kB, isa, nr, K, N, p);
  if (N <= 0 || K <= 0) return;
  const Kernels& kn = kernels(isa);
  if (kb != nullptr)
    pack_b_block_bf16(isa, B, K, 0, k_steps(K, p), 0, N, nr, kn, *kb,
                      reinterpret_cast<uint32_t*>(panels));
  else if (B.source != nullptr)
    B.source->pack_block(isa, 0, K, 0, N, nr, panels);
  else
    pack_b_block(B, 0, K, 0, N, nr, kn.pack_b_rows, kn.pack_b_cols, panels);
}

bool packed_matches_a(const void* packed, size_t bytes, Isa isa, int64_t M, int64_t K,
                      GemmPrecision p) {
  return packed_matches(packed, bytes, PackKind::kA, isa, M, K, p);
}
bool packed_matches_b(const void* packed, size_t bytes, Isa isa, int64_t K, int64_t N,
                      GemmPrecision p) {
  return packed_matches(packed, bytes, PackKind::kB, isa, K, N, p);
}

}  // namespace infer::cpu::simd
