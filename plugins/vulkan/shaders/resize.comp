// Resize / Upsample over up to 4 dims (the host merges neighbouring dims that are not
// resized): nearest (any element of W 32-bit words) and linear (float32; every resized
// dim interpolated, as ONNX defines it: bilinear over the last two dims of an image,
// trilinear for volumes). The host turns the coordinate_transformation_mode into four
// numbers per dim, x_in = (x_out + q) * k / m + c, written so that the float arithmetic
// follows the reference's order of operations (half_pixel: (x + 0.5) / scale - 0.5):
// whenever the reference's coordinate is exact (scales like 2, 0.5, 1.5, 3), so is this
// one on a device with correctly rounded division (lavapipe), and nearest rounding agrees
// with the CPU plugin on the ties. It marks the dims whose map is the identity (one tap)
// and, for tf_crop_and_resize, asks for the extrapolation check.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint W = 1;        // 32-bit words per element (nearest)
layout(constant_id = 4) const uint LINEAR = 0;    // 0: nearest, 1: linear (float32)
// Nearest rounding: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil,
// 4 the "simple" rule of Upsample / Resize-10 (ceil when the dim shrinks, else truncate).
layout(constant_id = 5) const uint NEAREST = 0;
layout(constant_id = 6) const uint EXTRAPOLATE = 0;  // tf_crop_and_resize

layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };

layout(push_constant, std430) uniform Params {
  uint n;              // output elements
  uint rank;
  uint resized;        // bit d: dim d's map is not the identity
  uint shrinks;        // bit d: the dim's scale is below 1 (the "simple" nearest rule)
  float extrapolation;
  uint in_dims[4];
  uint out_dims[4];
  float q[4];
  float k[4];
  float m[4];
  float c[4];
} p;

int nearest_index(float x, uint d) {
  const float fl = floor(x);
  if (NEAREST == 0u) return int(x - fl == 0.5 ? fl : floor(x + 0.5));
  if (NEAREST == 1u) return int(x - fl == 0.5 ? fl + 1.0 : floor(x + 0.5));
  if (NEAREST == 2u) return int(fl);
  if (NEAREST == 3u) return int(ceil(x));
  return ((p.shrinks >> d) & 1u) != 0u ? int(ceil(x)) : int(trunc(x));
}

void main() {
  const uint groups = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint e = groups * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.n) return;

  // Per dim: the first tap's input index and, for linear, the second tap's offset (in
  // elements) and weight.
  uint base = 0u;
  uint second_off[4];
  float frac[4];
  uint num_linear = 0u;
  bool outside = false;
  uint rem = e;
  uint stride = 1u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    const uint o = rem % p.out_dims[d];
    rem /= p.out_dims[d];
    const int size = int(p.in_dims[d]);
    int i0 = int(o);
    if (((p.resized >> uint(d)) & 1u) != 0u) {
      float x = (float(o) + p.q[d]) * p.k[d] / p.m[d] + p.c[d];
      if (EXTRAPOLATE != 0u && (x < 0.0 || x > float(size - 1))) outside = true;
      // Coordinates further out than a few pixels read only edge values anyway.
      x = clamp(x, -4.0, float(size) + 4.0);
      if (LINEAR == 0u) {
        i0 = nearest_index(x, uint(d));
      } else {
        const float x0 = floor(x);
        i0 = int(x0);
        const int i1 = clamp(i0 + 1, 0, size - 1);
        i0 = clamp(i0, 0, size - 1);
        second_off[num_linear] = uint(i1 - i0) * stride;
        frac[num_linear] = x - x0;
        ++num_linear;
      }
      i0 = clamp(i0, 0, size - 1);
    }
    base += uint(i0) * stride;
    stride *= uint(size);
  }

  if (LINEAR == 0u) {
    for (uint w = 0u; w < W; ++w)
      dst[e * W + w] = outside ? floatBitsToUint(p.extrapolation) : src[base * W + w];
    return;
  }
  if (outside) {
    dst[e] = floatBitsToUint(p.extrapolation);
    return;
  }
  // Sum over the 2^num_linear corners: bit j of `corner` picks dim j's second tap.
  float acc = 0.0;
  const uint corners = 1u << num_linear;
  for (uint corner = 0u; corner < corners; ++corner) {
    float weight = 1.0;
    uint off = base;
    for (uint j = 0u; j < num_linear; ++j) {
      if (((corner >> j) & 1u) != 0u) {
        weight *= frac[j];
        off += second_off[j];
      } else {
        weight *= 1.0 - frac[j];
      }
    }
    if (weight != 0.0) acc += weight * uintBitsToFloat(src[off]);
  }
  dst[e] = floatBitsToUint(acc);
}
