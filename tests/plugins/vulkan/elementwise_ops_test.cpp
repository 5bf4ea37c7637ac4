// The elementwise family against the cpu plugin: binary ops with every broadcasting
// pattern, comparisons, Where, unary ops and activations, Clip, Cast; and the capability
// answers for what the family does not take.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

class ElementwiseTest : public VulkanTest {
 protected:
  // A one-node graph of `op` over float inputs of the given shapes.
  void binary(const std::string& op, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
              const std::vector<int64_t>& y, uint32_t seed, infer_dtype out = INFER_DTYPE_FLOAT32,
              double tol = 1e-6) {
    GraphBuilder g;
    const std::string name = op + " " + dims_text(a) + " " + dims_text(b);
    g.node(op, {TensorSpec::f32("a", a), TensorSpec::f32("b", b)},
           {TensorSpec::of("y", out, y)});
    const infer_graph_view* graph = g.graph_auto({"y"}, name);
    SCOPED_TRACE(name);
    expect_same_as_cpu(graph, seed, tol, tol);
  }
  void unary(const std::string& op, const std::vector<AttrSpec>& attrs, float lo, float hi,
             double tol, uint32_t seed) {
    GraphBuilder g;
    const std::vector<int64_t> dims = {3, 5, 7};
    g.node(op, {TensorSpec::f32("x", dims)}, {TensorSpec::f32("y", dims)}, attrs);
    const infer_graph_view* graph = g.graph_auto({"y"}, op);
    SCOPED_TRACE(op);
    expect_same_as_cpu(graph, {random_f32(dims, seed, lo, hi)}, tol, tol);
  }
  static std::string dims_text(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
  }
};

TEST_F(ElementwiseTest, ArithmeticWithEveryBroadcastPattern) {
  struct Shapes {
    std::vector<int64_t> a, b, y;
  };
  const std::vector<Shapes> shapes = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},     // same shape: the flat path
      {{2, 3, 4}, {4}, {2, 3, 4}},           // trailing vector
      {{2, 3, 4}, {3, 1}, {2, 3, 4}},        // middle dim
      {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}},     // both sides broadcast
      {{}, {5, 2}, {5, 2}},                  // scalar
      {{1, 1, 1, 1, 1, 7}, {2, 1, 3, 1, 2, 1}, {2, 1, 3, 1, 2, 7}},  // rank 6
  };
  uint32_t seed = 1;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    for (const Shapes& s : shapes) binary(op, s.a, s.b, s.y, seed++, INFER_DTYPE_FLOAT32, 1e-5);
}

TEST_F(ElementwiseTest, PowHandlesNegativeBasesLikeOnnx) {
  // Integral exponents of negative bases are defined; others give NaN, like the cpu plugin.
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Pow", {TensorSpec::f32("a", {6}), TensorSpec::f32("b", {6})}, {TensorSpec::f32("y", {6})});
  std::vector<HostTensor> in = {HostTensor::f32({6}, {-2, -2, -8, 4, 0, 0}),
                                HostTensor::f32({6}, {2, 3, 0.5f, 0.5f, 2, 0})};
  RunResult r = run_vk(graph, in);
  ASSERT_TRUE(r.ok()) << r.status.message;
  std::vector<float> y = r.outputs[0].as<float>();
  EXPECT_FLOAT_EQ(y[0], 4);
  EXPECT_FLOAT_EQ(y[1], -8);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_FLOAT_EQ(y[3], 2);
  EXPECT_FLOAT_EQ(y[4], 0);
  EXPECT_FLOAT_EQ(y[5], 1);
  expect_same_as_cpu(graph, in, 1e-6, 1e-6);
  binary("Pow", {3, 4}, {4}, {3, 4}, 77, INFER_DTYPE_FLOAT32, 1e-5);
}

TEST_F(ElementwiseTest, ComparisonsProduceBool) {
  uint32_t seed = 100;
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    binary(op, {4, 5}, {5}, {4, 5}, seed++, INFER_DTYPE_BOOL);
    binary(op, {3, 1}, {1, 3}, {3, 3}, seed++, INFER_DTYPE_BOOL);
  }
  // Equal needs equal values to be interesting: compare a tensor with itself.
  GraphBuilder g;
  g.node("Equal", {TensorSpec::f32("a", {2, 2}), TensorSpec::f32("a", {2, 2})},
         {TensorSpec::of("y", INFER_DTYPE_BOOL, {2, 2})});
  RunResult r = run_vk(g.graph_auto({"y"}), {HostTensor::f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 1}));
}

TEST_F(ElementwiseTest, WhereBroadcastsAllThreeInputs) {
  GraphBuilder g;
  g.node("Where",
         {TensorSpec::of("c", INFER_DTYPE_BOOL, {2, 1, 4}), TensorSpec::f32("x", {3, 1}),
          TensorSpec::f32("z", {4})},
         {TensorSpec::f32("y", {2, 3, 4})});
  const infer_graph_view* graph = g.graph_auto({"y"}, "Where");
  expect_same_as_cpu(graph, 5, 0, 0);
  GraphBuilder g2;
  const infer_graph_view* hand = g2.single_node_graph(
      "Where",
      {TensorSpec::of("c", INFER_DTYPE_BOOL, {3}), TensorSpec::f32("x", {3}),
       TensorSpec::f32("z", {3})},
      {TensorSpec::f32("y", {3})});
  RunResult r = run_vk(hand, {HostTensor::boolean({3}, {1, 0, 1}), HostTensor::f32({3}, {1, 2, 3}),
                              HostTensor::f32({3}, {-1, -2, -3})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, -2, 3}));
}

