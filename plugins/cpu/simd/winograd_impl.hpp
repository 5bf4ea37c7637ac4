// The Winograd F(4x4, 3x3) tile transforms written once over a lane type V: float for
// the scalar reference, or a GCC vector of L floats in the ISA files (compiled with that
// ISA's flags, so the same source becomes AVX-512, AVX2 or NEON code). Include only from
// winograd.cpp and winograd__<isa>.cpp.
//
// Matrices (Lavin & Gray, interpolation points 0, 1, -1, 2, -2, inf):
//   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0;
//          0 4 0 -5 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
#pragma once

#include <cstdint>
#include <cstring>

namespace infer::cpu::simd::winograd_impl {

template <typename V>
inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V>
inline void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof(V));
}

// r = B^T applied to the 6 values d[0], d[k], ..., d[5k].
template <typename V>
inline void bt6(const V* d, int k, V* r, int rk) {
  const V d0 = d[0], d1 = d[k], d2 = d[2 * k], d3 = d[3 * k], d4 = d[4 * k], d5 = d[5 * k];
  const V t1 = d4 - d2 * 4.0f;  // -4 d2 + d4
  const V t2 = d3 - d1 * 4.0f;  // -4 d1 + d3
  const V t3 = d4 - d2;
  const V t4 = (d3 - d1) * 2.0f;
  r[0] = d0 * 4.0f - d2 * 5.0f + d4;
  r[rk] = t1 + t2;
  r[2 * rk] = t1 - t2;
  r[3 * rk] = t3 + t4;
  r[4 * rk] = t3 - t4;
  r[5 * rk] = d1 * 4.0f - d3 * 5.0f + d5;
}

// r = A^T applied to the 6 values m[0], m[k], ..., m[5k].
template <typename V>
inline void at6(const V* m, int k, V* r, int rk) {
  const V m0 = m[0], m1 = m[k], m2 = m[2 * k], m3 = m[3 * k], m4 = m[4 * k], m5 = m[5 * k];
  const V s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
  r[0] = m0 + s12 + s34;
  r[rk] = d12 + d34 * 2.0f;
  r[2 * rk] = s12 + s34 * 4.0f;
  r[3 * rk] = d12 + d34 * 8.0f + m5;
}

template <typename V, int L>
void input_transform(const float* in, int64_t Tp, float* out, int64_t out_stride) {
  for (int64_t t = 0; t < Tp; t += L) {
    V d[36], u[36];
    for (int e = 0; e < 36; ++e) d[e] = load<V>(in + e * Tp + t);
    for (int j = 0; j < 6; ++j) bt6(d + j, 6, u + j, 6);  // columns: u = B^T d
    for (int i = 0; i < 6; ++i) bt6(u + 6 * i, 1, d + 6 * i, 1);  // rows: d = u B
    for (int e = 0; e < 36; ++e) store(out + e * out_stride + t, d[e]);
  }
}

template <typename V, int L>
void output_transform(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out) {
  for (int64_t t = 0; t < Tp; t += L) {
    V m[36], u[24], o[16];
    for (int e = 0; e < 36; ++e) m[e] = load<V>(in + e * in_stride + t);
    for (int j = 0; j < 6; ++j) at6(m + j, 6, u + j, 6);  // columns: u (4x6) = A^T m
    for (int i = 0; i < 4; ++i) at6(u + 6 * i, 1, o + 4 * i, 1);  // rows: o = u A
    for (int e = 0; e < 16; ++e) store(out + e * Tp + t, o[e] + bias);
  }
}

// dst[j * Tp + tx] = R[4 * tx + j] for j < 6, tx < TW (R holds 4 * TW + 2 floats): one
// row of the 6x6 input tiles of a tile row, put in lane order. Written as an interleaved
// group of 4 (columns 0..3, which the compiler vectorizes with permutes) plus columns 4
// and 5, which are columns 0 and 1 of the next tile.
inline void gather_tile_row(const float* __restrict R, int64_t TW, float* __restrict dst,
                            int64_t Tp) {
  float* __restrict d0 = dst;
  float* __restrict d1 = dst + Tp;
  float* __restrict d2 = dst + 2 * Tp;
  float* __restrict d3 = dst + 3 * Tp;
  float* __restrict d4 = dst + 4 * Tp;
  float* __restrict d5 = dst + 5 * Tp;
  for (int64_t tx = 0; tx < TW; ++tx) {
    d0[tx] = R[4 * tx];
    d1[tx] = R[4 * tx + 1];
    d2[tx] = R[4 * tx + 2];
    d3[tx] = R[4 * tx + 3];
  }
  for (int64_t tx = 0; tx + 1 < TW; ++tx) {
    d4[tx] = d0[tx + 1];
    d5[tx] = d1[tx + 1];
  }
  d4[TW - 1] = R[4 * TW];
  d5[TW - 1] = R[4 * TW + 1];
}

// y[ox] = q[(ox % 4) * Tp + ox / 4] (+ res[ox] when res is not null) for ox < OW: one
// output row from the 4 rows of Q holding its tiles' columns. res may be y itself (an
// in-place FusedConv): each element is read before the same element is written.
inline void scatter_output_row(const float* q, int64_t Tp, int64_t OW, const float* res, float* y) {
  const int64_t full = OW / 4;
  if (res == nullptr || res != y) {
    const float* __restrict q0 = q;
    const float* __restrict q1 = q + Tp;
    const float* __restrict q2 = q + 2 * Tp;
    const float* __restrict q3 = q + 3 * Tp;
    float* __restrict yo = y;
    if (res == nullptr) {
      for (int64_t tx = 0; tx < full; ++tx) {
        yo[4 * tx] = q0[tx];
        yo[4 * tx + 1] = q1[tx];
        yo[4 * tx + 2] = q2[tx];
        yo[4 * tx + 3] = q3[tx];
      }
    } else {
      const float* __restrict r = res;
      for (int64_t tx = 0; tx < full; ++tx) {
        yo[4 * tx] = q0[tx] + r[4 * tx];
        yo[4 * tx + 1] = q1[tx] + r[4 * tx + 1];
        yo[4 * tx + 2] = q2[tx] + r[4 * tx + 2];
        yo[4 * tx + 3] = q3[tx] + r[4 * tx + 3];
      }
    }
    for (int64_t ox = 4 * full; ox < OW; ++ox)
      y[ox] = q[(ox % 4) * Tp + ox / 4] + (res != nullptr ? res[ox] : 0.0f);
    return;
  }
  for (int64_t ox = 0; ox < OW; ++ox) y[ox] = q[(ox % 4) * Tp + ox / 4] + res[ox];
}

}  // namespace infer::cpu::simd::winograd_impl
