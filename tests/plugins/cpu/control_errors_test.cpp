// Control flow on the cpu plugin (If, Loop, Scan) through the ABI: bodies that read
// values of enclosing graphs (nested too), loops that stop on their condition, scans
// in reverse and along other axes, opset 8's batched Scan, and bad input (mismatched
// branches or body signatures, negative trip counts, errors inside bodies) giving
// errors that name the node. Expected values are computed by hand in the comments.
//
// GraphBuilder has no graph attributes, so the views of control-flow nodes and bodies
// are assembled here from the builder's value and node views. One builder holds every
// value, so a body that names an outer value gets the same view pointer, as the ABI
// requires for captures.
#include <gtest/gtest.h>

#include <deque>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class ControlViews {
 public:
  GraphBuilder g;

  // A graph over the given nodes with inputs/outputs named (declared earlier in g).
  const infer_graph_view* graph(std::vector<const infer_node_view*> nodes,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs,
                                const std::string& name = "body") {
    auto& ns = node_lists_.emplace_back(std::move(nodes));
    auto& ins = value_lists_.emplace_back();
    for (const auto& s : inputs) ins.push_back(g.find(s));
    auto& outs = value_lists_.emplace_back();
    for (const auto& s : outputs) outs.push_back(g.find(s));
    infer_graph_view v{};
    v.struct_size = sizeof v;
    v.name = strings_.emplace_back(name).c_str();
    v.num_nodes = ns.size();
    v.nodes = ns.data();
    v.num_inputs = ins.size();
    v.inputs = ins.data();
    v.num_outputs = outs.size();
    v.outputs = outs.data();
    return &graphs_.emplace_back(v);
  }

  // A node whose graph attributes are `graphs` (plus the ordinary `attrs`). Values are
  // referenced by name and must be declared in g first; "" is an omitted input.
  const infer_node_view* control(
      const std::string& op, const std::vector<std::string>& inputs,
      const std::vector<std::string>& outputs,
      const std::vector<std::pair<std::string, const infer_graph_view*>>& graphs,
      const std::vector<AttrSpec>& attrs, int64_t opset, const std::string& name) {
    const infer_node_view* base = g.node_by_name(op, inputs, outputs, attrs, opset, name);
    auto& list = attr_lists_.emplace_back(base->attrs, base->attrs + base->num_attrs);
    for (const auto& [attr, body] : graphs) {
      auto& ptrs = graph_ptrs_.emplace_back(1, body);
      infer_attr_view a{};
      a.struct_size = sizeof a;
      a.name = strings_.emplace_back(attr).c_str();
      a.type = INFER_ATTR_GRAPH;
      a.count = 1;
      a.graphs = ptrs.data();
      list.push_back(a);
    }
    infer_node_view v = *base;
    v.num_attrs = list.size();
    v.attrs = list.data();
    return &nodes_.emplace_back(v);
  }

 private:
  std::deque<std::string> strings_;
  std::deque<std::vector<const infer_node_view*>> node_lists_;
  std::deque<std::vector<const infer_value_view*>> value_lists_;
  std::deque<std::vector<infer_attr_view>> attr_lists_;
  std::deque<std::vector<const infer_graph_view*>> graph_ptrs_;
  std::deque<infer_node_view> nodes_;
  std::deque<infer_graph_view> graphs_;
};

TensorSpec scalar_i64(const std::string& n) { return TensorSpec::i64(n, {}); }
TensorSpec scalar_bool(const std::string& n) { return TensorSpec::of(n, INFER_DTYPE_BOOL, {}); }
TensorSpec f32(const std::string& n, std::vector<int64_t> d) { return TensorSpec::f32(n, d); }

class CpuControl : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
  }
  void TearDown() override {
    if (plugin_) {
      EXPECT_EQ(plugin_->host().live_allocations(), 0) << "leaked host memory";
    }
  }
  infer_capability query(const infer_node_view* node) {
    infer_capability cap{};
    cap.struct_size = sizeof cap;
    cap.support = INFER_SUPPORT_NO;
    StatusInfo st = take_status(plugin_->api()->query_capability(plugin_->device(), node, &cap));
    EXPECT_TRUE(st.ok()) << st.message;
    return cap;
  }
  std::unique_ptr<PluginHandle> plugin_;
};

