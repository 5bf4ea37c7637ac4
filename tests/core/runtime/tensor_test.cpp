#include <gtest/gtest.h>

#include <memory>
#include <vector>

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

TEST(Tensor, BorrowReadsInPlaceAndKeepsTheOwnerAlive) {
  auto owner =
      std::make_shared<std::vector<float>>(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  std::weak_ptr<std::vector<float>> watch = owner;
  const float* bytes = owner->data();
  auto t = Tensor::borrow(DataType::kFloat32, {2, 3}, bytes, 6 * sizeof(float), owner);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  owner.reset();
  EXPECT_FALSE(watch.expired());  // the tensor holds it
  EXPECT_TRUE(t->borrowed());
  EXPECT_EQ(t->data(), static_cast<const void*>(bytes));
  EXPECT_EQ(t->element_count(), 6);
  EXPECT_EQ(t->size_bytes(), 24u);
  EXPECT_EQ(t->data_as<float>()[4], 5.0f);
  {
    Tensor copy = *t;  // copies share the borrowed bytes
    EXPECT_EQ(copy.data(), static_cast<const void*>(bytes));
    Tensor deep = t->clone();
    EXPECT_NE(deep.data(), static_cast<const void*>(bytes));
    EXPECT_FALSE(deep.borrowed());
    EXPECT_EQ(deep.data_as<float>()[5], 6.0f);
    t = Tensor();
  }
  EXPECT_TRUE(watch.expired());  // the last tensor copy released it
}

TEST(Tensor, BorrowChecksLikeFromBytes) {
  const int32_t values[] = {1, 2, 3};
  auto bad = Tensor::borrow(DataType::kInt32, {2, 2}, values, sizeof values, nullptr);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), "Tensor::borrow: 12 bytes given, int32 [2,2] needs 16");
  auto null = Tensor::borrow(DataType::kInt32, {3}, nullptr, sizeof values, nullptr);
  ASSERT_FALSE(null.is_ok());
  EXPECT_EQ(null.status().message(), "Tensor::borrow: data is null");
  auto str = Tensor::borrow(DataType::kString, {1}, values, 0, nullptr);
  ASSERT_FALSE(str.is_ok());
  EXPECT_EQ(str.status().message(),
            "Tensor::borrow: dtype string cannot be held in a dense tensor");
  auto empty = Tensor::borrow(DataType::kInt32, {0, 3}, nullptr, 0, nullptr);
  ASSERT_TRUE(empty.is_ok()) << empty.status().message();
  EXPECT_EQ(empty->element_count(), 0);
  EXPECT_FALSE(empty->borrowed());
}

TEST(Tensor, KeepAliveOutlivesTheTensor) {
  std::shared_ptr<const void> keep;
  const void* where = nullptr;
  {
    Tensor t = Tensor::zeros(DataType::kFloat32, {4});
    t.mutable_data_as<float>()[3] = 7.5f;
    keep = t.keep_alive();
    where = t.data();
  }
  EXPECT_EQ(keep.get(), where);
  EXPECT_EQ(static_cast<const float*>(keep.get())[3], 7.5f);
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
