#include "optimizer/qdq_lookup_fusion.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "optimizer/rewrite.hpp"
#include "qdq_test_graphs.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// Evaluates DequantizeLinear, Relu and QuantizeLinear (per tensor, uint8) written here
// from ONNX's definitions, standing in for the session's backend-backed evaluator; any
// other node is Unsupported.
class TestQdqEvaluator final : public ConstantEvaluator {
 public:
  mutable int calls = 0;

  Result<std::vector<ir::TensorDataPtr>> evaluate(const ir::Graph& g,
                                                  const ir::Node& n) const override {
    ++calls;
    const ir::TensorData& x = *constant_of(g, n.inputs[0]);
    const int64_t count = x.element_count();
    if (n.op_type == "DequantizeLinear") {
      const float s = constant_of(g, n.inputs[1])->as<float>()[0];
      const int z = constant_of(g, n.inputs[2])->as<uint8_t>()[0];
      std::vector<float> y(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i)
        y[static_cast<size_t>(i)] = static_cast<float>(x.as<uint8_t>()[i] - z) * s;
      return floats(x.dims(), y);
    }
    if (n.op_type == "Relu") {
      std::vector<float> y(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i)
        y[static_cast<size_t>(i)] = std::max(0.0f, x.as<float>()[i]);
      return floats(x.dims(), y);
    }
    if (n.op_type == "QuantizeLinear") {
      const float s = constant_of(g, n.inputs[1])->as<float>()[0];
      const int z = constant_of(g, n.inputs[2])->as<uint8_t>()[0];
      std::vector<uint8_t> y(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) {
        const double r = std::nearbyint(static_cast<double>(x.as<float>()[i] / s)) + z;
        y[static_cast<size_t>(i)] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, r)));
      }
      return std::vector<ir::TensorDataPtr>{
          std::make_shared<const ir::TensorData>(DataType::kUInt8, x.dims(), std::move(y))};
    }
    return unsupported("test evaluator: " + n.op_type);
  }

 private:
  static std::vector<ir::TensorDataPtr> floats(const std::vector<int64_t>& dims,
                                               const std::vector<float>& v) {
    std::vector<uint8_t> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return {std::make_shared<const ir::TensorData>(DataType::kFloat32, dims, std::move(bytes))};
  }
};

const std::vector<int64_t> kDims = {1, 2, 3, 3};

// x_q -> DQ (0.1, 100) -> op -> Q (0.05, 0) -> y_q.
void build(ir::Graph& g, const std::string& op, bool clip_min_input = false) {
  GraphBuilder b(g);
  qparams(b, "x", 0.1f, 100);
  qparams(b, "y", 0.05f, 0);
  b.typed("x_q", DataType::kUInt8, kDims);
  b.input("x_q");
  dequantize(b, "x_q", "x", "x", kDims);
  b.typed("f", DataType::kFloat32, kDims);
  if (clip_min_input) {
    b.typed("lo", DataType::kFloat32, std::vector<int64_t>{});
    b.input("lo");
    b.node("act", op, {"x", "lo"}, {"f"});
  } else {
    b.node("act", op, {"x"}, {"f"});
  }
  quantize(b, "f", "y", "y_q", kDims);
  b.output("y_q");
  g.rebuild_links();
}

int run(ir::Graph& g, const ConstantEvaluator* e, int64_t opset = 13) {
  PassContext c = context_at(opset);
  c.evaluator = e;
  return apply_pass<QdqLookupFusion>(g, c);
}

TEST(QdqLookupFusion, ReluBecomesATableOfTheChainOverAll256Values) {
  ir::Graph g;
  build(g, "Relu");
  TestQdqEvaluator eval;
  EXPECT_EQ(run(g, &eval), 1);
  EXPECT_EQ(op_types(g), Ops({"DequantizeLinear", "QLinearLookup"}));
  const ir::Node* n = find_op(g, "QLinearLookup");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain, "ai.infer");
  EXPECT_EQ(n->name, "act");
  ASSERT_EQ(n->inputs.size(), 2u);
  EXPECT_EQ(n->inputs[0], id_of(g, "x_q"));
  EXPECT_EQ(n->outputs[0], id_of(g, "y_q"));
  const ir::TensorData* t = constant_of(g, n->inputs[1]);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->dtype(), DataType::kUInt8);
  ASSERT_EQ(t->dims(), std::vector<int64_t>({256}));
  // By hand: values up to the zero point 100 are <= 0 after Relu; above it,
  // (i - 100) * 0.1 / 0.05 = 2 (i - 100), saturating at 255 from i = 228.
  for (int i = 0; i < 256; ++i) {
    const int want = i <= 100 ? 0 : std::min(255, 2 * (i - 100));
    EXPECT_EQ(t->as<uint8_t>()[i], want) << i;
  }
}

TEST(QdqLookupFusion, NeedsAnEvaluatorThatRunsTheChain) {
  {
    ir::Graph g;
    build(g, "Relu");
    EXPECT_EQ(run(g, nullptr), 0);
  }
  {
    ir::Graph g;  // the evaluator cannot run Tanh: nothing changes
    build(g, "Tanh");
    TestQdqEvaluator eval;
    EXPECT_EQ(run(g, &eval), 0);
    EXPECT_EQ(op_types(g), Ops({"DequantizeLinear", "Tanh", "QuantizeLinear"}));
  }
}

TEST(QdqLookupFusion, LeavesNonConstantOperandsOtherOpsAndOldOpsets) {
  TestQdqEvaluator eval;
  {
    ir::Graph g;  // Clip with a min computed at run time
    build(g, "Clip", /*clip_min_input=*/true);
    EXPECT_EQ(run(g, &eval), 0);
  }
  {
    ir::Graph g;  // not an elementwise function of one tensor
    build(g, "Softmax");
    EXPECT_EQ(run(g, &eval), 0);
  }
  {
    ir::Graph g;
    build(g, "Relu");
    EXPECT_EQ(run(g, &eval, 12), 0);
  }
  EXPECT_EQ(eval.calls, 0);
}

}  // namespace
}  // namespace infer::optimizer
