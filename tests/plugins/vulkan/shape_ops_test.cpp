// Shape and data-movement ops on the vulkan plugin (shape_ops.cpp: alias outputs,
// shape_copy.comp, gather.comp, shape_pad.comp): hand-computed Transpose, Slice and Pad
// results, then the cpu plugin as the reference over odd shapes, every attribute form
// (attributes before the opsets that made them inputs), negative axes, indices and steps,
// float32 and int64 data, and the capability answers for what the kernels refuse.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

TensorSpec out_spec(infer_dtype dtype = INFER_DTYPE_FLOAT32) {
  TensorSpec s = TensorSpec::of("y", dtype, {});
  s.unknown_rank = true;
  return s;
}

TensorSpec ints(const std::string& name, const std::vector<int64_t>& v) {
  return TensorSpec::constant<int64_t>(name, INFER_DTYPE_INT64, {static_cast<int64_t>(v.size())},
                                       v);
}

std::string text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

class ShapeOpsTest : public VulkanTest {
 protected:
  // One node reading x (random data of `dtype`) and the given extra inputs, compared
  // exactly with the cpu plugin (these ops only move bytes).
  void same(const std::string& op, infer_dtype dtype, const std::vector<int64_t>& dims,
            std::vector<TensorSpec> extra, const std::vector<AttrSpec>& attrs, int64_t opset,
            uint32_t seed, const std::string& what) {
    SCOPED_TRACE(op + " " + text(dims) + " " + what);
    GraphBuilder g;
    std::vector<TensorSpec> ins = {TensorSpec::of("x", dtype, dims)};
    ins.insert(ins.end(), extra.begin(), extra.end());
    g.node(op, ins, {out_spec(dtype)}, attrs, opset);
    expect_same_as_cpu(g.graph_auto({"y"}), seed, 0, 0);
  }


  void expect_no(const infer_node_view* node, const std::string& reason_part) {
    const infer_capability cap = capability(node);
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO) << node->op_type;
    EXPECT_NE(std::string(cap.reason).find(reason_part), std::string::npos)
        << node->op_type << ": " << cap.reason;
  }
};

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST_F(ShapeOpsTest, TransposeSliceAndPadMatchHandComputedValues) {
  {
    GraphBuilder g;
    g.node("Transpose", {TensorSpec::f32("x", {2, 3})}, {out_spec()});
    RunResult r = run_vk(g.graph_auto({"y"}), {HostTensor::f32({2, 3}, iota(6))});
    ASSERT_TRUE(r.ok()) << r.status.message;
    EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  }
  {
    // Rows 3 down to 1 (exclusive end 0), every column from the end with step -2.
    GraphBuilder g;
    g.node("Slice",
           {TensorSpec::f32("x", {4, 5}), ints("starts", {-1, 10}), ints("ends", {0, -100}),
            ints("axes", {0, 1}), ints("steps", {-1, -2})},
           {out_spec()}, {}, 13);
    RunResult r = run_vk(g.graph_auto({"y"}), {HostTensor::f32({4, 5}, iota(20))});
    ASSERT_TRUE(r.ok()) << r.status.message;
    EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{3, 3}));
    EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{19, 17, 15, 14, 12, 10, 9, 7, 5}));
  }
  {
    // [1, 2, 3] padded by 2 before and 1 after in each mode.
    const std::vector<std::pair<std::string, std::vector<float>>> cases = {
        {"constant", {9, 9, 1, 2, 3, 9}},
        {"reflect", {3, 2, 1, 2, 3, 2}},
        {"edge", {1, 1, 1, 2, 3, 3}},
        {"wrap", {2, 3, 1, 2, 3, 1}},
    };
    for (const auto& [mode, expect] : cases) {
      GraphBuilder g;
      g.node("Pad",
             {TensorSpec::f32("x", {3}), ints("pads", {2, 1}),
              TensorSpec::constant<float>("v", INFER_DTYPE_FLOAT32, {}, {9.0f})},
             {out_spec()}, {AttrSpec::String("mode", mode)}, 19);
      RunResult r = run_vk(g.graph_auto({"y"}), {HostTensor::f32({3}, {1, 2, 3})});
      ASSERT_TRUE(r.ok()) << mode << ": " << r.status.message;
      EXPECT_EQ(r.outputs[0].as<float>(), expect) << mode;
    }
  }
}

