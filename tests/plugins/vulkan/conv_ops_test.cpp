// Conv and FusedConv on the vulkan plugin (conv_gemm.comp, conv_depthwise.comp): a hand-
// computed conv, then the cpu plugin as the reference over strides, asymmetric pads,
// dilations, auto_pad, groups, depthwise (with and without a channel multiplier), 1x1,
// ResNet's 7x7 stride-2 stem, 1-D convs, weights computed at run time, the fused bias,
// residual and activations, one realistic 3x3 64->64 layer, and the capability answers.
#include <cstring>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

constexpr double kTol = 1e-4;

struct ConvCase {
  std::vector<int64_t> x, w, y;
  std::vector<AttrSpec> attrs;
  bool bias = true;
};

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

class ConvOpsTest : public VulkanTest {
 protected:
  // Runs one Conv (or FusedConv with `fused_attrs`, and a residual when `residual`) on
  // both plugins. The weights (and bias) are constants, as in a model.
  void conv(const ConvCase& c, uint32_t seed, bool fused = false, bool residual = false,
            const std::vector<AttrSpec>& fused_attrs = {}, double atol = kTol) {
    GraphBuilder g;
    const int64_t M = c.w[0];
    std::vector<TensorSpec> inputs = {
        TensorSpec::f32("x", c.x),
        TensorSpec::constant<float>("w", INFER_DTYPE_FLOAT32, c.w,
                                    random_f32(c.w, seed + 1000).as<float>())};
    if (c.bias || residual)
      inputs.push_back(c.bias
                           ? TensorSpec::constant<float>("b", INFER_DTYPE_FLOAT32, {M},
                                                         random_f32({M}, seed + 2000).as<float>())
                           : TensorSpec::omitted());
    if (residual) inputs.push_back(TensorSpec::f32("z", c.y));
    std::vector<AttrSpec> attrs = c.attrs;
    attrs.insert(attrs.end(), fused_attrs.begin(), fused_attrs.end());
    const std::string name = std::string(fused ? "FusedConv" : "Conv") + " x" + dims_str(c.x) +
                             " w" + dims_str(c.w) + (residual ? " +Z" : "");
    g.node(fused ? "FusedConv" : "Conv", inputs, {TensorSpec::f32("y", c.y)}, attrs, fused ? 1 : 17,
           "conv", fused ? "ai.infer" : "");
    const infer_graph_view* graph = g.graph_auto({"y"}, name);
    SCOPED_TRACE(name);
    expect_same_as_cpu(graph, seed, atol, kTol);
  }

};

AttrSpec pads(std::vector<int64_t> v) { return AttrSpec::Ints("pads", std::move(v)); }
AttrSpec strides(std::vector<int64_t> v) { return AttrSpec::Ints("strides", std::move(v)); }
AttrSpec dilations(std::vector<int64_t> v) { return AttrSpec::Ints("dilations", std::move(v)); }

TEST_F(ConvOpsTest, ConvMatchesHandComputedValues) {
  // X = 1..9 (3x3), W = [[1,2],[3,4]], bias 0.5:
  // y00 = 1 + 4 + 12 + 20 = 37, y01 = 2 + 6 + 15 + 24 = 47,
  // y10 = 4 + 10 + 21 + 32 = 67, y11 = 5 + 12 + 24 + 36 = 77.
  GraphBuilder g;
  g.node("Conv",
         {TensorSpec::f32("x", {1, 1, 3, 3}),
          TensorSpec::constant<float>("w", INFER_DTYPE_FLOAT32, {1, 1, 2, 2}, {1, 2, 3, 4}),
          TensorSpec::constant<float>("b", INFER_DTYPE_FLOAT32, {1}, {0.5f})},
         {TensorSpec::f32("y", {1, 1, 2, 2})});
  const infer_graph_view* graph = g.graph_auto({"y"});
  RunResult r = run_vk(graph, {HostTensor::f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{37.5f, 47.5f, 67.5f, 77.5f}));
}

TEST_F(ConvOpsTest, GroupedConvMatchesHandComputedValues) {
  // Two groups of one channel with 1x1 kernels: y0 = 2 * x0, y1 = -x1, plus a residual
  // through FusedConv and Relu: act(y + z).
  GraphBuilder g;
  g.node("FusedConv",
         {TensorSpec::f32("x", {1, 2, 1, 2}),
          TensorSpec::constant<float>("w", INFER_DTYPE_FLOAT32, {2, 1, 1, 1}, {2, -1}),
          TensorSpec::omitted(), TensorSpec::f32("z", {1, 2, 1, 2})},
         {TensorSpec::f32("y", {1, 2, 1, 2})},
         {AttrSpec::Int("group", 2), AttrSpec::String("activation", "Relu")}, 1, "fc", "ai.infer");
  const infer_graph_view* graph = g.graph_auto({"y"});
  RunResult r = run_vk(graph, {HostTensor::f32({1, 2, 1, 2}, {1, 2, 3, 4}),
                               HostTensor::f32({1, 2, 1, 2}, {0.5f, -5, 1, 10})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  // [2, 4] + [0.5, -5] -> [2.5, 0]; [-3, -4] + [1, 10] -> [0, 6].
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2.5f, 0, 0, 6}));
}

