// Internal to the GEMM: the header at the front of a buffer made by pack_a / pack_b.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gemm.hpp"
#include "isa.hpp"

namespace infer::cpu::simd::gemm_detail {

enum class PackKind : uint32_t { kA = 1, kB = 2 };

// The first bytes of a packed operand; the panels start kPackHeaderBytes in (so they
// keep the buffer's 64-byte alignment). rows x cols are the operand's dims (M x K for A,
// K x N for B); width is the panel width (MR or NR of the isa); precision a GemmPrecision
// (0, float32, in every buffer made before bfloat16 existed: the header was zero-filled).
struct PackHeader {
  uint32_t magic;
  uint32_t kind;
  uint32_t isa;
  uint32_t width;
  int64_t rows;
  int64_t cols;
  uint32_t precision;
  uint32_t reserved;
};
constexpr uint32_t kPackMagic = 0x31504749;  // "IGP1"
constexpr size_t kPackHeaderBytes = 64;

// The panels of a packed operand after checking its header against what sgemm was asked
// for; its precision goes to *precision. A mismatch is a caller's bug (packed for another
// isa or dims): it aborts with a message naming both, rather than computing garbage.
const float* check_packed(const void* packed, PackKind kind, Isa isa, int64_t rows, int64_t cols,
                          GemmPrecision* precision);
// Whether `packed` (bytes long) is exactly what pack_a/pack_b make for these isa, dims and
// precision.
bool packed_matches(const void* packed, size_t bytes, PackKind kind, Isa isa, int64_t rows,
                    int64_t cols, GemmPrecision precision);

}  // namespace infer::cpu::simd::gemm_detail