TEST_F(ShapeOpsTest, AliasOpsMatchCpu) {
  // Reshape: 0 copies a dim, -1 is inferred; allowzero keeps a real 0.
  same("Reshape", INFER_DTYPE_FLOAT32, {2, 3, 4}, {ints("shape", {0, -1})}, {}, 14, 1, "0,-1");
  same("Reshape", INFER_DTYPE_FLOAT32, {2, 3, 4}, {ints("shape", {4, 1, -1})}, {}, 14, 2, "4,1,-1");
  same("Reshape", INFER_DTYPE_INT64, {6}, {ints("shape", {3, 2})}, {}, 13, 3, "int64");
  same("Reshape", INFER_DTYPE_FLOAT32, {0, 3}, {ints("shape", {3, 0})},
       {AttrSpec::Int("allowzero", 1)}, 14, 4, "allowzero");
  same("Reshape", INFER_DTYPE_FLOAT32, {2, 3}, {}, {AttrSpec::Ints("shape", {3, 2})}, 1, 5,
       "attribute shape (opset 1)");
  same("Flatten", INFER_DTYPE_FLOAT32, {2, 3, 4, 5}, {}, {AttrSpec::Int("axis", 2)}, 13, 6,
       "axis 2");
  same("Flatten", INFER_DTYPE_FLOAT32, {2, 3, 4}, {}, {AttrSpec::Int("axis", -1)}, 13, 7,
       "axis -1");
  same("Flatten", INFER_DTYPE_FLOAT32, {2, 3}, {}, {AttrSpec::Int("axis", 0)}, 13, 8, "axis 0");
  same("Squeeze", INFER_DTYPE_FLOAT32, {1, 3, 1, 2}, {}, {}, 13, 9, "all ones");
  same("Squeeze", INFER_DTYPE_FLOAT32, {1, 3, 1, 2}, {ints("axes", {-2})}, {}, 13, 10,
       "axes input");
  same("Squeeze", INFER_DTYPE_FLOAT32, {1, 3, 1, 2}, {}, {AttrSpec::Ints("axes", {0})}, 11, 11,
       "axes attribute");
  same("Unsqueeze", INFER_DTYPE_FLOAT32, {3, 2}, {ints("axes", {0, -1})}, {}, 13, 12, "axes input");
  same("Unsqueeze", INFER_DTYPE_INT64, {3, 2}, {}, {AttrSpec::Ints("axes", {1})}, 11, 13,
       "axes attribute");
  same("Identity", INFER_DTYPE_FLOAT32, {5, 7}, {}, {}, 13, 14, "");
}

TEST_F(ShapeOpsTest, AliasOutputFeedsAnotherNode) {
  // Reshape's output aliases its input inside a graph: the Transpose after it must read
  // the same bytes.
  GraphBuilder g;
  g.node("Reshape", {TensorSpec::f32("x", {2, 12}), ints("shape", {2, 3, 4})},
         {TensorSpec::f32("r", {2, 3, 4})}, {}, 13);
  g.node("Transpose", {TensorSpec::f32("r", {2, 3, 4})}, {out_spec()},
         {AttrSpec::Ints("perm", {2, 0, 1})}, 13);
  expect_same_as_cpu(g.graph_auto({"y"}), 21, 0, 0);
}

TEST_F(ShapeOpsTest, TransposeMatchesCpu) {
  same("Transpose", INFER_DTYPE_FLOAT32, {3, 5}, {}, {}, 13, 1, "default perm");
  same("Transpose", INFER_DTYPE_FLOAT32, {2, 3, 5}, {}, {AttrSpec::Ints("perm", {1, 0, 2})}, 13, 2,
       "");
  same("Transpose", INFER_DTYPE_FLOAT32, {2, 3, 4, 5}, {}, {AttrSpec::Ints("perm", {0, 2, 3, 1})},
       13, 3, "NCHW->NHWC");
  same("Transpose", INFER_DTYPE_FLOAT32, {2, 3, 2, 3, 2}, {},
       {AttrSpec::Ints("perm", {4, 2, 0, 3, 1})}, 13, 4, "rank 5");
  same("Transpose", INFER_DTYPE_FLOAT32, {2, 1, 3, 2, 2, 3}, {},
       {AttrSpec::Ints("perm", {5, 4, 3, 2, 1, 0})}, 13, 5, "rank 6");
  same("Transpose", INFER_DTYPE_INT64, {3, 4, 5}, {}, {AttrSpec::Ints("perm", {2, 0, 1})}, 13, 6,
       "int64");
  same("Transpose", INFER_DTYPE_INT32, {3, 7}, {}, {}, 13, 7, "int32");
}

