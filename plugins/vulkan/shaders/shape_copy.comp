// Strided copy: the one data-movement kernel behind Transpose, Slice, Expand, Tile and
// Concat. Each invocation copies whole elements of W 32-bit words (W = 1 for float32 /
// int32, 2 for int64), so the shader never needs 64-bit arithmetic. The host collapses
// the tensors to at most 6 iteration dims; for iteration coordinate c:
//   src = src_base + sum_d (src_mod[d] != 0 ? c[d] % src_mod[d] : c[d]) * src_stride[d]
//   dst = dst_base + sum_d c[d] * dst_stride[d]
// Strides are signed (Slice with negative steps walks backwards). Iterating in the
// destination's order keeps the writes coalesced.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint W = 1;  // 32-bit words per element

layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };

layout(push_constant, std430) uniform Params {
  uint n;      // elements to copy
  uint rank;   // iteration dims used (<= 6)
  int src_base;
  int dst_base;
  uint dims[6];
  int src_stride[6];
  int dst_stride[6];
  uint src_mod[6];
} p;

void main() {
  // Workgroups are laid out on a 2-D grid so that more than 65535 of them can run.
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint e = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.n) return;
  uint rem = e;
  int s = p.src_base;
  int d = p.dst_base;
  for (int k = int(p.rank) - 1; k >= 0; --k) {
    const uint size = p.dims[k];
    const uint c = rem % size;
    rem /= size;
    const uint cs = p.src_mod[k] != 0u ? c % p.src_mod[k] : c;
    s += int(cs) * p.src_stride[k];
    d += int(c) * p.dst_stride[k];
  }
  for (uint w = 0u; w < W; ++w) dst[uint(d) * W + w] = src[uint(s) * W + w];
}
