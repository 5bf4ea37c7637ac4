// Attention, step 3: Y[b, i, h*Dv + e] = sum_j P[b, h, i, j] * V[b, j, h*Dv + e], the
// probabilities times the values, written straight into the heads' columns of Y. A T x T
// workgroup computes a T x T tile (i, e), staging P and V tiles through shared memory.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer P { float prob[]; };
layout(set = 0, binding = 1, std430) readonly buffer V { float v[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Y { float y[]; };

layout(push_constant, std430) uniform Params {
  uint sq;
  uint sk;
  uint dv;
  uint heads;
} p;

const uint T = gl_WorkGroupSize.x;
shared float ps[T][T + 1];  // [i][j]
shared float vs[T][T + 1];  // [j][e]

void main() {
  const uint lx = gl_LocalInvocationID.x;
  const uint ly = gl_LocalInvocationID.y;
  const uint bh = gl_WorkGroupID.z;
  const uint b = bh / p.heads;
  const uint h = bh % p.heads;
  const uint i = gl_WorkGroupID.y * T + ly;
  const uint e = gl_WorkGroupID.x * T + lx;
  const uint ld = p.heads * p.dv;

  float acc = 0.0;
  for (uint j0 = 0u; j0 < p.sk; j0 += T) {
    const uint jp = j0 + lx;  // the P column this invocation loads
    const uint jv = j0 + ly;  // the V row this invocation loads
    ps[ly][lx] = (i < p.sq && jp < p.sk) ? prob[(bh * p.sq + i) * p.sk + jp] : 0.0;
    vs[ly][lx] = (jv < p.sk && e < p.dv) ? v[(b * p.sk + jv) * ld + h * p.dv + e] : 0.0;
    barrier();
    for (uint t = 0u; t < T; ++t) acc += ps[ly][t] * vs[t][lx];
    barrier();
  }
  if (i < p.sq && e < p.dv) y[(b * p.sq + i) * ld + h * p.dv + e] = acc;
}
