// Attention, step 2: softmax of each score row in place (rows = B * H * Sq, length Sk).
// One workgroup per row with shared-memory trees, as softmax_rows.comp.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) buffer S { float s[]; };

layout(push_constant, std430) uniform Params {
  uint rows;
  uint n;
} p;

shared float red[gl_WorkGroupSize.x];

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return;
  const uint l = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint base = row * p.n;

  float m = uintBitsToFloat(0xff800000u);
  for (uint i = l; i < p.n; i += wg) m = max(m, s[base + i]);
  red[l] = m;
  barrier();
  for (uint st = wg / 2u; st > 0u; st >>= 1u) {
    if (l < st) red[l] = max(red[l], red[l + st]);
    barrier();
  }
  m = red[0];
  barrier();

  float sum = 0.0;
  for (uint i = l; i < p.n; i += wg) {
    const float e = exp(s[base + i] - m);
    s[base + i] = e;  // each invocation rewrites only the elements it read
    sum += e;
  }
  red[l] = sum;
  barrier();
  for (uint st = wg / 2u; st > 0u; st >>= 1u) {
    if (l < st) red[l] += red[l + st];
    barrier();
  }
  const float inv = 1.0 / red[0];
  for (uint i = l; i < p.n; i += wg) s[base + i] *= inv;
}
