// Softmax / LogSoftmax along an axis that is not the innermost one: the tensor is viewed
// as [outer, n, inner] and each invocation normalizes one (outer, inner) column, so that
// neighbouring invocations read neighbouring elements (coalesced) on every step.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOG = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint columns;  // outer * inner
  uint n;
  uint inner;
} p;

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint c = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (c >= p.columns) return;
  const uint base = (c / p.inner) * p.n * p.inner + c % p.inner;
  float m = uintBitsToFloat(0xff800000u);
  for (uint i = 0u; i < p.n; ++i) m = max(m, x[base + i * p.inner]);
  float sum = 0.0;
  for (uint i = 0u; i < p.n; ++i) sum += exp(x[base + i * p.inner] - m);
  if (LOG != 0u) {
    const float shift = m + log(sum);
    for (uint i = 0u; i < p.n; ++i) y[base + i * p.inner] = x[base + i * p.inner] - shift;
  } else {
    const float inv = 1.0 / sum;
    for (uint i = 0u; i < p.n; ++i)
      y[base + i * p.inner] = exp(x[base + i * p.inner] - m) * inv;
  }
}
