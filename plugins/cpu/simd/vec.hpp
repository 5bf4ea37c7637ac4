// Vectorized float32 elementwise math and row reductions: the building blocks of the
// CPU plugin's elementwise, Softmax, LayerNormalization, Gelu, attention and pooling
// kernels. Every routine takes the Isa to run (a variant per ISA, the scalar one always
// present) and works on contiguous runs of any length (tails are masked, never read or
// written past n). Outputs may alias inputs exactly (y == x), never partially.
//
// Accuracy of the transcendental functions, measured against std:: in double over dense
// sweeps (tests/plugins/cpu/simd/vec_test.cpp prints the measured figures and asserts
// the bounds in brackets for every ISA; scalar, AVX2 and AVX-512 measure alike):
//   exp       : max relative error 1.18e-7 [2.5e-7] on [-87, 88.5] (about 1 ulp); exact 0
//               at -inf, inf from 88.73 up, denormal results within 1.1e-45 absolute.
//   tanh      : max relative error 1.41e-7 [3e-7] on [-10, 10]; exactly +-1 beyond 9.01.
//   sigmoid   : max relative error 1.88e-7 [3e-7] on [-86, 30].
//   erf       : max relative error 8.4e-8 [2.5e-7] where |erf| >= 0.5, max absolute error
//               2.3e-8 [1e-7] below; relative 8.2e-8 on [-1e-3, 1e-3].
//   gelu      : max relative error 1.31e-7 [3e-7] for x >= 0, 1.34e-6 [2e-6] on [-2, 0]
//               and absolute 8.3e-8 [2e-7] below -2 (1 + erf(x / sqrt 2) cancels for
//               x < 0: the error is erf's ulp near -1, as in the unfused decomposition).
//   gelu_tanh : 1.39e-7 [3e-7] for x >= 0, 1.05e-6 [2e-6] on [-2, 0], absolute 7.7e-8
//               [5e-7] below -2.
// The plugin's conformance tolerances (rtol 1e-3-ish) are far above these.
#pragma once

#include <cstddef>

#include "isa.hpp"

namespace infer::cpu::simd {

enum class UnaryOp {
  kExp,
  kTanh,
  kSigmoid,
  kErf,
  kGelu,      // 0.5 x (1 + erf(x / sqrt 2))
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kRelu,      // x > 0 ? x : 0 (NaN gives 0, as the ONNX kernel's comparison does)
  kAbs,
  kNeg,
  kSqrt,
  kSquare,
  kReciprocal,
};

// kMax and kMin are numpy's maximum and minimum: NaN when either operand is NaN, else the
// larger (smaller) one, the first operand on a tie (max(-0, +0) is -0), as the ONNX
// Max/Min kernels compute them.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin };

// y[i] = op(x[i]).
void vec_unary(Isa isa, UnaryOp op, const float* x, float* y, size_t n);

// y[i] = a[i] op b[i].
void vec_binary(Isa isa, BinaryOp op, const float* a, const float* b, float* y, size_t n);
// y[i] = a[i] op b (scalar_first = false) or b op a[i] (scalar_first = true): the
// broadcast of one value over a run (a per-channel bias over an NCHW plane, a scalar).
void vec_binary_scalar(Isa isa, BinaryOp op, const float* a, float b, float* y, size_t n,
                       bool scalar_first);

// Sum and maximum of x[0..n) (n may be 0: 0 and -inf). The sum accumulates in several
// float lanes, so its rounding differs from a sequential loop's by a few ulp.
float vec_sum(Isa isa, const float* x, size_t n);
float vec_max(Isa isa, const float* x, size_t n);

// y[i] = x[i] * s + t (y may be x): the scale-and-shift of average pooling and the
// affine steps of normalizations.
void vec_scale_shift(Isa isa, const float* x, float s, float t, float* y, size_t n);

}  // namespace infer::cpu::simd
