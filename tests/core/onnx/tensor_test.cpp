// Initializer data: every storage field, every dtype family, and malformed tensors.
#include <cstring>

#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using ::testing::HasSubstr;
using testing::make_tensor;
using testing::TempDir;
using testing::value_named;

// A model w -> Identity -> y with `w` as its one initializer.
onnx::ModelProto identity_of(const onnx::TensorProto& w) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  *g.add_initializer() = w;
  testing::add_node(g, "Identity", {w.name()}, {"y"}, "id");
  testing::add_output_no_shape(g, "y", w.data_type());
  return m;
}

Result<ir::Model> load_initializer(const onnx::TensorProto& w, const LoadOptions& options = {}) {
  TempDir dir;
  return testing::save_and_load(identity_of(w), dir, options);
}

// The bytes of initializer `name`.
std::vector<uint8_t> bytes_of(const ir::Model& m, const std::string& name) {
  const ir::Value& v = value_named(*m.graph, name);
  if (!v.constant) return {};
  const auto* p = static_cast<const uint8_t*>(v.constant->data());
  return std::vector<uint8_t>(p, p + v.constant->size_bytes());
}

template <typename T>
std::vector<T> values_of(const ir::Model& m, const std::string& name) {
  std::vector<uint8_t> bytes = bytes_of(m, name);
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

TEST(Initializers, FloatFromRawData) {
  auto r = load_initializer(testing::float_tensor("w", {2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_LOADED(r);
  const ir::Value& w = value_named(*r->graph, "w");
  EXPECT_EQ(w.dtype, DataType::kFloat32);
  EXPECT_EQ(w.constant->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of<float>(*r, "w"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(r->graph->inputs.empty());  // an initializer is not an input
}

TEST(Initializers, FloatFromFloatData) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT, {2, 2});
  for (float v : {0.5f, -1.5f, 3.0f, 1e-3f}) t.add_float_data(v);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<float>(*r, "w"), (std::vector<float>{0.5f, -1.5f, 3.0f, 1e-3f}));
}

TEST(Initializers, Int64FromInt64Data) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::INT64, {3});
  for (int64_t v : {int64_t{-1}, int64_t{0}, int64_t{1} << 40}) t.add_int64_data(v);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kInt64);
  EXPECT_EQ(values_of<int64_t>(*r, "w"), (std::vector<int64_t>{-1, 0, int64_t{1} << 40}));
}

TEST(Initializers, Int64FromRawData) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::INT64, {2});
  t.set_raw_data(testing::raw_bytes(std::vector<int64_t>{7, -9}));
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<int64_t>(*r, "w"), (std::vector<int64_t>{7, -9}));
}

TEST(Initializers, DoubleFromDoubleData) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::DOUBLE, {2});
  t.add_double_data(0.25);
  t.add_double_data(-2.5);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<double>(*r, "w"), (std::vector<double>{0.25, -2.5}));
}

TEST(Initializers, Float16BitsFromInt32Data) {
  // IEEE half bit patterns: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 (largest) = 0x7BFF.
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT16, {3});
  for (int v : {0x3C00, 0xC000, 0x7BFF}) t.add_int32_data(v);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kFloat16);
  EXPECT_EQ(values_of<uint16_t>(*r, "w"), (std::vector<uint16_t>{0x3C00, 0xC000, 0x7BFF}));
}

TEST(Initializers, BFloat16BitsFromInt32Data) {
  // bfloat16 is the top half of a float32: 1.0 = 0x3F80, -3.0 = 0xC040.
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::BFLOAT16, {2});
  t.add_int32_data(0x3F80);
  t.add_int32_data(0xC040);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kBFloat16);
  EXPECT_EQ(values_of<uint16_t>(*r, "w"), (std::vector<uint16_t>{0x3F80, 0xC040}));
}

TEST(Initializers, Float16FromRawData) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT16, {2});
  t.set_raw_data(std::string("\x00\x3c\x00\xc0", 4));  // 1.0, -2.0 little-endian
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<uint16_t>(*r, "w"), (std::vector<uint16_t>{0x3C00, 0xC000}));
}