TEST_F(ShapeOpsTest, ConcatMatchesCpu) {
  for (int64_t axis : {0, 1, 2, -1}) {
    for (infer_dtype dt : {INFER_DTYPE_FLOAT32, INFER_DTYPE_INT64}) {
      SCOPED_TRACE("axis " + std::to_string(axis));
      std::vector<int64_t> a = {2, 3, 4}, b = a, c = a;
      const size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
      b[ax] = 1;
      c[ax] = 5;
      GraphBuilder g;
      g.node("Concat",
             {TensorSpec::of("a", dt, a), TensorSpec::of("b", dt, b), TensorSpec::of("c", dt, c)},
             {out_spec(dt)}, {AttrSpec::Int("axis", axis)}, 13);
      expect_same_as_cpu(g.graph_auto({"y"}), 30 + static_cast<uint32_t>(axis + 1), 0, 0);
    }
  }
  // A constant input and an empty input.
  GraphBuilder g;
  g.node("Concat",
         {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("e", {2, 0}),
          TensorSpec::constant<float>("k", INFER_DTYPE_FLOAT32, {2, 1}, {7.0f, 8.0f})},
         {out_spec()}, {AttrSpec::Int("axis", 1)}, 13);
  expect_same_as_cpu(g.graph_auto({"y"}), 40, 0, 0);
}

TEST_F(ShapeOpsTest, SliceMatchesCpu) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {
      {{1}, {3}, {}, {}},
      {{0, 1}, {kMax, -1}, {1, 2}, {}},
      {{-3, 0, 1}, {-1, 5, 6}, {0, 1, 2}, {1, 2, 3}},
      {{kMax, 4}, {kMin, 0}, {1, -1}, {-1, -3}},
      {{2}, {2}, {0}, {1}},  // empty
      {{-100}, {100}, {-2}, {2}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<TensorSpec> extra = {ints("starts", c.starts), ints("ends", c.ends)};
    extra.push_back(c.axes.empty() ? TensorSpec::omitted() : ints("axes", c.axes));
    if (!c.steps.empty()) extra.push_back(ints("steps", c.steps));
    same("Slice", INFER_DTYPE_FLOAT32, {4, 5, 7}, extra, {}, 13, 50 + static_cast<uint32_t>(i),
         "case " + std::to_string(i));
  }
  same("Slice", INFER_DTYPE_INT64, {6, 3},
       {ints("starts", {-1}), ints("ends", {0}), ints("axes", {0}), ints("steps", {-2})}, {}, 13,
       60, "int64 reversed");
  same("Slice", INFER_DTYPE_FLOAT32, {4, 5}, {},
       {AttrSpec::Ints("starts", {1, 0}), AttrSpec::Ints("ends", {3, -1}),
        AttrSpec::Ints("axes", {0, 1})},
       9, 61, "attributes (opset 9)");
}

