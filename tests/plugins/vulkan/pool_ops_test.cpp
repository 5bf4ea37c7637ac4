// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool on the vulkan plugin
// (pool2d.comp, pool_global.comp): hand-computed pools, then the cpu plugin as the
// reference over strides, pads, dilations, ceil_mode, auto_pad, count_include_pad, 1-D
// windows, small and large global planes, and the capability answers.
#include <cstring>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

constexpr double kTol = 1e-5;

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

class PoolOpsTest : public VulkanTest {
 protected:
  void pool(const std::string& op, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
            const std::vector<AttrSpec>& attrs, uint32_t seed, int64_t opset = 19) {
    GraphBuilder g;
    std::string name = op + " " + dims_str(x) + " ->" + dims_str(y);
    for (const AttrSpec& a : attrs) {
      name += " " + a.name + "=";
      name += a.type == INFER_ATTR_INTS     ? dims_str(a.ints)
              : a.type == INFER_ATTR_STRING ? a.s
                                            : std::to_string(a.i);
    }
    g.node(op, {TensorSpec::f32("x", x)}, {TensorSpec::f32("y", y)}, attrs, opset);
    const infer_graph_view* graph = g.graph_auto({"y"}, name);
    SCOPED_TRACE(name);
    expect_same_as_cpu(graph, seed, kTol, kTol);
  }

};

AttrSpec kernel(std::vector<int64_t> v) { return AttrSpec::Ints("kernel_shape", std::move(v)); }
AttrSpec pads(std::vector<int64_t> v) { return AttrSpec::Ints("pads", std::move(v)); }
AttrSpec strides(std::vector<int64_t> v) { return AttrSpec::Ints("strides", std::move(v)); }
AttrSpec dilations(std::vector<int64_t> v) { return AttrSpec::Ints("dilations", std::move(v)); }

std::vector<float> iota16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST_F(PoolOpsTest, MaxAndAveragePoolMatchHandComputedValues) {
  // X = 1..16 as 4x4; 2x2 windows, stride 2.
  for (const char* op : {"MaxPool", "AveragePool"}) {
    GraphBuilder g;
    g.node(op, {TensorSpec::f32("x", {1, 1, 4, 4})}, {TensorSpec::f32("y", {1, 1, 2, 2})},
           {kernel({2, 2}), strides({2, 2})});
    RunResult r = run_vk(g.graph_auto({"y"}), {HostTensor::f32({1, 1, 4, 4}, iota16())});
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{1, 1, 2, 2}));
    const std::vector<float> expect = std::string(op) == "MaxPool"
                                          ? std::vector<float>{6, 8, 14, 16}
                                          : std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f};
    EXPECT_EQ(r.outputs[0].as<float>(), expect) << op;
  }
}

TEST_F(PoolOpsTest, PaddedAverageMatchesHandComputedValues) {
  // X = 1..16 as 4x4, 3x3 windows, stride 3, pads 1: the first window covers rows and
  // columns -1..1, i.e. {1, 2, 5, 6}. Excluding the pad: 14 / 4 = 3.5; including it:
  // 14 / 9.
  for (int include : {0, 1}) {
    GraphBuilder g;
    g.node("AveragePool", {TensorSpec::f32("x", {1, 1, 4, 4})},
           {TensorSpec::f32("y", {1, 1, 2, 2})},
           {kernel({3, 3}), strides({3, 3}), pads({1, 1, 1, 1}),
            AttrSpec::Int("count_include_pad", include)});
    RunResult r = run_vk(g.graph_auto({"y"}), {HostTensor::f32({1, 1, 4, 4}, iota16())});
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs.size(), 1u);
    const std::vector<float> y = r.outputs[0].as<float>();
    ASSERT_EQ(y.size(), 4u);
    EXPECT_FLOAT_EQ(y[0], include ? 14.0f / 9.0f : 3.5f);
    // Last window: rows/columns 2..4, i.e. {11, 12, 15, 16} and the end padding.
    EXPECT_FLOAT_EQ(y[3], include ? 54.0f / 9.0f : 13.5f);
  }
}

TEST_F(PoolOpsTest, GlobalPoolsMatchHandComputedValues) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    GraphBuilder g;
    g.node(op, {TensorSpec::f32("x", {1, 2, 2, 2})}, {TensorSpec::f32("y", {1, 2, 1, 1})});
    RunResult r =
        run_vk(g.graph_auto({"y"}), {HostTensor::f32({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -10})});
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{1, 2, 1, 1}));
    const std::vector<float> expect =
        std::string(op) == "GlobalMaxPool" ? std::vector<float>{6, -1} : std::vector<float>{3, -4};
    EXPECT_EQ(r.outputs[0].as<float>(), expect) << op;
  }
}

