// y = f(x) over float32, elementwise. Spec constants: 0..2 workgroup size, 3 = op.
// Ops 1..9 are the fused activations of activation.glsl (same numbers); from 20 on, the
// other unary ops: see kUnaryOps in src/ops/elementwise_ops.cpp. p0/p1: the op's
// parameters (alpha, beta, min, max...).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"
#include "indexing.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint kOp = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Push {
  uint n;
  float p0;
  float p1;
} pc;

float apply(float v) {
  if (kOp < 20u) return infer_activate(kOp, v, pc.p0, pc.p1);
  switch (kOp) {
    case 20u: return exp(v);
    case 21u: return log(v);
    case 22u: return sqrt(v);
    case 23u: return abs(v);
    case 24u: return -v;
    case 25u: return 1.0 / v;
    case 26u: return infer_erf(v);
    case 27u: return v >= 0.0 ? v : pc.p0 * (exp(v) - 1.0);               // Elu
    case 28u: return max(v, 0.0) + log(1.0 + exp(-abs(v)));               // Softplus
    case 29u: return v / (1.0 + abs(v));                                  // Softsign
    case 30u: return floor(v);
    case 31u: return ceil(v);
    case 32u: return sign(v);
    case 33u: return v > 0.0 ? pc.p1 * v : pc.p1 * pc.p0 * (exp(v) - 1.0); // Selu
    case 34u: return sin(v);
    case 35u: return cos(v);
    case 36u: return roundEven(v);                                        // Round
    case 37u: return v;                                                   // Identity
    default: return v;
  }
}

void main() {
  uint i = infer_flat_index();
  if (i >= pc.n) return;
  y[i] = apply(x[i]);
}