// If whose branches read two outer values, one branch returning an outer value as is.
TEST_F(CpuControl, IfBranchesReadOuterValues) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_bool("cond"));
  g.value(f32("x", {2}));
  g.value(f32("y", {2}));
  g.value(f32("res", {2}));
  const infer_node_view* add = g.node("Add", {f32("x", {2}), f32("y", {2})}, {f32("sum", {2})});
  auto* then_b = v.graph({add}, {}, {"sum"}, "then");
  auto* else_b = v.graph({}, {}, {"y"}, "else");
  auto* node = v.control("If", {"cond"}, {"res"},
                         {{"then_branch", then_b}, {"else_branch", else_b}}, {}, 13, "if_1");
  EXPECT_EQ(query(node).support, INFER_SUPPORT_YES);
  auto* graph = v.graph({node}, {"cond", "x", "y"}, {"res"}, "main");
  const HostTensor x = HostTensor::f32({2}, {1, 2}), y = HostTensor::f32({2}, {10, 20});
  RunResult r = run_graph(*plugin_, graph, {HostTensor::boolean({}, {1}), x, y});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{11, 22}));
  r = run_graph(*plugin_, graph, {HostTensor::boolean({1}, {0}), x, y});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{10, 20}));
}

// Loop(M) whose body holds an If that reads the loop's carried value (a value of the
// Loop body) and `k` (a value of the main graph, two scopes out).
//   acc = x; for i in 0..M-1: acc = i < 2 ? acc + k : acc * k; scan[i] = acc
// x = [1,2], k = [2,3], M = 4: [3,5], [5,8], [10,24], [20,72].
TEST_F(CpuControl, NestedIfInsideLoopReadsOuterValues) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_i64("M"));
  g.value(f32("x", {2}));
  g.value(f32("k", {2}));
  g.value(f32("acc_final", {2}));
  g.value(f32("acc_scan", {-1, 2}));
  g.value(scalar_i64("i"));
  g.value(scalar_bool("c"));
  g.value(f32("acc", {2}));
  g.value(f32("acc_next", {2}));
  const auto two = TensorSpec::constant<int64_t>("two", INFER_DTYPE_INT64, {}, {2});
  auto* then_add = g.node("Add", {f32("acc", {2}), f32("k", {2})}, {f32("t_out", {2})});
  auto* else_mul = g.node("Mul", {f32("acc", {2}), f32("k", {2})}, {f32("e_out", {2})});
  auto* then_b = v.graph({then_add}, {}, {"t_out"}, "then");
  auto* else_b = v.graph({else_mul}, {}, {"e_out"}, "else");
  auto* less = g.node("Less", {scalar_i64("i"), two}, {scalar_bool("small")});
  auto* inner_if =
      v.control("If", {"small"}, {"acc_next"}, {{"then_branch", then_b}, {"else_branch", else_b}},
                {}, 13, "inner_if");
  auto* cond_id = g.node("Identity", {scalar_bool("c")}, {scalar_bool("c_out")});
  auto* scan_id = g.node("Identity", {f32("acc_next", {2})}, {f32("scan_v", {2})});
  auto* body = v.graph({less, inner_if, cond_id, scan_id}, {"i", "c", "acc"},
                       {"c_out", "acc_next", "scan_v"}, "loop_body");
  auto* loop = v.control("Loop", {"M", "", "x"}, {"acc_final", "acc_scan"}, {{"body", body}}, {},
                         13, "loop_1");
  EXPECT_EQ(query(loop).support, INFER_SUPPORT_YES) << query(loop).reason;
  auto* graph = v.graph({loop}, {"M", "x", "k"}, {"acc_final", "acc_scan"}, "main");
  RunResult r = run_graph(
      *plugin_, graph,
      {HostTensor::i64({}, {4}), HostTensor::f32({2}, {1, 2}), HostTensor::f32({2}, {2, 3})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{20, 72}));
  EXPECT_EQ(r.outputs[1].dims, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{3, 5, 5, 8, 10, 24, 20, 72}));
  // M = 0: no iteration; the carried value comes back unchanged and the scan is empty.
  r = run_graph(
      *plugin_, graph,
      {HostTensor::i64({}, {0}), HostTensor::f32({2}, {1, 2}), HostTensor::f32({2}, {2, 3})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(r.outputs[1].dims, (std::vector<int64_t>{0, 2}));
}

// Loop without M: runs while the body's condition holds. v = 1; do v *= 2 while v < 20:
// 2, 4, 8, 16, 32 (the iteration that turns the condition false still counts).
TEST_F(CpuControl, LoopStopsOnCondition) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_bool("cond"));
  g.value(f32("v0", {1}));
  g.value(f32("v_final", {1}));
  g.value(f32("v_scan", {-1, 1}));
  g.value(scalar_i64("i"));
  g.value(scalar_bool("c"));
  g.value(f32("v", {1}));
  auto two = TensorSpec::constant<float>("two", INFER_DTYPE_FLOAT32, {1}, {2.0f});
  auto twenty = TensorSpec::constant<float>("twenty", INFER_DTYPE_FLOAT32, {1}, {20.0f});
  auto* mul = g.node("Mul", {f32("v", {1}), two}, {f32("v_next", {1})});
  auto* less =
      g.node("Less", {f32("v_next", {1}), twenty}, {TensorSpec::of("c1", INFER_DTYPE_BOOL, {1})});
  auto* sq = g.node("Squeeze", {TensorSpec::of("c1", INFER_DTYPE_BOOL, {1})},
                    {scalar_bool("c_out")}, {AttrSpec::Ints("axes", {0})}, 11);
  auto* body = v.graph({mul, less, sq}, {"i", "c", "v"}, {"c_out", "v_next", "v_next"});
  auto* loop = v.control("Loop", {"", "cond", "v0"}, {"v_final", "v_scan"}, {{"body", body}}, {},
                         11, "while");
  auto* graph = v.graph({loop}, {"cond", "v0"}, {"v_final", "v_scan"}, "main");
  RunResult r =
      run_graph(*plugin_, graph, {HostTensor::boolean({}, {1}), HostTensor::f32({1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{32}));
  EXPECT_EQ(r.outputs[1].dims, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{2, 4, 8, 16, 32}));
  // A false condition up front: no iteration at all.
  r = run_graph(*plugin_, graph, {HostTensor::boolean({}, {0}), HostTensor::f32({1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1}));
  EXPECT_EQ(r.outputs[1].dims, (std::vector<int64_t>{0, 1}));
}

// Scan (opset 11) summing rows, reading them in reverse; the second scan output is
// written in reverse. x = [[1,2],[3,4],[5,6]]: slices read [5,6], [3,4], [1,2];
// running sums [5,6], [8,10], [9,12].
TEST_F(CpuControl, ScanReverseDirections) {
  ControlViews v;
  auto& g = v.g;
  g.value(f32("s0", {2}));
  g.value(f32("x", {3, 2}));
  g.value(f32("s_final", {2}));
  g.value(f32("fwd", {3, 2}));
  g.value(f32("rev", {3, 2}));
  g.value(f32("s", {2}));
  g.value(f32("row", {2}));
  auto* add = g.node("Add", {f32("s", {2}), f32("row", {2})}, {f32("s_next", {2})});
  auto* body = v.graph({add}, {"s", "row"}, {"s_next", "s_next", "s_next"});
  auto* scan =
      v.control("Scan", {"s0", "x"}, {"s_final", "fwd", "rev"}, {{"body", body}},
                {AttrSpec::Int("num_scan_inputs", 1), AttrSpec::Ints("scan_input_directions", {1}),
                 AttrSpec::Ints("scan_output_directions", {0, 1})},
                11, "scan_rev");
  auto* graph = v.graph({scan}, {"s0", "x"}, {"s_final", "fwd", "rev"}, "main");
  RunResult r = run_graph(
      *plugin_, graph, {HostTensor::f32({2}, {0, 0}), HostTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{9, 12}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{5, 6, 8, 10, 9, 12}));
  EXPECT_EQ(r.outputs[2].as<float>(), (std::vector<float>{9, 12, 8, 10, 5, 6}));
}

// Scan along axis 1 of the input, stacking along axis 1 (negative: -1 of a rank-2
// output). x = [[1,2,3],[4,5,6]] has columns [1,4], [2,5], [3,6]; sums [1,4], [3,9],
// [6,15]; stacked as columns: [[1,3,6],[4,9,15]].
TEST_F(CpuControl, ScanAlongOtherAxes) {
  ControlViews v;
  auto& g = v.g;
  g.value(f32("s0", {2}));
  g.value(f32("x", {2, 3}));
  g.value(f32("s_final", {2}));
  g.value(f32("cols", {2, 3}));
  g.value(f32("s", {2}));
  g.value(f32("col", {2}));
  auto* add = g.node("Add", {f32("s", {2}), f32("col", {2})}, {f32("s_next", {2})});
  auto* body = v.graph({add}, {"s", "col"}, {"s_next", "s_next"});
  auto* scan =
      v.control("Scan", {"s0", "x"}, {"s_final", "cols"}, {{"body", body}},
                {AttrSpec::Int("num_scan_inputs", 1), AttrSpec::Ints("scan_input_axes", {1}),
                 AttrSpec::Ints("scan_output_axes", {-1})},
                16, "scan_axes");
  auto* graph = v.graph({scan}, {"s0", "x"}, {"s_final", "cols"}, "main");
  RunResult r = run_graph(
      *plugin_, graph, {HostTensor::f32({2}, {0, 0}), HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(r.outputs[1].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{1, 3, 6, 4, 9, 15}));
}

// Scan opset 8: a batch of 2 sequences of up to 3 steps, the second only 2 long, the
// first read in reverse. x[0] = [1,2,3] reversed: sums 3, 5, 6; x[1] = [10,20,(30)]:
// sums 10, 30, then zero padding.
TEST_F(CpuControl, Scan8BatchWithSequenceLengths) {
  ControlViews v;
  auto& g = v.g;
  g.value(TensorSpec::i64("lens", {2}));
  g.value(f32("s0", {2, 1}));
  g.value(f32("x", {2, 3, 1}));
  g.value(f32("s_final", {2, 1}));
  g.value(f32("sums", {2, 3, 1}));
  g.value(f32("s", {1}));
  g.value(f32("e", {1}));
  auto* add = g.node("Add", {f32("s", {1}), f32("e", {1})}, {f32("s_next", {1})});
  auto* body = v.graph({add}, {"s", "e"}, {"s_next", "s_next"});
  auto* scan = v.control("Scan", {"lens", "s0", "x"}, {"s_final", "sums"}, {{"body", body}},
                         {AttrSpec::Int("num_scan_inputs", 1), AttrSpec::Ints("directions", {1})},
                         8, "scan8");
  auto* graph = v.graph({scan}, {"lens", "s0", "x"}, {"s_final", "sums"}, "main");
  RunResult r = run_graph(*plugin_, graph,
                          {HostTensor::i64({2}, {3, 2}), HostTensor::f32({2, 1}, {0, 0}),
                           HostTensor::f32({2, 3, 1}, {1, 2, 3, 10, 20, 30})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  // Batch 1 reads its 2 valid steps in reverse too: 20, then 10.
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{6, 30}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{3, 5, 6, 20, 30, 0}));
  r = run_graph(*plugin_, graph,
                {HostTensor::i64({2}, {3, 4}), HostTensor::f32({2, 1}, {0, 0}),
                 HostTensor::f32({2, 3, 1}, {1, 2, 3, 10, 20, 30})});
  EXPECT_EQ(r.status.message, "node 'scan8' (Scan): sequence_lens[1] is 4, expected 0 to 3");
}

// A carried value that doubles in length every iteration (allowed for Loop-carried
// values): v = [0]; v = concat(v, v + 1) three times gives [0,1], [0,1,1,2], then
// [0,1,1,2,1,2,2,3].
TEST_F(CpuControl, LoopCarriedValueChangesShape) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_i64("M"));
  g.value(f32("v0", {1}));
  g.value(f32("v_final", {-1}));
  g.value(scalar_i64("i"));
  g.value(scalar_bool("c"));
  g.value(f32("v", {-1}));
  auto one = TensorSpec::constant<float>("one", INFER_DTYPE_FLOAT32, {1}, {1.0f});
  auto* add = g.node("Add", {f32("v", {-1}), one}, {f32("w", {-1})});
  auto* concat = g.node("Concat", {f32("v", {-1}), f32("w", {-1})}, {f32("v_next", {-1})},
                        {AttrSpec::Int("axis", 0)}, 13);
  auto* body = v.graph({add, concat}, {"i", "c", "v"}, {"c", "v_next"});
  auto* loop = v.control("Loop", {"M", "", "v0"}, {"v_final"}, {{"body", body}}, {}, 16, "grow");
  auto* graph = v.graph({loop}, {"M", "v0"}, {"v_final"}, "main");
  RunResult r = run_graph(*plugin_, graph, {HostTensor::i64({}, {3}), HostTensor::f32({1}, {0})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 1, 1, 2, 1, 2, 2, 3}));
}

