// Internal to the GEMM: the header at the front of a buffer made by pack_a / pack_b.
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa.hpp"

namespace infer::cpu::simd::gemm_detail {

enum class PackKind : uint32_t { kA = 1, kB = 2 };

// The first bytes of a packed operand; the panels start kPackHeaderBytes in (so they
// keep the buffer's 64-byte alignment). rows x cols are the operand's dims (M x K for A,
// K x N for B); width is the panel width (MR or NR of the isa).
struct PackHeader {
  uint32_t magic;
  uint32_t kind;
  uint32_t isa;
  uint32_t width;
  int64_t rows;
  int64_t cols;
};
constexpr uint32_t kPackMagic = 0x31504749;  // "IGP1"
constexpr size_t kPackHeaderBytes = 64;

// The panels of a packed operand after checking its header against what sgemm was asked
// for. A mismatch is a caller's bug (packed for another isa or dims): it aborts with a
// message naming both, rather than computing garbage.
const float* check_packed(const void* packed, PackKind kind, Isa isa, int64_t rows, int64_t cols);
// Whether `packed` (bytes long) is exactly what pack_a/pack_b make for these isa and dims.
bool packed_matches(const void* packed, size_t bytes, PackKind kind, Isa isa, int64_t rows,
                    int64_t cols);

}  // namespace infer::cpu::simd::gemm_detail
