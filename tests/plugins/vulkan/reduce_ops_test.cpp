// Reductions on the vulkan plugin (reduce_ops.cpp: reduce_rows / reduce_cols,
// reduce_arg_rows / reduce_arg_cols): a hand-computed case, then the cpu plugin as the
// reference for every Reduce* op over inner, outer, middle, non-adjacent and all axes,
// with keepdims on and off, axes as an attribute (opset 13) and as an input (18),
// noop_with_empty_axes, rows longer than a workgroup; ArgMax / ArgMin with ties and
// select_last_index; and the capability answers.
#include <cstring>
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

std::string text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

const char* const kOps[] = {"ReduceSum",       "ReduceMean",     "ReduceMax", "ReduceMin",
                            "ReduceProd",      "ReduceL1",       "ReduceL2",  "ReduceLogSum",
                            "ReduceLogSumExp", "ReduceSumSquare"};

class ReduceOpsTest : public VulkanTest {
 protected:
  // `axes` empty with has_axes false: no axes at all (reduce everything).
  void reduce(const std::string& op, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& axes, bool has_axes, int64_t keepdims, int64_t opset,
              uint32_t seed, int64_t noop = -1) {
    SCOPED_TRACE(op + " " + text(dims) + " axes " + (has_axes ? text(axes) : "none") +
                 " keepdims " + std::to_string(keepdims) + " opset " + std::to_string(opset) +
                 (noop >= 0 ? " noop_with_empty_axes " + std::to_string(noop) : ""));
    const bool axes_input = opset >= (op == "ReduceSum" ? 13 : 18);
    std::vector<TensorSpec> ins = {TensorSpec::f32("x", dims)};
    std::vector<AttrSpec> attrs = {AttrSpec::Int("keepdims", keepdims)};
    if (noop >= 0) attrs.push_back(AttrSpec::Int("noop_with_empty_axes", noop));
    if (has_axes) {
      if (axes_input)
        ins.push_back(TensorSpec::constant<int64_t>("axes", INFER_DTYPE_INT64,
                                                    {static_cast<int64_t>(axes.size())}, axes));
      else
        attrs.push_back(AttrSpec::Ints("axes", axes));
    }
    GraphBuilder g;
    g.node(op, ins, {out_spec()}, attrs, opset);
    // LogSum needs positive sums: its inputs are positive.
    const float lo = op == "ReduceLogSum" ? 0.1f : -1.0f;
    expect_same_as_cpu(g.graph_auto({"y"}), {random_f32(dims, seed, lo, 1.0f)}, 1e-5, 1e-4);
  }

  void arg(const std::string& op, const HostTensor& x, int64_t axis, int64_t keepdims,
           int64_t last) {
    SCOPED_TRACE(op + " " + text(x.dims) + " axis " + std::to_string(axis) + " keepdims " +
                 std::to_string(keepdims) + " select_last_index " + std::to_string(last));
    GraphBuilder g;
    g.node(op, {TensorSpec::f32("x", x.dims)}, {out_spec(INFER_DTYPE_INT64)},
           {AttrSpec::Int("axis", axis), AttrSpec::Int("keepdims", keepdims),
            AttrSpec::Int("select_last_index", last)},
           13);
    expect_same_as_cpu(g.graph_auto({"y"}), {x}, 0, 0);
  }

};

TEST_F(ReduceOpsTest, ReduceMatchesHandComputedValues) {
  // x = [[1, 2, 3], [4, 5, 6]].
  const HostTensor x = HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  struct Case {
    const char* op;
    int64_t axis;
    std::vector<float> expect;
  };
  const Case cases[] = {{"ReduceSum", 1, {6, 15}},   {"ReduceMean", 0, {2.5f, 3.5f, 4.5f}},
                        {"ReduceMax", 1, {3, 6}},    {"ReduceMin", 0, {1, 2, 3}},
                        {"ReduceProd", 1, {6, 120}}, {"ReduceSumSquare", 1, {14, 77}}};
  for (const Case& c : cases) {
    GraphBuilder g;
    g.node(c.op, {TensorSpec::f32("x", {2, 3})}, {out_spec()},
           {AttrSpec::Ints("axes", {c.axis}), AttrSpec::Int("keepdims", 0)}, 11);
    RunResult r = run_vk(g.graph_auto({"y"}), {x});
    ASSERT_TRUE(r.ok()) << c.op << ": " << r.status.message;
    EXPECT_EQ(r.outputs[0].as<float>(), c.expect) << c.op;
  }
}