// If branches may return differently shaped values (opset 11+): an outer [2] value or
// a constant [3].
TEST_F(CpuControl, IfBranchesWithDifferentShapes) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_bool("cond"));
  g.value(f32("x", {2}));
  g.value(f32("res", {-1}));
  g.value(TensorSpec::constant<float>("three", INFER_DTYPE_FLOAT32, {3}, {7, 8, 9}));
  auto* then_b = v.graph({}, {}, {"x"}, "then");
  auto* else_b = v.graph({}, {}, {"three"}, "else");
  auto* node = v.control("If", {"cond"}, {"res"},
                         {{"then_branch", then_b}, {"else_branch", else_b}}, {}, 11, "if_shapes");
  auto* graph = v.graph({node}, {"cond", "x"}, {"res"}, "main");
  RunResult r =
      run_graph(*plugin_, graph, {HostTensor::boolean({}, {0}), HostTensor::f32({2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{7, 8, 9}));
  r = run_graph(*plugin_, graph, {HostTensor::boolean({}, {1}), HostTensor::f32({2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2}));
}

TEST_F(CpuControl, IfBranchesWithDifferentOutputCounts) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_bool("cond"));
  g.value(f32("x", {2}));
  g.value(f32("res", {2}));
  auto* then_b = v.graph({}, {}, {"x", "x"}, "then");
  auto* else_b = v.graph({}, {}, {"x"}, "else");
  auto* node = v.control("If", {"cond"}, {"res"},
                         {{"then_branch", then_b}, {"else_branch", else_b}}, {}, 16, "if_bad");
  auto* graph = v.graph({node}, {"cond", "x"}, {"res"}, "main");
  RunResult r =
      run_graph(*plugin_, graph, {HostTensor::boolean({}, {1}), HostTensor::f32({2}, {1, 2})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'if_bad' (If): then_branch has 2 outputs but else_branch has 1: both branches "
            "must produce the same number of outputs");
}

TEST_F(CpuControl, LoopBodySignatureMismatch) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_i64("M"));
  g.value(f32("x", {2}));
  g.value(f32("y", {2}));
  g.value(scalar_i64("i"));
  g.value(f32("a", {2}));
  // The body forgets the condition input: 2 inputs where 3 are needed.
  auto* neg = g.node("Neg", {f32("a", {2})}, {f32("b", {2})});
  g.value(TensorSpec::constant<uint8_t>("c_const", INFER_DTYPE_BOOL, {}, {1}));
  auto* body = v.graph({neg}, {"i", "a"}, {"c_const", "b"});
  auto* loop = v.control("Loop", {"M", "", "x"}, {"y"}, {{"body", body}}, {}, 16, "loop_bad");
  auto* graph = v.graph({loop}, {"M", "x"}, {"y"}, "main");
  RunResult r =
      run_graph(*plugin_, graph, {HostTensor::i64({}, {1}), HostTensor::f32({2}, {1, 2})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'loop_bad' (Loop): body takes 2 inputs, expected 3 (iteration number, "
            "condition and 1 loop-carried values)");
}

// Builds Loop(M, "", x) -> (y, ys) whose body gathers x[i] from `table` (captured): with
// a 3-row table, iteration 3 is out of range.
struct GatherLoop {
  ControlViews v;
  const infer_graph_view* graph = nullptr;
  GatherLoop() {
    auto& g = v.g;
    g.value(scalar_i64("M"));
    g.value(f32("table", {3}));
    g.value(f32("x", {}));
    g.value(f32("y", {}));
    g.value(f32("ys", {-1}));
    g.value(scalar_i64("i"));
    g.value(scalar_bool("c"));
    g.value(f32("a", {}));
    auto* gather =
        g.node("Gather", {f32("table", {3}), scalar_i64("i")}, {f32("t_i", {})}, {}, 13, "pick");
    auto* add = g.node("Add", {f32("a", {}), f32("t_i", {})}, {f32("a_next", {})});
    auto* body = v.graph({gather, add}, {"i", "c", "a"}, {"c", "a_next", "t_i"});
    auto* loop = v.control("Loop", {"M", "", "x"}, {"y", "ys"}, {{"body", body}}, {}, 13, "loop_g");
    graph = v.graph({loop}, {"M", "table", "x"}, {"y", "ys"}, "main");
  }
};

TEST_F(CpuControl, LoopRunsItsBodyAndRefusesANegativeTripCount) {
  GatherLoop l;
  const HostTensor table = HostTensor::f32({3}, {1, 10, 100}), x = HostTensor::f32({}, {0.5f});
  RunResult r = run_graph(*plugin_, l.graph, {HostTensor::i64({}, {3}), table, x});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{111.5f}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{1, 10, 100}));
  r = run_graph(*plugin_, l.graph, {HostTensor::i64({}, {-3}), table, x});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message, "node 'loop_g' (Loop): the trip count M is -3, it must be >= 0");
}

