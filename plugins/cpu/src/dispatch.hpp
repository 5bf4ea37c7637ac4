// Dtype dispatch for kernels: turns a runtime infer_dtype into a C++ element type once,
// so a kernel is written as one template instead of one switch per op.
//
//   return dispatch(t.dtype, dtypes::kAllNum, "X", [&]<typename T>(Tag<T>) -> Status {
//     ... T is float, double, Float16, BFloat16, int8_t ... uint64_t or bool ...
//   });
//
// Float16 and BFloat16 are storage types (16 bits, same layout as ONNX): kernels that do
// arithmetic convert them to float with to_compute()/from_compute(), so half-precision
// inputs are computed in float32 and rounded once on store, as ONNX Runtime does.
#pragma once

#include <cstdint>
#include <type_traits>

#include "half.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace infer::cpu {

struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
struct Tag {
  using type = T;
};

// The type arithmetic happens in: float for the 16-bit floats, else T itself.
template <typename T>
using compute_t =
    std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
inline compute_t<T> to_compute(T v) {
  if constexpr (std::is_same_v<T, Float16>)
    return half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return bfloat16_to_float(v.bits);
  else
    return v;
}
template <typename T>
inline T from_compute(compute_t<T> v) {
  if constexpr (std::is_same_v<T, Float16>)
    return Float16{float_to_half(v)};
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16{float_to_bfloat16(v)};
  else
    return v;
}

template <typename T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                            std::is_same_v<T, BFloat16>;

namespace dtypes {
constexpr uint32_t kF64 = dtype_bit(INFER_DTYPE_FLOAT64);
constexpr uint32_t kF16 = dtype_bit(INFER_DTYPE_FLOAT16);
constexpr uint32_t kBF16 = dtype_bit(INFER_DTYPE_BFLOAT16);
constexpr uint32_t kAllFloat = kF32 | kF64 | kF16 | kBF16;
constexpr uint32_t kSignedInt = dtype_bit(INFER_DTYPE_INT8) | dtype_bit(INFER_DTYPE_INT16) |
                                dtype_bit(INFER_DTYPE_INT32) | dtype_bit(INFER_DTYPE_INT64);
constexpr uint32_t kUnsignedInt = dtype_bit(INFER_DTYPE_UINT8) | dtype_bit(INFER_DTYPE_UINT16) |
                                  dtype_bit(INFER_DTYPE_UINT32) | dtype_bit(INFER_DTYPE_UINT64);
constexpr uint32_t kAllInt = kSignedInt | kUnsignedInt;
// Every numeric dtype (no bool).
constexpr uint32_t kAllNum = kAllFloat | kAllInt;
}  // namespace dtypes

// Calls fn(Tag<T>{}) for the C++ type of `dtype` when `dtype` is in `mask`; otherwise
// returns an error naming `what` and the dtype. fn must return Status.
template <typename F>
Status dispatch(infer_dtype dtype, uint32_t mask, const char* what, F&& fn) {
  if (static_cast<uint32_t>(dtype) >= 32 || (dtype_bit(dtype) & mask) == 0)
    return unsupported(what, ": dtype ", dtype_name(dtype), " is not supported");
  switch (dtype) {
    case INFER_DTYPE_FLOAT32: return fn(Tag<float>{});
    case INFER_DTYPE_FLOAT64: return fn(Tag<double>{});
    case INFER_DTYPE_FLOAT16: return fn(Tag<Float16>{});
    case INFER_DTYPE_BFLOAT16: return fn(Tag<BFloat16>{});
    case INFER_DTYPE_INT8: return fn(Tag<int8_t>{});
    case INFER_DTYPE_INT16: return fn(Tag<int16_t>{});
    case INFER_DTYPE_INT32: return fn(Tag<int32_t>{});
    case INFER_DTYPE_INT64: return fn(Tag<int64_t>{});
    case INFER_DTYPE_UINT8: return fn(Tag<uint8_t>{});
    case INFER_DTYPE_UINT16: return fn(Tag<uint16_t>{});
    case INFER_DTYPE_UINT32: return fn(Tag<uint32_t>{});
    case INFER_DTYPE_UINT64: return fn(Tag<uint64_t>{});
    case INFER_DTYPE_BOOL: return fn(Tag<bool>{});
    default: return unsupported(what, ": dtype ", dtype_name(dtype), " is not supported");
  }
}

}  // namespace infer::cpu
