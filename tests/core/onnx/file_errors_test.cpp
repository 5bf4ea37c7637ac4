// Files that are missing, empty, not ONNX, or cut short.
#include "test_util.hpp"
#include "infer_test_paths.hpp"

namespace infer::onnx_io {
namespace {

using ::testing::HasSubstr;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const std::string kDigits = std::string(INFER_SOURCE_DIR) + "/models/digits_cnn.onnx";

TEST(LoadErrors, MissingFileIsNotFound) {
  TempDir dir;
  const std::string path = dir.file("x.onnx");
  auto r = load_model(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "cannot open model '" + path + "': No such file or directory");
}

TEST(LoadErrors, EmptyFileIsNotAModel) {
  TempDir dir;
  const std::string path = dir.file("empty.onnx");
  write_file(path, "");
  auto r = load_model(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("'" + path + "' is not a valid ONNX model"));
}

TEST(LoadErrors, GarbageBytesAreNotAModel) {
  TempDir dir;
  const std::string path = dir.file("garbage.onnx");
  // 0xFF starts a field with wire type 7, which protobuf does not have.
  write_file(path, std::string(64, '\xff'));
  auto r = load_model(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "'" + path + "' is not a valid ONNX model (protobuf parse failed)");
}

TEST(LoadErrors, TruncatedModelIsNotAModel) {
  const std::string whole = read_file(kDigits);
  ASSERT_GT(whole.size(), 1000u);
  TempDir dir;
  const std::string path = dir.file("half.onnx");
  write_file(path, whole.substr(0, whole.size() / 2));
  auto r = load_model(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "'" + path + "' is not a valid ONNX model (protobuf parse failed)");
}

TEST(LoadErrors, ParsableProtobufWithoutAGraphIsNotAModel) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("is not a valid ONNX model (it has no graph)"));
}

TEST(LoadErrors, ModelWithoutIrVersionIsRejected) {
  onnx::ModelProto m = testing::relu_model();
  m.clear_ir_version();
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("ir_version is not set"));
}

TEST(LoadErrors, DirectoryIsNotAModel) {
  TempDir dir;
  auto r = load_model(dir.path().string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("cannot open model '" + dir.path().string() + "'"));
  EXPECT_THAT(r.status().message(), HasSubstr("Is a directory"));
}

TEST(LoadErrors, EmptyMemoryIsNotAModel) {
  auto r = load_model_from_memory(nullptr, 0, "in-memory.onnx", "");
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("'in-memory.onnx' is not a valid ONNX model"));
}

TEST(LoadFromMemory, LoadsAndNamesTheModel) {
  const std::string bytes = testing::relu_model().SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "mem.onnx", "");
  ASSERT_LOADED(r);
  EXPECT_EQ(r->source_path, "mem.onnx");
  EXPECT_EQ(testing::op_types(*r->graph), (std::vector<std::string>{"Relu"}));
}

TEST(LoadFromMemory, ErrorsNameTheGivenName) {
  onnx::ModelProto m = testing::relu_model();
  testing::import_domain(m, "", 14);  // the default domain imported twice
  const std::string bytes = m.SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "mem.onnx", "");
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("model 'mem.onnx': opset_import lists domain"));
}

}  // namespace
}  // namespace infer::onnx_io

namespace infer::onnx_io {
namespace {

// A Conv (or pool) with a zero stride made ONNX's shape inference divide by zero inside
// libonnx (SIGFPE; found by tests/fuzz, replayed from regressions/onnx_loader/). The
// loader refuses such attributes first, naming the node, at any depth.
onnx::ModelProto conv_model(const std::vector<int64_t>& strides, int64_t group) {
  onnx::ModelProto m = testing::make_model(13);
  auto& g = *m.mutable_graph();
  testing::add_input(g, "x", onnx::TensorProto::FLOAT, {1, 2, 6, 6});
  *g.add_initializer() = testing::float_tensor("w", {2, 2 / group, 3, 3}, std::vector<float>(36 / group, 0.5f));
  testing::add_output(g, "y", onnx::TensorProto::FLOAT, {1, 2, 4, 4});
  auto* conv = testing::add_node(g, "Conv", {"x", "w"}, {"y"}, "conv\x01");
  testing::attr_ints(conv, "kernel_shape", {3, 3});
  testing::attr_ints(conv, "strides", strides);
  testing::attr_int(conv, "group", group);
  return m;
}

TEST(LoadErrors, ZeroConvStrideIsRefusedBeforeShapeInference) {
  const std::string bytes = conv_model({1, 0}, 1).SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "m.onnx", "");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("node 'conv\\x01' (Conv): attribute 'strides' must hold integers >= 1, got [1,0]"));
}

TEST(LoadErrors, ZeroGroupIsRefused) {
  onnx::ModelProto m = conv_model({1, 1}, 1);
  m.mutable_graph()->mutable_node(0)->mutable_attribute(2)->set_i(0);
  const std::string bytes = m.SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "m.onnx", "");
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("attribute 'group' must hold integers >= 1, got 0"));
}

TEST(LoadErrors, PositiveStridesStillLoad) {
  const std::string bytes = conv_model({1, 1}, 1).SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "m.onnx", "");
  EXPECT_TRUE(r.is_ok()) << r.status().message();
}

}  // namespace
}  // namespace infer::onnx_io
