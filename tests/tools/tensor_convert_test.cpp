// Outputs numpy has no dtype for are widened losslessly before they are saved, and
// HostArray <-> Tensor copies keep dtype, shape and bytes.
#include <gtest/gtest.h>

#include <cstring>

#include "tensor_convert.hpp"

namespace infer::cli {
namespace {

TEST(ToNpyCompatible, NumpyDtypesPassThrough) {
  const HostArray a{DataType::kFloat16, {2}, {0x00, 0x3C, 0x00, 0xC0}};
  Result<HostArray> b = to_npy_compatible(a, "output 'y'");
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->dtype, DataType::kFloat16);
  EXPECT_EQ(b->bytes, a.bytes);
}

TEST(ToNpyCompatible, BFloat16WidensToFloat32) {
  // 0x3F80 = 1.0, 0xC040 = -3.0, 0x4049 = 3.140625.
  const HostArray a{DataType::kBFloat16, {3}, {0x80, 0x3F, 0x40, 0xC0, 0x49, 0x40}};
  Result<HostArray> b = to_npy_compatible(a, "output 'y'");
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->dtype, DataType::kFloat32);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{3}));
  float values[3];
  ASSERT_EQ(b->bytes.size(), sizeof values);
  std::memcpy(values, b->bytes.data(), sizeof values);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], -3.0f);
  EXPECT_EQ(values[2], 3.140625f);
}

TEST(ToNpyCompatible, Int4UnpacksLowNibbleFirst) {
  // Bytes 0x7F, 0x08: nibbles 0xF, 0x7, 0x8 (three elements). As int4: -1, 7, -8.
  const HostArray s{DataType::kInt4, {3}, {0x7F, 0x08}};
  Result<HostArray> signed_out = to_npy_compatible(s, "output 'q'");
  ASSERT_TRUE(signed_out.is_ok());
  EXPECT_EQ(signed_out->dtype, DataType::kInt8);
  EXPECT_EQ(signed_out->bytes, (std::vector<uint8_t>{0xFF, 0x07, 0xF8}));
  const HostArray u{DataType::kUInt4, {3}, {0x7F, 0x08}};
  Result<HostArray> unsigned_out = to_npy_compatible(u, "output 'q'");
  ASSERT_TRUE(unsigned_out.is_ok());
  EXPECT_EQ(unsigned_out->dtype, DataType::kUInt8);
  EXPECT_EQ(unsigned_out->bytes, (std::vector<uint8_t>{15, 7, 8}));
}

TEST(ToNpyCompatible, Float8IsRefusedByName) {
  const HostArray a{DataType::kFloat8E4M3FN, {1}, {0}};
  Result<HostArray> b = to_npy_compatible(a, "output 'f8'");
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().message(), "output 'f8' has dtype float8e4m3fn, which numpy cannot hold in a .npy file");
}

TEST(TensorConvert, RoundTripsThroughTensor) {
  const HostArray a{DataType::kInt16, {2, 1}, {1, 0, 0xFF, 0xFF}};
  Result<Tensor> t = to_tensor(a);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->dtype(), DataType::kInt16);
  EXPECT_EQ(t->shape(), a.shape);
  const HostArray b = to_host_array(*t);
  EXPECT_EQ(b.dtype, a.dtype);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.bytes, a.bytes);
  // A byte count that does not fit the shape is the runtime's to refuse.
  const HostArray bad{DataType::kInt16, {3}, {1, 0}};
  EXPECT_FALSE(to_tensor(bad).is_ok());
}

}  // namespace
}  // namespace infer::cli
