// TensorData: owned and borrowed bytes, copies, element counts.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "ir/graph.hpp"

namespace infer::ir {
namespace {

std::vector<uint8_t> float_bytes(std::initializer_list<float> values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

TEST(TensorData, OwnsItsBytes) {
  TensorData t(DataType::kFloat32, {2, 2}, float_bytes({1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(t.dtype(), DataType::kFloat32);
  EXPECT_EQ(t.element_count(), 4);
  EXPECT_EQ(t.size_bytes(), 16u);
  EXPECT_EQ(t.as<float>()[3], 4.f);
}

TEST(TensorData, ScalarHasOneElementAndEmptyHasNone) {
  TensorData scalar(DataType::kInt64, {}, std::vector<uint8_t>(8, 0));
  EXPECT_EQ(scalar.element_count(), 1);
  TensorData empty(DataType::kInt64, {3, 0}, std::vector<uint8_t>{});
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_EQ(empty.size_bytes(), 0u);
}

TEST(TensorData, BorrowedBytesLiveAsLongAsTheKeeper) {
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{5.f, 6.f});
  std::weak_ptr<std::vector<float>> watch = buffer;
  {
    auto t = std::make_shared<TensorData>(DataType::kFloat32, std::vector<int64_t>{2},
                                          buffer->data(), 8, buffer);
    buffer.reset();
    EXPECT_FALSE(watch.expired());  // the tensor keeps it alive
    EXPECT_EQ(t->as<float>()[1], 6.f);
  }
  EXPECT_TRUE(watch.expired());
}

TEST(TensorData, CopyOfOwnedBytesPointsAtItsOwnBuffer) {
  auto original = std::make_unique<TensorData>(DataType::kFloat32, std::vector<int64_t>{2},
                                               float_bytes({7.f, 8.f}));
  TensorData copy(*original);
  EXPECT_NE(copy.data(), original->data());
  original.reset();  // the copy must not read the freed source
  EXPECT_EQ(copy.as<float>()[0], 7.f);
  EXPECT_EQ(copy.as<float>()[1], 8.f);

  TensorData assigned(DataType::kInt8, {}, std::vector<uint8_t>{1});
  assigned = copy;
  EXPECT_EQ(assigned.dtype(), DataType::kFloat32);
  EXPECT_NE(assigned.data(), copy.data());
  EXPECT_EQ(assigned.as<float>()[1], 8.f);
}

TEST(TensorData, CopyOfBorrowedBytesSharesThem) {
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{1.f});
  TensorData t(DataType::kFloat32, {1}, buffer->data(), 4, buffer);
  TensorData copy(t);
  EXPECT_EQ(copy.data(), t.data());
}

TEST(TensorData, MoveKeepsTheBuffer) {
  TensorData t(DataType::kFloat32, {2}, float_bytes({1.f, 2.f}));
  const void* before = t.data();
  TensorData moved(std::move(t));
  EXPECT_EQ(moved.data(), before);
  EXPECT_EQ(moved.as<float>()[1], 2.f);
}

}  // namespace
}  // namespace infer::ir
