// y = a (op) b over float32 with numpy broadcasting (up to 6 dims).
// Spec constants: 0..2 workgroup size (set_grid_1d), 3 = op, 4 = mode (0: a, b and y all
// have the same shape, so every index is flat; 1: broadcast through the strides).
// Op numbers: see kBinaryOps in src/ops/elementwise_ops.cpp.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "broadcast.glsl"
#include "indexing.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint kOp = 0;
layout(constant_id = 4) const uint kMode = 0;

layout(set = 0, binding = 0, std430) readonly buffer A { float a[]; };
layout(set = 0, binding = 1, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Push {
  uint n;
  uint rank;
  uint dims[INFER_MAX_RANK];
  uint sa[INFER_MAX_RANK];
  uint sb[INFER_MAX_RANK];
} pc;

// ONNX Pow: a negative base is defined for integral exponents (GLSL's pow is not).
float onnx_pow(float x, float e) {
  if (x > 0.0) return pow(x, e);
  if (x == 0.0) return e > 0.0 ? 0.0 : (e == 0.0 ? 1.0 : 1.0 / 0.0);
  if (e != floor(e)) return 0.0 / 0.0;
  float r = pow(-x, e);
  return mod(e, 2.0) == 1.0 ? -r : r;
}

float apply(float x, float z) {
  switch (kOp) {
    case 0u: return x + z;
    case 1u: return x - z;
    case 2u: return x * z;
    case 3u: return x / z;
    case 4u: return onnx_pow(x, z);
    case 5u: return max(x, z);
    case 6u: return min(x, z);
    default: return 0.0;
  }
}

void main() {
  uint i = infer_flat_index();
  if (i >= pc.n) return;
  if (kMode == 0u) {
    y[i] = apply(a[i], b[i]);
    return;
  }
  uint rem = i, ia = 0u, ib = 0u;
  for (int d = int(pc.rank) - 1; d >= 0; --d) {
    uint c = rem % pc.dims[d];
    rem /= pc.dims[d];
    ia += c * pc.sa[d];
    ib += c * pc.sb[d];
  }
  y[i] = apply(a[ia], b[ib]);
}
