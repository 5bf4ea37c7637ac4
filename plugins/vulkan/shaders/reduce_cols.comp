// Reduce* with one invocation per output element: used when the innermost dim is kept,
// so that neighbouring invocations (neighbouring outputs) read neighbouring elements on
// every step of their loops. Same runs, strides and OP numbering as reduce_rows.comp.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint OP = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint outputs;
  uint count;
  uint nk;
  uint nr;
  uint kept_size[4];
  uint kept_stride[4];
  uint red_size[4];
  uint red_stride[4];
} p;

#define kNegInf uintBitsToFloat(0xff800000u)
#define kPosInf uintBitsToFloat(0x7f800000u)

uint input_offset(uint base, uint r) {
  uint off = base;
  for (int k = int(p.nr) - 1; k >= 0; --k) {
    off += (r % p.red_size[k]) * p.red_stride[k];
    r /= p.red_size[k];
  }
  return off;
}

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint o = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (o >= p.outputs) return;
  uint base = 0u;
  uint rem = o;
  for (int k = int(p.nk) - 1; k >= 0; --k) {
    base += (rem % p.kept_size[k]) * p.kept_stride[k];
    rem /= p.kept_size[k];
  }

  float result;
  if (OP == 8u) {
    float m = kNegInf;
    for (uint r = 0u; r < p.count; ++r) m = max(m, x[input_offset(base, r)]);
    float sum = 0.0;
    if (!isinf(m))
      for (uint r = 0u; r < p.count; ++r) sum += exp(x[input_offset(base, r)] - m);
    result = isinf(m) ? m : m + log(sum);
  } else if (OP == 2u || OP == 3u) {
    float acc = OP == 2u ? kNegInf : kPosInf;
    for (uint r = 0u; r < p.count; ++r) {
      const float v = x[input_offset(base, r)];
      if (isnan(acc)) break;
      acc = isnan(v) ? v : (OP == 2u ? max(acc, v) : min(acc, v));
    }
    result = acc;
  } else {
    float acc = OP == 4u ? 1.0 : 0.0;
    for (uint r = 0u; r < p.count; ++r) {
      const float v = x[input_offset(base, r)];
      if (OP == 4u) acc *= v;
      else if (OP == 5u) acc += abs(v);
      else if (OP == 6u || OP == 9u) acc += v * v;
      else acc += v;
    }
    result = acc;
    if (OP == 1u) result = p.count == 0u ? uintBitsToFloat(0x7fc00000u) : result / float(p.count);
    if (OP == 6u) result = sqrt(result);
    if (OP == 7u) result = log(result);
  }
  y[o] = result;
}