TEST_F(CpuControl, ErrorInsideABodyNamesBothNodes) {
  GatherLoop l;
  RunResult r = run_graph(
      *plugin_, l.graph,
      {HostTensor::i64({}, {5}), HostTensor::f32({3}, {1, 10, 100}), HostTensor::f32({}, {0})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'loop_g' (Loop): body iteration 3: node 'pick' (Gather): index 3 out of range "
            "for axis 0 of size 3");
}

TEST_F(CpuControl, UnsupportedBodyNodeIsReported) {
  ControlViews v;
  auto& g = v.g;
  g.value(scalar_bool("cond"));
  g.value(f32("x", {2}));
  g.value(f32("res", {2}));
  auto* foo = g.node("Foo", {f32("x", {2})}, {f32("f", {2})}, {}, 13, "foo_1");
  auto* then_b = v.graph({foo}, {}, {"f"}, "then");
  auto* else_b = v.graph({}, {}, {"x"}, "else");
  auto* node = v.control("If", {"cond"}, {"res"},
                         {{"then_branch", then_b}, {"else_branch", else_b}}, {}, 13, "if_foo");
  infer_capability cap = query(node);
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
  EXPECT_STREQ(cap.reason, "cpu: then_branch: node 'foo_1' (Foo): no kernel for Foo (domain '')");
}

TEST_F(CpuControl, ScanInputsOfDifferentLengths) {
  ControlViews v;
  auto& g = v.g;
  g.value(f32("s0", {1}));
  g.value(f32("x1", {3, 1}));
  g.value(f32("x2", {4, 1}));
  g.value(f32("s_final", {1}));
  g.value(f32("s", {1}));
  g.value(f32("a", {1}));
  g.value(f32("b", {1}));
  auto* ab = g.node("Add", {f32("a", {1}), f32("b", {1})}, {f32("ab", {1})});
  auto* add = g.node("Add", {f32("s", {1}), f32("ab", {1})}, {f32("s_next", {1})});
  auto* body = v.graph({ab, add}, {"s", "a", "b"}, {"s_next"});
  auto* scan = v.control("Scan", {"s0", "x1", "x2"}, {"s_final"}, {{"body", body}},
                         {AttrSpec::Int("num_scan_inputs", 2)}, 11, "scan_len");
  auto* graph = v.graph({scan}, {"s0", "x1", "x2"}, {"s_final"}, "main");
  RunResult r = run_graph(*plugin_, graph,
                          {HostTensor::f32({1}, {0}), HostTensor::f32({3, 1}, {1, 2, 3}),
                           HostTensor::f32({4, 1}, {1, 2, 3, 4})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      r.status.message,
      "node 'scan_len' (Scan): scan input 1 has 4 slices along axis 0 but scan input 0 has 3");
}

}  // namespace
}  // namespace infer::test
