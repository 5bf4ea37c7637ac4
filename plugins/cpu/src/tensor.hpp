// Tensors as kernels see them during one execution: dtype, concrete dims and a pointer
// to contiguous row-major data in host memory (NULL only when the tensor is empty).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "infer/plugin_glue.hpp"
#include "status.hpp"

namespace infer::cpu {

using Dims = std::vector<int64_t>;

struct Tensor {
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;
  Dims dims;
  void* data = nullptr;

  int64_t numel() const { return sdk::element_count(dims.data(), dims.size()); }
  size_t bytes() const { return sdk::tensor_bytes(dtype, numel()); }
  size_t rank() const { return dims.size(); }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data);
  }
  template <typename T>
  T* mut() const {
    return static_cast<T*>(data);
  }
};

// "float32", "int64", ... as in ONNX.
using sdk::dtype_name;  // "float32", ...; "dtype(N)" outside the enumeration
// "[2,3,4]"
std::string dims_str(const Dims& dims);
// Bit mask helpers for the kernel table's dtype sets.
constexpr uint32_t dtype_bit(infer_dtype t) { return 1u << static_cast<uint32_t>(t); }

// Named dtype sets used by the kernel table and the checks.
namespace dtypes {
constexpr uint32_t kF32 = dtype_bit(INFER_DTYPE_FLOAT32);
constexpr uint32_t kI32 = dtype_bit(INFER_DTYPE_INT32);
constexpr uint32_t kI64 = dtype_bit(INFER_DTYPE_INT64);
constexpr uint32_t kBool = dtype_bit(INFER_DTYPE_BOOL);
constexpr uint32_t kInts = kI32 | kI64;
constexpr uint32_t kNum = kF32 | kI32 | kI64;
// Every dtype with a fixed element size that Cast handles (no string, complex, 4-bit or
// float8).
constexpr uint32_t kCastable = kF32 | kI32 | kI64 | kBool | dtype_bit(INFER_DTYPE_FLOAT64) |
                               dtype_bit(INFER_DTYPE_FLOAT16) | dtype_bit(INFER_DTYPE_BFLOAT16) |
                               dtype_bit(INFER_DTYPE_INT8) | dtype_bit(INFER_DTYPE_UINT8) |
                               dtype_bit(INFER_DTYPE_INT16) | dtype_bit(INFER_DTYPE_UINT16) |
                               dtype_bit(INFER_DTYPE_UINT32) | dtype_bit(INFER_DTYPE_UINT64);
// Data-movement ops only copy bytes, so any fixed-size type works.
constexpr uint32_t kAny = kCastable;
}  // namespace dtypes

// Resolves a possibly negative axis against `rank`; error names what the axis is for.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");

// Row-major strides of `dims` in elements.
Dims strides_of(const Dims& dims);

// Multidirectional (numpy) broadcast of several shapes; the error lists them.
Result<Dims> broadcast_shapes(const std::vector<const Dims*>& shapes);

// Reads a 1-D (or scalar) int32/int64 tensor as int64 values (shape inputs, axes...).
Result<std::vector<int64_t>> read_int_list(const Tensor& t, const char* what);
// Reads a scalar (any numeric dtype, one element) as double.
Result<double> read_scalar(const Tensor& t, const char* what);

}  // namespace infer::cpu
