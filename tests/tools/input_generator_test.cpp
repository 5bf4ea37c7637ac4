// Generated inputs: the generator matches its published definition, and the same input
// always gets the same bytes.
#include <gtest/gtest.h>

#include <cstring>

#include "half_float.hpp"
#include "input_generator.hpp"

namespace infer::cli {
namespace {

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // The first outputs for seed 1234567 of the reference implementation (Vigna's
  // splitmix64.c), as published with it and in other ports' test suites.
  SplitMix64 rng(1234567);
  EXPECT_EQ(rng.next(), 6457827717110365317ULL);
  EXPECT_EQ(rng.next(), 3203168211198807973ULL);
  EXPECT_EQ(rng.next(), 9817491932198370423ULL);
  EXPECT_EQ(rng.next(), 4593380528125082431ULL);
  EXPECT_EQ(rng.next(), 16408922859458223821ULL);
}

TEST(Fnv1a64, MatchesTheReferenceVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(SplitMix64, FloatsAreInTheUnitInterval) {
  SplitMix64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const float f = rng.next_float();
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    const double d = rng.next_double();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
  }
}

TEST(GenerateInput, IsDeterministic) {
  Result<HostArray> a = generate_input("image", DataType::kFloat32, {8, 1, 8, 8});
  Result<HostArray> b = generate_input("image", DataType::kFloat32, {8, 1, 8, 8});
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_EQ(a->bytes.size(), 8u * 64 * 4);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{8, 1, 8, 8}));
  // Another name or seed gives other values.
  Result<HostArray> other = generate_input("mask", DataType::kFloat32, {8, 1, 8, 8});
  EXPECT_NE(a->bytes, other->bytes);
  Result<HostArray> reseeded = generate_input("image", DataType::kFloat32, {8, 1, 8, 8}, 99);
  EXPECT_NE(a->bytes, reseeded->bytes);
}

TEST(GenerateInput, FirstValuesFollowTheSeed) {
  // The generator is SplitMix64 seeded with kInputSeed ^ fnv1a64(name); a float takes
  // the top 24 bits of one output.
  Result<HostArray> a = generate_input("x", DataType::kFloat32, {2});
  ASSERT_TRUE(a.is_ok());
  SplitMix64 rng(kInputSeed ^ fnv1a64("x"));
  float values[2];
  std::memcpy(values, a->bytes.data(), sizeof values);
  EXPECT_EQ(values[0], static_cast<float>(rng.next() >> 40) / 16777216.0f);
  EXPECT_EQ(values[1], static_cast<float>(rng.next() >> 40) / 16777216.0f);
}

template <typename T>
void expect_small_ints(DataType dtype) {
  Result<HostArray> a = generate_input("ids", dtype, {100});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->bytes.size(), 100 * sizeof(T));
  bool varied = false;
  T first{};
  std::memcpy(&first, a->bytes.data(), sizeof(T));
  for (int i = 0; i < 100; ++i) {
    T value{};
    std::memcpy(&value, a->bytes.data() + i * sizeof(T), sizeof(T));
    EXPECT_GE(value, T{0});
    EXPECT_LT(value, T{10});
    varied = varied || value != first;
  }
  EXPECT_TRUE(varied);
}

TEST(GenerateInput, IntegersAreSmall) {
  expect_small_ints<int8_t>(DataType::kInt8);
  expect_small_ints<int16_t>(DataType::kInt16);
  expect_small_ints<int32_t>(DataType::kInt32);
  expect_small_ints<int64_t>(DataType::kInt64);
  expect_small_ints<uint8_t>(DataType::kUInt8);
  expect_small_ints<uint16_t>(DataType::kUInt16);
  expect_small_ints<uint32_t>(DataType::kUInt32);
  expect_small_ints<uint64_t>(DataType::kUInt64);
}

TEST(GenerateInput, BoolHalfsAndOtherTypes) {
  Result<HostArray> flags = generate_input("flags", DataType::kBool, {64});
  ASSERT_TRUE(flags.is_ok());
  int trues = 0;
  for (uint8_t b : flags->bytes) {
    ASSERT_LE(b, 1);
    trues += b;
  }
  EXPECT_GT(trues, 0);
  EXPECT_LT(trues, 64);

  Result<HostArray> halves = generate_input("h", DataType::kFloat16, {32});
  ASSERT_TRUE(halves.is_ok());
  ASSERT_EQ(halves->bytes.size(), 64u);
  for (size_t i = 0; i < 32; ++i) {
    uint16_t bits = 0;
    std::memcpy(&bits, halves->bytes.data() + 2 * i, 2);
    const float value = half_to_float(bits);
    EXPECT_GE(value, 0.0f);
    EXPECT_LE(value, 1.0f);  // rounding may reach 1.0 exactly
  }
  EXPECT_EQ(generate_input("c", DataType::kComplex64, {3})->bytes.size(), 24u);
  EXPECT_EQ(generate_input("d", DataType::kFloat64, {3})->bytes.size(), 24u);
  EXPECT_EQ(generate_input("q", DataType::kInt4, {3})->bytes.size(), 2u);  // packed two per byte
  EXPECT_EQ(generate_input("f8", DataType::kFloat8E4M3FN, {3})->bytes, (std::vector<uint8_t>{0, 0, 0}));
}

TEST(GenerateInput, ScalarsAndEmptyShapes) {
  Result<HostArray> scalar = generate_input("s", DataType::kFloat32, {});
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_EQ(scalar->bytes.size(), 4u);
  Result<HostArray> empty = generate_input("e", DataType::kFloat32, {0, 3});
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->bytes.empty());
}

TEST(GenerateInput, RefusesStringsAndBadShapes) {
  Result<HostArray> text = generate_input("text", DataType::kString, {2});
  ASSERT_FALSE(text.is_ok());
  EXPECT_EQ(text.status().message(),
            "cannot generate input 'text' of dtype string: infer-run only feeds numeric and bool tensors");
  EXPECT_FALSE(generate_input("x", DataType::kFloat32, {-1, 3}).is_ok());
  EXPECT_FALSE(generate_input("x", DataType::kFloat32, {1 << 30, 1 << 30, 1 << 30}).is_ok());
}

}  // namespace
}  // namespace infer::cli
