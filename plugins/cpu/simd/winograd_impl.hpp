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

}  // namespace infer::cpu::simd::winograd_impl
