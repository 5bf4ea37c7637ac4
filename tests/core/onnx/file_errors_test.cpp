// Files that are missing, empty, not ONNX, or cut short.
#include "infer_test_paths.hpp"
#include "test_util.hpp"

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
  *g.add_initializer() =
      testing::float_tensor("w", {2, 2 / group, 3, 3}, std::vector<float>(36 / group, 0.5f));
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
  EXPECT_THAT(
      r.status().message(),
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

// ONNX's Conv shape inference takes the kernel's dims from W when kernel_shape is absent
// and then read past a vector sized by X's rank when X had fewer dims than W (a SEGV in
// libonnx; found by tests/fuzz: an input [1, 1] reaching a Conv through a Cast). The
// loader spells kernel_shape out from a constant W while ONNX runs, or hides the node
// from ONNX when W is computed, and leaves the model as it was.
onnx::ModelProto conv_after_cast(bool constant_w, std::vector<testing::DimSpec> x_dims) {
  onnx::ModelProto m = testing::make_model(13);
  auto& g = *m.mutable_graph();
  testing::add_input(g, "x", onnx::TensorProto::FLOAT, std::move(x_dims));
  if (constant_w)
    *g.add_initializer() = testing::float_tensor("w", {2, 1, 3, 3}, std::vector<float>(18, 0.5f));
  else
    testing::add_input(g, "w", onnx::TensorProto::FLOAT, {2, 1, 3, 3});
  testing::add_output_no_shape(g, "y", onnx::TensorProto::FLOAT);
  testing::attr_int(testing::add_node(g, "Cast", {"x"}, {"xc"}, "cast"), "to",
                    onnx::TensorProto::FLOAT);
  testing::add_node(g, "Conv", {"xc", "w"}, {"y"}, "conv");
  return m;
}

const ir::Node& node_named(const ir::Model& m, const std::string& name) {
  for (const ir::Node& n : m.graph->nodes())
    if (n.name == name) return n;
  ADD_FAILURE() << "no node " << name;
  return m.graph->nodes().front();
}

TEST(LoadErrors, ConvInputOfLowerRankThanItsWeightsLoadsWithoutCrashing) {
  for (bool constant_w : {true, false}) {
    SCOPED_TRACE(constant_w ? "constant W" : "W a graph input");
    const std::string bytes =
        conv_after_cast(constant_w, {int64_t{1}, int64_t{1}}).SerializeAsString();
    auto r = load_model_from_memory(bytes.data(), bytes.size(), "m.onnx", "");
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    const ir::Node& conv = node_named(*r, "conv");
    EXPECT_EQ(conv.domain, "");
    EXPECT_EQ(conv.attr("kernel_shape"), nullptr);  // what the guard added is gone
  }
}

TEST(LoadErrors, ConvShapesAreStillInferredFromConstantWeights) {
  const std::string bytes =
      conv_after_cast(true, {int64_t{1}, int64_t{1}, int64_t{6}, int64_t{6}}).SerializeAsString();
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "m.onnx", "");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ir::Node& conv = node_named(*r, "conv");
  EXPECT_EQ(conv.attr("kernel_shape"), nullptr);
  const ir::Shape& y = r->graph->value(conv.outputs[0]).shape;
  ASSERT_TRUE(y.is_static()) << y.to_string();
  EXPECT_EQ(y.to_string(), ir::Shape::of({1, 2, 4, 4}).to_string());
}

// A QDQ model's Conv reads its weights through DequantizeLinear: their dims are the
// quantized initializer's, so the Conv's output type and shape are still inferred (a
// hidden Conv left the Relu after it with an untyped input that no backend runs).
TEST(LoadErrors, ConvShapesAreInferredThroughDequantizedWeights) {
  onnx::ModelProto m = conv_after_cast(true, {int64_t{1}, int64_t{1}, int64_t{6}, int64_t{6}});
  auto& g = *m.mutable_graph();
  g.mutable_initializer(0)->set_name("w_float_unused");
  onnx::TensorProto wq;
  wq.set_name("w_q");
  wq.set_data_type(onnx::TensorProto::INT8);
  for (int64_t d : {2, 1, 3, 3}) wq.add_dims(d);
  wq.set_raw_data(std::string(18, '\x01'));
  *g.add_initializer() = wq;
  *g.add_initializer() = testing::float_tensor("w_scale", {}, {0.5f});
  testing::add_node(g, "DequantizeLinear", {"w_q", "w_scale"}, {"w"}, "dqw");
  g.mutable_node()->SwapElements(1, 2);  // cast, dqw, conv: topological order
  auto r = load_model_from_memory(m.SerializeAsString().data(), m.ByteSizeLong(), "m.onnx", "");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ir::Node& conv = node_named(*r, "conv");
  EXPECT_EQ(conv.domain, "");
  EXPECT_EQ(conv.attr("kernel_shape"), nullptr);
  const ir::Value& y = r->graph->value(conv.outputs[0]);
  EXPECT_EQ(y.dtype, DataType::kFloat32);
  EXPECT_EQ(y.shape.to_string(), ir::Shape::of({1, 2, 4, 4}).to_string());
}

}  // namespace
}  // namespace infer::onnx_io
