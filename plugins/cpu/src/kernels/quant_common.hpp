// What the quantized ops share: reading scales and zero points, rounding half to even
// with saturation, and the integer matrix product they reduce to.
//
// Integer accumulators wrap modulo 2^32 like ONNX Runtime's int32 accumulation, but the
// sums are done in uint32_t so that a (pathological) overflow is defined behaviour.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::quant {

constexpr uint32_t kU8 = dtype_bit(INFER_DTYPE_UINT8);
constexpr uint32_t kI8 = dtype_bit(INFER_DTYPE_INT8);
constexpr uint32_t kU16 = dtype_bit(INFER_DTYPE_UINT16);
constexpr uint32_t kI16 = dtype_bit(INFER_DTYPE_INT16);
// 8-bit storage of the integer ops (MatMulInteger, ConvInteger, QLinear*).
constexpr uint32_t k8Bit = kU8 | kI8;
// Storage types QuantizeLinear writes and DequantizeLinear reads (16-bit ones from 21).
constexpr uint32_t kQuantized = kU8 | kI8 | kU16 | kI16;
// Scale types (float16/bfloat16 from opset 19).
constexpr uint32_t kScale = dtypes::kF32 | dtypes::kF16 | dtypes::kBF16;

// Rounds v half to even and saturates it to Q's range after adding the zero point. NaN
// quantizes to the zero point. F is float, or double for int32 inputs.
template <typename Q, typename F>
inline Q saturate_round(F v, int32_t zero_point) {
  const F r = std::isnan(v) ? F(0) : std::nearbyint(v);
  const F lo = static_cast<F>(std::numeric_limits<Q>::min());
  const F hi = static_cast<F>(std::numeric_limits<Q>::max());
  const F q = std::min(hi, std::max(lo, r + static_cast<F>(zero_point)));
  return static_cast<Q>(q);
}

// Per-tensor 8-bit (de)quantization of float32 runs on the SIMD library (simd/quantize.hpp),
// bit-identical to saturate_round<Q>(x / scale, zp) and float(x - zp) * scale.
void quantize_8bit(const float* x, size_t n, float scale, int32_t zp, uint8_t* y);
void quantize_8bit(const float* x, size_t n, float scale, int32_t zp, int8_t* y);
void dequantize_8bit(const uint8_t* x, size_t n, float scale, int32_t zp, float* y);
void dequantize_8bit(const int8_t* x, size_t n, float scale, int32_t zp, float* y);

// ---- qgemm's operand forms (simd/qgemm.hpp) -----------------------------------------

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

// An 8-bit weight matrix as qgemm's A: int8, packed for the plugin's ISA. uint8 storage
// is shifted to int8 by subtracting 128, and `zero_shift` (128) must then be subtracted
// from its zero points too; int8 storage has zero_shift 0.
struct QWeights {
  std::unique_ptr<void, AlignedFree> packed;
  int64_t M = 0, K = 0;
  int32_t zero_shift = 0;
};
// Packs A(m, k) = w[m * rs + k * cs] (uint8 or int8 storage `dtype`), m < M, k < K.
QWeights pack_qweights(const void* w, infer_dtype dtype, int64_t M, int64_t K, int64_t rs,
                       int64_t cs);

// 8-bit activations as qgemm's B: uint8. int8 storage is flipped to uint8 (+128, XOR
// 0x80) into `storage`, and `zero_shift` (128) must be added to its zero point.
struct QActivations {
  const uint8_t* data = nullptr;
  int32_t zero_shift = 0;
  std::vector<uint8_t> storage;
};
QActivations as_uint8(const Tensor& t);

// How an op uses a scale: it divides by it (QuantizeLinear's y_scale, the output scale of
// QLinearConv / QLinearMatMul) or multiplies by it (the input scales).
enum class ScaleUse { kDivisor, kFactor };

// The values of a float32/float16/bfloat16 scale tensor as float. Every value must be
// finite and not negative, and a divisor also non-zero: otherwise an error naming the
// input, the index and the value. (A factor of 0 is allowed: DynamicQuantizeLinear gives
// an all-zero tensor the scale 0, and dequantizing it must still give zeros.)
Result<std::vector<float>> read_scales(const Tensor& t, const char* what, ScaleUse use);
// The values of an integer tensor (8/16/32-bit) as int32.
Result<std::vector<int32_t>> read_ints(const Tensor& t, const char* what);

