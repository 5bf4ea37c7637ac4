// Tensors stored in external files: valid layouts, and locations that must be refused.
#include <cstring>

#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using ::testing::HasSubstr;
using testing::make_tensor;
using testing::TempDir;
using testing::value_named;
using testing::write_file;

struct ExternalRef {
  std::string name;
  std::vector<int64_t> dims;
  std::string location;
  std::string offset;  // empty: no entry
  std::string length;  // empty: no entry
};

onnx::TensorProto external_tensor(const ExternalRef& ref) {
  onnx::TensorProto t = make_tensor(ref.name, onnx::TensorProto::FLOAT, ref.dims);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& key, const std::string& value) {
    auto* e = t.add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  if (!ref.location.empty()) add("location", ref.location);
  if (!ref.offset.empty()) add("offset", ref.offset);
  if (!ref.length.empty()) add("length", ref.length);
  return t;
}

// y = a + b, with a and b initializers of `dims`.
onnx::ModelProto add_model(const onnx::TensorProto& a, const onnx::TensorProto& b) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  *g.add_initializer() = a;
  *g.add_initializer() = b;
  testing::add_node(g, "Add", {a.name(), b.name()}, {"y"}, "add");
  testing::add_output_no_shape(g, "y", onnx::TensorProto::FLOAT);
  return m;
}

onnx::ModelProto one_tensor_model(const ExternalRef& ref) {
  return add_model(external_tensor(ref), testing::float_tensor("b", {}, {0.f}));
}

std::string floats(std::initializer_list<float> v) {
  return testing::raw_bytes(std::vector<float>(v));
}

std::vector<float> values(const ir::Model& m, const std::string& name) {
  const ir::Value& v = value_named(*m.graph, name);
  const float* p = v.constant->as<float>();
  return std::vector<float>(p, p + v.constant->element_count());
}

