// Internal: the elementwise and row kernels written once over a register-traits type V,
// and instantiated by each variant file (vec_scalar.cpp, vec__avx2.cpp, vec__avx512.cpp,
// vec__neon.cpp) with its own V. Only templates live here: every function is
// instantiated on a V local to one variant file, so code built with one ISA's flags can
// never be picked by the linker for another.
//
// V provides (R = register, M = lane mask, W = lanes):
//   load/store (W lanes), load_n(p, n, fill)/store_n(p, r, n) (the first n < W lanes;
//   the others read as `fill`, are never touched in memory), set1, add, sub, mul, div,
//   fma(a, b, c) = a * b + c, min(a, b) = a < b ? a : b and max(a, b) = a > b ? a : b
//   (so min(k, x) and max(k, x) pass a NaN x through), abs, neg, sqrt, round (to nearest
//   even), pow2i(n) = 2^n for integral n in [-126, 127], lt/gt (ordered compares),
//   select(m, a, b) = m ? a : b, copysign(mag, sgn), hsum, hmax.
//
// The approximations (their measured accuracy is in vec.hpp):
//   exp: n = round(x log2 e), r = x - n ln 2 (ln 2 in two parts, Cody-Waite), exp(r) on
//     [-ln2/2, ln2/2] by the degree-7 polynomial of Cephes expf, scaled by 2^n as two
//     factors 2^(n/2) 2^(n - n/2) so results down to the denormals and up to FLT_MAX come
//     out right without special cases; x is clamped to [-104, 88.8] first (exp(-104)
//     rounds to 0 and exp(88.8) overflows to inf, as they should).
//   tanh: odd polynomial of Cephes tanhf for |x| < 0.625, else 1 - 2 / (exp(2|x|) + 1)
//     with the sign of x (|x| clamped to 10: from 9.01 on tanh rounds to 1).
//   sigmoid: 1 / (1 + exp(-x)).
//   erf: the faithfully rounded erff split of N. Juffa (public domain coefficients, also
//     used by ONNX Runtime's MLAS): x (1 + P(x^2)) for |x| < 0.921875, else
//     sign(x) (1 - exp(-(t + t Q(t)))) with t = min(|x|, 3.925).
#pragma once

#include <cstddef>

#include "activation.hpp"
#include "vec.hpp"
#include "vec_kernels.hpp"

namespace infer::cpu::simd::detail {

template <class V>
struct VecMath {
  using R = typename V::R;

  static R exp(R x) {
    x = V::min(V::set1(88.8f), V::max(V::set1(-104.0f), x));
    const R n = V::round(V::mul(x, V::set1(1.44269504088896341f)));
    R r = V::fma(n, V::set1(-0.693359375f), x);
    r = V::fma(n, V::set1(2.12194440e-4f), r);
    R p = V::set1(1.9875691500e-4f);
    p = V::fma(p, r, V::set1(1.3981999507e-3f));
    p = V::fma(p, r, V::set1(8.3334519073e-3f));
    p = V::fma(p, r, V::set1(4.1665795894e-2f));
    p = V::fma(p, r, V::set1(1.6666665459e-1f));
    p = V::fma(p, r, V::set1(5.0000001201e-1f));
    p = V::fma(p, V::mul(r, r), V::add(r, V::set1(1.0f)));
    const R h = V::round(V::mul(n, V::set1(0.5f)));
    return V::mul(V::mul(p, V::pow2i(h)), V::pow2i(V::sub(n, h)));
  }

  static R tanh(R x) {
    const R ax = V::abs(x);
    const R z = V::mul(x, x);
    R p = V::set1(-5.70498872745e-3f);
    p = V::fma(p, z, V::set1(2.06390887954e-2f));
    p = V::fma(p, z, V::set1(-5.37397155531e-2f));
    p = V::fma(p, z, V::set1(1.33314422036e-1f));
    p = V::fma(p, z, V::set1(-3.33332819422e-1f));
    const R small = V::fma(V::mul(p, z), x, x);
    const R e = exp(V::mul(V::min(V::set1(10.0f), ax), V::set1(2.0f)));
    const R big = V::sub(V::set1(1.0f), V::div(V::set1(2.0f), V::add(e, V::set1(1.0f))));
    return V::select(V::lt(ax, V::set1(0.625f)), small, V::copysign(big, x));
  }

  static R sigmoid(R x) {
    return V::div(V::set1(1.0f), V::add(V::set1(1.0f), exp(V::neg(x))));
  }