TEST_F(ShapeOpsTest, GatherMatchesCpu) {
  // Random int64 indices are in [0, 4): every gathered axis has at least 4 entries.
  for (int64_t axis : {0, 1, -1}) {
    for (infer_dtype idx_dt : {INFER_DTYPE_INT64, INFER_DTYPE_INT32}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + " indices " + std::to_string(idx_dt));
      GraphBuilder g;
      g.node("Gather", {TensorSpec::f32("x", {4, 5, 6}), TensorSpec::of("i", idx_dt, {2, 3})},
             {out_spec()}, {AttrSpec::Int("axis", axis)}, 13);
      expect_same_as_cpu(g.graph_auto({"y"}), 70 + static_cast<uint32_t>(axis + 1), 0, 0);
    }
  }
  // Negative constant indices, a scalar index, int64 data.
  {
    GraphBuilder g;
    g.node("Gather",
           {TensorSpec::f32("x", {5, 3}),
            TensorSpec::constant<int64_t>("i", INFER_DTYPE_INT64, {4}, {-1, 0, -5, 2})},
           {out_spec()}, {}, 13);
    expect_same_as_cpu(g.graph_auto({"y"}), 80, 0, 0);
  }
  {
    GraphBuilder g;
    g.node("Gather",
           {TensorSpec::i64("x", {3, 7}),
            TensorSpec::constant<int32_t>("i", INFER_DTYPE_INT32, {}, {-2})},
           {out_spec(INFER_DTYPE_INT64)}, {AttrSpec::Int("axis", 1)}, 13);
    expect_same_as_cpu(g.graph_auto({"y"}), 81, 0, 0);
  }
  {
    // Negative indices computed at run time.
    GraphBuilder g;
    g.node("Gather", {TensorSpec::f32("x", {6, 2}), TensorSpec::i64("i", {3})}, {out_spec()}, {},
           13);
    const infer_graph_view* graph = g.graph_auto({"y"});
    expect_same_as_cpu(graph, {random_f32({6, 2}, 82), HostTensor::i64({3}, {-1, -6, 3})}, 0, 0);
  }
}

TEST_F(ShapeOpsTest, ExpandAndTileMatchCpu) {
  same("Expand", INFER_DTYPE_FLOAT32, {3, 1}, {ints("shape", {2, 3, 4})}, {}, 13, 90, "");
  same("Expand", INFER_DTYPE_FLOAT32, {1, 4}, {ints("shape", {3, 1})}, {}, 13, 91, "shape smaller");
  same("Expand", INFER_DTYPE_INT64, {2, 1, 3}, {ints("shape", {2, 5, 3})}, {}, 13, 92, "int64");
  same("Tile", INFER_DTYPE_FLOAT32, {2, 3}, {ints("repeats", {3, 2})}, {}, 13, 93, "");
  same("Tile", INFER_DTYPE_FLOAT32, {2, 1, 3}, {ints("repeats", {1, 4, 1})}, {}, 13, 94, "middle");
  same("Tile", INFER_DTYPE_INT64, {3}, {ints("repeats", {2})}, {}, 13, 95, "int64");
}

TEST_F(ShapeOpsTest, PadMatchesCpu) {
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    same("Pad", INFER_DTYPE_FLOAT32, {2, 3, 4}, {ints("pads", {0, 1, 2, 1, 2, 3})},
         {AttrSpec::String("mode", mode)}, 19, 100, mode);
    same("Pad", INFER_DTYPE_FLOAT32, {3, 5}, {ints("pads", {-1, 2, 1, -2})},
         {AttrSpec::String("mode", mode)}, 19, 101, std::string(mode) + " negative pads");
  }
  same("Pad", INFER_DTYPE_FLOAT32, {2, 3, 4},
       {ints("pads", {1, 2, 0, 1}),
        TensorSpec::constant<float>("v", INFER_DTYPE_FLOAT32, {}, {-3.5f}), ints("axes", {0, -1})},
       {}, 18, 102, "axes and a constant value");
  same("Pad", INFER_DTYPE_INT64, {2, 3},
       {ints("pads", {1, 1, 1, 1}),
        TensorSpec::constant<int64_t>("v", INFER_DTYPE_INT64, {}, {int64_t{-5000000000}})},
       {}, 13, 103, "int64 value");
  same("Pad", INFER_DTYPE_FLOAT32, {3, 4}, {},
       {AttrSpec::Ints("pads", {1, 0, 2, 1}), AttrSpec::Float("value", 2.5)}, 2, 104,
       "attributes (opset 2)");
  {
    // The constant value computed at run time.
    GraphBuilder g;
    g.node("Pad",
           {TensorSpec::f32("x", {2, 2}), ints("pads", {1, 1, 1, 1}), TensorSpec::f32("v", {})},
           {out_spec()}, {}, 13);
    expect_same_as_cpu(g.graph_auto({"y"}), {random_f32({2, 2}, 105), HostTensor::f32({}, {42.0f})},
                       0, 0);
  }
}

