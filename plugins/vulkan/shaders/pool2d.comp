// MaxPool and AveragePool over 2-D windows (1-D pools run with H = 1), for
// src/ops/pool_ops.cpp. Each invocation computes one output pixel from its window, as the
// CPU plugin does: padded positions never take part in a max, and an average divides by
// the number of taps inside the input, or (COUNT_INCLUDE_PAD) inside the padded input
// [-pad_begin, size + pad_end), which excludes the part of a ceil_mode window that hangs
// past the end padding.
//
// Grid: x (and y, for large planes) over the pixels of one plane, z over the N * C
// planes; grid-stride loops cover what exceeds 65535 groups per dimension.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const bool IS_MAX = true;
layout(constant_id = 4) const bool COUNT_INCLUDE_PAD = false;

layout(set = 0, binding = 0, std430) readonly buffer XBuf { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer YBuf { float y[]; };

layout(push_constant) uniform Params {
  uint H, W;
  uint OH, OW;
  uint KH, KW;
  uint SH, SW, DH, DW;
  int PT, PL, PB, PR;  // pads: top, left, bottom, right
  uint planes;         // N * C
} pc;

// Taps of one window axis whose position start + k * d lies in [lo, hi).
uint count_taps(int start, uint k, uint d, int lo, int hi) {
  uint n = 0;
  for (uint i = 0; i < k; ++i) {
    const int p = start + int(i * d);
    n += (p >= lo && p < hi) ? 1u : 0u;
  }
  return n;
}

void main() {
  const uint P = pc.OH * pc.OW;
  const uint HW = pc.H * pc.W;
  const uint lanes = gl_WorkGroupSize.x * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  const uint first =
      (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
      gl_LocalInvocationID.x;
  for (uint plane = gl_WorkGroupID.z; plane < pc.planes; plane += gl_NumWorkGroups.z) {
    const uint x_off = plane * HW;
    for (uint p = first; p < P; p += lanes) {
      const uint oh = p / pc.OW;
      const uint ow = p % pc.OW;
      const int ih0 = int(oh * pc.SH) - pc.PT;
      const int iw0 = int(ow * pc.SW) - pc.PL;
      float best = -3.402823466e38;
      bool first_tap = true;
      float sum = 0.0;
      for (uint kh = 0; kh < pc.KH; ++kh) {
        const int ih = ih0 + int(kh * pc.DH);
        if (ih < 0 || ih >= int(pc.H)) continue;
        const uint row = x_off + uint(ih) * pc.W;
        for (uint kw = 0; kw < pc.KW; ++kw) {
          const int iw = iw0 + int(kw * pc.DW);
          if (iw < 0 || iw >= int(pc.W)) continue;
          const float v = x[row + uint(iw)];
          if (IS_MAX) {
            // The first tap wins even when it is NaN, later ones only when greater (the
            // CPU plugin's rule), so both backends agree on NaN inputs.
            if (first_tap || v > best) best = v;
            first_tap = false;
          } else {
            sum += v;
          }
        }
      }
      float r;
      if (IS_MAX) {
        r = best;
      } else {
        uint count;
        if (COUNT_INCLUDE_PAD) {
          count = count_taps(ih0, pc.KH, pc.DH, -pc.PT, int(pc.H) + pc.PB) *
                  count_taps(iw0, pc.KW, pc.DW, -pc.PL, int(pc.W) + pc.PR);
        } else {
          count = count_taps(ih0, pc.KH, pc.DH, 0, int(pc.H)) *
                  count_taps(iw0, pc.KW, pc.DW, 0, int(pc.W));
        }
        r = sum / float(count);
      }
      y[plane * P + p] = r;
    }
  }
}
