// Placeholder scalar implementation (the vectorized variants replace the body of this
// file): x = act(x) with the formulas of the unfused ONNX operators.
#include <algorithm>
#include <cmath>

#include "activation.hpp"

namespace infer::cpu::simd {

void apply_activation(Isa, const Act& act, float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    float r = v;
    switch (act.kind) {
      case ActKind::kNone: break;
      case ActKind::kRelu: r = v > 0 ? v : 0.0f; break;
      case ActKind::kTanh: r = std::tanh(v); break;
      case ActKind::kSigmoid: r = 1.0f / (1.0f + std::exp(-v)); break;
      case ActKind::kLeakyRelu: r = v < 0 ? v * act.p0 : v; break;
      case ActKind::kClip: r = std::min(std::max(v, act.p0), act.p1); break;
      case ActKind::kHardSigmoid: r = std::max(0.0f, std::min(1.0f, act.p0 * v + act.p1)); break;
      case ActKind::kHardSwish: r = v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f)); break;
      case ActKind::kGelu: r = 0.5f * v * (1.0f + std::erf(v / 1.4142135623730951f)); break;
      case ActKind::kGeluTanh:
        r = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        break;
    }
    x[i] = r;
  }
}

}  // namespace infer::cpu::simd
