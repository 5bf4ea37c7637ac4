// ONNX's checker under infer's policy (core/onnx/model_check.hpp, schema_policy.hpp).
#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using testing::add_input;
using testing::add_node;
using testing::add_output;
using testing::add_output_no_shape;
using ::testing::HasSubstr;
using testing::node_named;
using ::testing::Not;
using testing::sym;
using testing::TempDir;
using testing::value_named;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

Result<ir::Model> load(const onnx::ModelProto& m, const LoadOptions& options = {}) {
  TempDir dir;
  return testing::save_and_load(m, dir, options);
}

// x -> <op in domain> -> t -> Relu -> y
onnx::ModelProto one_op_model(const std::string& op, const std::string& domain,
                              int64_t opset = 13) {
  onnx::ModelProto m = testing::make_model(opset);
  if (!domain.empty()) testing::import_domain(m, domain, 1);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {sym("N"), int64_t{4}});
  add_node(g, op, {"x"}, {"t"}, "op", domain);
  add_node(g, "Relu", {"t"}, {"y"}, "relu");
  add_output_no_shape(g, "y", kFloat);
  return m;
}

TEST(CheckerPolicy, CustomDomainOperatorLoads) {
  auto r = load(one_op_model("FusedGelu", "com.acme"));
  ASSERT_LOADED(r);
  const ir::Node* op = node_named(*r->graph, "op");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->op_type, "FusedGelu");
  EXPECT_EQ(op->domain, "com.acme");
  EXPECT_EQ(r->opset("com.acme"), 1);
}

TEST(CheckerPolicy, UnknownOperatorOfTheOnnxDomainFailsTheChecker) {
  auto r = load(one_op_model("Frobnicate", ""));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("node 'op' (Frobnicate): ONNX checker: "));
  EXPECT_THAT(r.status().message(), HasSubstr("Frobnicate"));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("\n")));
}

TEST(CheckerPolicy, UnknownOperatorLoadsWithoutTheChecker) {
  // Shape inference skips the operator it has no schema for instead of failing.
  auto r = load(one_op_model("Frobnicate", ""), LoadOptions{.run_checker = false});
  ASSERT_LOADED(r);
  EXPECT_EQ(testing::op_types(*r->graph), (std::vector<std::string>{"Frobnicate", "Relu"}));
  EXPECT_EQ(value_named(*r->graph, "x").shape.to_string(), "[N,4]");
}

TEST(CheckerPolicy, SchemaViolationNamesTheNodeOnOneLine) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Relu", {"x", "x"}, {"y"}, "two_input_relu");
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("model '"));
  EXPECT_THAT(r.status().message(), HasSubstr("node 'two_input_relu' (Relu): ONNX checker: "));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("\n")));
}

TEST(CheckerPolicy, SchemaViolationInsideABodyNamesThePath) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_input(g, "c", onnx::TensorProto::BOOL, {});
  auto* if_node = add_node(g, "If", {"c"}, {"y"}, "branch");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* body = testing::add_attr(if_node, name, onnx::AttributeProto::GRAPH)->mutable_g();
    body->set_name(name);
    add_node(*body, "Relu", {"x", "x"}, {std::string(name) + "_out"}, std::string(name) + "_relu");
    add_output(*body, std::string(name) + "_out", kFloat, {int64_t{2}});
  }
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("node 'branch' (If): attribute 'then_branch': node 'then_branch_relu' "
                        "(Relu): ONNX checker: "));
}

TEST(CheckerPolicy, NewerIrVersionLoads) {
  onnx::ModelProto m = testing::relu_model();
  m.set_ir_version(10);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(r->ir_version, 10);
}

TEST(CheckerPolicy, OutputWithoutShapeLoads) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{3}});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "y").shape.to_string(), "[3]");
}

TEST(CheckerPolicy, OpsetNewerThanTheBundledOnnxUsesNoOldSchema) {
  // ReduceMean-18 takes its axes as an input. The bundled ONNX (opset 17) only knows
  // ReduceMean-13, whose schema allows one input: using it would reject the node, and
  // inferring with it would reduce all axes and get the shape wrong.
  onnx::ModelProto m = testing::make_model(18, 8);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {sym("N"), int64_t{4}});
  onnx::TensorProto axes = testing::make_tensor("axes", onnx::TensorProto::INT64, {1});
  axes.add_int64_data(1);
  *g.add_initializer() = axes;
  auto* reduce = add_node(g, "ReduceMean", {"x", "axes"}, {"y"}, "mean");
  testing::attr_int(reduce, "keepdims", 0);
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(r->opset(""), 18);
  const ir::Value& y = value_named(*r->graph, "y");
  EXPECT_EQ(y.dtype, DataType::kFloat32);
  EXPECT_FALSE(y.shape.rank_known());  // unknown rather than wrong
}

TEST(CheckerPolicy, OperatorIntroducedAfterTheBundledOnnxLoads) {
  // Gelu joined the ONNX domain in opset 20.
  onnx::ModelProto m = one_op_model("Gelu", "", 20);
  m.set_ir_version(9);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(node_named(*r->graph, "op")->op_type, "Gelu");
}

}  // namespace
}  // namespace infer::onnx_io
