// Softmax / LogSoftmax over contiguous rows (the normalized axis is the innermost one,
// the usual case): one workgroup per row. Each invocation strides over the row, then a
// shared-memory tree combines the partial maxima and sums; the row is read three times
// from global memory (max, sum, write), all coalesced.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOG = 0;  // 1: LogSoftmax

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint rows;
  uint n;  // row length
} p;

// The workgroup size is a power of two (the host picks 64, 128 or 256).
shared float red[gl_WorkGroupSize.x];

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return;  // uniform across the workgroup: barriers stay legal
  const uint l = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint base = row * p.n;

  float m = uintBitsToFloat(0xff800000u);  // -inf
  for (uint i = l; i < p.n; i += wg) m = max(m, x[base + i]);
  red[l] = m;
  barrier();
  for (uint s = wg / 2u; s > 0u; s >>= 1u) {
    if (l < s) red[l] = max(red[l], red[l + s]);
    barrier();
  }
  m = red[0];
  barrier();

  float sum = 0.0;
  for (uint i = l; i < p.n; i += wg) sum += exp(x[base + i] - m);
  red[l] = sum;
  barrier();
  for (uint s = wg / 2u; s > 0u; s >>= 1u) {
    if (l < s) red[l] += red[l + s];
    barrier();
  }
  sum = red[0];

  if (LOG != 0u) {
    const float shift = m + log(sum);
    for (uint i = l; i < p.n; i += wg) y[base + i] = x[base + i] - shift;
  } else {
    const float inv = 1.0 / sum;
    for (uint i = l; i < p.n; i += wg) y[base + i] = exp(x[base + i] - m) * inv;
  }
}
