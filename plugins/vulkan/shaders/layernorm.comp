// Normalizes contiguous rows to zero mean and unit (population) variance, then scales and
// shifts: LayerNormalization (rows = the trailing dims from `axis`; Scale and B index by
// the position in the row, modulo their size since they broadcast from the right) and
// InstanceNormalization (rows = the spatial dims of one (n, c); scale and B per channel).
// One workgroup per row, two passes for the moments (mean first, then the squared
// deviations, which keeps the variance accurate), shared-memory trees for the sums.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint PER_CHANNEL = 0;  // 1: InstanceNormalization
layout(constant_id = 4) const uint HAS_BIAS = 1;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) readonly buffer Scale { float scale[]; };
layout(set = 0, binding = 2, std430) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint rows;
  uint n;         // row length
  uint scale_n;   // LayerNormalization: elements of Scale (a suffix of the row's dims)
  uint bias_n;
  uint channels;  // InstanceNormalization: C
  float epsilon;
} p;

shared float red[gl_WorkGroupSize.x];

float workgroup_sum(float v) {
  const uint l = gl_LocalInvocationID.x;
  red[l] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
    if (l < s) red[l] += red[l + s];
    barrier();
  }
  const float total = red[0];
  barrier();  // red is reused by the next sum
  return total;
}

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return;
  const uint l = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint base = row * p.n;
  const float inv_n = 1.0 / float(p.n);

  float s = 0.0;
  for (uint i = l; i < p.n; i += wg) s += x[base + i];
  const float mean = workgroup_sum(s) * inv_n;
  float q = 0.0;
  for (uint i = l; i < p.n; i += wg) {
    const float d = x[base + i] - mean;
    q += d * d;
  }
  const float var = workgroup_sum(q) * inv_n;
  const float inv_std = 1.0 / sqrt(var + p.epsilon);

  if (PER_CHANNEL != 0u) {
    const uint c = row % p.channels;
    const float mul = scale[c] * inv_std;
    const float add = HAS_BIAS != 0u ? bias[c] : 0.0;
    for (uint i = l; i < p.n; i += wg) y[base + i] = (x[base + i] - mean) * mul + add;
  } else {
    for (uint i = l; i < p.n; i += wg) {
      float v = (x[base + i] - mean) * inv_std * scale[i % p.scale_n];
      if (HAS_BIAS != 0u) v += bias[i % p.bias_n];
      y[base + i] = v;
    }
  }
}