TEST(Initializers, Int8FromInt32DataIsTwosComplementBytes) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::INT8, {3});
  for (int v : {-5, 127, -128}) t.add_int32_data(v);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kInt8);
  EXPECT_EQ(bytes_of(*r, "w"), (std::vector<uint8_t>{0xFB, 0x7F, 0x80}));
}

TEST(Initializers, Uint8Int16Uint16BoolFromInt32Data) {
  onnx::TensorProto u8 = make_tensor("w", onnx::TensorProto::UINT8, {2});
  u8.add_int32_data(255);
  u8.add_int32_data(1);
  auto r = load_initializer(u8);
  ASSERT_LOADED(r);
  EXPECT_EQ(bytes_of(*r, "w"), (std::vector<uint8_t>{255, 1}));

  onnx::TensorProto i16 = make_tensor("w", onnx::TensorProto::INT16, {2});
  i16.add_int32_data(-2);
  i16.add_int32_data(300);
  r = load_initializer(i16);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<int16_t>(*r, "w"), (std::vector<int16_t>{-2, 300}));

  onnx::TensorProto u16 = make_tensor("w", onnx::TensorProto::UINT16, {1});
  u16.add_int32_data(65535);
  r = load_initializer(u16);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<uint16_t>(*r, "w"), (std::vector<uint16_t>{65535}));

  onnx::TensorProto b = make_tensor("w", onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  r = load_initializer(b);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kBool);
  EXPECT_EQ(bytes_of(*r, "w"), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Initializers, Uint32AndUint64FromUint64Data) {
  onnx::TensorProto u32 = make_tensor("w", onnx::TensorProto::UINT32, {2});
  u32.add_uint64_data(4000000000u);
  u32.add_uint64_data(7);
  auto r = load_initializer(u32);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<uint32_t>(*r, "w"), (std::vector<uint32_t>{4000000000u, 7}));

  onnx::TensorProto u64 = make_tensor("w", onnx::TensorProto::UINT64, {1});
  u64.add_uint64_data(uint64_t{1} << 63);
  r = load_initializer(u64);
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<uint64_t>(*r, "w"), (std::vector<uint64_t>{uint64_t{1} << 63}));
}

TEST(Initializers, Complex64FromFloatDataHasTwoFloatsPerElement) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::COMPLEX64, {2});
  for (float v : {1.f, 2.f, 3.f, 4.f}) t.add_float_data(v);
  LoadOptions options;
  options.run_shape_inference = false;  // Identity's schema in opset 13 has no complex
  auto r = load_initializer(t, options);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kComplex64);
  EXPECT_EQ(values_of<float>(*r, "w"), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Initializers, Int4FromRawDataIsPackedTwoPerByte) {
  // Elements 1, 2, 3 (first element in the low nibble): bytes 0x21 0x03.
  onnx::TensorProto t = make_tensor("w", 22, {3});  // INT4: not in onnx 1.12's enum
  t.set_raw_data(std::string("\x21\x03", 2));
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  const ir::Value& w = value_named(*r->graph, "w");
  EXPECT_EQ(w.dtype, DataType::kInt4);
  EXPECT_EQ(w.constant->element_count(), 3);
  EXPECT_EQ(bytes_of(*r, "w"), (std::vector<uint8_t>{0x21, 0x03}));
}

TEST(Initializers, Uint4FromInt32DataHoldsPackedPairs) {
  onnx::TensorProto t = make_tensor("w", 21, {4});  // UINT4
  t.add_int32_data(0xF0);
  t.add_int32_data(0x5A);
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kUInt4);
  EXPECT_EQ(bytes_of(*r, "w"), (std::vector<uint8_t>{0xF0, 0x5A}));
}

TEST(Initializers, Float8FromRawData) {
  onnx::TensorProto t = make_tensor("w", 17, {2});  // FLOAT8E4M3FN
  t.set_raw_data(std::string("\x38\xb8", 2));       // 1.0 and -1.0
  auto r = load_initializer(t);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").dtype, DataType::kFloat8E4M3FN);
  EXPECT_EQ(bytes_of(*r, "w"), (std::vector<uint8_t>{0x38, 0xB8}));
}

