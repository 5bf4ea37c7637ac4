// MatMul, Gemm, FusedMatMul and FusedGemm on the vulkan plugin (gemm_tiled.comp): hand-
// computed products, then the cpu plugin as the reference over odd sizes (tile edges in
// M, N and K), transposes, 1-D operands, broadcast batches (including more batch dims
// than the shader's grid takes), C broadcasts, every fused activation, and the
// capability answers for what the kernels do not take.
#include <cstring>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

constexpr double kTol = 1e-4;

class MatMulOpsTest : public VulkanTest {
 protected:
  // A one-node graph of `op` (domain "" or "ai.infer") whose graph inputs are the node's
  // non-constant inputs, named after the case for failure messages.
  const infer_graph_view* one_node(GraphBuilder& g, const std::string& domain,
                                   const std::string& op, const std::vector<TensorSpec>& inputs,
                                   const TensorSpec& output, const std::vector<AttrSpec>& attrs,
                                   const std::string& name) {
    g.node(op, inputs, {output}, attrs, domain.empty() ? 17 : 1, "", domain);
    return g.graph_auto({output.name}, name);
  }

  void matmul(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
              const std::vector<int64_t>& y, uint32_t seed) {
    GraphBuilder g;
    const std::string name = "MatMul " + dims_str(a) + " x " + dims_str(b);
    const infer_graph_view* graph =
        one_node(g, "", "MatMul", {TensorSpec::f32("a", a), TensorSpec::f32("b", b)},
                 TensorSpec::f32("y", y), {}, name);
    SCOPED_TRACE(name);
    expect_same_as_cpu(graph, seed, kTol, kTol);
  }

  void gemm(int64_t M, int64_t N, int64_t K, bool ta, bool tb, float alpha, float beta,
            const std::vector<int64_t>* c, uint32_t seed, const std::string& op = "Gemm",
            const std::vector<AttrSpec>& extra = {}) {
    GraphBuilder g;
    std::vector<TensorSpec> inputs = {
        TensorSpec::f32("a", ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}),
        TensorSpec::f32("b", tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N})};
    if (c != nullptr) inputs.push_back(TensorSpec::f32("c", *c));
    std::vector<AttrSpec> attrs = {AttrSpec::Int("transA", ta), AttrSpec::Int("transB", tb),
                                   AttrSpec::Float("alpha", alpha), AttrSpec::Float("beta", beta)};
    attrs.insert(attrs.end(), extra.begin(), extra.end());
    const std::string name = op + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
                             " K=" + std::to_string(K) + " transA=" + std::to_string(ta) +
                             " transB=" + std::to_string(tb) +
                             (c ? " C=" + dims_str(*c) : std::string(" no C"));
    const infer_graph_view* graph = one_node(g, op == "Gemm" ? "" : "ai.infer", op, inputs,
                                             TensorSpec::f32("y", {M, N}), attrs, name);
    SCOPED_TRACE(name);
    expect_same_as_cpu(graph, seed, kTol, kTol);
  }


  static std::string dims_str(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
  }
};

TEST_F(MatMulOpsTest, MatMulMatchesHandComputedProduct) {
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("MatMul", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3, 2})},
                          {TensorSpec::f32("y", {2, 2})});
  RunResult r = run_vk(graph, {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                               HostTensor::f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{58, 64, 139, 154}));
}

TEST_F(MatMulOpsTest, GemmMatchesHandComputedValues) {
  // A = [[1,2],[3,4]], B stored transposed [[1,0],[1,1]] so B' = [[1,1],[0,1]]:
  // A B' = [[1,3],[3,7]]; 2 * A B' + 0.5 * [10, 20] = [[7,16],[11,24]].
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Gemm",
      {TensorSpec::f32("a", {2, 2}), TensorSpec::f32("b", {2, 2}), TensorSpec::f32("c", {2})},
      {TensorSpec::f32("y", {2, 2})},
      {AttrSpec::Int("transB", 1), AttrSpec::Float("alpha", 2), AttrSpec::Float("beta", 0.5)});
  RunResult r =
      run_vk(graph, {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::f32({2, 2}, {1, 0, 1, 1}),
                     HostTensor::f32({2}, {10, 20})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{7, 16, 11, 24}));
}

