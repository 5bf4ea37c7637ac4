// Fused activations, numbered as infer::vk::Activation (src/ops/op_kernel.hpp) and defined
// as in sdk/FUSED_OPS.md. `kind`, `p0` and `p1` usually come from specialization
// constants or push constants.
#ifndef INFER_VK_ACTIVATION_GLSL
#define INFER_VK_ACTIVATION_GLSL

// erf with |error| < 1.2e-7 (Numerical Recipes' erfc Chebyshev fit): GLSL has no erf.
float infer_erf(float x) {
  float z = abs(x);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 +
                    t * (1.00002368 +
                    t * (0.37409196 +
                    t * (0.09678418 +
                    t * (-0.18628806 +
                    t * (0.27886807 +
                    t * (-1.13520398 +
                    t * (1.48851587 +
                    t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? 1.0 - r : r - 1.0;
}

float infer_sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

// tanh that stays finite for large |x| (GLSL's tanh may overflow exp inside).
float infer_tanh(float x) {
  float c = clamp(x, -15.0, 15.0);
  float e = exp(2.0 * c);
  return (e - 1.0) / (e + 1.0);
}

float infer_activate(uint kind, float x, float p0, float p1) {
  switch (kind) {
    case 1u: return max(x, 0.0);
    case 2u: return infer_tanh(x);
    case 3u: return infer_sigmoid(x);
    case 4u: return x >= 0.0 ? x : p0 * x;
    case 5u: return min(max(x, p0), p1);
    case 6u: return clamp(p0 * x + p1, 0.0, 1.0);
    case 7u: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case 8u: return 0.5 * x * (1.0 + infer_erf(x * 0.70710678118654752));
    case 9u: return 0.5 * x * (1.0 + infer_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    default: return x;
  }
}

#endif
