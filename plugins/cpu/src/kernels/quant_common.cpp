#include "quant_common.hpp"

#include <cmath>
#include <new>
#include <string>

#include "../host_threads.hpp"
#include "simd/qgemm.hpp"
#include "simd/quantize.hpp"

namespace infer::cpu::quant {

Result<std::vector<float>> read_scales(const Tensor& t, const char* what, ScaleUse use) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  Status st = dispatch(t.dtype, kScale, what, [&]<typename T>(Tag<T>) -> Status {
    if constexpr (is_float_v<T>) {
      const T* p = t.as<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(to_compute(p[i]));
    }
    return Status::ok();
  });
  if (!st.is_ok())
    return invalid(what, " must be float32, float16 or bfloat16, got ", dtype_name(t.dtype));
  for (size_t i = 0; i < out.size(); ++i) {
    const float s = out[i];
    if (std::isfinite(s) && s > 0.0f) continue;
    if (s == 0.0f && use == ScaleUse::kFactor) continue;
    const std::string where = out.size() == 1 ? std::string() : " at index " + std::to_string(i);
    return invalid(what, " is ", s, where, ": a scale must be ",
                   use == ScaleUse::kDivisor ? "positive and finite (the op divides by it)"
                                             : "finite and not negative");
  }
  return out;
}

Result<std::vector<int32_t>> read_ints(const Tensor& t, const char* what) {
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  const uint32_t mask = kQuantized | dtypes::kI32;
  Status st = dispatch(t.dtype, mask, what, [&]<typename T>(Tag<T>) -> Status {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 4) {
      const T* p = t.as<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(p[i]);
    }
    return Status::ok();
  });
  if (!st.is_ok())
    return invalid(what, " must be int8, uint8, int16, uint16 or int32, got ", dtype_name(t.dtype));
  return out;
}

QWeights pack_qweights(const void* w, infer_dtype dtype, int64_t M, int64_t K, int64_t rs,
                       int64_t cs) {
  QWeights q;
  q.M = M;
  q.K = K;
  const int8_t* a = static_cast<const int8_t*>(w);
  std::vector<int8_t> shifted;
  if (dtype == INFER_DTYPE_UINT8) {
    // w - 128 as int8 is w with its top bit flipped; the layout is kept, strides and all.
    const uint8_t* u = static_cast<const uint8_t*>(w);
    const int64_t span = M == 0 || K == 0 ? 0 : (M - 1) * rs + (K - 1) * cs + 1;
    shifted.resize(static_cast<size_t>(span));
    for (int64_t i = 0; i < span; ++i)
      shifted[static_cast<size_t>(i)] = static_cast<int8_t>(u[i] ^ 0x80u);
    a = shifted.data();
    q.zero_shift = 128;
  }
  const simd::Isa isa = kernel_isa();
  const size_t bytes = (simd::qpacked_a_bytes(isa, M, K) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  q.packed.reset(p);
  simd::qpack_a(isa, M, K, a, rs, cs, p);
  return q;
}

QActivations as_uint8(const Tensor& t) {
  QActivations q;
  if (t.dtype == INFER_DTYPE_UINT8) {
    q.data = t.as<uint8_t>();
    return q;
  }
  const uint8_t* p = static_cast<const uint8_t*>(t.data);
  q.storage.resize(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < q.storage.size(); ++i) q.storage[i] = p[i] ^ 0x80u;
  q.data = q.storage.data();
  q.zero_shift = 128;
  return q;
}

void quantize_8bit(const float* x, size_t n, float scale, int32_t zp, uint8_t* y) {
  simd::quantize_u8(kernel_isa(), x, n, scale, zp, y);
}
void quantize_8bit(const float* x, size_t n, float scale, int32_t zp, int8_t* y) {
  simd::quantize_s8(kernel_isa(), x, n, scale, zp, y);
}
void dequantize_8bit(const uint8_t* x, size_t n, float scale, int32_t zp, float* y) {
  simd::dequantize_u8(kernel_isa(), x, n, scale, zp, y);
}
void dequantize_8bit(const int8_t* x, size_t n, float scale, int32_t zp, float* y) {
  simd::dequantize_s8(kernel_isa(), x, n, scale, zp, y);
}

}  // namespace infer::cpu::quant
