// Gelu (ONNX-20 and ai.infer): the erf form, or the tanh approximation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint TANH = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint n;
} p;

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint e = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.n) return;
  y[e] = infer_activate(TANH != 0u ? 9u : 8u, x[e], 0.0, 0.0);
}
