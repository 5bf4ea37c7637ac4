#include "optimizer/noop_elimination.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int run(ir::Graph& g, int64_t opset = 17) {
  return apply_pass<NoopElimination>(g, context_at(opset));
}

// x (input) -> pre: Relu -> a -> <node under test> -> b -> post: Neg -> y (output).
// `add_node` adds the node under test reading "a" and writing "b".
template <typename F>
void sandwich(ir::Graph& g, ir::Shape shape, F add_node) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape);
  b.typed("a", DataType::kFloat32, shape);
  b.typed("b", DataType::kFloat32, shape);
  b.input("x");
  b.node("pre", "Relu", {"x"}, {"a"});
  add_node(b);
  b.node("post", "Neg", {"b"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

// Runs the pass on the sandwich and reports whether the middle node went (and then
// checks that post reads pre's output directly).
bool removed(ir::Graph& g, int64_t opset = 17) {
  const int n = run(g, opset);
  if (n == 0) {
    EXPECT_EQ(g.node_count(), 3u);
    return false;
  }
  EXPECT_EQ(n, 1);
  EXPECT_EQ(node_names(g), Names({"pre", "post"}));
  EXPECT_EQ(node_named(g, "post").inputs[0], id_of(g, "a"));
  return true;
}

TEST(NoopElimination, RemovesIdentity) {
  ir::Graph g;
  sandwich(g, shape_of({dim(2)}), [](GraphBuilder& b) { b.node("id", "Identity", {"a"}, {"b"}); });
  EXPECT_TRUE(removed(g));
  EXPECT_EQ(run(g), 0);
}

TEST(NoopElimination, IdentityChainEndingInAGraphOutputKeepsTheOutputName) {
  // x -> id1 -> a -> relu -> b -> id2 -> y (output): relu now writes y.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("id1", "Identity", {"x"}, {"a"});
  b.node("relu", "Relu", {"a"}, {"b"});
  b.node("id2", "Identity", {"b"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(node_names(g), Names({"relu"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
}

TEST(NoopElimination, TwoIdentitiesInARowToAGraphOutput) {
  // relu -> a -> id1 -> b -> id2 -> y (output): both go, relu writes y.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"a"});
  b.node("id1", "Identity", {"a"}, {"b"});
  b.node("id2", "Identity", {"b"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(node_names(g), Names({"relu"}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));
}

TEST(NoopElimination, IdentityFromAGraphInputToAGraphOutputStays) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("id", "Identity", {"x"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"id"}));
}

TEST(NoopElimination, DropoutBeforeOpset12GoesWhenItsMaskIsUnused) {
  ir::Graph g;
  sandwich(g, shape_of({dim(2)}), [](GraphBuilder& b) {
    b.node("drop", "Dropout", {"a"}, {"b", "mask"},
           {attr_float("ratio", 0.3), attr_int("is_test", 0)});
  });
  EXPECT_TRUE(removed(g, 7));
}

TEST(NoopElimination, DropoutWhoseMaskIsReadStays) {
  ir::Graph g;
  sandwich(g, shape_of({dim(2)}), [](GraphBuilder& b) {
    b.node("drop", "Dropout", {"a"}, {"b", "mask"});
  });
  GraphBuilder b(g);
  b.node("use_mask", "Not", {"mask"}, {"m"});
  b.output("m");
  g.rebuild_links();
  EXPECT_EQ(run(g, 10), 0);
  EXPECT_EQ(g.node_count(), 4u);
}

TEST(NoopElimination, DropoutFromOpset12DependsOnTrainingMode) {
  auto build = [](ir::Graph& g, const std::string& mode) {
    sandwich(g, shape_of({dim(2)}), [&](GraphBuilder& b) {
      b.f32("ratio", {}, {0.5f});
      b.constant_of<uint8_t>("off", DataType::kBool, {}, {0});
      b.constant_of<uint8_t>("on", DataType::kBool, {}, {1});
      b.typed("flag", DataType::kBool, ir::Shape::of({}));
      b.input("flag");
      if (mode.empty())
        b.node("drop", "Dropout", {"a", "ratio"}, {"b"});
      else
        b.node("drop", "Dropout", {"a", "ratio", mode}, {"b"});
    });
  };
  ir::Graph absent, off, on, dynamic;
  build(absent, "");
  build(off, "off");
  build(on, "on");
  build(dynamic, "flag");
  EXPECT_TRUE(removed(absent, 13));
  EXPECT_TRUE(removed(off, 13));
  EXPECT_FALSE(removed(on, 13));
  EXPECT_FALSE(removed(dynamic, 13));
}

TEST(NoopElimination, CastToTheSameDtypeGoesToAnotherStays) {
  ir::Graph same, other;
  sandwich(same, shape_of({dim(2)}), [](GraphBuilder& b) {
    b.node("cast", "Cast", {"a"}, {"b"},
           {attr_int("to", static_cast<int64_t>(DataType::kFloat32))});
  });
  sandwich(other, shape_of({dim(2)}), [](GraphBuilder& b) {
    b.typed("b", DataType::kFloat16, {2});
    b.node("cast", "Cast", {"a"}, {"b"},
           {attr_int("to", static_cast<int64_t>(DataType::kFloat16))});
  });
  EXPECT_TRUE(removed(same));
  EXPECT_FALSE(removed(other));
}

TEST(NoopElimination, ReshapeToTheSameStaticOrSymbolicShapeGoes) {
  ir::Graph same, symbolic, different, unknown;
  auto reshape = [](GraphBuilder& b) {
    b.i64("shape", {2}, {0, -1});
    b.node("reshape", "Reshape", {"a", "shape"}, {"b"});
  };
  sandwich(same, shape_of({dim(2), dim(3)}), reshape);
  sandwich(symbolic, shape_of({sym("batch"), dim(3)}), reshape);
  sandwich(different, shape_of({dim(2), dim(3)}), [&](GraphBuilder& b) {
    b.typed("b", DataType::kFloat32, {3, 2});
    reshape(b);
  });
  sandwich(unknown, shape_of({ir::Dim{}, dim(3)}), reshape);  // unknown dims prove nothing
  EXPECT_TRUE(removed(same));
  EXPECT_TRUE(removed(symbolic));
  EXPECT_FALSE(removed(different));
  EXPECT_FALSE(removed(unknown));
}

TEST(NoopElimination, ExpandToTheSameShapeGoes) {
  ir::Graph same, grows;
  sandwich(same, shape_of({sym("batch"), dim(4)}), [](GraphBuilder& b) {
    b.i64("shape", {2}, {1, 4});
    b.node("expand", "Expand", {"a", "shape"}, {"b"});
  });
  sandwich(grows, shape_of({sym("batch"), dim(1)}), [](GraphBuilder& b) {
    b.typed("b", DataType::kFloat32, shape_of({sym("batch"), dim(4)}));
    b.i64("shape", {2}, {1, 4});
    b.node("expand", "Expand", {"a", "shape"}, {"b"});
  });
  EXPECT_TRUE(removed(same));
  EXPECT_FALSE(removed(grows));
}

TEST(NoopElimination, IdentityTransposeGoes) {
  ir::Graph identity, swap, vector_default;
  sandwich(identity, shape_of({dim(2), dim(3), dim(4)}), [](GraphBuilder& b) {
    b.node("t", "Transpose", {"a"}, {"b"}, {attr_ints("perm", {0, 1, 2})});
  });
  sandwich(swap, shape_of({dim(2), dim(2)}), [](GraphBuilder& b) {
    b.node("t", "Transpose", {"a"}, {"b"}, {attr_ints("perm", {1, 0})});
  });
  // No perm reverses the dims, which for a vector changes nothing.
  sandwich(vector_default, shape_of({dim(5)}),
           [](GraphBuilder& b) { b.node("t", "Transpose", {"a"}, {"b"}); });
  EXPECT_TRUE(removed(identity));
  EXPECT_FALSE(removed(swap));
  EXPECT_TRUE(removed(vector_default));
}

TEST(NoopElimination, PadWithAllZeroPadsGoes) {
  ir::Graph zeros, reflect_zeros, nonzero, attr_zeros, attr_nonzero, dynamic;
  auto pad_input = [](std::vector<int64_t> pads, const char* mode) {
    return [pads, mode](GraphBuilder& b) {
      b.i64("pads", {static_cast<int64_t>(pads.size())}, pads);
      b.node("pad", "Pad", {"a", "pads"}, {"b"}, {attr_string("mode", mode)});
    };
  };
  sandwich(zeros, shape_of({dim(2), dim(3)}), pad_input({0, 0, 0, 0}, "constant"));
  sandwich(reflect_zeros, shape_of({dim(2), dim(3)}), pad_input({0, 0, 0, 0}, "reflect"));
  sandwich(nonzero, shape_of({dim(2), dim(3)}), pad_input({0, 1, 0, 0}, "constant"));
  sandwich(attr_zeros, shape_of({dim(2), dim(3)}), [](GraphBuilder& b) {
    b.node("pad", "Pad", {"a"}, {"b"}, {attr_ints("pads", {0, 0, 0, 0})});
  });
  sandwich(attr_nonzero, shape_of({dim(2), dim(3)}), [](GraphBuilder& b) {
    b.node("pad", "Pad", {"a"}, {"b"}, {attr_ints("pads", {0, 0, 0, 2})});
  });
  sandwich(dynamic, shape_of({dim(2), dim(3)}), [](GraphBuilder& b) {
    b.typed("pads", DataType::kInt64, {4});
    b.input("pads");
    b.node("pad", "Pad", {"a", "pads"}, {"b"});
  });
  EXPECT_TRUE(removed(zeros, 13));
  EXPECT_TRUE(removed(reflect_zeros, 13));
  EXPECT_FALSE(removed(nonzero, 13));
  EXPECT_TRUE(removed(attr_zeros, 2));
  EXPECT_FALSE(removed(attr_nonzero, 2));
  EXPECT_FALSE(removed(dynamic, 13));
}

// A Slice (opset 13) of "a" with the given constant parameters; empty axes/steps: omitted.
auto slice_of(std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
              std::vector<int64_t> steps) {
  return [=](GraphBuilder& b) {
    const auto n = static_cast<int64_t>(starts.size());
    b.i64("starts", {n}, starts);
    b.i64("ends", {n}, ends);
    std::vector<std::string> ins = {"a", "starts", "ends"};
    if (!axes.empty()) {
      b.i64("axes", {n}, axes);
      ins.push_back("axes");
    }
    if (!steps.empty()) {
      if (axes.empty()) ins.push_back("");
      b.i64("steps", {n}, steps);
      ins.push_back("steps");
    }
    b.node("slice", "Slice", ins, {"b"});
  };
}

TEST(NoopElimination, SliceTakingEverythingGoes) {
  const auto shape = shape_of({dim(3), sym("seq")});
  ir::Graph full, negative_start, implicit_axes, short_end, step2, symbolic_end, partial_start;
  sandwich(full, shape, slice_of({0, 0}, {3, kMax}, {0, 1}, {1, 1}));
  // start -5 on a dim of 3 clamps to 0, end 10 clamps to 3; axis -2 is axis 0.
  sandwich(negative_start, shape, slice_of({-5}, {10}, {-2}, {}));
  sandwich(implicit_axes, shape, slice_of({0}, {kMax}, {}, {}));
  sandwich(short_end, shape, slice_of({0}, {2}, {0}, {}));
  sandwich(step2, shape, slice_of({0}, {kMax}, {0}, {2}));
  // seq is unknown: an end of 1000 may cut it.
  sandwich(symbolic_end, shape, slice_of({0}, {1000}, {1}, {}));
  sandwich(partial_start, shape, slice_of({1}, {kMax}, {0}, {}));
  EXPECT_TRUE(removed(full));
  EXPECT_TRUE(removed(negative_start));
  EXPECT_TRUE(removed(implicit_axes));
  EXPECT_FALSE(removed(short_end));
  EXPECT_FALSE(removed(step2));
  EXPECT_FALSE(removed(symbolic_end));
  EXPECT_FALSE(removed(partial_start));
}

TEST(NoopElimination, SliceWithAttributesBeforeOpset10) {
  ir::Graph full, cut;
  sandwich(full, shape_of({dim(3), dim(4)}), [](GraphBuilder& b) {
    b.node("slice", "Slice", {"a"}, {"b"},
           {attr_ints("starts", {0}), attr_ints("ends", {4}), attr_ints("axes", {1})});
  });
  sandwich(cut, shape_of({dim(3), dim(4)}), [](GraphBuilder& b) {
    b.node("slice", "Slice", {"a"}, {"b"}, {attr_ints("starts", {0}), attr_ints("ends", {2})});
  });
  EXPECT_TRUE(removed(full, 9));
  EXPECT_FALSE(removed(cut, 9));  // axis 0 by default: 2 of 3 rows
}

TEST(NoopElimination, CapturedValueKeepsItsName) {
  // relu -> a -> id -> b, where a subgraph reads b by name: relu writes b.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"a"});
  b.node("id", "Identity", {"a"}, {"b"});
  b.typed("cond", DataType::kBool, ir::Shape::of({}));
  b.input("cond");
  b.node("if", "If", {"cond"}, {"z"}, if_branches_reading("b", "Neg"));
  b.output("z");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"relu", "if"}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "b"));
}

}  // namespace
}  // namespace infer::optimizer