  static R erf(R x) {
    const R t = V::min(V::set1(3.925f), V::abs(x));
    const R s = V::mul(t, t);
    R p = V::set1(-5.99104969e-4f);
    p = V::fma(p, s, V::set1(4.99339588e-3f));
    p = V::fma(p, s, V::set1(-2.67667342e-2f));
    p = V::fma(p, s, V::set1(1.12818025e-1f));
    p = V::fma(p, s, V::set1(-3.76124859e-1f));
    p = V::fma(p, s, V::set1(1.28379151e-1f));
    const R small = V::fma(p, t, t);
    R q = V::set1(1.72948930e-5f);
    q = V::fma(q, t, V::set1(-3.83208680e-4f));
    q = V::fma(q, t, V::set1(3.88393435e-3f));
    q = V::fma(q, t, V::set1(-2.42545605e-2f));
    q = V::fma(q, t, V::set1(1.06777847e-1f));
    q = V::fma(q, t, V::set1(6.34846687e-1f));
    q = V::fma(q, t, V::set1(1.28717512e-1f));
    q = V::fma(q, t, t);
    const R big = V::sub(V::set1(1.0f), exp(V::neg(q)));
    return V::copysign(V::select(V::lt(t, V::set1(0.921875f)), small, big), x);
  }

  static R gelu(R x) {
    const R e = erf(V::mul(x, V::set1(0.70710678118654752f)));
    return V::mul(V::mul(V::set1(0.5f), x), V::add(V::set1(1.0f), e));
  }

  static R gelu_tanh(R x) {
    const R c = V::mul(V::set1(0.044715f), x);
    const R inner = V::mul(V::set1(0.7978845608028654f), V::fma(V::mul(c, x), x, x));
    return V::mul(V::mul(V::set1(0.5f), x), V::add(V::set1(1.0f), tanh(inner)));
  }

  static R relu(R x) {
    const R zero = V::set1(0.0f);
    return V::select(V::gt(x, zero), x, zero);
  }
};

// y[i] = f(x[i]) over n elements, two registers per step (y may be x: both loads come
// first).
template <class V, class F>
inline void map1(const float* x, float* y, size_t n, const F& f) {
  constexpr size_t W = V::W;
  size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const typename V::R a = V::load(x + i), b = V::load(x + i + W);
    V::store(y + i, f(a));
    V::store(y + i + W, f(b));
  }
  for (; i + W <= n; i += W) V::store(y + i, f(V::load(x + i)));
  if (i < n) V::store_n(y + i, f(V::load_n(x + i, n - i, 0.0f)), n - i);
}

template <class V, class F>
inline void map2(const float* a, const float* b, float* y, size_t n, const F& f) {
  constexpr size_t W = V::W;
  size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const typename V::R a0 = V::load(a + i), a1 = V::load(a + i + W);
    const typename V::R b0 = V::load(b + i), b1 = V::load(b + i + W);
    V::store(y + i, f(a0, b0));
    V::store(y + i + W, f(a1, b1));
  }
  for (; i + W <= n; i += W) V::store(y + i, f(V::load(a + i), V::load(b + i)));
  if (i < n) V::store_n(y + i, f(V::load_n(a + i, n - i, 1.0f), V::load_n(b + i, n - i, 1.0f)), n - i);
}

template <class V>
struct VecKernelsImpl {
  using R = typename V::R;
  using M = VecMath<V>;

  static void unary(UnaryOp op, const float* x, float* y, size_t n) {
    switch (op) {
      case UnaryOp::kExp: map1<V>(x, y, n, [](R v) { return M::exp(v); }); break;
      case UnaryOp::kTanh: map1<V>(x, y, n, [](R v) { return M::tanh(v); }); break;
      case UnaryOp::kSigmoid: map1<V>(x, y, n, [](R v) { return M::sigmoid(v); }); break;
      case UnaryOp::kErf: map1<V>(x, y, n, [](R v) { return M::erf(v); }); break;
      case UnaryOp::kGelu: map1<V>(x, y, n, [](R v) { return M::gelu(v); }); break;
      case UnaryOp::kGeluTanh: map1<V>(x, y, n, [](R v) { return M::gelu_tanh(v); }); break;
      case UnaryOp::kRelu: map1<V>(x, y, n, [](R v) { return M::relu(v); }); break;
      case UnaryOp::kAbs: map1<V>(x, y, n, [](R v) { return V::abs(v); }); break;
      case UnaryOp::kNeg: map1<V>(x, y, n, [](R v) { return V::neg(v); }); break;
      case UnaryOp::kSqrt: map1<V>(x, y, n, [](R v) { return V::sqrt(v); }); break;
      case UnaryOp::kSquare: map1<V>(x, y, n, [](R v) { return V::mul(v, v); }); break;
      case UnaryOp::kReciprocal:
        map1<V>(x, y, n, [](R v) { return V::div(V::set1(1.0f), v); });
        break;
    }
  }

