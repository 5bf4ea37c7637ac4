// Depthwise 2-D convolution (every group has one input channel: group == C, with any
// channel multiplier M / C), for Conv and FusedConv (src/ops/conv_ops.cpp). Such a conv
// has no reduction over channels, so a GEMM tile would be mostly empty: each invocation
// computes one output pixel directly from its KH x KW window instead. Neighbouring
// invocations take neighbouring pixels of the same plane, so their loads of X (and their
// stores) are contiguous for stride 1, and all of them read the same weights (broadcast
// through the cache).
//
// Grid: x (and y, for large planes) over the pixels of one plane, z over the N * M
// planes; grid-stride loops cover what exceeds 65535 groups per dimension.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const uint ACT = 0;
layout(constant_id = 4) const bool HAS_BIAS = false;
layout(constant_id = 5) const bool HAS_Z = false;

layout(set = 0, binding = 0, std430) readonly buffer XBuf { float x[]; };
layout(set = 0, binding = 1, std430) readonly buffer WBuf { float w[]; };
layout(set = 0, binding = 2, std430) readonly buffer BiasBuf { float bias[]; };
layout(set = 0, binding = 3, std430) readonly buffer ZBuf { float zres[]; };
layout(set = 0, binding = 4, std430) writeonly buffer YBuf { float y[]; };

layout(push_constant) uniform Params {
  uint C, H, W;
  uint OH, OW;
  uint KH, KW;
  uint SH, SW, DH, DW;
  int PT, PL;
  uint Mg;      // output channels per input channel (the channel multiplier)
  uint M;       // output channels
  uint planes;  // N * M
  float p0, p1;
} pc;

void main() {
  const uint P = pc.OH * pc.OW;
  const uint HW = pc.H * pc.W;
  const uint KHW = pc.KH * pc.KW;
  const uint lanes = gl_WorkGroupSize.x * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  const uint first =
      (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
      gl_LocalInvocationID.x;
  for (uint plane = gl_WorkGroupID.z; plane < pc.planes; plane += gl_NumWorkGroups.z) {
    const uint n = plane / pc.M;
    const uint oc = plane % pc.M;
    const uint ic = oc / pc.Mg;
    const uint x_off = (n * pc.C + ic) * HW;
    const uint w_off = oc * KHW;
    const float b = HAS_BIAS ? bias[oc] : 0.0;
    for (uint p = first; p < P; p += lanes) {
      const uint oh = p / pc.OW;
      const uint ow = p % pc.OW;
      const int ih0 = int(oh * pc.SH) - pc.PT;
      const int iw0 = int(ow * pc.SW) - pc.PL;
      float acc = 0.0;
      for (uint kh = 0; kh < pc.KH; ++kh) {
        const int ih = ih0 + int(kh * pc.DH);
        if (ih < 0 || ih >= int(pc.H)) continue;
        const uint row = x_off + uint(ih) * pc.W;
        for (uint kw = 0; kw < pc.KW; ++kw) {
          const int iw = iw0 + int(kw * pc.DW);
          if (iw >= 0 && iw < int(pc.W)) acc = fma(w[w_off + kh * pc.KW + kw], x[row + uint(iw)], acc);
        }
      }
      const uint idx = plane * P + p;
      float v = acc + b;
      if (HAS_Z) v += zres[idx];
      y[idx] = infer_activate(ACT, v, pc.p0, pc.p1);
    }
  }
}
