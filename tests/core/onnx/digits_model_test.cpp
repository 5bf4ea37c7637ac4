// The shipped demo model, models/digits_cnn.onnx (see models/README.md), against its
// documented architecture and facts read by the onnx Python package.
#include <numeric>

#include "test_util.hpp"
#include "infer_test_paths.hpp"

namespace infer::onnx_io {
namespace {

#include "digits_reference.inc"

using testing::node_named;
using testing::value_named;

const std::string kDigits = std::string(INFER_SOURCE_DIR) + "/models/digits_cnn.onnx";

class DigitsModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = load_model(kDigits);
    ASSERT_LOADED(r);
    model_ = new ir::Model(std::move(r).value());
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  const ir::Graph& graph() const { return *model_->graph; }
  static ir::Model* model_;
};
ir::Model* DigitsModel::model_ = nullptr;

ir::Shape shape(std::vector<ir::Dim> dims) { return ir::Shape{std::move(dims)}; }
ir::Dim batch() { return ir::Dim::symbol("batch"); }
ir::Dim known(int64_t v) { return ir::Dim::known(v); }

TEST_F(DigitsModel, ModelFields) {
  EXPECT_EQ(model_->ir_version, 7);
  EXPECT_EQ(model_->opset(""), 13);
  EXPECT_EQ(model_->producer_name, "pytorch");
  EXPECT_EQ(model_->source_path, kDigits);
}

TEST_F(DigitsModel, OperatorsInOrder) {
  EXPECT_EQ(testing::op_types(graph()),
            (std::vector<std::string>{"Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool",
                                      "Flatten", "Gemm", "Relu", "Gemm"}));
  EXPECT_EQ(graph().nodes()[0].name, "/conv1/Conv");
}

TEST_F(DigitsModel, InputWithSymbolicBatch) {
  ASSERT_EQ(graph().inputs.size(), 1u);
  const ir::Value& image = graph().value(graph().inputs[0]);
  EXPECT_EQ(image.name, "image");
  EXPECT_EQ(image.dtype, DataType::kFloat32);
  EXPECT_EQ(image.shape, shape({batch(), known(1), known(8), known(8)}));
  EXPECT_EQ(image.shape.to_string(), "[batch,1,8,8]");
  EXPECT_FALSE(image.is_constant());
}

TEST_F(DigitsModel, Output) {
  ASSERT_EQ(graph().outputs.size(), 1u);
  const ir::Value& logits = graph().value(graph().outputs[0]);
  EXPECT_EQ(logits.name, "logits");
  EXPECT_EQ(logits.dtype, DataType::kFloat32);
  EXPECT_EQ(logits.shape, shape({batch(), known(10)}));
  EXPECT_EQ(graph().nodes()[logits.producer].op_type, "Gemm");
}

TEST_F(DigitsModel, InitializersAreConstantsWithTheirData) {
  for (const DigitsInitializer& ref : kDigitsInitializers) {
    SCOPED_TRACE(ref.name);
    const ir::Value& v = value_named(graph(), ref.name);
    ASSERT_TRUE(v.is_constant());
    EXPECT_EQ(v.dtype, DataType::kFloat32);
    EXPECT_EQ(v.constant->dims(), ref.dims);
    EXPECT_EQ(v.shape, ir::Shape::of(ref.dims));
    const int64_t n = v.constant->element_count();
    ASSERT_EQ(v.constant->size_bytes(), static_cast<size_t>(n) * 4);
    const float* data = v.constant->as<float>();
    EXPECT_EQ(data[0], ref.first);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += data[i];
    EXPECT_NEAR(sum, ref.sum, 1e-9);
  }
  const float* bias = value_named(graph(), "conv1.bias").constant->as<float>();
  EXPECT_EQ(std::vector<float>(bias, bias + 8), kConv1Bias);
}

TEST_F(DigitsModel, IntermediateShapesComeFromShapeInference) {
  // The architecture in models/README.md.
  EXPECT_EQ(value_named(graph(), "/conv1/Conv_output_0").shape,
            shape({batch(), known(8), known(8), known(8)}));
  EXPECT_EQ(value_named(graph(), "/pool1/MaxPool_output_0").shape,
            shape({batch(), known(8), known(4), known(4)}));
  EXPECT_EQ(value_named(graph(), "/pool2/MaxPool_output_0").shape,
            shape({batch(), known(16), known(2), known(2)}));
  const ir::Value& flat = value_named(graph(), "/Flatten_output_0");
  ASSERT_EQ(flat.shape.rank(), 2u);
  EXPECT_EQ((*flat.shape.dims)[1], known(64));
  EXPECT_EQ(value_named(graph(), "/fc1/Gemm_output_0").dtype, DataType::kFloat32);
}

TEST_F(DigitsModel, Attributes) {
  const ir::Node* conv = node_named(graph(), "/conv1/Conv");
  ASSERT_NE(conv, nullptr);
  ASSERT_NE(conv->attr("kernel_shape"), nullptr);
  EXPECT_EQ(conv->attr("kernel_shape")->ints, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv->attr("pads")->ints, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->attr_int("group", 0), 1);
  const ir::Node* gemm = node_named(graph(), "/fc1/Gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->attr_int("transB", 0), 1);
  EXPECT_DOUBLE_EQ(gemm->attr_float("alpha", 0), 1.0);
}

TEST_F(DigitsModel, LinksAndInvariants) {
  EXPECT_TRUE(graph().validate().is_ok()) << graph().validate().message();
  const ir::Value& w = value_named(graph(), "conv1.weight");
  EXPECT_EQ(w.producer, ir::kNoNode);
  auto consumers = graph().consumers();
  EXPECT_EQ(consumers[*graph().find_value("image")].size(), 1u);
}

TEST(DigitsModelOptions, WithoutShapeInferenceIntermediatesAreUnknown) {
  LoadOptions options;
  options.run_shape_inference = false;
  auto r = load_model(kDigits, options);
  ASSERT_LOADED(r);
  const ir::Value& pool = value_named(*r->graph, "/pool1/MaxPool_output_0");
  EXPECT_FALSE(pool.shape.rank_known());
  EXPECT_EQ(pool.dtype, DataType::kUndefined);
  // Declared types are still there.
  EXPECT_EQ(value_named(*r->graph, "logits").shape.to_string(), "[batch,10]");
}

TEST(DigitsModelOptions, FromMemoryGivesTheSameGraph) {
  const std::string bytes = testing::read_file(kDigits);
  auto r = load_model_from_memory(bytes.data(), bytes.size(), "digits", "");
  ASSERT_LOADED(r);
  EXPECT_EQ(r->graph->node_count(), 10u);
  EXPECT_EQ(value_named(*r->graph, "/pool2/MaxPool_output_0").shape.to_string(), "[batch,16,2,2]");
}

}  // namespace
}  // namespace infer::onnx_io
