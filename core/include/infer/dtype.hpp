// Element types of tensors, shared by the IR and the public API. The numbering is
// ONNX's TensorProto.DataType (and the plugin ABI's infer_dtype), so values read from a
// model or handed to a plugin need no translation table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace infer {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
};

// Bytes per element; 0 for string and for the 4-bit types (see storage_bytes).
size_t dtype_size(DataType t);
// Bytes needed to store `count` elements (4-bit types pack two per byte).
size_t storage_bytes(DataType t, int64_t count);
// ONNX-style lower-case name: "float32", "int64", "bfloat16", "int4"...
std::string_view dtype_name(DataType t);
std::optional<DataType> dtype_from_name(std::string_view name);
// True for the dtypes ONNX defines (1..22), string included: callers decide what they
// accept.
bool dtype_is_valid(int32_t raw);

}  // namespace infer
