#include "optimizer/reshape_transpose_merging.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g) { return apply_pass<ReshapeTransposeMerging>(g, context_at(17)); }

// x [2,3,4] -> r1: Reshape(x, s1=[6,4]) -> m -> r2: Reshape(m, s2) -> y (output).
void build_reshapes(ir::Graph& g, const Ints& s2, int64_t allowzero = -1,
                    ir::Shape x_shape = ir::Shape::of({2, 3, 4}),
                    ir::Shape m_shape = ir::Shape::of({6, 4})) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, x_shape);
  b.typed("m", DataType::kFloat32, m_shape);
  b.input("x");
  b.i64("s1", {2}, {6, 4});
  b.i64("s2", {static_cast<int64_t>(s2.size())}, s2);
  b.node("r1", "Reshape", {"x", "s1"}, {"m"});
  std::vector<ir::Attribute> attrs;
  if (allowzero >= 0) attrs.push_back(attr_int("allowzero", allowzero));
  b.node("r2", "Reshape", {"m", "s2"}, {"y"}, attrs);
  b.output("y");
  g.rebuild_links();
}

TEST(ReshapeTransposeMerging, ReshapeOfReshapeReadsTheOriginalInput) {
  ir::Graph g;
  build_reshapes(g, {4, -1});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"r2"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
  EXPECT_EQ(int_constant(g, g.node(0).inputs[1]), Ints({4, -1}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));
  EXPECT_EQ(run(g), 0);
}

TEST(ReshapeTransposeMerging, ThreeReshapesCollapseInOneApplication) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.i64("s1", {1}, {24});
  b.i64("s2", {2}, {4, 6});
  b.i64("s3", {3}, {2, 2, 6});
  b.node("r1", "Reshape", {"x", "s1"}, {"m1"});
  b.node("r2", "Reshape", {"m1", "s2"}, {"m2"});
  b.node("r3", "Reshape", {"m2", "s3"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(node_names(g), Names({"r3"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
}

TEST(ReshapeTransposeMerging, InnerReshapeWithASecondConsumerStays) {
  ir::Graph g;
  build_reshapes(g, {4, -1});
  add_reader(g, "m", "other", "Relu", "z");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"r1", "r2", "other"}));
}

TEST(ReshapeTransposeMerging, InnerReshapeThatIsAGraphOutputStays) {
  ir::Graph g;
  build_reshapes(g, {4, -1});
  GraphBuilder(g).output("m");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"r1", "r2"}));
}

TEST(ReshapeTransposeMerging, NonConstantOuterShapeStays) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.typed("s2", DataType::kInt64, {2});
  b.input("s2");
  b.i64("s1", {1}, {24});
  b.node("r1", "Reshape", {"x", "s1"}, {"m"});
  b.node("r2", "Reshape", {"m", "s2"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
}

TEST(ReshapeTransposeMerging, ZeroCopiesTheIntermediateDim) {
  // m = [6,4]; s2 = [0,2,2] copies m's dim 0 (6), but x's dim 0 is 2: no merge.
  ir::Graph g;
  build_reshapes(g, {0, 2, 2});
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"r1", "r2"}));
}

TEST(ReshapeTransposeMerging, ZeroOverProvablyEqualDimsMerges) {
  // x [batch,3,4] -> Reshape [0,12] -> m [batch,12] -> Reshape [0,2,6]: dim 0 is batch in
  // both, so reading x copies the same size.
  ir::Graph g;
  build_reshapes(g, {0, 2, 6}, -1, shape_of({sym("batch"), dim(3), dim(4)}),
                 shape_of({sym("batch"), dim(12)}));
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"r2"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
}

TEST(ReshapeTransposeMerging, AllowZeroOneWithAZeroStays) {
  ir::Graph with_zero, without_zero;
  build_reshapes(with_zero, {0, 2, 6}, 1, shape_of({sym("batch"), dim(3), dim(4)}),
                 shape_of({sym("batch"), dim(12)}));
  build_reshapes(without_zero, {4, 6}, 1);
  EXPECT_EQ(run(with_zero), 0);
  EXPECT_EQ(run(without_zero), 1);
  EXPECT_EQ(node_named(without_zero, "r2").attr_int("allowzero", 0), 1);
}

