// Quantization descriptors on the inputs of DequantizeLinear.
#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using testing::add_input;
using testing::add_node;
using testing::add_output_no_shape;
using testing::make_tensor;
using testing::TempDir;
using testing::value_named;

Result<ir::Model> load(const onnx::ModelProto& m, const LoadOptions& options = {}) {
  TempDir dir;
  return testing::save_and_load(m, dir, options);
}

onnx::TensorProto int8_tensor(const std::string& name, std::vector<int64_t> dims) {
  onnx::TensorProto t = make_tensor(name, onnx::TensorProto::INT8, dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  for (int64_t i = 0; i < n; ++i) t.add_int32_data(static_cast<int32_t>(i % 100));
  return t;
}

onnx::TensorProto scales(const std::string& name, std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return testing::float_tensor(name, dims, std::vector<float>(static_cast<size_t>(n), 0.5f));
}

// wq (int8 `w_dims`) -> DequantizeLinear(wq, scale `scale_dims`, zp) -> y
onnx::ModelProto dequant_model(std::vector<int64_t> w_dims, std::vector<int64_t> scale_dims,
                               bool with_zero_point, int64_t axis = INT64_MIN, int64_t opset = 13) {
  onnx::ModelProto m = testing::make_model(opset, opset >= 21 ? 10 : 8);
  auto& g = *m.mutable_graph();
  *g.add_initializer() = int8_tensor("wq", w_dims);
  *g.add_initializer() = scales("scale", scale_dims);
  std::vector<std::string> ins = {"wq", "scale"};
  if (with_zero_point) {
    *g.add_initializer() = int8_tensor("zp", scale_dims);
    ins.push_back("zp");
  }
  auto* dq = add_node(g, "DequantizeLinear", ins, {"y"}, "dq");
  if (axis != INT64_MIN) testing::attr_int(dq, "axis", axis);
  add_output_no_shape(g, "y", onnx::TensorProto::FLOAT);
  return m;
}

TEST(Quantization, ScalarScaleIsPerTensor) {
  auto r = load(dequant_model({4}, {}, true));
  ASSERT_LOADED(r);
  const ir::Graph& g = *r->graph;
  const ir::Value& wq = value_named(g, "wq");
  ASSERT_TRUE(wq.quant.has_value());
  EXPECT_EQ(wq.quant->scheme, ir::QuantScheme::kPerTensor);
  EXPECT_EQ(wq.quant->storage, DataType::kInt8);
  EXPECT_EQ(wq.quant->scale, *g.find_value("scale"));
  EXPECT_EQ(wq.quant->zero_point, *g.find_value("zp"));
  EXPECT_FALSE(value_named(g, "y").quant.has_value());
}

TEST(Quantization, VectorScaleIsPerAxisWithDefaultAxisOne) {
  auto r = load(dequant_model({2, 3}, {3}, false));
  ASSERT_LOADED(r);
  const ir::Value& wq = value_named(*r->graph, "wq");
  ASSERT_TRUE(wq.quant.has_value());
  EXPECT_EQ(wq.quant->scheme, ir::QuantScheme::kPerAxis);
  EXPECT_EQ(wq.quant->axis, 1);
  EXPECT_EQ(wq.quant->zero_point, ir::kNoValue);
}

TEST(Quantization, ExplicitAndNegativeAxes) {
  auto r = load(dequant_model({2, 3}, {2}, true, 0));
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "wq").quant->axis, 0);

  r = load(dequant_model({2, 3}, {3}, true, -1));
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "wq").quant->axis, 1);  // -1 of rank 2
}

TEST(Quantization, BlockedScaleOfOpset21) {
  // block_size 2 along axis 1: a [2,4] weight has scales [2,2].
  onnx::ModelProto m = dequant_model({2, 4}, {2, 2}, false, 1, 21);
  testing::attr_int(m.mutable_graph()->mutable_node(0), "block_size", 2);
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Value& wq = value_named(*r->graph, "wq");
  ASSERT_TRUE(wq.quant.has_value());
  EXPECT_EQ(wq.quant->scheme, ir::QuantScheme::kBlock);
  EXPECT_EQ(wq.quant->block_size, 2);
  EXPECT_EQ(wq.quant->axis, 1);
}

TEST(Quantization, ScaleFromAConstantNodeCounts) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  *g.add_initializer() = int8_tensor("wq", {4});
  auto* c = add_node(g, "Constant", {}, {"scale"}, "scale_const");
  *testing::add_attr(c, "value", onnx::AttributeProto::TENSOR)->mutable_t() =
      testing::float_tensor("", {}, {0.25f});
  add_node(g, "DequantizeLinear", {"wq", "scale"}, {"y"}, "dq");
  add_output_no_shape(g, "y", onnx::TensorProto::FLOAT);
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Value& wq = value_named(*r->graph, "wq");
  ASSERT_TRUE(wq.quant.has_value());
  EXPECT_EQ(wq.quant->scheme, ir::QuantScheme::kPerTensor);
  EXPECT_EQ(wq.quant->scale, *r->graph->find_value("scale"));
}

TEST(Quantization, ActivationsBetweenQuantizeAndDequantize) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {int64_t{4}});
  *g.add_initializer() = scales("s", {});
  onnx::TensorProto zp = make_tensor("zp", onnx::TensorProto::UINT8, {});
  zp.add_int32_data(128);
  *g.add_initializer() = zp;
  add_node(g, "QuantizeLinear", {"x", "s", "zp"}, {"q"}, "quant");
  add_node(g, "DequantizeLinear", {"q", "s", "zp"}, {"y"}, "dequant");
  add_output_no_shape(g, "y", onnx::TensorProto::FLOAT);
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Value& q = value_named(*r->graph, "q");
  ASSERT_TRUE(q.quant.has_value());
  EXPECT_EQ(q.quant->storage, DataType::kUInt8);  // from shape inference of QuantizeLinear
  EXPECT_EQ(q.quant->scheme, ir::QuantScheme::kPerTensor);
}

TEST(Quantization, NonConstantScaleGivesNoDescriptor) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  *g.add_initializer() = int8_tensor("wq", {4});
  add_input(g, "scale", onnx::TensorProto::FLOAT, {});
  add_node(g, "DequantizeLinear", {"wq", "scale"}, {"y"}, "dq");
  add_output_no_shape(g, "y", onnx::TensorProto::FLOAT);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_FALSE(value_named(*r->graph, "wq").quant.has_value());
}

TEST(Quantization, ReadersThatDisagreeGiveNoDescriptor) {
  onnx::ModelProto m = dequant_model({4}, {}, false);
  auto& g = *m.mutable_graph();
  *g.add_initializer() = scales("other_scale", {});
  add_node(g, "DequantizeLinear", {"wq", "other_scale"}, {"y2"}, "dq2");
  add_output_no_shape(g, "y2", onnx::TensorProto::FLOAT);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_FALSE(value_named(*r->graph, "wq").quant.has_value());
}

}  // namespace
}  // namespace infer::onnx_io
