// Reduce* along any set of axes, one workgroup per output element: used when the
// innermost dim is reduced, so that the invocations of a workgroup read consecutive
// elements. The host merges adjacent dims into alternating runs of kept and reduced dims
// (at most 4 of each) with their element strides. Partial results of the invocations are
// combined by a shared-memory tree.
//
// OP: 0 Sum, 1 Mean, 2 Max, 3 Min, 4 Prod, 5 L1, 6 L2, 7 LogSum, 8 LogSumExp, 9 SumSquare.
// Max/Min propagate NaN, as the CPU plugin does.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint OP = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint outputs;
  uint count;  // reduced elements per output
  uint nk;     // kept runs
  uint nr;     // reduced runs
  uint kept_size[4];
  uint kept_stride[4];
  uint red_size[4];
  uint red_stride[4];
} p;

shared float red[gl_WorkGroupSize.x];

#define kNegInf uintBitsToFloat(0xff800000u)
#define kPosInf uintBitsToFloat(0x7f800000u)

float identity_value() {
  if (OP == 2u || OP == 8u) return kNegInf;
  if (OP == 3u) return kPosInf;
  if (OP == 4u) return 1.0;
  return 0.0;
}

// Combines two partial results (also a partial result with one element's term).
float combine(float a, float b) {
  if (OP == 2u || OP == 3u) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    return OP == 2u ? max(a, b) : min(a, b);
  }
  if (OP == 4u) return a * b;
  return a + b;
}

float term(float v) {
  if (OP == 5u) return abs(v);
  if (OP == 6u || OP == 9u) return v * v;
  return v;
}

uint input_offset(uint base, uint r) {
  uint off = base;
  for (int k = int(p.nr) - 1; k >= 0; --k) {
    off += (r % p.red_size[k]) * p.red_stride[k];
    r /= p.red_size[k];
  }
  return off;
}

float tree(float v) {
  const uint l = gl_LocalInvocationID.x;
  red[l] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
    if (l < s) red[l] = combine(red[l], red[l + s]);
    barrier();
  }
  const float total = red[0];
  barrier();
  return total;
}

void main() {
  const uint o = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (o >= p.outputs) return;
  const uint l = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  uint base = 0u;
  uint rem = o;
  for (int k = int(p.nk) - 1; k >= 0; --k) {
    base += (rem % p.kept_size[k]) * p.kept_stride[k];
    rem /= p.kept_size[k];
  }

  float result;
  if (OP == 8u) {
    float m = kNegInf;
    for (uint r = l; r < p.count; r += wg) m = max(m, x[input_offset(base, r)]);
    // max() of the tree ignores NaN here on purpose: a NaN element makes the sum NaN.
    red[l] = m;
    barrier();
    for (uint s = wg / 2u; s > 0u; s >>= 1u) {
      if (l < s) red[l] = max(red[l], red[l + s]);
      barrier();
    }
    m = red[0];
    barrier();
    float sum = 0.0;
    if (!isinf(m))
      for (uint r = l; r < p.count; r += wg) sum += exp(x[input_offset(base, r)] - m);
    sum = tree(sum);
    result = isinf(m) ? m : m + log(sum);
  } else {
    float acc = identity_value();
    for (uint r = l; r < p.count; r += wg) acc = combine(acc, term(x[input_offset(base, r)]));
    result = tree(acc);
    if (OP == 1u) result = p.count == 0u ? uintBitsToFloat(0x7fc00000u) : result / float(p.count);
    if (OP == 6u) result = sqrt(result);
    if (OP == 7u) result = log(result);
  }
  if (l == 0u) y[o] = result;
}