TEST(ExternalData, ReadsTensorsAtTheirOffsetsFromOneSharedFile) {
  TempDir dir;
  // 16 bytes of padding, a = {1,2,3}, 4 bytes of padding, b = {4,5,6} at offset 32.
  write_file(dir.file("weights.bin"),
             std::string(16, 'p') + floats({1, 2, 3}) + "pppp" + floats({4, 5, 6}));
  onnx::ModelProto m = add_model(external_tensor({"a", {3}, "weights.bin", "16", "12"}),
                                 external_tensor({"b", {3}, "weights.bin", "32", ""}));
  auto r = testing::save_and_load(m, dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(values(*r, "a"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values(*r, "b"), (std::vector<float>{4, 5, 6}));
  // Both point into one mapping of the file, 16 bytes apart.
  const auto* a = static_cast<const char*>(value_named(*r->graph, "a").constant->data());
  const auto* b = static_cast<const char*>(value_named(*r->graph, "b").constant->data());
  EXPECT_EQ(b - a, 16);
}

TEST(ExternalData, MisalignedOffsetStillReadsTheRightValues) {
  TempDir dir;
  write_file(dir.file("w.bin"), "abc" + floats({7, 8}));
  auto r = testing::save_and_load(one_tensor_model({"a", {2}, "w.bin", "3", "8"}), dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(values(*r, "a"), (std::vector<float>{7, 8}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(value_named(*r->graph, "a").constant->data()) % 16, 0u);
}

TEST(ExternalData, SubfolderAndDotSegmentsInsideTheFolderAreFine) {
  TempDir dir;
  write_file(dir.file("data/w.bin"), floats({9, 10}));
  auto r =
      testing::save_and_load(one_tensor_model({"a", {2}, "./data/../data/w.bin", "", ""}), dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(values(*r, "a"), (std::vector<float>{9, 10}));
}

TEST(ExternalData, DataOutlivesTheModel) {
  TempDir dir;
  write_file(dir.file("w.bin"), floats({1, 2, 3, 4}));
  ir::TensorDataPtr kept;
  {
    auto r = testing::save_and_load(one_tensor_model({"a", {4}, "w.bin", "", ""}), dir);
    ASSERT_LOADED(r);
    kept = value_named(*r->graph, "a").constant;
  }
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->as<float>()[3], 4.f);
}

TEST(ExternalData, ConstantNodeValueMayBeExternal) {
  TempDir dir;
  write_file(dir.file("c.bin"), floats({3, 4}));
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  auto* c = testing::add_node(g, "Constant", {}, {"k"}, "k_const");
  *testing::add_attr(c, "value", onnx::AttributeProto::TENSOR)->mutable_t() =
      external_tensor({"k", {2}, "c.bin", "", ""});
  testing::add_output(g, "k", onnx::TensorProto::FLOAT, {int64_t{2}});
  auto r = testing::save_and_load(m, dir);
  ASSERT_LOADED(r);
  const auto& value = testing::node_named(*r->graph, "k_const")->attributes.at(0);
  ASSERT_EQ(value.tensors.size(), 1u);
  EXPECT_EQ(value.tensors[0]->as<float>()[1], 4.f);
}

TEST(ExternalData, PathEscapingTheModelFolderIsRejected) {
  TempDir outer;
  write_file(outer.file("evil.bin"), floats({1}));
  write_file(outer.file("model/placeholder"), "");
  const std::string model_dir = outer.file("model");
  for (const std::string location : {"../evil.bin", "data/../../evil.bin"}) {
    SCOPED_TRACE(location);
    const std::string path = model_dir + "/m.onnx";
    write_file(path, one_tensor_model({"w", {1}, location, "", ""}).SerializeAsString());
    auto r = load_model(path);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("model '" + path + "'"));
    EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w': external data location '" + location +
                                                "' leads outside the model's folder"));
  }
}

TEST(ExternalData, AbsolutePathIsRejected) {
  TempDir dir;
  write_file(dir.file("w.bin"), floats({1}));
  const std::string absolute = dir.file("w.bin");
  auto r = testing::save_and_load(one_tensor_model({"w", {1}, absolute, "", ""}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w': external data location '" + absolute +
                                              "' is an absolute path"));
}

TEST(ExternalData, ShortFileIsRejected) {
  TempDir dir;
  write_file(dir.file("w.bin"), floats({1, 2}));
  auto r = testing::save_and_load(one_tensor_model({"w", {3}, "w.bin", "", ""}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'w': external data file 'w.bin' has 8 bytes, too short for 12 "
                        "bytes at offset 0"));

  r = testing::save_and_load(one_tensor_model({"w", {2}, "w.bin", "4", ""}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("too short for 8 bytes at offset 4"));
}

TEST(ExternalData, LengthThatDisagreesWithTheShapeIsRejected) {
  TempDir dir;
  write_file(dir.file("w.bin"), floats({1, 2, 3}));
  auto r = testing::save_and_load(one_tensor_model({"w", {2}, "w.bin", "0", "12"}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'w': external data length is 12 bytes, but its float32 shape "
                        "needs 8"));
}

TEST(ExternalData, MissingFileIsNotFound) {
  TempDir dir;
  auto r = testing::save_and_load(one_tensor_model({"w", {1}, "nothere.bin", "", ""}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w': cannot open external data file"));
  EXPECT_THAT(r.status().message(), HasSubstr("nothere.bin"));
}

TEST(ExternalData, MalformedEntriesAreRejected) {
  TempDir dir;
  write_file(dir.file("w.bin"), floats({1}));
  auto r = testing::save_and_load(one_tensor_model({"w", {1}, "", "0", ""}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("tensor 'w'"));
  EXPECT_THAT(r.status().message(), HasSubstr("location"));

  r = testing::save_and_load(one_tensor_model({"w", {1}, "w.bin", "12a", ""}), dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'w': external data 'offset' is '12a', expected a non-negative "
                        "integer"));
}

TEST(ExternalData, FromMemoryNeedsABaseFolder) {
  TempDir dir;
  write_file(dir.file("w.bin"), floats({5}));
  const std::string bytes = one_tensor_model({"w", {1}, "w.bin", "", ""}).SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "mem", "");
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("without a base folder"));

  r = load_model_from_memory(bytes.data(), bytes.size(), "mem", dir.path().string());
  ASSERT_LOADED(r);
  EXPECT_EQ(values(*r, "w"), (std::vector<float>{5}));
}

}  // namespace
}  // namespace infer::onnx_io
