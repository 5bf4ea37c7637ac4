// Element type helpers (core/ir/dtype.cpp) against ONNX's TensorProto.DataType table.
#include <gtest/gtest.h>

#include <string>

#include "infer/dtype.hpp"

namespace infer {
namespace {

struct Expected {
  int32_t onnx_number;  // TensorProto.DataType
  const char* name;
  size_t size;
};

// Written from the ONNX specification (onnx.proto), not from dtype.cpp.
constexpr Expected kTable[] = {
    {1, "float32", 4},
    {2, "uint8", 1},
    {3, "int8", 1},
    {4, "uint16", 2},
    {5, "int16", 2},
    {6, "int32", 4},
    {7, "int64", 8},
    {9, "bool", 1},
    {10, "float16", 2},
    {11, "float64", 8},
    {12, "uint32", 4},
    {13, "uint64", 8},
    {14, "complex64", 8},
    {15, "complex128", 16},
    {16, "bfloat16", 2},
    {17, "float8e4m3fn", 1},
    {18, "float8e4m3fnuz", 1},
    {19, "float8e5m2", 1},
    {20, "float8e5m2fnuz", 1},
};

TEST(DType, NumberingIsOnnxs) {
  EXPECT_EQ(static_cast<int32_t>(DataType::kFloat32), 1);
  EXPECT_EQ(static_cast<int32_t>(DataType::kString), 8);
  EXPECT_EQ(static_cast<int32_t>(DataType::kBFloat16), 16);
  EXPECT_EQ(static_cast<int32_t>(DataType::kUInt4), 21);
  EXPECT_EQ(static_cast<int32_t>(DataType::kInt4), 22);
}

TEST(DType, SizesAndNamesMatchTheSpecification) {
  for (const Expected& e : kTable) {
    const auto t = static_cast<DataType>(e.onnx_number);
    SCOPED_TRACE(e.name);
    EXPECT_EQ(dtype_size(t), e.size);
    EXPECT_EQ(dtype_name(t), e.name);
    EXPECT_TRUE(dtype_is_valid(e.onnx_number));
  }
}

TEST(DType, NameRoundTripsForEveryValidType) {
  for (int32_t raw = 1; raw <= 22; ++raw) {
    const auto t = static_cast<DataType>(raw);
    auto back = dtype_from_name(dtype_name(t));
    ASSERT_TRUE(back.has_value()) << raw;
    EXPECT_EQ(*back, t);
  }
}

TEST(DType, AliasesAndUnknownNames) {
  EXPECT_EQ(dtype_from_name("float"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_name("double"), DataType::kFloat64);
  EXPECT_FALSE(dtype_from_name("undefined").has_value());
  EXPECT_FALSE(dtype_from_name("float128").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
}

TEST(DType, ValidityBounds) {
  EXPECT_FALSE(dtype_is_valid(0));
  EXPECT_FALSE(dtype_is_valid(-1));
  EXPECT_FALSE(dtype_is_valid(23));
  EXPECT_TRUE(dtype_is_valid(21));
  EXPECT_TRUE(dtype_is_valid(22));
  EXPECT_EQ(dtype_name(static_cast<DataType>(99)), "invalid");
  EXPECT_EQ(dtype_size(static_cast<DataType>(99)), 0u);
}

TEST(DType, StringAndFourBitTypesHaveNoElementSize) {
  EXPECT_EQ(dtype_size(DataType::kString), 0u);
  EXPECT_EQ(dtype_size(DataType::kInt4), 0u);
  EXPECT_EQ(dtype_size(DataType::kUInt4), 0u);
  EXPECT_EQ(dtype_name(DataType::kInt4), "int4");
  EXPECT_EQ(dtype_name(DataType::kUInt4), "uint4");
}

TEST(DType, StorageBytesPacksFourBitTypesTwoPerByte) {
  // ceil(count / 2) bytes.
  EXPECT_EQ(storage_bytes(DataType::kInt4, 1), 1u);
  EXPECT_EQ(storage_bytes(DataType::kInt4, 2), 1u);
  EXPECT_EQ(storage_bytes(DataType::kInt4, 3), 2u);
  EXPECT_EQ(storage_bytes(DataType::kUInt4, 7), 4u);
  EXPECT_EQ(storage_bytes(DataType::kUInt4, 8), 4u);
  EXPECT_EQ(storage_bytes(DataType::kInt4, 0), 0u);
}

TEST(DType, StorageBytesOfOrdinaryTypes) {
  EXPECT_EQ(storage_bytes(DataType::kFloat32, 6), 24u);
  EXPECT_EQ(storage_bytes(DataType::kFloat16, 5), 10u);
  EXPECT_EQ(storage_bytes(DataType::kComplex128, 3), 48u);
  EXPECT_EQ(storage_bytes(DataType::kBool, 9), 9u);
  EXPECT_EQ(storage_bytes(DataType::kInt64, 0), 0u);
  EXPECT_EQ(storage_bytes(DataType::kInt64, -4), 0u);
}

}  // namespace
}  // namespace infer
