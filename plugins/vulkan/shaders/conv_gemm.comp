// 2-D convolution as an implicit GEMM, for Conv and FusedConv (src/ops/conv_ops.cpp).
// For one image n and group g (z = n * G + g) it computes
//
//   Y[n][g*Mg + m][p] = act(sum_k W[g*Mg + m][k] * im2col(X)[k][p] + bias[g*Mg + m] + Z[...])
//
// with p = oh * OW + ow and k = (c * KH + kh) * KW + kw over the group's Cg input
// channels. The im2col matrix is never stored: each BK x BN slice is gathered from X
// straight into shared memory (zero where the window reaches into the padding), beside
// the matching BM x BK slice of the weights, and the tile loop is the one of
// gemm_tiled.comp. Output pixels run along the tile's N axis, so the gathers of
// neighbouring invocations hit neighbouring input pixels (coalesced for stride 1) and the
// stores are contiguous. A 1x1, stride-1, unpadded conv is a plain GEMM on X's channel
// planes (POINTWISE), which skips the window arithmetic.
//
// The planner keeps local size y a multiple of TN, so the workgroup (WG invocations) is a
// whole number of BN-wide rows and each invocation gathers a fixed pixel column: its
// window origin is computed once per tile.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const uint TM = 4;   // output channels per invocation
layout(constant_id = 4) const uint TN = 4;   // output pixels per invocation
layout(constant_id = 5) const uint BK = 16;
layout(constant_id = 6) const uint ACT = 0;
layout(constant_id = 7) const bool HAS_BIAS = false;
layout(constant_id = 8) const bool HAS_Z = false;
layout(constant_id = 9) const bool POINTWISE = false;

const uint WGX = gl_WorkGroupSize.x;
const uint WGY = gl_WorkGroupSize.y;
const uint WG = WGX * WGY;
const uint BM = TM * WGY;
const uint BN = TN * WGX;

layout(set = 0, binding = 0, std430) readonly buffer XBuf { float x[]; };
layout(set = 0, binding = 1, std430) readonly buffer WBuf { float w[]; };
layout(set = 0, binding = 2, std430) readonly buffer BiasBuf { float bias[]; };
layout(set = 0, binding = 3, std430) readonly buffer ZBuf { float zres[]; };
layout(set = 0, binding = 4, std430) writeonly buffer YBuf { float y[]; };

layout(push_constant) uniform Params {
  uint C, H, W;        // input channels (all groups) and spatial size
  uint OH, OW;
  uint KH, KW;
  uint SH, SW, DH, DW;
  int PT, PL;          // padding before the first row / column
  uint Cg, Mg, G;      // input and output channels per group, groups
  uint M;              // output channels (all groups)
  uint nbatch;         // N * G
  float p0, p1;
} pc;

// One padding word per row: staging loops that walk K fastest (A's rows, or B's columns
// with transB) then write to different banks instead of one bank 16 times.
shared float As[BK][BM + 1];
shared float Bs[BK][BN + 1];

void main() {
  const uint lx = gl_LocalInvocationID.x;
  const uint ly = gl_LocalInvocationID.y;
  const uint tid = ly * WGX + lx;
  const uint P = pc.OH * pc.OW;
  const uint KHW = pc.KH * pc.KW;
  const uint Kg = pc.Cg * KHW;
  const uint HW = pc.H * pc.W;
  const uint tiles_m = (pc.Mg + BM - 1) / BM;
  const uint tiles_n = (P + BN - 1) / BN;

  for (uint z = gl_WorkGroupID.z; z < pc.nbatch; z += gl_NumWorkGroups.z) {
    const uint n = z / pc.G;
    const uint g = z % pc.G;
    const uint x_off = (n * pc.C + g * pc.Cg) * HW;  // first input plane of the group
    const uint w_off = g * pc.Mg * Kg;                // first weight row of the group
    const uint y_off = (n * pc.M + g * pc.Mg) * P;

    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const uint m0 = tm * BM;
        const uint n0 = tn * BN;
        // The output pixel this invocation gathers for every K slice of this tile.
        const uint gp = n0 + tid % BN;
        const bool p_ok = gp < P;
        const uint oh = p_ok ? gp / pc.OW : 0;
        const uint ow = p_ok ? gp % pc.OW : 0;
        const int ih0 = int(oh * pc.SH) - pc.PT;
        const int iw0 = int(ow * pc.SW) - pc.PL;

        float acc[TM][TN];
        for (uint i = 0; i < TM; ++i)
          for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;

        for (uint k0 = 0; k0 < Kg; k0 += BK) {
          for (uint e = tid; e < BM * BK; e += WG) {
            const uint kk = e % BK, mm = e / BK;
            const uint gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < pc.Mg && gk < Kg) ? w[w_off + gm * Kg + gk] : 0.0;
          }
          for (uint kk = tid / BN; kk < BK; kk += WG / BN) {
            const uint gk = k0 + kk;
            float v = 0.0;
            if (p_ok && gk < Kg) {
              if (POINTWISE) {
                v = x[x_off + gk * HW + gp];
              } else {
                const uint c = gk / KHW;
                const uint r = gk - c * KHW;
                const uint kh = r / pc.KW;
                const uint kw = r - kh * pc.KW;
                const int ih = ih0 + int(kh * pc.DH);
                const int iw = iw0 + int(kw * pc.DW);
                if (ih >= 0 && ih < int(pc.H) && iw >= 0 && iw < int(pc.W))
                  v = x[x_off + c * HW + uint(ih) * pc.W + uint(iw)];
              }
            }
            Bs[kk][tid % BN] = v;
          }
          barrier();
          for (uint kk = 0; kk < BK; ++kk) {
            float av[TM];
            float bv[TN];
            for (uint i = 0; i < TM; ++i) av[i] = As[kk][ly + i * WGY];
            for (uint j = 0; j < TN; ++j) bv[j] = Bs[kk][lx + j * WGX];
            for (uint i = 0; i < TM; ++i)
              for (uint j = 0; j < TN; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
          }
          barrier();
        }

        for (uint i = 0; i < TM; ++i) {
          const uint gm = m0 + ly + i * WGY;
          if (gm >= pc.Mg) continue;
          const float bv = HAS_BIAS ? bias[g * pc.Mg + gm] : 0.0;
          for (uint j = 0; j < TN; ++j) {
            const uint p = n0 + lx + j * WGX;
            if (p >= P) continue;
            const uint idx = y_off + gm * P + p;
            float v = acc[i][j] + bv;
            if (HAS_Z) v += zres[idx];
            y[idx] = infer_activate(ACT, v, pc.p0, pc.p1);
          }
        }
      }
    }
  }
}
