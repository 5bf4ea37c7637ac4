// Pad in the modes constant (0), reflect (1), edge (2) and wrap (3), over up to 6 dims.
// Each invocation writes one output element of W 32-bit words. Pads may be negative
// (cropping). The constant value comes from push constants, or from binding 2 when it is
// a tensor computed at run time (VALUE_FROM_BUFFER).
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint MODE = 0;
layout(constant_id = 5) const uint VALUE_FROM_BUFFER = 0;

layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };
layout(set = 0, binding = 2, std430) readonly buffer Value { uint value[]; };

layout(push_constant, std430) uniform Params {
  uint n;       // output elements
  uint rank;
  uint value_lo;  // the constant value's words (when not from the buffer)
  uint value_hi;
  uint out_dims[6];
  uint in_dims[6];
  int pad_begin[6];
} p;

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint e = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.n) return;
  uint rem = e;
  uint s = 0u;
  uint stride = 1u;
  bool outside = false;
  for (int k = int(p.rank) - 1; k >= 0; --k) {
    const uint c = rem % p.out_dims[k];
    rem /= p.out_dims[k];
    const int size = int(p.in_dims[k]);
    int x = int(c) - p.pad_begin[k];
    if (MODE == 0u) {
      outside = outside || x < 0 || x >= size;
    } else if (MODE == 1u) {
      // numpy's "reflect": the edge element is not repeated.
      if (size == 1) {
        x = 0;
      } else {
        const int period = 2 * (size - 1);
        x = abs(x) % period;
        if (x >= size) x = period - x;
      }
    } else if (MODE == 2u) {
      x = clamp(x, 0, size - 1);
    } else {
      x = x % size;
      if (x < 0) x += size;
    }
    if (!outside) s += uint(x) * stride;
    stride *= uint(size);
  }
  for (uint w = 0u; w < W; ++w) {
    uint v;
    if (outside)
      v = VALUE_FROM_BUFFER != 0u ? value[w] : (w == 0u ? p.value_lo : p.value_hi);
    else
      v = src[s * W + w];
    dst[e * W + w] = v;
  }
}
