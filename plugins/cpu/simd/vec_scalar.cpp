// The portable variant of the vectorized elementwise kernels: vec_impl.hpp over one
// float per "register". It runs the same approximations as the SIMD variants (without
// fused multiply-adds, which the baseline x86-64 lacks), so every ISA is held to the
// same accuracy bounds.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "vec_impl.hpp"

namespace infer::cpu::simd::detail {
namespace {

struct ScalarV {
  using R = float;
  using M = bool;
  static constexpr size_t W = 1;
  static R load(const float* p) { return *p; }
  static void store(float* p, R v) { *p = v; }
  static R load_n(const float* p, size_t n, float fill) { return n > 0 ? *p : fill; }
  static void store_n(float* p, R v, size_t n) {
    if (n > 0) *p = v;
  }
  static R set1(float v) { return v; }
  static R add(R a, R b) { return a + b; }
  static R sub(R a, R b) { return a - b; }
  static R mul(R a, R b) { return a * b; }
  static R div(R a, R b) { return a / b; }
  static R fma(R a, R b, R c) { return a * b + c; }
  static R min(R a, R b) { return a < b ? a : b; }
  static R max(R a, R b) { return a > b ? a : b; }
  // numpy's maximum/minimum (BinaryOp kMax/kMin): NaN when either is NaN, else the
  // larger/smaller, the first operand on a tie (so max(-0, +0) is -0).
  static R max_nan(R a, R b) { return a != a || b != b ? a + b : (a < b ? b : a); }
  static R min_nan(R a, R b) { return a != a || b != b ? a + b : (b < a ? b : a); }
  static R abs(R a) { return std::fabs(a); }
  static R neg(R a) { return -a; }
  static R sqrt(R a) { return std::sqrt(a); }
  static R round(R a) { return std::nearbyint(a); }
  static R pow2i(R n) {
    if (!(n == n)) return n;  // NaN in, NaN out (the cast below needs a number)
    const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  static M lt(R a, R b) { return a < b; }
  static M gt(R a, R b) { return a > b; }
  static R select(M m, R a, R b) { return m ? a : b; }
  static R copysign(R mag, R sgn) { return std::copysign(mag, sgn); }
  static float hsum(R a) { return a; }
  static float hmax(R a) { return a; }
};

}  // namespace

const VecKernels& vec_kernels_scalar() { return VecKernelsImpl<ScalarV>::table(); }

}  // namespace infer::cpu::simd::detail
