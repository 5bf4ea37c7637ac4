// Gather along one axis. The data is viewed as [outer, axis_n, inner] and the output as
// [outer, idx_count, inner]; each invocation copies one element of W 32-bit words.
// Indices are int32 (IW = 1) or int64 (IW = 2: the low word, read as a signed int, holds
// any index a tensor of < 2^31 elements can use, so no 64-bit arithmetic is needed).
// Negative indices count from the end; out-of-range ones are clamped (the CPU plugin
// reports them as errors; a shader has no way to, and must not read out of bounds).
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint W = 1;   // 32-bit words per data element
layout(constant_id = 4) const uint IW = 2;  // 32-bit words per index

layout(set = 0, binding = 0, std430) readonly buffer Data { uint data[]; };
layout(set = 0, binding = 1, std430) readonly buffer Indices { int indices[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Out { uint outp[]; };

layout(push_constant, std430) uniform Params {
  uint n;          // output elements
  uint inner;
  uint idx_count;
  uint axis_n;
} p;

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint e = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.n) return;
  const uint i = e % p.inner;
  const uint t = e / p.inner;
  const uint k = t % p.idx_count;
  const uint o = t / p.idx_count;
  int index = indices[k * IW];
  if (index < 0) index += int(p.axis_n);
  index = clamp(index, 0, int(p.axis_n) - 1);
  const uint s = (o * p.axis_n + uint(index)) * p.inner + i;
  for (uint w = 0u; w < W; ++w) outp[e * W + w] = data[s * W + w];
}
