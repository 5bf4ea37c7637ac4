// ArgMax / ArgMin along an axis that is not the innermost one: the input is viewed as
// [outer, n, inner] and each invocation scans one (outer, inner) column (neighbouring
// invocations read neighbouring elements). Same rules and int64 output as
// reduce_arg_rows.comp.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint IS_MAX = 1;
layout(constant_id = 4) const uint SELECT_LAST = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { uint y[]; };

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
  float bv = x[base];
  uint bi = 0u;
  for (uint i = 1u; i < p.n; ++i) {
    const float v = x[base + i * p.inner];
    bool take;
    if (isnan(bv)) take = SELECT_LAST != 0u && isnan(v);
    else if (isnan(v)) take = true;
    else if (v == bv) take = SELECT_LAST != 0u;
    else take = IS_MAX != 0u ? v > bv : v < bv;
    if (take) {
      bv = v;
      bi = i;
    }
  }
  y[c * 2u] = bi;
  y[c * 2u + 1u] = 0u;
}
