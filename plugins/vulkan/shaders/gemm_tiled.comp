// Batched, tiled matrix product with a fused epilogue, for MatMul, Gemm, FusedGemm and
// FusedMatMul (src/ops/matmul_ops.cpp):
//
//   Y[z][m][n] = act(alpha * sum_k A'[z][m][k] * B'[z][k][n] + beta * C[m][n])
//
// A' and B' are read through element strides, so transposed operands (Gemm's transA /
// transB), broadcast batches (stride 0) and 1-D MatMul operands need no copies. C is
// read through strides too (0 along a broadcast axis), which covers Gemm's
// unidirectional broadcast and FusedMatMul's bias along the last axis.
//
// Each workgroup computes a BM x BN tile of one batch's Y (BM = TM * local size y,
// BN = TN * local size x). The K axis is walked in BK-wide slices staged in shared
// memory; every invocation accumulates TM x TN outputs in registers. An invocation's
// outputs are strided by the workgroup size (rows ly + i * WGY, columns lx + j * WGX), so
// neighbouring invocations read neighbouring shared-memory words and store neighbouring
// Y elements (coalesced). Tiles and batches beyond the dispatch grid are reached by
// grid-stride loops, so a dispatch never needs more than 65535 groups per dimension.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const uint TM = 4;     // rows of Y per invocation
layout(constant_id = 4) const uint TN = 4;     // columns of Y per invocation
layout(constant_id = 5) const uint BK = 16;    // K slice staged in shared memory
layout(constant_id = 6) const uint ACT = 0;    // infer::vk::Activation
layout(constant_id = 7) const bool HAS_C = false;
// Which axis of A (B) is contiguous in memory: the staging loop walks it with
// consecutive invocations, so global loads stay coalesced for either layout.
layout(constant_id = 8) const bool A_K_CONTIGUOUS = true;
layout(constant_id = 9) const bool B_N_CONTIGUOUS = true;

const uint WGX = gl_WorkGroupSize.x;
const uint WGY = gl_WorkGroupSize.y;
const uint WG = WGX * WGY;
const uint BM = TM * WGY;
const uint BN = TN * WGX;

layout(set = 0, binding = 0, std430) readonly buffer ABuf { float a[]; };
layout(set = 0, binding = 1, std430) readonly buffer BBuf { float b[]; };
layout(set = 0, binding = 2, std430) readonly buffer CBuf { float c[]; };
layout(set = 0, binding = 3, std430) writeonly buffer YBuf { float y[]; };

layout(push_constant) uniform Params {
  uint M, N, K;
  uint a_sm, a_sk;   // A'(m, k) = a[a_off + m * a_sm + k * a_sk]
  uint b_sk, b_sn;   // B'(k, n) = b[b_off + k * b_sk + n * b_sn]
  uint c_sm, c_sn;   // C(m, n)  = c[m * c_sm + n * c_sn]
  float alpha, beta, p0, p1;
  // Batches: z in [0, nbatch) splits as ((i0 * bd1) + i1) * bd2 + i2.
  uint nbatch, bd1, bd2;
  uint a_s0, a_s1, a_s2;
  uint b_s0, b_s1, b_s2;
  uint a_base, b_base, y_base;  // element offsets (for batch dims beyond three)
} pc;

// One padding word per row: staging loops that walk K fastest (A's rows, or B's columns
// with transB) then write to different banks instead of one bank 16 times.
shared float As[BK][BM + 1];
shared float Bs[BK][BN + 1];

void main() {
  const uint lx = gl_LocalInvocationID.x;
  const uint ly = gl_LocalInvocationID.y;
  const uint tid = ly * WGX + lx;
  const uint tiles_m = (pc.M + BM - 1) / BM;
  const uint tiles_n = (pc.N + BN - 1) / BN;

  for (uint z = gl_WorkGroupID.z; z < pc.nbatch; z += gl_NumWorkGroups.z) {
    const uint i2 = z % pc.bd2;
    const uint t = z / pc.bd2;
    const uint i1 = t % pc.bd1;
    const uint i0 = t / pc.bd1;
    const uint a_off = pc.a_base + i0 * pc.a_s0 + i1 * pc.a_s1 + i2 * pc.a_s2;
    const uint b_off = pc.b_base + i0 * pc.b_s0 + i1 * pc.b_s1 + i2 * pc.b_s2;
    const uint y_off = pc.y_base + z * pc.M * pc.N;

    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const uint m0 = tm * BM;
        const uint n0 = tn * BN;
        float acc[TM][TN];
        for (uint i = 0; i < TM; ++i)
          for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;

        for (uint k0 = 0; k0 < pc.K; k0 += BK) {
          // Stage A'[m0 .. m0+BM)[k0 .. k0+BK) and B'[k0 .. k0+BK)[n0 .. n0+BN), zero
          // outside the matrices so the inner loop needs no bounds checks.
          for (uint e = tid; e < BM * BK; e += WG) {
            const uint mm = A_K_CONTIGUOUS ? e / BK : e % BM;
            const uint kk = A_K_CONTIGUOUS ? e % BK : e / BM;
            const uint gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < pc.M && gk < pc.K) ? a[a_off + gm * pc.a_sm + gk * pc.a_sk] : 0.0;
          }
          for (uint e = tid; e < BK * BN; e += WG) {
            const uint nn = B_N_CONTIGUOUS ? e % BN : e / BK;
            const uint kk = B_N_CONTIGUOUS ? e / BN : e % BK;
            const uint gn = n0 + nn, gk = k0 + kk;
            Bs[kk][nn] = (gn < pc.N && gk < pc.K) ? b[b_off + gk * pc.b_sk + gn * pc.b_sn] : 0.0;
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
          if (gm >= pc.M) continue;
          for (uint j = 0; j < TN; ++j) {
            const uint gn = n0 + lx + j * WGX;
            if (gn >= pc.N) continue;
            float v = pc.alpha * acc[i][j];
            if (HAS_C) v += pc.beta * c[gm * pc.c_sm + gn * pc.c_sn];
            y[y_off + gm * pc.N + gn] = infer_activate(ACT, v, pc.p0, pc.p1);
          }
        }
      }
    }
  }
}