TEST_F(ReduceOpsTest, EveryReduceOpMatchesCpu) {
  uint32_t seed = 1;
  for (const char* op : kOps) {
    for (int64_t opset : {13, 18}) {
      reduce(op, {3, 4, 5}, {-1}, true, 1, opset, seed++);       // innermost: rows
      reduce(op, {3, 4, 40}, {2}, true, 0, opset, seed++);       // long rows
      reduce(op, {3, 4, 5}, {0}, true, 0, opset, seed++);        // outermost: columns
      reduce(op, {3, 4, 5}, {1}, true, 1, opset, seed++);        // middle
      reduce(op, {3, 4, 5, 2}, {0, 2}, true, 0, opset, seed++);  // non-adjacent
      reduce(op, {2, 3, 20}, {1, 2}, true, 0, opset, seed++);    // trailing pair
    }
    reduce(op, {4, 6}, {}, false, 1, 13, seed++);  // every axis
    reduce(op, {4, 6}, {}, false, 0, 18, seed++);
  }
}

TEST_F(ReduceOpsTest, EmptyAxesAndLongReductionsMatchCpu) {
  reduce("ReduceSum", {3, 4}, {}, false, 1, 13, 200, 1);  // noop: the input itself
  reduce("ReduceMean", {3, 4}, {}, false, 0, 18, 201, 1);
  reduce("ReduceMax", {3, 4}, {}, false, 0, 18, 202, 0);
  reduce("ReduceSum", {2, 3000}, {1}, true, 1, 13, 203);
  reduce("ReduceLogSumExp", {1, 1000}, {-1}, true, 0, 18, 204);
  reduce("ReduceMean", {1, 3, 7, 9}, {2, 3}, true, 1, 18, 205);  // global average pooling
  reduce("ReduceSum", {1, 1, 5, 1}, {2}, true, 0, 13, 206);      // size-1 dims around
}

TEST_F(ReduceOpsTest, ArgMaxArgMinMatchCpu) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t last : {0, 1}) {
      arg(op, random_f32({3, 4, 5}, 300), -1, 1, last);
      arg(op, random_f32({3, 4, 5}, 301), 0, 0, last);
      arg(op, random_f32({3, 4, 5}, 302), 1, 1, last);
      arg(op, random_f32({2, 100}, 303), 1, 0, last);  // a workgroup per row
      // Ties everywhere: first or last of the equal extremes.
      std::vector<float> v(2 * 40);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 5);
      const HostTensor ties = HostTensor::f32({2, 40}, v);
      arg(op, ties, 1, 1, last);
      arg(op, HostTensor::f32({4, 3}, {1, 1, 1, 2, 2, 2, 0, 0, 0, 2, 1, 0}), 0, 1, last);
    }
  }
}

TEST_F(ReduceOpsTest, ArgMaxMatchesHandComputedValues) {
  GraphBuilder g;
  g.node("ArgMax", {TensorSpec::f32("x", {2, 4})}, {out_spec(INFER_DTYPE_INT64)},
         {AttrSpec::Int("axis", 1), AttrSpec::Int("keepdims", 0),
          AttrSpec::Int("select_last_index", 1)},
         13);
  RunResult r =
      run_vk(g.graph_auto({"y"}), {HostTensor::f32({2, 4}, {1, 3, 3, 0, -1, -2, -3, -1})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{2, 3}));
}

TEST_F(ReduceOpsTest, RealisticShapesMatchCpu) {
  reduce("ReduceMean", {1, 256, 14, 14}, {2, 3}, true, 1, 18, 600);  // global pooling
  reduce("ReduceMean", {1, 128, 768}, {-1}, true, 1, 18, 601);       // a decomposed LayerNorm
  reduce("ReduceSum", {64, 1000}, {0}, true, 0, 13, 602);            // down the columns
  arg("ArgMax", random_f32({8, 1000}, 603), 1, 0, 0);                // classifier logits
}

TEST_F(ReduceOpsTest, CapabilityRefusesWhatTheKernelsCannotRun) {
  {
    GraphBuilder g;
    g.node("ReduceSum", {TensorSpec::f32("x", {2, 4}), TensorSpec::i64("axes", {1})}, {out_spec()},
           {}, 13);
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("axes input must be a constant"), std::string::npos)
        << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("ReduceMax", {TensorSpec::i64("x", {2, 4})}, {out_spec(INFER_DTYPE_INT64)}, {}, 13);
    const infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("int64"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.node("ReduceMean", {TensorSpec::f32("x", {2, 4})}, {out_spec()},
           {AttrSpec::Ints("axes", {1})}, 13);
    EXPECT_NE(capability(g.last_node()).support, INFER_SUPPORT_NO);
  }
}

}  // namespace
}  // namespace infer::test::vk
