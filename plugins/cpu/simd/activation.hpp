// The activations the fused kernels end with (sdk/FUSED_OPS.md), applied in place to a
// contiguous run of floats. GEMM and convolution epilogues call this on each finished
// tile while it is still in cache.
#pragma once

#include <cstddef>

#include "isa.hpp"

namespace infer::cpu::simd {

enum class ActKind {
  kNone,
  kRelu,
  kTanh,
  kSigmoid,
  kLeakyRelu,    // p0 = alpha
  kClip,         // p0 = min, p1 = max
  kHardSigmoid,  // p0 = alpha, p1 = beta
  kHardSwish,
  kGelu,      // 0.5 x (1 + erf(x / sqrt 2))
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
};

struct Act {
  ActKind kind = ActKind::kNone;
  float p0 = 0.0f;
  float p1 = 0.0f;
};

// x[i] = act(x[i]) for i in [0, n).
void apply_activation(Isa isa, const Act& act, float* x, size_t n);

}  // namespace infer::cpu::simd