TEST_F(ElementwiseTest, UnaryOpsMatchCpu) {
  uint32_t seed = 200;
  for (const char* op : {"Relu", "Tanh", "Sigmoid", "HardSwish", "Exp", "Abs", "Neg", "Erf",
                         "Softplus", "Softsign", "Floor", "Ceil", "Sign", "Sin", "Cos", "Round"})
    unary(op, {}, -3.0f, 3.0f, 2e-5, seed++);
  // Positive domains.
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) unary(op, {}, 0.1f, 4.0f, 2e-5, seed++);
  unary("LeakyRelu", {AttrSpec::Float("alpha", 0.2)}, -2, 2, 1e-6, seed++);
  unary("LeakyRelu", {}, -2, 2, 1e-6, seed++);
  unary("HardSigmoid", {AttrSpec::Float("alpha", 0.3), AttrSpec::Float("beta", 0.4)}, -4, 4, 1e-6,
        seed++);
  unary("Elu", {AttrSpec::Float("alpha", 0.7)}, -3, 3, 2e-5, seed++);
  unary("Selu", {}, -3, 3, 2e-5, seed++);
}

TEST_F(ElementwiseTest, ClipTakesConstantBoundsOrAttributes) {
  GraphBuilder g;
  g.node("Clip",
         {TensorSpec::f32("x", {4, 6}),
          TensorSpec::constant<float>("lo", INFER_DTYPE_FLOAT32, {}, {-0.25f}),
          TensorSpec::constant<float>("hi", INFER_DTYPE_FLOAT32, {}, {0.5f})},
         {TensorSpec::f32("y", {4, 6})});
  expect_same_as_cpu(g.graph_auto({"y"}, "Clip both"), 9, 0, 0);
  GraphBuilder g2;  // max only (min omitted)
  g2.node("Clip",
          {TensorSpec::f32("x", {4, 6}), TensorSpec::omitted(),
           TensorSpec::constant<float>("hi", INFER_DTYPE_FLOAT32, {}, {0.1f})},
          {TensorSpec::f32("y", {4, 6})});
  expect_same_as_cpu(g2.graph_auto({"y"}, "Clip max"), 10, 0, 0);
  GraphBuilder g3;  // opset 6: attributes
  g3.node("Clip", {TensorSpec::f32("x", {4, 6})}, {TensorSpec::f32("y", {4, 6})},
          {AttrSpec::Float("min", -0.3), AttrSpec::Float("max", 0.3)}, 6);
  RunResult r = run_vk(g3.graph_auto({"y"}), {HostTensor::f32({4, 6}, std::vector<float>(24, 0.9f))});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>(24, 0.3f));
}

TEST_F(ElementwiseTest, CastFloatToFloatCopies) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Cast", {TensorSpec::f32("x", {3, 3})}, {TensorSpec::f32("y", {3, 3})},
      {AttrSpec::Int("to", INFER_DTYPE_FLOAT32)});
  expect_same_as_cpu(graph, 11, 0, 0);
}

TEST_F(ElementwiseTest, ManyWorkgroupsAndTheFoldedGrid) {
  // More threads than one workgroup, and more workgroups than one grid row holds
  // (65535 x 256 threads): set_grid_1d folds them into a second grid dimension, and the
  // shaders' infer_flat_index() must unfold them. Checked against std::max directly
  // (the cpu plugin would only add time on 17M elements).
  for (int64_t n : {int64_t{257}, int64_t{5000}, int64_t{65535} * 256 + 1000}) {
    GraphBuilder g;
    const infer_graph_view* graph =
        g.single_node_graph("Relu", {TensorSpec::f32("x", {n})}, {TensorSpec::f32("y", {n})});
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = static_cast<float>(i % 1001) - 500.0f;
    RunResult r = run_vk(graph, {HostTensor::f32({n}, x)});
    ASSERT_TRUE(r.ok()) << r.status.message;
    std::vector<float> y = r.outputs[0].as<float>();
    int64_t first_bad = -1;
    for (int64_t i = 0; i < n && first_bad < 0; ++i)
      if (y[size_t(i)] != std::max(x[size_t(i)], 0.0f)) first_bad = i;
    EXPECT_EQ(first_bad, -1) << "n=" << n;
  }
}

TEST_F(ElementwiseTest, CapabilitySaysNoWithReasons) {
  {
    GraphBuilder g;
    g.single_node_graph("Add", {TensorSpec::of("a", INFER_DTYPE_INT32, {2}),
                                TensorSpec::of("b", INFER_DTYPE_INT32, {2})},
                        {TensorSpec::of("y", INFER_DTYPE_INT32, {2})});
    infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("only float32"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.single_node_graph("Max", {TensorSpec::f32("a", {2}), TensorSpec::f32("b", {2}),
                                TensorSpec::f32("c", {2})},
                        {TensorSpec::f32("y", {2})});
    infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("only 2 are supported"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;  // Clip with a computed bound
    g.single_node_graph("Clip", {TensorSpec::f32("x", {2}), TensorSpec::f32("lo", {})},
                        {TensorSpec::f32("y", {2})});
    infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("constants"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.single_node_graph("Cast", {TensorSpec::f32("x", {2})},
                        {TensorSpec::of("y", INFER_DTYPE_INT32, {2})},
                        {AttrSpec::Int("to", INFER_DTYPE_INT32)});
    infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  }
  {
    GraphBuilder g;
    g.single_node_graph("Add", {TensorSpec::f32("a", {64, 64}), TensorSpec::f32("b", {64, 64})},
                        {TensorSpec::f32("y", {64, 64})});
    infer_capability cap = capability(g.last_node());
    EXPECT_NE(cap.support, INFER_SUPPORT_NO);
    EXPECT_GT(cap.est_time_us, 0);
    EXPECT_EQ(cap.est_memory_bytes, 64 * 64 * 4);
  }
}

}  // namespace
}  // namespace infer::test::vk
