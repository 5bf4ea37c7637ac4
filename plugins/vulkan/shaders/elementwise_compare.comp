// y = a (cmp) b: float32 inputs with numpy broadcasting, bool output (one byte each).
// Spec constants: 0..2 workgroup size, 3 = op (0 Equal, 1 Less, 2 Greater, 3 LessOrEqual,
// 4 GreaterOrEqual), 4 = mode (0 same shapes, 1 broadcast). Needs storageBuffer8BitAccess.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#include "broadcast.glsl"
#include "indexing.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint kOp = 0;
layout(constant_id = 4) const uint kMode = 0;

layout(set = 0, binding = 0, std430) readonly buffer A { float a[]; };
layout(set = 0, binding = 1, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Y { uint8_t y[]; };

layout(push_constant, std430) uniform Push {
  uint n;
  uint rank;
  uint dims[INFER_MAX_RANK];
  uint sa[INFER_MAX_RANK];
  uint sb[INFER_MAX_RANK];
} pc;

bool apply(float x, float z) {
  switch (kOp) {
    case 0u: return x == z;
    case 1u: return x < z;
    case 2u: return x > z;
    case 3u: return x <= z;
    case 4u: return x >= z;
    default: return false;
  }
}

void main() {
  uint i = infer_flat_index();
  if (i >= pc.n) return;
  uint ia = i, ib = i;
  if (kMode != 0u) {
    uint rem = i;
    ia = 0u;
    ib = 0u;
    for (int d = int(pc.rank) - 1; d >= 0; --d) {
      uint c = rem % pc.dims[d];
      rem /= pc.dims[d];
      ia += c * pc.sa[d];
      ib += c * pc.sb[d];
    }
  }
  y[i] = uint8_t(apply(a[ia], b[ib]) ? 1u : 0u);
}
