#include "infer/dtype.hpp"

#include <array>

namespace infer {
namespace {

struct DTypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 23> kTypes = {{
    {DataType::kUndefined, "undefined", 0},
    {DataType::kFloat32, "float32", 4},
    {DataType::kUInt8, "uint8", 1},
    {DataType::kInt8, "int8", 1},
    {DataType::kUInt16, "uint16", 2},
    {DataType::kInt16, "int16", 2},
    {DataType::kInt32, "int32", 4},
    {DataType::kInt64, "int64", 8},
    {DataType::kString, "string", 0},
    {DataType::kBool, "bool", 1},
    {DataType::kFloat16, "float16", 2},
    {DataType::kFloat64, "float64", 8},
    {DataType::kUInt32, "uint32", 4},
    {DataType::kUInt64, "uint64", 8},
    {DataType::kComplex64, "complex64", 8},
    {DataType::kComplex128, "complex128", 16},
    {DataType::kBFloat16, "bfloat16", 2},
    {DataType::kFloat8E4M3FN, "float8e4m3fn", 1},
    {DataType::kFloat8E4M3FNUZ, "float8e4m3fnuz", 1},
    {DataType::kFloat8E5M2, "float8e5m2", 1},
    {DataType::kFloat8E5M2FNUZ, "float8e5m2fnuz", 1},
    {DataType::kUInt4, "uint4", 0},
    {DataType::kInt4, "int4", 0},
}};

}  // namespace

bool dtype_is_valid(int32_t raw) { return raw >= 1 && raw < static_cast<int32_t>(kTypes.size()); }

size_t dtype_size(DataType t) {
  auto i = static_cast<size_t>(t);
  return i < kTypes.size() ? kTypes[i].size : 0;
}

size_t storage_bytes(DataType t, int64_t count) {
  if (count <= 0) return 0;
  if (t == DataType::kInt4 || t == DataType::kUInt4) return static_cast<size_t>((count + 1) / 2);
  return static_cast<size_t>(count) * dtype_size(t);
}

std::string_view dtype_name(DataType t) {
  auto i = static_cast<size_t>(t);
  return i < kTypes.size() ? kTypes[i].name : std::string_view("invalid");
}

std::optional<DataType> dtype_from_name(std::string_view name) {
  for (const auto& info : kTypes)
    if (info.name == name && info.type != DataType::kUndefined) return info.type;
  if (name == "float") return DataType::kFloat32;
  if (name == "double") return DataType::kFloat64;
  return std::nullopt;
}

}  // namespace infer