TEST_F(MatMulOpsTest, FusedMatMulMatchesHandComputedValues) {
  // [[1,2],[3,4]] x [[1,-1],[2,0]] = [[5,-1],[11,-3]]; + bias [1, 2] = [[6,1],[12,-1]];
  // Relu clears the negative entry.
  GraphBuilder g;
  g.node("FusedMatMul",
         {TensorSpec::f32("a", {2, 2}), TensorSpec::f32("b", {2, 2}), TensorSpec::f32("bias", {2})},
         {TensorSpec::f32("y", {2, 2})}, {AttrSpec::String("activation", "Relu")}, 1, "fmm",
         "ai.infer");
  const infer_graph_view* graph = g.graph_auto({"y"});
  RunResult r =
      run_vk(graph, {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::f32({2, 2}, {1, -1, 2, 0}),
                     HostTensor::f32({2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{6, 1, 12, 0}));
}

TEST_F(MatMulOpsTest, MatMulOddSizesMatchCpu) {
  const std::vector<std::vector<int64_t>> mnk = {
      {1, 1, 1},    {7, 17, 65},  {65, 7, 17},  {17, 65, 7},  {1, 65, 17},
      {1, 7, 65},   {7, 1, 17},   {64, 64, 64}, {65, 65, 65}, {130, 70, 33},
      {17, 130, 1}, {70, 9, 100}, {33, 40, 5},  {9, 100, 12}};
  uint32_t seed = 10;
  for (const auto& s : mnk) matmul({s[0], s[2]}, {s[2], s[1]}, {s[0], s[1]}, seed++);
}

TEST_F(MatMulOpsTest, MatMulOneDimensionalOperandsMatchCpu) {
  matmul({17}, {17, 7}, {7}, 1);
  matmul({7, 17}, {17}, {7}, 2);
  matmul({17}, {17}, {}, 3);
  matmul({2, 3, 5, 17}, {17}, {2, 3, 5}, 4);
  matmul({17}, {3, 17, 5}, {3, 5}, 5);
}

TEST_F(MatMulOpsTest, MatMulBatchesMatchCpu) {
  matmul({3, 7, 17}, {3, 17, 5}, {3, 7, 5}, 20);         // same batch
  matmul({4, 7, 5}, {5, 9}, {4, 7, 9}, 21);              // B shared: folds into M
  matmul({2, 3, 65, 17}, {17, 66}, {2, 3, 65, 66}, 22);  // folded, two big tiles
  matmul({7, 5}, {4, 5, 9}, {4, 7, 9}, 23);              // A shared
  matmul({1, 7, 5}, {4, 5, 9}, {4, 7, 9}, 24);
  matmul({2, 1, 7, 5}, {3, 5, 9}, {2, 3, 7, 9}, 25);  // both broadcast
  matmul({2, 3, 1, 7, 5}, {1, 3, 4, 5, 6}, {2, 3, 4, 7, 6}, 26);
  // Five batch dims that cannot be merged: two of them run as separate dispatches.
  matmul({2, 3, 2, 3, 2, 4, 5}, {2, 1, 2, 1, 2, 5, 3}, {2, 3, 2, 3, 2, 4, 3}, 27);
}

TEST_F(MatMulOpsTest, MoreBatchesThanOneGridDimensionMatchCpu) {
  // 70000 batches: more than the 65535 workgroups of the grid's z dimension.
  matmul({70000, 1, 2}, {70000, 2, 1}, {70000, 1, 1}, 28);
}

TEST_F(MatMulOpsTest, MatMulTransformerShapeMatchesCpu) {
  matmul({1, 128, 256}, {256, 256}, {1, 128, 256}, 30);
  matmul({4, 32, 16}, {4, 16, 32}, {4, 32, 32}, 31);  // per-head scores
}

TEST_F(MatMulOpsTest, GemmTransposesAndScalesMatchCpu) {
  const std::vector<int64_t> c_row = {65};
  uint32_t seed = 40;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      gemm(7, 65, 17, ta, tb, 1.0f, 1.0f, nullptr, seed++);
      gemm(70, 65, 33, ta, tb, 0.5f, 2.0f, &c_row, seed++);
      gemm(1, 17, 9, ta, tb, -1.5f, 1.0f, nullptr, seed++);
    }
}

TEST_F(MatMulOpsTest, GemmCBroadcastsMatchCpu) {
  const std::vector<std::vector<int64_t>> shapes = {{},     {1},     {17},  {1, 17},
                                                    {9, 1}, {9, 17}, {1, 1}};
  uint32_t seed = 60;
  for (const auto& c : shapes) gemm(9, 17, 13, false, true, 1.0f, 0.75f, &c, seed++);
  // beta = 0 ignores C entirely.
  const std::vector<int64_t> full = {9, 17};
  gemm(9, 17, 13, false, false, 1.0f, 0.0f, &full, seed++);
}

TEST_F(MatMulOpsTest, FusedGemmActivationsMatchCpu) {
  struct Act {
    const char* name;
    std::vector<double> params;
  };
  const std::vector<Act> acts = {
      {"Relu", {}},         {"Tanh", {}},          {"Sigmoid", {}},
      {"LeakyRelu", {0.1}}, {"Clip", {-0.5, 0.5}}, {"HardSigmoid", {0.2, 0.5}},
      {"HardSwish", {}},    {"Gelu", {}},          {"GeluTanh", {}}};
  const std::vector<int64_t> c = {33};
  uint32_t seed = 80;
  for (const Act& a : acts) {
    std::vector<AttrSpec> extra = {AttrSpec::String("activation", a.name)};
    if (!a.params.empty()) extra.push_back(AttrSpec::Floats("activation_params", a.params));
    SCOPED_TRACE(a.name);
    gemm(17, 33, 20, false, true, 1.5f, 1.0f, &c, seed++, "FusedGemm", extra);
  }
}

TEST_F(MatMulOpsTest, FusedMatMulBiasAndActivationMatchCpu) {
  struct Case {
    std::vector<int64_t> a, b, bias, y;
    const char* act;
  };
  const std::vector<Case> cases = {
      {{7, 17}, {17, 65}, {65}, {7, 65}, "Relu"},
      {{2, 70, 33}, {33, 66}, {66}, {2, 70, 66}, "Gelu"},
      {{3, 5, 9}, {3, 9, 7}, {7}, {3, 5, 7}, "LeakyRelu"},
      {{17}, {17, 9}, {9}, {9}, ""},
      {{2, 5, 17}, {17}, {5}, {2, 5}, "Tanh"},  // B 1-D: Y ends in M, the bias runs along M
      {{4, 8}, {8, 6}, {6}, {4, 6}, "Sigmoid"},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    GraphBuilder g;
    std::vector<AttrSpec> attrs;
    if (std::string(c.act) == "LeakyRelu")
      attrs.push_back(AttrSpec::Floats("activation_params", {0.2}));
    if (*c.act) attrs.push_back(AttrSpec::String("activation", c.act));
    const std::string name =
        std::string("FusedMatMul ") + dims_str(c.a) + " x " + dims_str(c.b) + " " + c.act;
    const infer_graph_view* graph = one_node(
        g, "ai.infer", "FusedMatMul",
        {TensorSpec::f32("a", c.a), TensorSpec::f32("b", c.b), TensorSpec::f32("bias", c.bias)},
        TensorSpec::f32("y", c.y), attrs, name);
    SCOPED_TRACE(name);
    expect_same_as_cpu(graph, seed++, kTol, kTol);
  }
}

TEST_F(MatMulOpsTest, ConstantWeightsMatchCpu) {
  // Weights are usually initializers: the runtime uploads them, the kernel binds them.
  GraphBuilder g;
  const HostTensor w = random_f32({33, 20}, 7);
  const infer_graph_view* graph =
      one_node(g, "", "MatMul",
               {TensorSpec::f32("a", {5, 33}),
                TensorSpec::constant<float>("w", INFER_DTYPE_FLOAT32, {33, 20}, w.as<float>())},
               TensorSpec::f32("y", {5, 20}), {}, "MatMul constant B");
  expect_same_as_cpu(graph, 8, kTol, kTol);
}

TEST_F(MatMulOpsTest, CapabilitySaysNoWithReasons) {
  {
    GraphBuilder g;
    g.node("MatMul",
           {TensorSpec::of("a", INFER_DTYPE_INT32, {2, 3}),
            TensorSpec::of("b", INFER_DTYPE_INT32, {3, 2})},
           {TensorSpec::of("y", INFER_DTYPE_INT32, {2, 2})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("float32"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("Gemm", {TensorSpec::f32("a", {2, 3, 4}), TensorSpec::f32("b", {4, 2})},
           {TensorSpec::f32("y", {2, 2})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("rank"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("FusedGemm", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3, 2})},
           {TensorSpec::f32("y", {2, 2})}, {AttrSpec::String("activation", "Softplus")}, 1, "",
           "ai.infer");
    EXPECT_EQ(capability(g.last_node()).support, INFER_SUPPORT_NO);
  }
  {
    GraphBuilder g;
    g.node("MatMul", {TensorSpec::f32("a", {4, 8}), TensorSpec::f32("b", {8, 6})},
           {TensorSpec::f32("y", {4, 6})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_NE(cap.support, INFER_SUPPORT_NO) << cap.reason;
  }
}

}  // namespace
}  // namespace infer::test::vk