  // The formulas of the unfused ONNX kernels (elementwise_unary.cpp, clip.cpp), NaN
  // handling included: Clip passes NaN through, HardSigmoid maps it to 1 (fmin/fmax).
  static void activation(const Act& act, float* x, size_t n) {
    const R zero = V::set1(0.0f), one = V::set1(1.0f);
    const R p0 = V::set1(act.p0), p1 = V::set1(act.p1);
    switch (act.kind) {
      case ActKind::kNone: break;
      case ActKind::kRelu: map1<V>(x, x, n, [](R v) { return M::relu(v); }); break;
      case ActKind::kTanh: map1<V>(x, x, n, [](R v) { return M::tanh(v); }); break;
      case ActKind::kSigmoid: map1<V>(x, x, n, [](R v) { return M::sigmoid(v); }); break;
      case ActKind::kLeakyRelu:
        map1<V>(x, x, n, [&](R v) { return V::select(V::lt(v, zero), V::mul(v, p0), v); });
        break;
      case ActKind::kClip:
        map1<V>(x, x, n, [&](R v) {
          const R lo = V::select(V::lt(v, p0), p0, v);
          return V::select(V::gt(lo, p1), p1, lo);
        });
        break;
      case ActKind::kHardSigmoid:
        map1<V>(x, x, n, [&](R v) { return V::max(V::min(V::fma(p0, v, p1), one), zero); });
        break;
      case ActKind::kHardSwish:
        map1<V>(x, x, n, [&](R v) {
          const R g = V::fma(v, V::set1(1.0f / 6.0f), V::set1(0.5f));
          return V::mul(v, V::max(V::min(g, one), zero));
        });
        break;
      case ActKind::kGelu: map1<V>(x, x, n, [](R v) { return M::gelu(v); }); break;
      case ActKind::kGeluTanh: map1<V>(x, x, n, [](R v) { return M::gelu_tanh(v); }); break;
    }
  }

  template <class F>
  static void with_binary(BinaryOp op, const F& f) {
    switch (op) {
      case BinaryOp::kAdd: f([](R a, R b) { return V::add(a, b); }); break;
      case BinaryOp::kSub: f([](R a, R b) { return V::sub(a, b); }); break;
      case BinaryOp::kMul: f([](R a, R b) { return V::mul(a, b); }); break;
      case BinaryOp::kDiv: f([](R a, R b) { return V::div(a, b); }); break;
      case BinaryOp::kMax:
        f([](R a, R b) { return V::max_nan(a, b); });
        break;
      case BinaryOp::kMin:
        f([](R a, R b) { return V::min_nan(a, b); });
        break;
    }
  }

  static void binary(BinaryOp op, const float* a, const float* b, float* y, size_t n) {
    with_binary(op, [&](auto fn) { map2<V>(a, b, y, n, fn); });
  }

  static void binary_scalar(BinaryOp op, const float* a, float b, float* y, size_t n,
                            bool scalar_first) {
    const R vb = V::set1(b);
    with_binary(op, [&](auto fn) {
      if (scalar_first)
        map1<V>(a, y, n, [&](R v) { return fn(vb, v); });
      else
        map1<V>(a, y, n, [&](R v) { return fn(v, vb); });
    });
  }

