#include "quant_common.hpp"

namespace infer::cpu::quant {

Result<std::vector<float>> read_floats(const Tensor& t, const char* what) {
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

}  // namespace infer::cpu::quant