TEST_F(ShapeOpsTest, RealisticShapesMatchCpu) {
  same("Transpose", INFER_DTYPE_FLOAT32, {1, 64, 56, 56}, {},
       {AttrSpec::Ints("perm", {0, 2, 3, 1})}, 13, 110, "NCHW->NHWC");
  same("Transpose", INFER_DTYPE_FLOAT32, {1, 128, 12, 64}, {},
       {AttrSpec::Ints("perm", {0, 2, 1, 3})}, 13, 111, "split heads");
  same("Gather", INFER_DTYPE_FLOAT32, {1000, 64}, {TensorSpec::i64("ids", {1, 128})}, {}, 13, 112,
       "embedding lookup");
  same("Slice", INFER_DTYPE_FLOAT32, {1, 255, 20, 20},
       {ints("starts", {5}), ints("ends", {85}), ints("axes", {1})}, {}, 13, 113, "channels");
}

TEST_F(ShapeOpsTest, CapabilityRefusesWhatTheKernelsCannotRun) {
  {
    GraphBuilder g;
    g.node("Reshape", {TensorSpec::f32("x", {2, 3}), TensorSpec::i64("s", {2})}, {out_spec()}, {},
           13);
    expect_no(g.last_node(), "shape input must be a constant");
  }
  {
    GraphBuilder g;
    g.node("Slice", {TensorSpec::f32("x", {4}), TensorSpec::i64("s", {1}), ints("e", {2})},
           {out_spec()}, {}, 13);
    expect_no(g.last_node(), "starts input must be a constant");
  }
  {
    GraphBuilder g;
    g.node("Unsqueeze", {TensorSpec::f32("x", {4}), TensorSpec::i64("a", {1})}, {out_spec()}, {},
           13);
    expect_no(g.last_node(), "axes input must be a constant");
  }
  {
    GraphBuilder g;
    g.node("Transpose", {TensorSpec::of("x", INFER_DTYPE_FLOAT16, {2, 3})},
           {out_spec(INFER_DTYPE_FLOAT16)}, {}, 13);
    expect_no(g.last_node(), "float16");
  }
  {
    GraphBuilder g;
    g.node("Transpose", {TensorSpec::f32("x", {1, 1, 1, 1, 1, 1, 2})}, {out_spec()}, {}, 13);
    expect_no(g.last_node(), "rank 7");
  }
  {
    GraphBuilder g;
    g.node("Gather", {TensorSpec::f32("x", {4}), TensorSpec::f32("i", {2})}, {out_spec()}, {}, 13);
    expect_no(g.last_node(), "indices dtype");
  }
  {
    GraphBuilder g;
    g.node("Pad", {TensorSpec::f32("x", {4}), ints("pads", {1, 1})}, {out_spec()},
           {AttrSpec::String("mode", "wrap")}, 13);
    expect_no(g.last_node(), "mode=wrap");
  }
  {
    // A 2-byte dtype is still fine for the alias ops.
    GraphBuilder g;
    g.node("Reshape", {TensorSpec::of("x", INFER_DTYPE_FLOAT16, {2, 3}), ints("s", {6})},
           {out_spec(INFER_DTYPE_FLOAT16)}, {}, 13);
    EXPECT_NE(capability(g.last_node()).support, INFER_SUPPORT_NO);
  }
}

TEST_F(ShapeOpsTest, BadShapesFailTheRunWithTheNodeName) {
  GraphBuilder g;
  g.node("Reshape", {TensorSpec::f32("x", {2, 3}), ints("s", {4, -1})}, {out_spec()}, {}, 13,
         "bad_reshape");
  RunResult r = run_vk(g.graph_auto({"y"}), {random_f32({2, 3}, 1)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status.message.find("bad_reshape"), std::string::npos) << r.status.message;
  EXPECT_NE(r.status.message.find("cannot reshape"), std::string::npos) << r.status.message;
}

}  // namespace
}  // namespace infer::test::vk
