// Capability answers of the cpu plugin: supported nodes, unknown ops, unsupported
// attribute values, dtypes and opsets, each with its reason; compile refuses the same
// nodes with a status naming the node.
#include <gtest/gtest.h>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuCapability : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
  }
  infer_capability query(const infer_node_view* node) {
    infer_capability cap{};
    cap.struct_size = sizeof cap;
    cap.support = INFER_SUPPORT_NO;
    cap.est_time_us = -1;
    cap.est_memory_bytes = -1;
    StatusInfo st = take_status(plugin_->api()->query_capability(plugin_->device(), node, &cap));
    EXPECT_TRUE(st.ok()) << st.message;
    return cap;
  }
  std::unique_ptr<PluginHandle> plugin_;
};

TensorSpec x4(infer_dtype dt = INFER_DTYPE_FLOAT32) {
  return TensorSpec::of("x", dt, {1, 2, 5, 5});
}
TensorSpec w4() { return TensorSpec::f32("w", {3, 2, 3, 3}); }
TensorSpec y4() { return TensorSpec::f32("y", {1, 3, 5, 5}); }

TEST_F(CpuCapability, SupportedConv) {
  GraphBuilder g;
  g.node("Conv", {x4(), w4()}, {y4()}, {AttrSpec::Ints("pads", {1, 1, 1, 1})}, 11);
  infer_capability cap = query(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_YES);
  EXPECT_STREQ(cap.reason, "");
}

TEST_F(CpuCapability, UnknownOp) {
  GraphBuilder g;
  g.node("Foo", {x4()}, {y4()}, {}, 13);
  infer_capability cap = query(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_STREQ(cap.reason, "cpu: no kernel for Foo (domain '')");
}

TEST_F(CpuCapability, UnknownDomain) {
  GraphBuilder g;
  g.node("Relu", {x4()}, {y4()}, {}, 1, "r", "com.example");
  EXPECT_STREQ(query(g.last_node()).reason, "cpu: no kernel for Relu (domain 'com.example')");
}

TEST_F(CpuCapability, UnsupportedAttributeValues) {
  GraphBuilder g;
  g.node("Conv", {x4(), w4()}, {y4()}, {AttrSpec::String("auto_pad", "FOO")}, 11);
  infer_capability cap = query(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_STREQ(cap.reason, "cpu: Conv auto_pad=FOO not supported");

  GraphBuilder g4;
  g4.node("Conv", {x4(), w4()}, {y4()}, {AttrSpec::Ints("strides", {1, 1, 1})}, 11);
  EXPECT_STREQ(query(g4.last_node()).reason, "cpu: Conv strides has 3 values, expected 2");
}

TEST_F(CpuCapability, UnsupportedDtypes) {
  GraphBuilder g;
  g.node("Add",
         {TensorSpec::of("a", INFER_DTYPE_STRING, {2}),
          TensorSpec::of("b", INFER_DTYPE_STRING, {2})},
         {TensorSpec::of("y", INFER_DTYPE_STRING, {2})}, {}, 14);
  infer_capability cap = query(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_STREQ(cap.reason, "cpu: Add does not support dtype string (input 0 'a')");

  GraphBuilder g2;
  g2.node("Cast", {TensorSpec::f32("a", {2})}, {TensorSpec::of("y", INFER_DTYPE_STRING, {2})},
          {AttrSpec::Int("to", INFER_DTYPE_STRING)}, 13);
  EXPECT_STREQ(query(g2.last_node()).reason, "cpu: Cast to string not supported");

  GraphBuilder g3;
  g3.node("Gather", {TensorSpec::f32("d", {5}), TensorSpec::of("i", INFER_DTYPE_FLOAT32, {2})},
          {TensorSpec::f32("y", {2})}, {}, 13);
  EXPECT_STREQ(query(g3.last_node()).reason,
               "cpu: Gather does not support dtype float32 for the indices");
}

TEST_F(CpuCapability, OpsetOutsideTheKernelsRange) {
  // LayerNormalization entered the default domain at opset 17.
  GraphBuilder g;
  g.node("LayerNormalization", {TensorSpec::f32("x", {2, 3}), TensorSpec::f32("s", {3})},
         {TensorSpec::f32("y", {2, 3})}, {}, 16);
  infer_capability cap = query(g.last_node());
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_STREQ(cap.reason,
               "cpu: LayerNormalization opset 16 not supported (kernels cover opsets 17-21)");
}

TEST_F(CpuCapability, OpsetDependentInputs) {
  // Squeeze takes axes as an attribute before 13 and as an input from 13.
  GraphBuilder g;
  g.node("Squeeze", {TensorSpec::f32("x", {1, 3}), TensorSpec::i64("axes", {1})},
         {TensorSpec::f32("y", {3})}, {}, 11);
  EXPECT_STREQ(query(g.last_node()).reason, "cpu: Squeeze takes 1 input, got 2");
  GraphBuilder g2;
  g2.node("Squeeze", {TensorSpec::f32("x", {1, 3}), TensorSpec::i64("axes", {1})},
          {TensorSpec::f32("y", {3})}, {}, 13);
  EXPECT_EQ(query(g2.last_node()).support, INFER_SUPPORT_YES);
}

TEST_F(CpuCapability, CompileRefusesUnsupportedNodesNamingThem) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Conv", {x4(), w4()}, {y4()}, {AttrSpec::String("auto_pad", "FOO")}, 11, "conv_7");
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, graph, &st);
  EXPECT_FALSE(exe);
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(st.message, "node 'conv_7' (Conv): cpu: Conv auto_pad=FOO not supported");
}

TEST_F(CpuCapability, CompileRefusesDanglingInputs) {
  GraphBuilder g;
  g.value(TensorSpec::f32("x", {2}));
  g.value(TensorSpec::f32("ghost", {2}));
  g.value(TensorSpec::f32("y", {2}));
  g.node_by_name("Add", {"x", "ghost"}, {"y"}, {}, 14, "add_1");
  const infer_graph_view* graph = g.graph({"x"}, {"y"});
  StatusInfo st;
  EXPECT_FALSE(CompiledGraph::compile(*plugin_, graph, &st));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(st.message,
            "node 'add_1' (Add): input 'ghost' is neither a graph input, a constant nor produced "
            "by an earlier node");
}

}  // namespace
}  // namespace infer::test