TEST(Initializers, LargeRawDataIsIntact) {
  std::vector<float> values(5000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  auto r = load_initializer(testing::float_tensor("w", {5000}, values));
  ASSERT_LOADED(r);
  EXPECT_EQ(values_of<float>(*r, "w"), values);
}

TEST(Initializers, ScalarAndEmptyTensors) {
  auto r = load_initializer(testing::float_tensor("w", {}, {42.f}));
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").shape.to_string(), "[]");
  EXPECT_EQ(values_of<float>(*r, "w"), (std::vector<float>{42.f}));

  r = load_initializer(make_tensor("w", onnx::TensorProto::FLOAT, {2, 0}));
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "w").constant->size_bytes(), 0u);
  EXPECT_EQ(value_named(*r->graph, "w").shape.to_string(), "[2,0]");
}

TEST(Initializers, StringInitializerIsUnsupported) {
  onnx::TensorProto t = make_tensor("vocab", onnx::TensorProto::STRING, {2});
  t.add_string_data("a");
  t.add_string_data("b");
  auto r = load_initializer(t);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'vocab' has dtype string, which infer does not support"));
}

TEST(Initializers, UnknownDtypeIsUnsupported) {
  onnx::TensorProto t = make_tensor("w", 40, {1});
  t.set_raw_data("x");
  LoadOptions options;
  options.run_shape_inference = false;
  auto r = load_initializer(t, options);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w' has dtype 40"));
}

TEST(Initializers, RawDataOfTheWrongSizeIsRejected) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT, {3});
  t.set_raw_data(std::string(8, '\0'));
  auto r = load_initializer(t);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'w' (float32 [3]): raw_data has 8 bytes, expected 12"));
}

TEST(Initializers, TypedFieldWithTheWrongCountIsRejected) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT, {2, 2});
  for (float v : {1.f, 2.f, 3.f}) t.add_float_data(v);
  auto r = load_initializer(t, LoadOptions{.run_checker = false, .run_shape_inference = true});
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("has 3 entries in float_data, expected 4"));
}

TEST(Initializers, ValuesInAFieldTheDtypeDoesNotUseAreRejected) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT, {1});
  t.add_int64_data(1);
  for (bool checker : {true, false}) {
    auto r = load_initializer(t, LoadOptions{.run_checker = checker, .run_shape_inference = true});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(),
                ::testing::AnyOf(HasSubstr("initializer 'w'"), HasSubstr("tensor 'w'")));
  }
  auto r = load_initializer(t, LoadOptions{.run_checker = false, .run_shape_inference = true});
  EXPECT_THAT(r.status().message(),
              HasSubstr("keeps its values in int64_data, but float32 values belong in float_data"));
}

TEST(Initializers, TwoDataFieldsAreRejected) {
  onnx::TensorProto t = testing::float_tensor("w", {1}, {1.f});
  t.add_float_data(1.f);
  auto r = load_initializer(t, LoadOptions{.run_checker = false, .run_shape_inference = true});
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'w' has values in both raw_data and float_data"));
}

TEST(Initializers, MissingDataIsRejected) {
  auto r = load_initializer(make_tensor("w", onnx::TensorProto::FLOAT, {2}),
                            LoadOptions{.run_checker = false, .run_shape_inference = true});
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w' (float32 [2]) has no data"));
}

TEST(Initializers, NegativeDimIsRejected) {
  onnx::TensorProto t = make_tensor("w", onnx::TensorProto::FLOAT, {-1});
  LoadOptions options{.run_checker = false, .run_shape_inference = false};
  auto r = load_initializer(t, options);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w' has a negative dimension in [-1]"));
}

TEST(Initializers, SparseInitializerIsUnsupported) {
  onnx::ModelProto m = testing::relu_model();
  auto* sparse = m.mutable_graph()->add_sparse_initializer();
  *sparse->mutable_values() = testing::float_tensor("sp", {1}, {1.f});
  onnx::TensorProto idx = make_tensor("sp_idx", onnx::TensorProto::INT64, {1});
  idx.add_int64_data(0);
  *sparse->mutable_indices() = idx;
  sparse->add_dims(4);
  TempDir dir;
  auto r = testing::save_and_load(m, dir,
                                  LoadOptions{.run_checker = false, .run_shape_inference = false});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(), HasSubstr("sparse initializer 'sp'"));
}

}  // namespace
}  // namespace infer::onnx_io
