// Internal to the gemm_ukernel* files: the part of a register tile after the multiply,
// written once in plain C++ and compiled into each ISA's file with that ISA's flags (so it
// vectorizes for it). Everything here has internal linkage on purpose: the same inline
// function compiled with AVX-512 flags in one file and baseline flags in another must not
// be merged by the linker.
#pragma once

#include <cstdint>

#include "activation.hpp"
#include "gemm_kernels.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

// acc holds the MR x NR product (row stride ldacc); writes the finished mr x nr tile to C.
// Runs while the tile is still in L1: scale, beta * C, bias, residual, activation.
inline void finish_tile(float* __restrict acc, int64_t ldacc, const TileJob& t) {
  const GemmEpilogue* ep = t.ep;
  const float alpha = t.alpha, beta = t.beta;
  const int nr = t.nr;
  for (int r = 0; r < t.mr; ++r) {
    float* __restrict c = t.c + r * t.ldc;
    float* __restrict v = acc + r * ldacc;
    if (beta == 0.0f) {
      for (int j = 0; j < nr; ++j) v[j] = alpha * v[j];
    } else if (beta == 1.0f) {
      for (int j = 0; j < nr; ++j) v[j] = alpha * v[j] + c[j];
    } else {
      for (int j = 0; j < nr; ++j) v[j] = alpha * v[j] + beta * c[j];
    }
    if (ep != nullptr) {
      if (ep->bias_mode == GemmEpilogue::Bias::kPerRow) {
        const float b = ep->bias[t.row0 + r];
        for (int j = 0; j < nr; ++j) v[j] += b;
      } else if (ep->bias_mode == GemmEpilogue::Bias::kPerCol) {
        const float* __restrict b = ep->bias + t.col0;
        for (int j = 0; j < nr; ++j) v[j] += b[j];
      }
      if (ep->residual != nullptr) {
        const float* __restrict res = ep->residual + (t.row0 + r) * ep->ldr + t.col0;
        for (int j = 0; j < nr; ++j) v[j] += res[j];
      }
      switch (ep->act.kind) {
        case ActKind::kNone:
          break;
        case ActKind::kRelu:
          for (int j = 0; j < nr; ++j) v[j] = v[j] > 0.0f ? v[j] : 0.0f;
          break;
        case ActKind::kClip: {
          const float lo = ep->act.p0, hi = ep->act.p1;
          for (int j = 0; j < nr; ++j) v[j] = v[j] < lo ? lo : (v[j] > hi ? hi : v[j]);
          break;
        }
        default:
          apply_activation(t.isa, ep->act, v, static_cast<size_t>(nr));
          break;
      }
    }
    for (int j = 0; j < nr; ++j) c[j] = v[j];
  }
}

// pack_b_rows for a panel width NR known at compile time, so the full-width copy of a K
// step compiles to whole vector moves for the ISA of the including file.
template <int NR>
void pack_b_rows_fixed(const float* __restrict src, int64_t rs, int64_t kc, int cols,
                       float* __restrict dst) {
  if (cols == NR) {
    for (int64_t k = 0; k < kc; ++k, src += rs, dst += NR)
      for (int c = 0; c < NR; ++c) dst[c] = src[c];
    return;
  }
  for (int64_t k = 0; k < kc; ++k, src += rs, dst += NR) {
    int c = 0;
    for (; c < cols; ++c) dst[c] = src[c];
    for (; c < NR; ++c) dst[c] = 0.0f;
  }
}

}  // namespace
}  // namespace infer::cpu::simd::gemm_detail