TEST_F(ConvOpsTest, StridesPadsDilationsMatchCpu) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 7, 7}, {5, 3, 3, 3}, {1, 5, 7, 7}, {pads({1, 1, 1, 1})}},
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {2, 4, 4, 4}, {strides({2, 2}), pads({0, 1, 1, 0})}, false},
      {{1, 2, 11, 9}, {3, 2, 3, 3}, {1, 3, 7, 5}, {dilations({2, 2})}},
      {{1, 2, 10, 10},
       {3, 2, 3, 2},
       {1, 3, 5, 6},
       {dilations({2, 1}), strides({2, 2}), pads({1, 2, 2, 1})}},
      {{1, 4, 5, 13}, {6, 4, 1, 5}, {1, 6, 5, 9}, {}},
      {{1, 17, 6, 6}, {7, 17, 3, 3}, {1, 7, 4, 4}, {}},  // K = 153: ten K slices
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) conv(c, seed++);
}

TEST_F(ConvOpsTest, AutoPadMatchesCpu) {
  const std::vector<int64_t> x = {1, 3, 9, 10}, w = {4, 3, 3, 3};
  conv({x, w, {1, 4, 5, 5}, {AttrSpec::String("auto_pad", "SAME_UPPER"), strides({2, 2})}}, 20);
  conv({x, w, {1, 4, 5, 5}, {AttrSpec::String("auto_pad", "SAME_LOWER"), strides({2, 2})}}, 21);
  conv({x, {4, 3, 4, 4}, {1, 4, 9, 10}, {AttrSpec::String("auto_pad", "SAME_LOWER")}}, 22);
  conv({x, w, {1, 4, 7, 8}, {AttrSpec::String("auto_pad", "VALID")}}, 23);
}

TEST_F(ConvOpsTest, GroupsAndDepthwiseMatchCpu) {
  const std::vector<ConvCase> cases = {
      {{1, 4, 9, 9}, {6, 2, 3, 3}, {1, 6, 9, 9}, {AttrSpec::Int("group", 2), pads({1, 1, 1, 1})}},
      {{2, 6, 7, 7}, {9, 2, 3, 3}, {2, 9, 3, 3}, {AttrSpec::Int("group", 3), strides({2, 2})}},
      // Depthwise, as in MobileNet: stride 2, pad 1.
      {{1, 8, 10, 10},
       {8, 1, 3, 3},
       {1, 8, 5, 5},
       {AttrSpec::Int("group", 8), strides({2, 2}), pads({1, 1, 1, 1})}},
      {{2, 5, 9, 7},
       {5, 1, 5, 5},
       {2, 5, 9, 7},
       {AttrSpec::Int("group", 5), pads({2, 2, 2, 2})},
       false},
      // Channel multiplier 2 and dilation.
      {{1, 4, 8, 8}, {8, 1, 3, 3}, {1, 8, 4, 4}, {AttrSpec::Int("group", 4), dilations({2, 2})}},
      // One input channel: the direct shader as well.
      {{1, 1, 12, 12}, {6, 1, 3, 3}, {1, 6, 10, 10}, {}},
  };
  uint32_t seed = 30;
  for (const ConvCase& c : cases) conv(c, seed++);
}

TEST_F(ConvOpsTest, PointwiseAndResNetStemMatchCpu) {
  conv({{2, 16, 7, 7}, {24, 16, 1, 1}, {2, 24, 7, 7}, {}}, 40);               // 1x1
  conv({{1, 70, 5, 5}, {66, 70, 1, 1}, {1, 66, 5, 5}, {}, false}, 41);        // 1x1, big tiles
  conv({{1, 8, 9, 9}, {12, 8, 1, 1}, {1, 12, 5, 5}, {strides({2, 2})}}, 42);  // 1x1 stride 2
  conv({{1, 8, 9, 9}, {70, 8, 3, 3}, {1, 70, 9, 9}, {pads({1, 1, 1, 1})}}, 43);
  conv({{1, 3, 32, 32}, {16, 3, 7, 7}, {1, 16, 16, 16}, {strides({2, 2}), pads({3, 3, 3, 3})}}, 44);
}

TEST_F(ConvOpsTest, MorePlanesThanOneGridDimensionMatchCpu) {
  // 70000 depthwise planes, and 2 images x 35000 groups: beyond the grid's 65535 in z.
  conv({{1, 70000, 1, 2}, {70000, 1, 1, 2}, {1, 70000, 1, 1}, {AttrSpec::Int("group", 70000)}}, 55);
  conv({{2, 70000, 1, 1}, {35000, 2, 1, 1}, {2, 35000, 1, 1}, {AttrSpec::Int("group", 35000)}}, 56);
}

TEST_F(ConvOpsTest, OneDimensionalConvMatchesCpu) {
  conv({{2, 3, 17}, {4, 3, 3}, {2, 4, 9}, {strides({2}), pads({1, 1})}}, 50);
  conv({{1, 4, 20}, {4, 1, 5}, {1, 4, 8}, {AttrSpec::Int("group", 4), dilations({3})}}, 51);
  conv({{1, 2, 9}, {5, 2, 1}, {1, 5, 9}, {}, false}, 52);
}

