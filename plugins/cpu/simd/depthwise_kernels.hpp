// The per-ISA inner loop of the depthwise kernel (depthwise.cpp): one output row.
#pragma once

#include <cstdint>

namespace infer::cpu::simd {

constexpr int kDepthwiseMaxKernel = 7;

struct DepthwiseRow {
  // Per kernel row kh: the start of the padded, phase-split input row it reads, or null
  // when that input row lies in the vertical padding (the tap contributes nothing).
  const float* rows[kDepthwiseMaxKernel];
  int kh = 0;
  int kw = 0;
  // Per kernel column: the offset inside a row of the first element output 0 reads.
  int64_t offsets[kDepthwiseMaxKernel];
  const float* weights = nullptr;  // [kh][kw]
  float bias = 0.0f;
  float* out = nullptr;
  int64_t width = 0;  // output columns
};

void depthwise_row_scalar(const DepthwiseRow& r);
#if defined(__x86_64__)
void depthwise_row_avx2(const DepthwiseRow& r);
void depthwise_row_avx512(const DepthwiseRow& r);
#endif
#if defined(__aarch64__)
void depthwise_row_neon(const DepthwiseRow& r);
#endif

}  // namespace infer::cpu::simd
