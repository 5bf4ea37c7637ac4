// Geometry shared by the windowed ops (Conv, ConvTranspose, pools): the attributes
// kernel_shape, strides, dilations, pads and auto_pad, and the output size they imply
// for concrete input sizes.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../dispatch.hpp"
#include "../node_util.hpp"
#include "../status.hpp"
#include "../tensor.hpp"

namespace infer::cpu {

struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  Dims kernel_shape;  // may be empty (Conv: taken from the weights)
  Dims strides;       // empty: all 1
  Dims dilations;     // empty: all 1
  Dims pads;          // empty: all 0; else begin..., end...
  bool ceil_mode = false;
};

// Reads the attributes; the check function validates them.
WindowAttrs read_window_attrs(const infer_node_view& node);
// Rejects unknown auto_pad values and inconsistent attribute lengths ("Conv auto_pad=X
// not supported", "Conv strides has 3 values, expected 2").
Status check_window_attrs(const infer_node_view& node, const WindowAttrs& a, int64_t spatial_rank);

// Per spatial dim: input, kernel, stride, dilation, pads and output sizes.
struct Window {
  Dims in, kernel, stride, dilation, pad_begin, pad_end, out;
  int64_t rank() const { return static_cast<int64_t>(in.size()); }
};

// Output sizes of a conv/pool window over `in` (ceil_mode applies to pools only; a
// last window starting entirely in the end padding is dropped, as ONNX Runtime and
// PyTorch do).
Result<Window> plan_window(const WindowAttrs& a, const Dims& in, const Dims& kernel);

// The ONNX dtype of a C++ element type as dispatch() names it, so a kernel can skip
// instantiating its loops for types outside its mask:
//   if constexpr (in_mask<T>(kMyTypes)) { ... }
template <typename T>
constexpr infer_dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return INFER_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, double>) return INFER_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<T, Float16>) return INFER_DTYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, BFloat16>) return INFER_DTYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, int8_t>) return INFER_DTYPE_INT8;
  else if constexpr (std::is_same_v<T, int16_t>) return INFER_DTYPE_INT16;
  else if constexpr (std::is_same_v<T, int32_t>) return INFER_DTYPE_INT32;
  else if constexpr (std::is_same_v<T, int64_t>) return INFER_DTYPE_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>) return INFER_DTYPE_UINT8;
  else if constexpr (std::is_same_v<T, uint16_t>) return INFER_DTYPE_UINT16;
  else if constexpr (std::is_same_v<T, uint32_t>) return INFER_DTYPE_UINT32;
  else if constexpr (std::is_same_v<T, uint64_t>) return INFER_DTYPE_UINT64;
  else if constexpr (std::is_same_v<T, bool>) return INFER_DTYPE_BOOL;
  else return INFER_DTYPE_UNDEFINED;
}
template <typename T>
constexpr bool in_mask(uint32_t mask) {
  return (dtype_bit(dtype_of<T>()) & mask) != 0;
}

// Reads a 1-D (or scalar) float16/float32/float64 tensor as doubles (scales, roi...).
Result<std::vector<double>> read_float_list(const Tensor& t, const char* what);

// Element conversions for kernels that compute in double whatever the storage type.
template <typename T>
inline double to_double(T v) {
  return static_cast<double>(to_compute(v));
}
// Floats are rounded to T (16-bit floats through float); integers are rounded to
// nearest and saturated, so an interpolated uint8 image stays in range.
template <typename T>
inline T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    const double r = std::nearbyint(v);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return from_compute<T>(static_cast<compute_t<T>>(v));
  }
}

}  // namespace infer::cpu
