// Packing of raw operands into the panel layout of gemm_kernels.hpp, and the
// self-describing whole-operand packs of pack_a / pack_b (a 64-byte header, then the
// panels of the whole K range).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gemm_kernels.hpp"
#include "gemm_packed.hpp"

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

size_t packed_bytes(int64_t panels, int width, int64_t K) {
  const size_t floats = static_cast<size_t>(panels) * static_cast<size_t>(width) *
                        static_cast<size_t>(K > 0 ? K : 0);
  return kPackHeaderBytes + (floats * sizeof(float) + 63) / 64 * 64;
}

[[noreturn]] void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "infer cpu simd: %s: %s\n", what, detail);
  std::abort();
}

}  // namespace

const float* check_packed(const void* packed, PackKind kind, Isa isa, int64_t rows, int64_t cols) {
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
  return reinterpret_cast<const float*>(static_cast<const char*>(packed) + kPackHeaderBytes);
}

bool packed_matches(const void* packed, size_t bytes, PackKind kind, Isa isa, int64_t rows,
                    int64_t cols) {
  if (packed == nullptr || bytes < kPackHeaderBytes) return false;
  PackHeader h;
  std::memcpy(&h, packed, sizeof h);
  if (h.magic != kPackMagic || h.kind != static_cast<uint32_t>(kind) ||
      h.isa != static_cast<uint32_t>(isa) || h.rows != rows || h.cols != cols)
    return false;
  return bytes == (kind == PackKind::kA ? packed_a_bytes(isa, rows, cols)
                                        : packed_b_bytes(isa, rows, cols));
}

}  // namespace gemm_detail

using namespace gemm_detail;

size_t packed_a_bytes(Isa isa, int64_t M, int64_t K) {
  const int mr = geometry(isa).mr;
  return packed_bytes((M + mr - 1) / mr, mr, K);
}

size_t packed_b_bytes(Isa isa, int64_t K, int64_t N) {
  const int nr = geometry(isa).nr;
  return packed_bytes((N + nr - 1) / nr, nr, K);
}

void pack_a(Isa isa, int64_t M, int64_t K, const GemmOperand& A, void* dst) {
  if (A.packed != nullptr) fail("pack_a", "A is already packed");
  if (A.source != nullptr) fail("pack_a", "A cannot be a GemmBSource");
  const size_t bytes = packed_a_bytes(isa, M, K);
  std::memset(dst, 0, kPackHeaderBytes);
  const PackHeader h{kPackMagic, static_cast<uint32_t>(PackKind::kA), static_cast<uint32_t>(isa),
                     static_cast<uint32_t>(geometry(isa).mr), M, K};
  std::memcpy(dst, &h, sizeof h);
  float* panels = reinterpret_cast<float*>(static_cast<char*>(dst) + kPackHeaderBytes);
  // The rounding of the size to 64 bytes leaves a tail that should not hold garbage.
  std::memset(panels, 0, bytes - kPackHeaderBytes);
  if (M > 0 && K > 0)
    pack_a_block(A, 0, M, 0, K, geometry(isa).mr, kernels(isa).pack_a_rows, panels);
}

void pack_b(Isa isa, int64_t K, int64_t N, const GemmOperand& B, void* dst) {
  if (B.packed != nullptr) fail("pack_b", "B is already packed");
  const size_t bytes = packed_b_bytes(isa, K, N);
  std::memset(dst, 0, kPackHeaderBytes);
  const PackHeader h{kPackMagic, static_cast<uint32_t>(PackKind::kB), static_cast<uint32_t>(isa),
                     static_cast<uint32_t>(geometry(isa).nr), K, N};
  std::memcpy(dst, &h, sizeof h);
  float* panels = reinterpret_cast<float*>(static_cast<char*>(dst) + kPackHeaderBytes);
  std::memset(panels, 0, bytes - kPackHeaderBytes);
  if (N > 0 && K > 0) {
    if (B.source != nullptr)
      B.source->pack_block(isa, 0, K, 0, N, geometry(isa).nr, panels);
    else
      pack_b_block(B, 0, K, 0, N, geometry(isa).nr, kernels(isa).pack_b_rows,
                   kernels(isa).pack_b_cols, panels);
  }
}

bool packed_matches_a(const void* packed, size_t bytes, Isa isa, int64_t M, int64_t K) {
  return packed_matches(packed, bytes, PackKind::kA, isa, M, K);
}
bool packed_matches_b(const void* packed, size_t bytes, Isa isa, int64_t K, int64_t N) {
  return packed_matches(packed, bytes, PackKind::kB, isa, K, N);
}

}  // namespace infer::cpu::simd