// Spreads a quantization parameter of a matrix operand (promoted to at least 2-D:
// [...batch, rows, cols]) over that operand's batch entries and the dim it varies along:
// vary_dim = -2 for per-row (A of a product: one value per batch entry and row), -1 for
// per-column (B: one value per batch entry and column). The parameter may be a single
// value, a 1-D tensor as long as that dim, or the operand's shape with the other matrix
// dim 1. `what` names the parameter in errors.
template <typename V>
Result<std::vector<V>> expand_matrix_param(const std::vector<V>& vals, const Dims& param_dims,
                                           const Dims& operand, int vary_dim, const char* what) {
  const size_t r = operand.size();
  const int64_t vary = operand[r - (vary_dim == -2 ? 2 : 1)];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= operand[i];
  Dims own = operand;
  own[r - (vary_dim == -2 ? 1 : 2)] = 1;
  std::vector<V> out(static_cast<size_t>(batch * vary));
  if (vals.size() == 1) {
    std::fill(out.begin(), out.end(), vals[0]);
  } else if (param_dims.size() == 1 && param_dims[0] == vary) {
    for (int64_t b = 0; b < batch; ++b) std::copy(vals.begin(), vals.end(), out.begin() + b * vary);
  } else if (param_dims == own) {
    out = vals;
  } else {
    return invalid(what, " has shape ", dims_str(param_dims), ", expected a scalar, [", vary,
                   "] or ", dims_str(own));
  }
  return out;
}

// Converts an 8-bit operand to int32 with its zero point subtracted. `zp_of(i)` gives
// the zero point of element i.
template <typename Z>
Status to_int32(const Tensor& t, std::vector<int32_t>* out, Z&& zp_of) {
  const int64_t n = t.numel();
  out->resize(static_cast<size_t>(n));
  if (t.dtype == INFER_DTYPE_UINT8) {
    const uint8_t* p = t.as<uint8_t>();
    for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = int32_t{p[i]} - zp_of(i);
  } else if (t.dtype == INFER_DTYPE_INT8) {
    const int8_t* p = t.as<int8_t>();
    for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = int32_t{p[i]} - zp_of(i);
  } else {
    return invalid("expected uint8 or int8, got ", dtype_name(t.dtype));
  }
  return Status::ok();
}

// acc[M, N] += A[M, K] * B[K, N] on zero-point-free int32 operands, wrapping modulo 2^32.
// Blocked so that four rows of acc, kColumns wide, stay in L1 while k runs over B's rows
// (each row of B read once per four rows of A): a plain i-k-j loop streams whole rows of
// acc and B through the cache for every multiply-add, and im2col rows of large images
// are megabytes long.
inline void int_gemm(int64_t M, int64_t N, int64_t K, const int32_t* A, int64_t lda,
                     const int32_t* B, int64_t ldb, uint32_t* acc, int64_t ldc) {
  constexpr int64_t kRows = 4, kColumns = 512;
  for (int64_t i0 = 0; i0 < M; i0 += kRows) {
    const int64_t rows = std::min(kRows, M - i0);
    for (int64_t j0 = 0; j0 < N; j0 += kColumns) {
      const int64_t n = std::min(kColumns, N - j0);
      if (rows == kRows) {
        uint32_t* __restrict c0 = acc + i0 * ldc + j0;
        uint32_t* __restrict c1 = c0 + ldc;
        uint32_t* __restrict c2 = c1 + ldc;
        uint32_t* __restrict c3 = c2 + ldc;
        const int32_t* a = A + i0 * lda;
        for (int64_t k = 0; k < K; ++k) {
          const uint32_t a0 = static_cast<uint32_t>(a[k]), a1 = static_cast<uint32_t>(a[lda + k]),
                         a2 = static_cast<uint32_t>(a[2 * lda + k]),
                         a3 = static_cast<uint32_t>(a[3 * lda + k]);
          if ((a0 | a1 | a2 | a3) == 0) continue;
          const int32_t* __restrict b = B + k * ldb + j0;
          for (int64_t j = 0; j < n; ++j) {
            const uint32_t v = static_cast<uint32_t>(b[j]);
            c0[j] += a0 * v;
            c1[j] += a1 * v;
            c2[j] += a2 * v;
            c3[j] += a3 * v;
          }
        }
        continue;
      }
      for (int64_t i = i0; i < i0 + rows; ++i) {
        uint32_t* __restrict c = acc + i * ldc + j0;
        for (int64_t k = 0; k < K; ++k) {
          const uint32_t a = static_cast<uint32_t>(A[i * lda + k]);
          if (a == 0) continue;
          const int32_t* __restrict b = B + k * ldb + j0;
          for (int64_t j = 0; j < n; ++j) c[j] += a * static_cast<uint32_t>(b[j]);
        }
      }
    }
  }
}

}  // namespace infer::cpu::quant