TEST_F(PoolOpsTest, MaxPoolMatchesCpu) {
  // ResNet's 3x3 stride-2 pad-1 pool, at a small size.
  pool("MaxPool", {1, 3, 16, 16}, {1, 3, 8, 8},
       {kernel({3, 3}), strides({2, 2}), pads({1, 1, 1, 1})}, 1);
  pool("MaxPool", {2, 3, 7, 9}, {2, 3, 3, 4}, {kernel({2, 2}), strides({2, 2})}, 2);
  pool("MaxPool", {2, 3, 7, 9}, {2, 3, 4, 5},
       {kernel({2, 2}), strides({2, 2}), AttrSpec::Int("ceil_mode", 1)}, 3);
  pool("MaxPool", {1, 2, 11, 10}, {1, 2, 7, 6}, {kernel({3, 3}), dilations({2, 2})}, 4);
  pool("MaxPool", {1, 2, 9, 10}, {1, 2, 5, 5},
       {kernel({3, 3}), strides({2, 2}), AttrSpec::String("auto_pad", "SAME_UPPER")}, 5);
  pool("MaxPool", {1, 2, 9, 10}, {1, 2, 5, 5},
       {kernel({2, 3}), strides({2, 2}), AttrSpec::String("auto_pad", "SAME_LOWER")}, 6);
  pool("MaxPool", {1, 2, 9, 10}, {1, 2, 7, 3},
       {kernel({3, 3}), strides({1, 3}), AttrSpec::String("auto_pad", "VALID")}, 7);
  pool("MaxPool", {1, 2, 8, 8}, {1, 2, 4, 5}, {kernel({3, 2}), strides({2, 2}), pads({1, 0, 0, 2})},
       8);
  pool("MaxPool", {2, 3, 20}, {2, 3, 10}, {kernel({3}), strides({2}), pads({1, 1})}, 9);  // 1-D
}

TEST_F(PoolOpsTest, AveragePoolMatchesCpu) {
  for (int include : {0, 1}) {
    const AttrSpec cip = AttrSpec::Int("count_include_pad", include);
    uint32_t seed = 20 + 10 * static_cast<uint32_t>(include);
    pool("AveragePool", {1, 3, 9, 9}, {1, 3, 5, 5},
         {kernel({3, 3}), strides({2, 2}), pads({1, 1, 1, 1}), cip}, seed++);
    pool("AveragePool", {2, 2, 7, 8}, {2, 2, 4, 4},
         {kernel({3, 3}), strides({2, 2}), pads({1, 0, 1, 1}), AttrSpec::Int("ceil_mode", 1), cip},
         seed++);
    pool("AveragePool", {1, 2, 10, 10}, {1, 2, 5, 5},
         {kernel({3, 3}), strides({2, 2}), AttrSpec::String("auto_pad", "SAME_UPPER"), cip},
         seed++);
    pool("AveragePool", {1, 2, 11, 11}, {1, 2, 9, 9},
         {kernel({3, 3}), dilations({2, 2}), pads({1, 1, 1, 1}), cip}, seed++);
    pool("AveragePool", {1, 4, 15}, {1, 4, 5}, {kernel({4}), strides({3}), pads({1, 1}), cip},
         seed++);
  }
}

TEST_F(PoolOpsTest, GlobalPoolsMatchCpu) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    pool(op, {2, 5, 7, 7}, {2, 5, 1, 1}, {}, 40);
    pool(op, {1, 3, 40, 40}, {1, 3, 1, 1}, {}, 41);  // 1600 elements: 128 invocations
    pool(op, {1, 2, 3, 4, 5}, {1, 2, 1, 1, 1}, {}, 42);
    pool(op, {3, 4, 1}, {3, 4, 1}, {}, 43);
  }
}

TEST_F(PoolOpsTest, MorePlanesThanOneGridDimensionMatchCpu) {
  // 70000 planes: more than the 65535 workgroups one dispatch dimension may have.
  pool("GlobalAveragePool", {2, 35000, 1, 1}, {2, 35000, 1, 1}, {}, 50);
  pool("MaxPool", {1, 70000, 1, 2}, {1, 70000, 1, 1}, {kernel({1, 2})}, 51);
}

TEST_F(PoolOpsTest, CapabilitySaysNoWithReasons) {
  {
    GraphBuilder g;
    g.node("MaxPool", {TensorSpec::f32("x", {1, 1, 4, 4})},
           {TensorSpec::f32("y", {1, 1, 2, 2}), TensorSpec::i64("i", {1, 1, 2, 2})},
           {kernel({2, 2}), strides({2, 2})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("Indices"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("AveragePool", {TensorSpec::f32("x", {1, 1, 4, 4, 4})},
           {TensorSpec::f32("y", {1, 1, 2, 2, 2})}, {kernel({2, 2, 2})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("3-D"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("MaxPool", {TensorSpec::of("x", INFER_DTYPE_UINT8, {1, 1, 4, 4})},
           {TensorSpec::of("y", INFER_DTYPE_UINT8, {1, 1, 2, 2})}, {kernel({2, 2})});
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("float32"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("MaxPool", {TensorSpec::f32("x", {1, 1, 4, 4})}, {TensorSpec::f32("y", {1, 1, 2, 2})},
           {kernel({2, 2}), strides({2, 2})});
    EXPECT_NE(capability(g.last_node()).support, INFER_SUPPORT_NO);
  }
}

}  // namespace
}  // namespace infer::test::vk