TEST_F(ConvOpsTest, RuntimeWeightsMatchCpu) {
  // W as a graph input (computed upstream), not a constant.
  GraphBuilder g;
  g.node("Conv", {TensorSpec::f32("x", {1, 3, 6, 6}), TensorSpec::f32("w", {4, 3, 3, 3})},
         {TensorSpec::f32("y", {1, 4, 6, 6})}, {pads({1, 1, 1, 1})});
  expect_same_as_cpu(g.graph_auto({"y"}, "Conv with runtime W"), 60, kTol, kTol);
}

TEST_F(ConvOpsTest, FusedConvResidualAndActivationsMatchCpu) {
  struct Act {
    const char* name;
    std::vector<double> params;
  };
  const std::vector<Act> acts = {{"Relu", {}},      {"LeakyRelu", {0.1}}, {"Clip", {0, 6}},
                                 {"HardSwish", {}}, {"Sigmoid", {}},      {"Gelu", {}}};
  const ConvCase c = {{1, 6, 8, 8}, {10, 6, 3, 3}, {1, 10, 8, 8}, {pads({1, 1, 1, 1})}};
  const ConvCase dw = {{1, 6, 8, 8},
                       {6, 1, 3, 3},
                       {1, 6, 4, 4},
                       {AttrSpec::Int("group", 6), strides({2, 2}), pads({1, 1, 1, 1})}};
  uint32_t seed = 70;
  for (const Act& a : acts) {
    std::vector<AttrSpec> fa = {AttrSpec::String("activation", a.name)};
    if (!a.params.empty()) fa.push_back(AttrSpec::Floats("activation_params", a.params));
    SCOPED_TRACE(a.name);
    conv(c, seed++, true, false, fa);
    conv(c, seed++, true, true, fa);
    conv(dw, seed++, true, true, fa);
  }
  // A residual without bias, and no activation at all.
  ConvCase nb = c;
  nb.bias = false;
  conv(nb, seed++, true, true, {});
}

TEST_F(ConvOpsTest, ResNetLayerMatchesCpu) {
  // A realistic 3x3 64 -> 64 layer on 56x56 with residual and Relu (a ResNet block). Each
  // output sums 576 products, with partial sums around 10, and the cpu plugin runs this
  // shape with Winograd F(4x4, 3x3), whose rounding differs from a direct sum by up to
  // ~1e-4 absolute: the tolerance is relative to the sums' magnitude, not the outputs'.
  conv({{1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56}, {pads({1, 1, 1, 1})}}, 90, true, true,
       {AttrSpec::String("activation", "Relu")}, 5e-4);
}

TEST_F(ConvOpsTest, CapabilitySaysNoWithReasons) {
  {
    GraphBuilder g;
    g.node("Conv", {TensorSpec::f32("x", {1, 2, 4, 4, 4}), TensorSpec::f32("w", {3, 2, 2, 2, 2})},
           {TensorSpec::f32("y", {1, 3, 3, 3, 3})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("3-D"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("Conv",
           {TensorSpec::of("x", INFER_DTYPE_FLOAT16, {1, 2, 4, 4}),
            TensorSpec::of("w", INFER_DTYPE_FLOAT16, {3, 2, 2, 2})},
           {TensorSpec::of("y", INFER_DTYPE_FLOAT16, {1, 3, 3, 3})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("float32"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("Conv", {TensorSpec::f32("x", {1, 2, 4, 4}), TensorSpec::f32("w", {3, 2, 2, 2})},
           {TensorSpec::f32("y", {1, 3, 3, 3})}, {AttrSpec::String("auto_pad", "BOGUS")});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("auto_pad"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("Conv", {TensorSpec::f32("x", {1, 2, 4, 4}), TensorSpec::f32("w", {3, 2, 2, 2})},
           {TensorSpec::f32("y", {1, 3, 3, 3})});
    EXPECT_NE(capability(g.last_node()).support, INFER_SUPPORT_NO);
  }
}

TEST_F(ConvOpsTest, ResidualOfTheWrongShapeFailsTheRun) {
  GraphBuilder g;
  g.node("FusedConv",
         {TensorSpec::f32("x", {1, 2, 4, 4}),
          TensorSpec::constant<float>("w", INFER_DTYPE_FLOAT32, {3, 2, 1, 1},
                                      random_f32({3, 2, 1, 1}, 1).as<float>()),
          TensorSpec::omitted(), TensorSpec::f32("z", {1, 3, 4, 3})},
         {TensorSpec::f32("y", {1, 3, 4, 4})}, {}, 1, "bad_residual", "ai.infer");
  const infer_graph_view* graph = g.graph_auto({"y"});
  RunResult r = run_vk(graph, random_inputs(graph, 5));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status.message.find("residual Z"), std::string::npos) << r.status.message;
}

}  // namespace
}  // namespace infer::test::vk
