// Normalization ops on the vulkan plugin (norm_ops.cpp): Softmax / LogSoftmax,
// LayerNormalization (ONNX and ai.infer), InstanceNormalization, BatchNormalization, Gelu
// and the fused ai.infer Attention. Hand-computed Softmax and LayerNormalization values,
// then the cpu plugin as the reference over odd shapes, every axis form (including the
// coerce-to-2-D semantics before opset 13), rows longer than a workgroup, masks of every
// broadcast shape, and the capability answers.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

TensorSpec out_spec() {
  TensorSpec s = TensorSpec::f32("y", {});
  s.unknown_rank = true;
  return s;
}

std::string text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

class NormOpsTest : public VulkanTest {
 protected:
  // One node over float32 inputs of the given dims (random in [-1, 1)), against the cpu
  // plugin.
  void same(const std::string& op, const std::vector<std::vector<int64_t>>& dims,
            const std::vector<AttrSpec>& attrs, int64_t opset, uint32_t seed, double tol,
            const std::string& domain = "") {
    std::string name = op;
    for (const auto& d : dims) name += " " + text(d);
    for (const AttrSpec& a : attrs)
      name += " " + a.name + "=" +
              (a.type == INFER_ATTR_STRING  ? a.s
               : a.type == INFER_ATTR_FLOAT ? std::to_string(a.f)
                                            : std::to_string(a.i));
    SCOPED_TRACE(name + " opset " + std::to_string(opset));
    GraphBuilder g;
    std::vector<TensorSpec> ins;
    for (size_t i = 0; i < dims.size(); ++i)
      ins.push_back(dims[i].size() == 1 && dims[i][0] < 0
                        ? TensorSpec::omitted()
                        : TensorSpec::f32("in" + std::to_string(i), dims[i]));
    g.node(op, ins, {out_spec()}, attrs, opset, "", domain);
    expect_same_as_cpu(g.graph_auto({"y"}), seed, tol, tol);
  }


  void expect_no(const infer_node_view* node, const std::string& reason_part) {
    const infer_capability cap = capability(node);
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO) << node->op_type;
    EXPECT_NE(std::string(cap.reason).find(reason_part), std::string::npos)
        << node->op_type << ": " << cap.reason;
  }
};

const std::vector<int64_t> kOmit = {-1};  // an omitted input in same()

TEST_F(NormOpsTest, SoftmaxMatchesHandComputedValues) {
  // exp(0) : exp(ln 2) : exp(ln 3) = 1 : 2 : 3, and a constant row.
  const float l2 = std::log(2.0f), l3 = std::log(3.0f);
  const HostTensor x = HostTensor::f32({2, 3}, {0, l2, l3, 5, 5, 5});
  {
    GraphBuilder g;
    g.node("Softmax", {TensorSpec::f32("x", {2, 3})}, {out_spec()}, {}, 13);
    RunResult r = run_vk(g.graph_auto({"y"}), {x});
    ASSERT_TRUE(r.ok()) << r.status.message;
    const std::vector<float> y = r.outputs[0].as<float>();
    const float expect[] = {1 / 6.f, 2 / 6.f, 3 / 6.f, 1 / 3.f, 1 / 3.f, 1 / 3.f};
    for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expect[i], 1e-6) << i;
  }
  {
    GraphBuilder g;
    g.node("LogSoftmax", {TensorSpec::f32("x", {2, 3})}, {out_spec()}, {}, 13);
    RunResult r = run_vk(g.graph_auto({"y"}), {x});
    ASSERT_TRUE(r.ok()) << r.status.message;
    const std::vector<float> y = r.outputs[0].as<float>();
    const float l6 = std::log(6.0f);
    const float expect[] = {-l6, l2 - l6, l3 - l6, -l3, -l3, -l3};
    for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expect[i], 1e-6) << i;
  }
}

TEST_F(NormOpsTest, SoftmaxMatchesCpu) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    same(op, {{3, 7}}, {}, 13, 1, 1e-6);
    same(op, {{2, 5, 3}}, {AttrSpec::Int("axis", 1)}, 13, 2, 1e-6);
    same(op, {{4, 3, 2}}, {AttrSpec::Int("axis", 0)}, 13, 3, 1e-6);
    same(op, {{2, 3, 300}}, {AttrSpec::Int("axis", -1)}, 13, 4, 1e-6);  // rows > workgroup
    same(op, {{2, 3, 4}}, {}, 11, 5, 1e-6);                             // coerce at axis 1
    same(op, {{2, 3, 4}}, {AttrSpec::Int("axis", 0)}, 11, 6, 1e-6);     // one row of 24
    same(op, {{5}}, {}, 13, 7, 1e-6);
  }
}

