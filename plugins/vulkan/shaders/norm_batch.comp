// BatchNormalization in inference mode: y = (x - mean[c]) / sqrt(var[c] + epsilon) *
// scale[c] + B[c], with c the channel (dim 1) of each element. The statistics are read
// from their buffers, so they need not be constants.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) readonly buffer Scale { float scale[]; };
layout(set = 0, binding = 2, std430) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3, std430) readonly buffer Mean { float mean[]; };
layout(set = 0, binding = 4, std430) readonly buffer Var { float var[]; };
layout(set = 0, binding = 5, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint n;
  uint inner;     // elements per (n, c) plane
  uint channels;
  float epsilon;
} p;

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint e = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.n) return;
  const uint c = (e / p.inner) % p.channels;
  const float mul = scale[c] / sqrt(var[c] + p.epsilon);
  y[e] = (x[e] - mean[c]) * mul + bias[c];
}
