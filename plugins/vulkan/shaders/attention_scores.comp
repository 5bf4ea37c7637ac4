// Attention, step 1: S[b, h, i, j] = scale * sum_d Q[b, i, h*Dk + d] * K[b, j, h*Dk + d]
// + mask[b, h, i, j], for the scores of all heads at once (workgroup z = b * H + h).
// A T x T workgroup computes a T x T tile of S; Q and K tiles are staged through shared
// memory T columns of d at a time, loaded along d so that global reads are coalesced.
// The mask broadcasts through its strides (0 on broadcast dims).
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint HAS_MASK = 0;

layout(set = 0, binding = 0, std430) readonly buffer Q { float q[]; };
layout(set = 0, binding = 1, std430) readonly buffer K { float k[]; };
layout(set = 0, binding = 2, std430) readonly buffer Mask { float mask[]; };
layout(set = 0, binding = 3, std430) writeonly buffer S { float s[]; };

layout(push_constant, std430) uniform Params {
  uint sq;
  uint sk;
  uint dk;
  uint heads;
  float scale;
  uint mask_stride[4];  // over [B, H, Sq, Sk]
} p;

// The workgroup is square (T x T, T = gl_WorkGroupSize.x); +1 avoids bank conflicts
// when a column of the tile is read.
const uint T = gl_WorkGroupSize.x;
shared float qs[T][T + 1];  // [i][d]
shared float ks[T][T + 1];  // [j][d]

void main() {
  const uint lx = gl_LocalInvocationID.x;
  const uint ly = gl_LocalInvocationID.y;
  const uint bh = gl_WorkGroupID.z;
  const uint b = bh / p.heads;
  const uint h = bh % p.heads;
  const uint i = gl_WorkGroupID.y * T + ly;
  const uint j = gl_WorkGroupID.x * T + lx;
  const uint ld = p.heads * p.dk;
  const uint kj = gl_WorkGroupID.x * T + ly;  // the K row this invocation loads

  float acc = 0.0;
  for (uint d0 = 0u; d0 < p.dk; d0 += T) {
    const uint d = d0 + lx;
    qs[ly][lx] = (i < p.sq && d < p.dk) ? q[(b * p.sq + i) * ld + h * p.dk + d] : 0.0;
    ks[ly][lx] = (kj < p.sk && d < p.dk) ? k[(b * p.sk + kj) * ld + h * p.dk + d] : 0.0;
    barrier();
    for (uint t = 0u; t < T; ++t) acc += qs[ly][t] * ks[lx][t];
    barrier();
  }
  if (i >= p.sq || j >= p.sk) return;
  float v = acc * p.scale;
  if (HAS_MASK != 0u)
    v += mask[b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2] +
              j * p.mask_stride[3]];
  s[(bh * p.sq + i) * p.sk + j] = v;
}