// x [x_dims] -> t1: Transpose(p1) -> m -> t2: Transpose(p2) -> y (output). Empty x_dims
// leave x the builder's default value; an empty p1 is omitted (reversing the dims).
void build_transposes(ir::Graph& g, const Ints& x_dims, const Ints& p1, const Ints& p2) {
  GraphBuilder b(g);
  if (!x_dims.empty()) b.typed("x", DataType::kFloat32, x_dims);
  b.input("x");
  std::vector<ir::Attribute> p1_attrs;
  if (!p1.empty()) p1_attrs.push_back(attr_ints("perm", p1));
  b.node("t1", "Transpose", {"x"}, {"m"}, p1_attrs);
  b.node("t2", "Transpose", {"m"}, {"y"}, {attr_ints("perm", p2)});
  b.output("y");
  g.rebuild_links();
}

TEST(ReshapeTransposeMerging, TransposesCompose) {
  // x (a,b,c) -[1,0,2]-> (b,a,c) -[0,2,1]-> (b,c,a) = x transposed by [1,2,0]. (The
  // perms do not commute: composing them the wrong way round gives [2,0,1].)
  ir::Graph g;
  build_transposes(g, {2, 3, 4}, {1, 0, 2}, {0, 2, 1});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"t2"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
  EXPECT_EQ(attr_ints_or(g.node(0), "perm", {}), Ints({1, 2, 0}));
}

TEST(ReshapeTransposeMerging, TransposeWithDefaultPermComposes) {
  // No perm reverses: (a,b,c) -> (c,b,a); then [0,2,1] -> (c,a,b) = [2,0,1].
  ir::Graph g;
  build_transposes(g, {2, 3, 4}, {}, {0, 2, 1});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(attr_ints_or(g.node(0), "perm", {}), Ints({2, 0, 1}));
}

TEST(ReshapeTransposeMerging, CancellingTransposesDisappear) {
  // NCHW -> NHWC -> NCHW feeding a Relu.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("t1", "Transpose", {"x"}, {"m"}, {attr_ints("perm", {0, 2, 3, 1})});
  b.node("t2", "Transpose", {"m"}, {"n"}, {attr_ints("perm", {0, 3, 1, 2})});
  b.node("relu", "Relu", {"n"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"relu"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
}

TEST(ReshapeTransposeMerging, CancellingTransposesIntoAGraphOutputKeepTheName) {
  // relu -> a -> t1 -> t2 -> y (output): relu writes y.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"a"});
  b.node("t1", "Transpose", {"a"}, {"m"}, {attr_ints("perm", {1, 0})});
  b.node("t2", "Transpose", {"m"}, {"y"}, {attr_ints("perm", {1, 0})});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"relu"}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));

  // From a graph input straight to a graph output, the identity Transpose must stay.
  ir::Graph h;
  build_transposes(h, {}, {1, 0}, {1, 0});
  EXPECT_EQ(run(h), 1);
  EXPECT_EQ(node_names(h), Names({"t2"}));
  EXPECT_EQ(h.node(0).inputs[0], id_of(h, "x"));
  EXPECT_EQ(attr_ints_or(h.node(0), "perm", {}), Ints({0, 1}));
}

TEST(ReshapeTransposeMerging, InnerTransposeWithASecondConsumerStays) {
  ir::Graph g;
  build_transposes(g, {}, {1, 0}, {1, 0});
  add_reader(g, "m", "other", "Relu", "z");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(g.node_count(), 3u);
}

TEST(ReshapeTransposeMerging, ReshapeOfTransposeIsNotAPair) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.i64("s", {1}, {-1});
  b.node("t1", "Transpose", {"x"}, {"m"}, {attr_ints("perm", {1, 0})});
  b.node("r", "Reshape", {"m", "s"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
}

}  // namespace
}  // namespace infer::optimizer
