// GlobalAveragePool and GlobalMaxPool (src/ops/pool_ops.cpp): one workgroup reduces one
// (n, c) plane of S = H * W (* D ...) elements. Each invocation first folds a strided
// slice of the plane (neighbouring invocations read neighbouring elements), then a
// shared-memory tree halves the partial results down to one. The local size is a power
// of two (the planner picks 64 for small planes, 128 for large ones).
//
// Grid: x and y over the planes (a 2-D grid when there are more than 65535), with a
// grid-stride loop beyond that.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const bool IS_MAX = false;

const uint WG = gl_WorkGroupSize.x;

layout(set = 0, binding = 0, std430) readonly buffer XBuf { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer YBuf { float y[]; };

layout(push_constant) uniform Params {
  uint S;       // elements per plane
  uint planes;  // N * C
} pc;

shared float part[WG];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  for (uint plane = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; plane < pc.planes;
       plane += groups) {
    const uint off = plane * pc.S;
    float acc = IS_MAX ? -3.402823466e38 : 0.0;
    bool seen = false;
    for (uint i = lid; i < pc.S; i += WG) {
      const float v = x[off + i];
      if (IS_MAX) {
        if (!seen || v > acc) acc = v;
        seen = true;
      } else {
        acc += v;
      }
    }
    part[lid] = acc;
    barrier();
    for (uint half_size = WG / 2; half_size > 0; half_size /= 2) {
      if (lid < half_size) {
        const float o = part[lid + half_size];
        part[lid] = IS_MAX ? (o > part[lid] ? o : part[lid]) : part[lid] + o;
      }
      barrier();
    }
    if (lid == 0) y[plane] = IS_MAX ? part[0] : part[0] / float(pc.S);
    barrier();  // part[0] is read above before the next plane overwrites part[]
  }
}
