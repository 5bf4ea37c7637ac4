// y = cond ? x : z (ONNX Where): bool cond, float32 x and z, numpy broadcasting of all
// three (up to 6 dims). Spec constants: 0..2 workgroup size. Needs 8-bit storage.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#include "broadcast.glsl"
#include "indexing.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer C { uint8_t cond[]; };
layout(set = 0, binding = 1, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 2, std430) readonly buffer Z { float z[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Push {
  uint n;
  uint rank;
  uint dims[INFER_MAX_RANK];
  uint sc[INFER_MAX_RANK];
  uint sx[INFER_MAX_RANK];
  uint sz[INFER_MAX_RANK];
} pc;

void main() {
  uint i = infer_flat_index();
  if (i >= pc.n) return;
  uint rem = i, ic = 0u, ix = 0u, iz = 0u;
  for (int d = int(pc.rank) - 1; d >= 0; --d) {
    uint c = rem % pc.dims[d];
    rem /= pc.dims[d];
    ic += c * pc.sc[d];
    ix += c * pc.sx[d];
    iz += c * pc.sz[d];
  }
  y[i] = uint(cond[ic]) != 0u ? x[ix] : z[iz];
}