  static float sum(const float* x, size_t n) {
    constexpr size_t W = V::W;
    R s0 = V::set1(0.0f), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 4 * W <= n; i += 4 * W) {
      s0 = V::add(s0, V::load(x + i));
      s1 = V::add(s1, V::load(x + i + W));
      s2 = V::add(s2, V::load(x + i + 2 * W));
      s3 = V::add(s3, V::load(x + i + 3 * W));
    }
    for (; i + W <= n; i += W) s0 = V::add(s0, V::load(x + i));
    if (i < n) s1 = V::add(s1, V::load_n(x + i, n - i, 0.0f));
    return V::hsum(V::add(V::add(s0, s1), V::add(s2, s3)));
  }

  static float max(const float* x, size_t n) {
    constexpr size_t W = V::W;
    const float ninf = -__builtin_inff();
    R m0 = V::set1(ninf), m1 = m0;
    size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
      m0 = V::max(m0, V::load(x + i));
      m1 = V::max(m1, V::load(x + i + W));
    }
    for (; i + W <= n; i += W) m0 = V::max(m0, V::load(x + i));
    if (i < n) m1 = V::max(m1, V::load_n(x + i, n - i, ninf));
    return V::hmax(V::max(m0, m1));
  }

  static void scale_shift(const float* x, float s, float t, float* y, size_t n) {
    const R vs = V::set1(s), vt = V::set1(t);
    map1<V>(x, y, n, [&](R v) { return V::fma(v, vs, vt); });
  }

  static void softmax_row(const float* x, float* y, size_t n, bool log) {
    constexpr size_t W = V::W;
    float mx = max(x, n);
    if (mx == -__builtin_inff()) mx = 0.0f;  // a row of -inf: avoid (-inf) - (-inf)
    const R vm = V::set1(mx);
    R acc0 = V::set1(0.0f), acc1 = acc0;
    size_t i = 0;
    // Pass 2: y = exp(x - max) (kept for Softmax), summed in two register chains.
    for (; i + 2 * W <= n; i += 2 * W) {
      const R e0 = M::exp(V::sub(V::load(x + i), vm));
      const R e1 = M::exp(V::sub(V::load(x + i + W), vm));
      if (!log) {
        V::store(y + i, e0);
        V::store(y + i + W, e1);
      }
      acc0 = V::add(acc0, e0);
      acc1 = V::add(acc1, e1);
    }
    for (; i + W <= n; i += W) {
      const R e = M::exp(V::sub(V::load(x + i), vm));
      if (!log) V::store(y + i, e);
      acc0 = V::add(acc0, e);
    }
    if (i < n) {
      // Padding lanes read -inf, whose exponential is exactly 0.
      const R e = M::exp(V::sub(V::load_n(x + i, n - i, -__builtin_inff()), vm));
      if (!log) V::store_n(y + i, e, n - i);
      acc1 = V::add(acc1, e);
    }
    const float s = V::hsum(V::add(acc0, acc1));
    if (log) {
      // y = (x - max) - log(sum)
      const R ls = V::set1(__builtin_logf(s));
      map1<V>(x, y, n, [&](R v) { return V::sub(V::sub(v, vm), ls); });
    } else {
      const R inv = V::set1(1.0f / s);
      map1<V>(y, y, n, [&](R v) { return V::mul(v, inv); });
    }
  }

  static void layernorm_row(const float* x, float* y, size_t n, const float* gamma,
                            const float* beta, float eps, float* mean_out, float* inv_std_out) {
    constexpr size_t W = V::W;
    const float mean = sum(x, n) / static_cast<float>(n);
    const R vm = V::set1(mean);
    R q0 = V::set1(0.0f), q1 = q0;
    size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
      const R d0 = V::sub(V::load(x + i), vm), d1 = V::sub(V::load(x + i + W), vm);
      q0 = V::fma(d0, d0, q0);
      q1 = V::fma(d1, d1, q1);
    }
    for (; i + W <= n; i += W) {
      const R d = V::sub(V::load(x + i), vm);
      q0 = V::fma(d, d, q0);
    }
    if (i < n) {
      // Padding lanes read the mean, so they add nothing.
      const R d = V::sub(V::load_n(x + i, n - i, mean), vm);
      q1 = V::fma(d, d, q1);
    }
    const float var = V::hsum(V::add(q0, q1)) / static_cast<float>(n);
    const float inv = 1.0f / __builtin_sqrtf(var + eps);
    if (mean_out != nullptr) *mean_out = mean;
    if (inv_std_out != nullptr) *inv_std_out = inv;
    const R vi = V::set1(inv);
    // y = (x - mean) * inv * gamma + beta, each of gamma and beta optional.
    if (gamma != nullptr && beta != nullptr) {
      i = 0;
      for (; i + W <= n; i += W)
        V::store(y + i, V::fma(V::mul(V::sub(V::load(x + i), vm), vi), V::load(gamma + i),
                               V::load(beta + i)));
      if (i < n) {
        const size_t r = n - i;
        V::store_n(y + i,
                   V::fma(V::mul(V::sub(V::load_n(x + i, r, 0.0f), vm), vi),
                          V::load_n(gamma + i, r, 0.0f), V::load_n(beta + i, r, 0.0f)),
                   r);
      }
    } else if (gamma != nullptr) {
      map2<V>(x, gamma, y, n, [&](R v, R g) { return V::mul(V::mul(V::sub(v, vm), vi), g); });
    } else if (beta != nullptr) {
      map2<V>(x, beta, y, n, [&](R v, R b) { return V::fma(V::sub(v, vm), vi, b); });
    } else {
      map1<V>(x, y, n, [&](R v) { return V::mul(V::sub(v, vm), vi); });
    }
  }

  static const VecKernels& table() {
    static const VecKernels k{&unary, &activation, &binary, &binary_scalar, &sum,
                              &max,   &scale_shift, &softmax_row, &layernorm_row};
    return k;
  }
};

}  // namespace infer::cpu::simd::detail
