#include <gtest/gtest.h>

#include "infer/infer.hpp"

namespace infer {
namespace {

TEST(Tensor, ZerosHasShapeSizeAndZeroBytes) {
  Tensor t = Tensor::zeros(DataType::kFloat32, {2, 3});
  EXPECT_EQ(t.dtype(), DataType::kFloat32);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.element_count(), 6);
  EXPECT_EQ(t.size_bytes(), 24u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data_as<float>()[i], 0.0f);
}

TEST(Tensor, ScalarAndEmptyShapes) {
  Tensor scalar = Tensor::zeros(DataType::kInt64, {});
  EXPECT_EQ(scalar.element_count(), 1);
  EXPECT_EQ(scalar.size_bytes(), 8u);
  Tensor empty = Tensor::zeros(DataType::kFloat32, {0, 4});
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_EQ(empty.size_bytes(), 0u);
  Tensor none;
  EXPECT_EQ(none.dtype(), DataType::kUndefined);
  EXPECT_EQ(none.element_count(), 0);
  EXPECT_EQ(none.size_bytes(), 0u);
  EXPECT_EQ(none.data(), nullptr);
}

TEST(Tensor, FourBitTypesPackTwoPerByte) {
  EXPECT_EQ(Tensor::zeros(DataType::kInt4, {5}).size_bytes(), 3u);
  EXPECT_EQ(Tensor::zeros(DataType::kUInt4, {2, 2}).size_bytes(), 2u);
}

TEST(Tensor, FromBytesCopiesAndChecksTheSize) {
  const float values[] = {1.5f, -2.0f, 3.25f, 4.0f};
  auto t = Tensor::from_bytes(DataType::kFloat32, {2, 2}, values, sizeof values);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->data_as<float>()[2], 3.25f);
  EXPECT_NE(t->data(), static_cast<const void*>(values));

  auto bad = Tensor::from_bytes(DataType::kFloat32, {2, 3}, values, sizeof values);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "Tensor::from_bytes: 16 bytes given, float32 [2,3] needs 24");

  auto negative = Tensor::from_bytes(DataType::kFloat32, {2, -1}, values, 0);
  ASSERT_FALSE(negative.is_ok());
  EXPECT_EQ(negative.status().message(), "Tensor::from_bytes: dim 1 of [2,-1] is negative");

  auto str = Tensor::from_bytes(DataType::kString, {1}, values, 0);
  ASSERT_FALSE(str.is_ok());
  EXPECT_EQ(str.status().message(),
            "Tensor::from_bytes: dtype string cannot be held in a dense tensor");
}

TEST(Tensor, CopiesShareBytesAndCloneDoesNot) {
  Tensor a = Tensor::zeros(DataType::kInt32, {3});
  Tensor shared = a;
  Tensor deep = a.clone();
  a.mutable_data_as<int32_t>()[1] = 42;
  EXPECT_EQ(shared.data_as<int32_t>()[1], 42);
  EXPECT_EQ(deep.data_as<int32_t>()[1], 0);
  EXPECT_EQ(deep.shape(), a.shape());
  EXPECT_EQ(deep.dtype(), DataType::kInt32);
}

TEST(TensorInfo, ShapeStringShowsSymbolsAndUnknowns) {
  TensorInfo info;
  info.dims = {-1, 1, 8, -1};
  info.dim_params = {"batch", "", "", ""};
  EXPECT_EQ(info.shape_string(), "[batch,1,8,?]");
  info.dims = {};
  info.dim_params = {};
  EXPECT_EQ(info.shape_string(), "[]");
  info.rank_known = false;
  EXPECT_EQ(info.shape_string(), "(any shape)");
}

}  // namespace
}  // namespace infer
