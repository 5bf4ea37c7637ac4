// Capability answers of the example: YES / PREFERRED for the ops it has in float32 with
// a known rank (symbolic dims included), NO with a reason naming the backend otherwise,
// cost estimates when shapes are static, and compile refusing what capability refused.
#include "example_fixture.hpp"

namespace infer::test::example {
namespace {

class ExampleCapability : public ExampleTest {
 protected:
  // Asks about `node` with a capability struct initialized as the host does.
  infer_capability ask(const infer_node_view* node) {
    infer_capability cap{};
    cap.struct_size = sizeof cap;
    cap.support = INFER_SUPPORT_NO;
    cap.est_time_us = -1;
    cap.est_memory_bytes = -1;
    EXPECT_OK(take_status(api()->query_capability(device(), node, &cap)));
    return cap;
  }
  GraphBuilder g;
};

TEST_F(ExampleCapability, ElementwiseOpsAreSupportedWithEstimates) {
  for (const char* op : {"Add", "Sub", "Mul"}) {
    g.node(op, {TensorSpec::f32("a", {4, 8}), TensorSpec::f32("b", {8})},
           {TensorSpec::f32(std::string(op) + "_y", {4, 8})});
    infer_capability cap = ask(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_YES) << op << ": " << cap.reason;
    EXPECT_STREQ(cap.reason, "");
    // 5 us launch + 32 elements at 1000 per us; 32 floats of output.
    EXPECT_DOUBLE_EQ(cap.est_time_us, 5.032) << op;
    EXPECT_EQ(cap.est_memory_bytes, 128) << op;
  }
  g.node("Relu", {TensorSpec::f32("x", {10})}, {TensorSpec::f32("r", {10})});
  EXPECT_EQ(ask(g.last_node()).support, INFER_SUPPORT_YES);
}

TEST_F(ExampleCapability, MatrixOpsArePreferred) {
  g.node("MatMul", {TensorSpec::f32("a", {2, 16, 32}), TensorSpec::f32("b", {32, 8})},
         {TensorSpec::f32("y", {2, 16, 8})});
  infer_capability cap = ask(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_PREFERRED) << cap.reason;
  // 256 outputs x 32 multiply-adds each = 8192 -> 8.192 us, plus 5 us launch.
  EXPECT_DOUBLE_EQ(cap.est_time_us, 13.192);
  EXPECT_EQ(cap.est_memory_bytes, 256 * 4);

  g.node("Gemm",
         {TensorSpec::f32("ga", {64, 10}), TensorSpec::f32("gb", {20, 64}),
          TensorSpec::f32("gc", {20})},
         {TensorSpec::f32("gy", {10, 20})},
         {AttrSpec::Int("transA", 1), AttrSpec::Int("transB", 1)});
  cap = ask(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_PREFERRED) << cap.reason;
  EXPECT_DOUBLE_EQ(cap.est_time_us, 5.0 + 200.0 * 64 / 1000);  // K = 64 with transA
}

TEST_F(ExampleCapability, SymbolicDimsAreSupportedWithoutEstimates) {
  TensorSpec x = TensorSpec::f32("x", {-1, 8});
  x.dim_params = {"batch", ""};
  g.node("MatMul", {x, TensorSpec::f32("w", {8, 4})}, {TensorSpec::f32("y", {-1, 4})});
  infer_capability cap = ask(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_PREFERRED) << cap.reason;
  EXPECT_EQ(cap.est_time_us, -1);
  EXPECT_EQ(cap.est_memory_bytes, -1);
}

TEST_F(ExampleCapability, UnsupportedNodesAreNoWithAReason) {
  struct Case {
    const infer_node_view* node;
    std::string reason;
  };
  std::vector<Case> cases;
  cases.push_back(
      {g.node("Conv", {TensorSpec::f32("ci", {1, 1, 4, 4}), TensorSpec::f32("cw", {1, 1, 3, 3})},
              {TensorSpec::f32("co", {1, 1, 2, 2})}),
       "example: unsupported op Conv"});
  cases.push_back({g.node("MatMul", {TensorSpec::i64("ia", {2, 2}), TensorSpec::i64("ib", {2, 2})},
                          {TensorSpec::i64("iy", {2, 2})}),
                   "example: MatMul needs float32, got int64 for input 'ia'"});
  cases.push_back({g.node("Add", {TensorSpec::f32("oa", {2}), TensorSpec::f32("ob", {2})},
                          {TensorSpec::f32("oy", {2})}, {}, 6),
                   "example: Add needs opset >= 7, got 6"});
  TensorSpec unknown = TensorSpec::f32("u", {});
  unknown.unknown_rank = true;
  cases.push_back({g.node("Relu", {unknown}, {TensorSpec::f32("ur", {2})}),
                   "example: Relu needs a known rank for input 'u'"});
  cases.push_back({g.node("MatMul", {TensorSpec::f32("v", {3}), TensorSpec::f32("m", {3, 2})},
                          {TensorSpec::f32("vm", {2})}),
                   "example: MatMul needs inputs of rank >= 2, got rank 1 for input 'v'"});
  cases.push_back({g.node("Gemm",
                          {TensorSpec::f32("g1", {2, 2}), TensorSpec::f32("g2", {2, 2}),
                           TensorSpec::f32("g3", {1, 2, 2})},
                          {TensorSpec::f32("gy", {2, 2})}),
                   "example: Gemm needs C of rank <= 2, got rank 3"});
  cases.push_back({g.node("FusedGemm", {TensorSpec::f32("fa", {2, 2})},
                          {TensorSpec::f32("fy", {2, 2})}, {}, 1, "", "com.microsoft"),
                   "example: unsupported op com.microsoft.FusedGemm"});
  cases.push_back({g.node("Relu", {TensorSpec::f32("ra", {2}), TensorSpec::f32("rb", {2})},
                          {TensorSpec::f32("ry", {2})}),
                   "example: Relu with 2 inputs is not supported"});
  cases.push_back({g.node("Relu", {TensorSpec::of("h", INFER_DTYPE_FLOAT16, {2})},
                          {TensorSpec::of("hy", INFER_DTYPE_FLOAT16, {2})}),
                   "example: Relu needs float32, got float16 for input 'h'"});
  for (const Case& c : cases) {
    infer_capability cap = ask(c.node);
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO) << c.reason;
    EXPECT_EQ(std::string(cap.reason), c.reason);
  }
}

TEST_F(ExampleCapability, QuantizedTensorsAreNotSupported) {
  g.node("Add", {TensorSpec::f32("qa", {2}), TensorSpec::f32("qb", {2})},
         {TensorSpec::f32("qy", {2})});
  const infer_node_view* node = g.last_node();
  infer_quant_desc quant{};
  quant.struct_size = sizeof quant;
  quant.scheme = INFER_QUANT_PER_TENSOR;
  quant.storage = INFER_DTYPE_INT8;
  const_cast<infer_value_view*>(node->inputs[1])->quant = &quant;
  infer_capability cap = ask(node);
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_EQ(std::string(cap.reason), "example: Add does not take quantized tensors ('qb')");
}

// DequantizeLinear x_q (uint8) with scale s and zero point z constants; `desc` (when
// given) becomes x_q's descriptor, pointing at the node's own s and z.
const infer_node_view* dequantize_node(GraphBuilder& g, infer_quant_desc* desc,
                                       float scale = 0.5f) {
  g.node("DequantizeLinear",
         {TensorSpec::of("x_q", INFER_DTYPE_UINT8, {4}),
          TensorSpec::constant("s", INFER_DTYPE_FLOAT32, {}, std::vector<float>{scale}),
          TensorSpec::constant("z", INFER_DTYPE_UINT8, {}, std::vector<uint8_t>{3})},
         {TensorSpec::f32("x", {4})});
  const infer_node_view* node = g.last_node();
  if (desc != nullptr) {
    desc->struct_size = sizeof *desc;
    desc->scheme = INFER_QUANT_PER_TENSOR;
    desc->storage = INFER_DTYPE_UINT8;
    desc->scale = node->inputs[1];
    desc->zero_point = node->inputs[2];
    const_cast<infer_value_view*>(node->inputs[0])->quant = desc;
  }
  return node;
}

TEST_F(ExampleCapability, DequantizeLinearIsClaimedThroughItsInputsDescriptor) {
  infer_quant_desc desc{};
  EXPECT_EQ(ask(dequantize_node(g, &desc)).support, INFER_SUPPORT_YES);

  GraphBuilder bare;
  infer_capability cap = ask(dequantize_node(bare, nullptr));
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_EQ(std::string(cap.reason),
            "example: DequantizeLinear needs a quantization descriptor on 'x_q'");

  GraphBuilder axis;
  infer_quant_desc per_axis{};
  const infer_node_view* node = dequantize_node(axis, &per_axis);
  per_axis.scheme = INFER_QUANT_PER_AXIS;
  cap = ask(node);
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_EQ(std::string(cap.reason),
            "example: DequantizeLinear supports per-tensor quantization only ('x_q' is per axis "
            "or per block)");
}

TEST_F(ExampleCapability, CompileRefusesWhatCapabilityRefuses) {
  auto* graph = g.single_node_graph(
      "Conv", {TensorSpec::f32("x", {1, 1, 4, 4}), TensorSpec::f32("w", {1, 1, 3, 3})},
      {TensorSpec::f32("y", {1, 1, 2, 2})}, {}, 17, "conv1");
  StatusInfo st;
  auto compiled = CompiledGraph::compile(handle(), graph, &st, device());
  EXPECT_EQ(compiled, nullptr);
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(st.message, "example: unsupported op Conv (node 'conv1' (Conv))");
}

TEST_F(ExampleCapability, CompileRefusesPassThroughOutputs) {
  g.node("Relu", {TensorSpec::f32("x", {2})}, {TensorSpec::f32("y", {2})});
  StatusInfo st;
  auto compiled = CompiledGraph::compile(handle(), g.graph({"x"}, {"y", "x"}, "p"), &st, device());
  EXPECT_EQ(compiled, nullptr);
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(st.message, "example: partition 'p': output 'x' is not computed by a node of it");
}

TEST_F(ExampleCapability, CompileRejectsAMalformedConstant) {
  TensorSpec w =
      TensorSpec::constant<float>("w", INFER_DTYPE_FLOAT32, {2, 2}, {1, 2, 3});  // 3 of 4
  auto* graph =
      g.single_node_graph("Add", {TensorSpec::f32("x", {2, 2}), w}, {TensorSpec::f32("y", {2, 2})});
  StatusInfo st;
  EXPECT_EQ(CompiledGraph::compile(handle(), graph, &st, device()), nullptr);
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("constant 'w' has 12 bytes, expected 16 for float32 [2,2]"),
            std::string::npos)
      << st.message;
}

}  // namespace
}  // namespace infer::test::example