TEST_F(NormOpsTest, LayerNormalizationMatchesHandComputedValues) {
  // x = 1, 2, 3, 4: mean 2.5, variance 1.25.
  GraphBuilder g;
  g.node("LayerNormalization",
         {TensorSpec::f32("x", {1, 4}), TensorSpec::f32("s", {4}), TensorSpec::f32("b", {4})},
         {out_spec()}, {AttrSpec::Float("epsilon", 0.0)}, 17);
  RunResult r = run_vk(g.graph_auto({"y"}),
                       {HostTensor::f32({1, 4}, {1, 2, 3, 4}), HostTensor::f32({4}, {1, 2, 1, 2}),
                        HostTensor::f32({4}, {0, 0, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  const double inv = 1.0 / std::sqrt(1.25);
  const double expect[] = {-1.5 * inv, -0.5 * inv * 2, 0.5 * inv + 1, 1.5 * inv * 2 + 1};
  const std::vector<float> y = r.outputs[0].as<float>();
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expect[i], 1e-6) << i;
}

TEST_F(NormOpsTest, LayerNormalizationMatchesCpu) {
  for (const char* domain : {"", "ai.infer"}) {
    const int64_t opset = std::string(domain).empty() ? 17 : 1;
    SCOPED_TRACE(domain);
    same("LayerNormalization", {{3, 5, 8}, {8}, {8}}, {}, opset, 10, 1e-5, domain);
    same("LayerNormalization", {{3, 5, 8}, {5, 8}, {5, 8}}, {AttrSpec::Int("axis", 1)}, opset, 11,
         1e-5, domain);
    same("LayerNormalization", {{3, 5, 8}, {1, 8}, {8}},
         {AttrSpec::Int("axis", -2), AttrSpec::Float("epsilon", 1e-3)}, opset, 12, 1e-5, domain);
    same("LayerNormalization", {{2, 700}, {700}, kOmit}, {}, opset, 13, 1e-5, domain);
    same("LayerNormalization", {{4, 3}, {1}, {1}}, {}, opset, 14, 1e-5, domain);
  }
}

TEST_F(NormOpsTest, InstanceAndBatchNormalizationMatchCpu) {
  same("InstanceNormalization", {{2, 3, 5, 4}, {3}, {3}}, {}, 13, 20, 1e-5);
  same("InstanceNormalization", {{1, 2, 300}, {2}, {2}}, {AttrSpec::Float("epsilon", 1e-2)}, 13, 21,
       1e-5);
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{3, 4}, std::vector<int64_t>{1, 5, 7},
        std::vector<int64_t>{1, 32, 28, 28}}) {
    SCOPED_TRACE("BatchNormalization " + text(dims));
    const int64_t c = dims[1];
    GraphBuilder g;
    g.node("BatchNormalization",
           {TensorSpec::f32("x", dims), TensorSpec::f32("s", {c}), TensorSpec::f32("b", {c}),
            TensorSpec::f32("m", {c}), TensorSpec::f32("v", {c})},
           {out_spec()}, {AttrSpec::Float("epsilon", 1e-3)}, 15);
    // The variances must be positive.
    expect_same_as_cpu(g.graph_auto({"y"}),
                       {random_f32(dims, 22), random_f32({c}, 23), random_f32({c}, 24),
                        random_f32({c}, 25), random_f32({c}, 26, 0.25f, 2.0f)},
                       1e-5, 1e-5);
  }
}

TEST_F(NormOpsTest, GeluMatchesCpu) {
  // The cpu plugin has only the ai.infer Gelu; ONNX Gelu-20 is the same function, so the
  // vulkan run of the ONNX node is compared with the cpu run of the ai.infer node.
  for (const char* approx : {"none", "tanh"}) {
    same("Gelu", {{2, 7, 5}}, {AttrSpec::String("approximate", approx)}, 1, 31, 1e-6, "ai.infer");
    for (const HostTensor& x : {random_f32({3, 41}, 30, -4.0f, 4.0f),
                                HostTensor::f32({6}, {-30, -8, -0.5f, 0.5f, 8, 30})}) {
      SCOPED_TRACE(std::string("ONNX Gelu approximate=") + approx);
      GraphBuilder onnx, fused;
      onnx.node("Gelu", {TensorSpec::f32("x", x.dims)}, {out_spec()},
                {AttrSpec::String("approximate", approx)}, 20);
      fused.node("Gelu", {TensorSpec::f32("x", x.dims)}, {out_spec()},
                 {AttrSpec::String("approximate", approx)}, 1, "", "ai.infer");
      RunResult expected = run_cpu(fused.graph_auto({"y"}), {x});
      ASSERT_TRUE(expected.ok()) << expected.status.message;
      RunResult actual = run_vk(onnx.graph_auto({"y"}), {x});
      ASSERT_TRUE(actual.ok()) << actual.status.message;
      EXPECT_EQ(compare_tensors(actual.outputs[0], expected.outputs[0], 1e-6, 1e-6), "");
    }
  }
}

class AttentionTest : public NormOpsTest {
 protected:
  void attention(int64_t B, int64_t Sq, int64_t Sk, int64_t H, int64_t Dk, int64_t Dv,
                 const std::vector<int64_t>* mask, uint32_t seed) {
    std::string name = "B=" + std::to_string(B) + " Sq=" + std::to_string(Sq) +
                       " Sk=" + std::to_string(Sk) + " H=" + std::to_string(H) +
                       " Dk=" + std::to_string(Dk) + " Dv=" + std::to_string(Dv) +
                       (mask ? " mask " + text(*mask) : std::string());
    SCOPED_TRACE(name);
    GraphBuilder g;
    std::vector<TensorSpec> ins = {TensorSpec::f32("q", {B, Sq, H * Dk}),
                                   TensorSpec::f32("k", {B, Sk, H * Dk}),
                                   TensorSpec::f32("v", {B, Sk, H * Dv})};
    if (mask) ins.push_back(TensorSpec::f32("m", *mask));
    g.node("Attention", ins, {out_spec()},
           {AttrSpec::Int("num_heads", H),
            AttrSpec::Float("scale", 1.0 / std::sqrt(static_cast<double>(Dk)))},
           1, "", "ai.infer");
    expect_same_as_cpu(g.graph_auto({"y"}), seed, 1e-5, 1e-4);
  }
};

TEST_F(AttentionTest, BertSizedBlockMatchesCpu) {
  attention(1, 16, 16, 4, 8, 8, nullptr, 40);
  const std::vector<int64_t> mask = {1, 1, 1, 16};  // a padding mask, as BERT exports it
  attention(1, 16, 16, 4, 8, 8, &mask, 41);
}

TEST_F(AttentionTest, OddShapesAndMasksMatchCpu) {
  const std::vector<int64_t> full = {2, 3, 5, 19}, rows = {5, 19}, heads = {3, 1, 1}, scalar = {1};
  attention(2, 5, 19, 3, 7, 5, nullptr, 50);
  attention(2, 5, 19, 3, 7, 5, &full, 51);
  attention(2, 5, 19, 3, 7, 5, &rows, 52);
  attention(2, 5, 19, 3, 7, 5, &heads, 53);
  attention(2, 5, 19, 3, 7, 5, &scalar, 54);
  attention(1, 33, 17, 2, 20, 18, nullptr, 55);  // more than one tile along every dim
}

TEST_F(NormOpsTest, RealisticShapesMatchCpu) {
  same("Softmax", {{1, 12, 64, 64}}, {}, 13, 60, 1e-6);                         // attention scores
  same("LayerNormalization", {{1, 128, 768}, {768}, {768}}, {}, 17, 61, 1e-5);  // BERT hidden
}

TEST_F(AttentionTest, BertBaseHeadsMatchCpu) {
  const std::vector<int64_t> mask = {1, 1, 1, 128};
  attention(1, 128, 128, 12, 64, 64, &mask, 63);
}

TEST_F(NormOpsTest, CapabilityRefusesWhatTheKernelsCannotRun) {
  {
    GraphBuilder g;
    g.node("LayerNormalization", {TensorSpec::f32("x", {2, 4}), TensorSpec::f32("s", {4})},
           {TensorSpec::f32("y", {2, 4}), TensorSpec::f32("mean", {2, 1})}, {}, 17);
    expect_no(g.last_node(), "output 1");
  }
  {
    GraphBuilder g;
    g.node("Softmax", {TensorSpec::of("x", INFER_DTYPE_FLOAT16, {2, 4})},
           {TensorSpec::of("y", INFER_DTYPE_FLOAT16, {2, 4})}, {}, 13);
    expect_no(g.last_node(), "float16");
  }
  {
    GraphBuilder g;
    g.node("Gelu", {TensorSpec::f32("x", {4})}, {out_spec()},
           {AttrSpec::String("approximate", "erf")}, 20);
    expect_no(g.last_node(), "approximate=erf");
  }
  {
    GraphBuilder g;
    g.node("BatchNormalization",
           {TensorSpec::f32("x", {2, 3}), TensorSpec::f32("s", {3}), TensorSpec::f32("b", {3}),
            TensorSpec::f32("m", {3}), TensorSpec::f32("v", {3})},
           {out_spec()}, {AttrSpec::Int("training_mode", 1)}, 15);
    expect_no(g.last_node(), "training_mode");
  }
  {
    GraphBuilder g;
    g.node("Attention",
           {TensorSpec::f32("q", {1, 4, 8}), TensorSpec::f32("k", {1, 4, 8}),
            TensorSpec::f32("v", {1, 4, 8})},
           {out_spec()}, {AttrSpec::Float("scale", 0.5)}, 1, "", "ai.infer");
    expect_no(g.last_node(), "num_heads");
  }
  {
    GraphBuilder g;
    g.node("Attention",
           {TensorSpec::f32("q", {1, 4, 8}), TensorSpec::f32("k", {1, 4, 8}),
            TensorSpec::f32("v", {1, 4, 8})},
           {out_spec()}, {AttrSpec::Int("num_heads", 3), AttrSpec::Float("scale", 0.5)}, 1, "",
           "ai.infer");
    expect_no(g.last_node(), "does not divide");
  }
  {
    GraphBuilder g;
    g.node("Softmax", {TensorSpec::f32("x", {2, 4})}, {out_spec()}, {}, 13);
    EXPECT_NE(capability(g.last_node()).support, INFER_SUPPORT_NO);
  }
}

}  // namespace
}  // namespace infer::test::vk
