#include "optimizer/shape_folding.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g, int64_t opset = 17) { return apply_pass<ShapeFolding>(g, context_at(opset)); }

// The constant shape input of the node named `name`, or nullopt while it is computed.
std::optional<Ints> reshape_shape(const ir::Graph& g, const std::string& name) {
  const ir::Node& n = node_named(g, name);  // a failure when there is no such node
  if (n.name != name || n.inputs.size() < 2) return std::nullopt;
  return int_constant(g, n.inputs[1]);
}

// Declares int64 values of the given shapes (the dtype shape inference gives them).
void int64s(GraphBuilder& b, const std::vector<std::string>& names, const Ints& dims) {
  for (const auto& n : names) b.typed(n, DataType::kInt64, dims);
}

TEST(ShapeFolding, ShapeAndSizeOfStaticValuesBecomeConstants) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3, 4});
  b.input("x");
  int64s(b, {"s"}, {3});
  int64s(b, {"n"}, {});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("size", "Size", {"x"}, {"n"});
  b.node("use", "Concat", {"s", "n"}, {"y"}, {attr_int("axis", 0)});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(node_names(g), Names({"use"}));
  EXPECT_EQ(int_constant(g, id_of(g, "s")), Ints({2, 3, 4}));
  EXPECT_EQ(int_constant(g, id_of(g, "n")), Ints({24}));
  EXPECT_EQ(val(g, "n").shape.to_string(), "[]");
  EXPECT_EQ(val(g, "s").dtype, DataType::kInt64);
  EXPECT_EQ(run(g), 0);
}

TEST(ShapeFolding, ShapeSliceOfKnownDimsFoldsDespiteSymbolicOnes) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), dim(7), dim(64)}));
  b.input("x");
  int64s(b, {"tail", "middle", "last", "all"}, {1});
  b.node("tail", "Shape", {"x"}, {"tail"}, {attr_int("start", 1)});
  b.node("middle", "Shape", {"x"}, {"middle"}, {attr_int("start", 1), attr_int("end", 2)});
  b.node("last", "Shape", {"x"}, {"last"}, {attr_int("start", -1)});
  b.node("all", "Shape", {"x"}, {"all"});    // needs the symbolic batch: stays
  b.node("size", "Size", {"x"}, {"count"});  // likewise
  b.node("use", "Concat", {"tail", "middle", "last", "all", "count"}, {"y"}, {attr_int("axis", 0)});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 3);
  EXPECT_EQ(node_names(g), Names({"all", "size", "use"}));
  EXPECT_EQ(int_constant(g, id_of(g, "tail")), Ints({7, 64}));
  EXPECT_EQ(int_constant(g, id_of(g, "middle")), Ints({7}));
  EXPECT_EQ(int_constant(g, id_of(g, "last")), Ints({64}));
}

TEST(ShapeFolding, ShapeThatIsAGraphOutputStays) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3});
  b.input("x");
  b.node("shape", "Shape", {"x"}, {"s"});
  b.output("s");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"shape"}));
}

// torch.onnx export of BERT self-attention (opset 17): the head split.
void build_head_split(ir::Graph& g, GraphBuilder& b) {
  b.typed("h", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(64)}));
  b.input("h");
  b.f32("bias", {64}, std::vector<float>(64, 0.5f));
  b.typed("q", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(64)}));
  b.i64("i0", {}, {0});
  b.i64("i1", {}, {1});
  b.i64("axes0", {1}, {0});
  b.i64("heads", {1}, {4});
  b.i64("head_size", {1}, {16});
  int64s(b, {"s0", "s1"}, {3});
  int64s(b, {"g0", "g1"}, {});
  int64s(b, {"u0", "u1"}, {1});
  int64s(b, {"c"}, {4});
  b.node("q_add", "Add", {"h", "bias"}, {"q"});
  b.node("shape0", "Shape", {"q"}, {"s0"});
  b.node("gather0", "Gather", {"s0", "i0"}, {"g0"}, {attr_int("axis", 0)});
  b.node("shape1", "Shape", {"q"}, {"s1"});
  b.node("gather1", "Gather", {"s1", "i1"}, {"g1"}, {attr_int("axis", 0)});
  b.node("unsq0", "Unsqueeze", {"g0", "axes0"}, {"u0"});
  b.node("unsq1", "Unsqueeze", {"g1", "axes0"}, {"u1"});
  b.node("concat", "Concat", {"u0", "u1", "heads", "head_size"}, {"c"}, {attr_int("axis", 0)});
  b.node("split", "Reshape", {"q", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
}

TEST(ShapeFolding, BertHeadSplitReshapeGetsAConstantShape) {
  ir::Graph g;
  GraphBuilder b(g);
  build_head_split(g, b);
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(reshape_shape(g, "split"), Ints({0, 0, 4, 16}));
  // The abandoned chain is dead_code_elimination's to remove.
  EXPECT_EQ(g.node_count(), 9u);
  const ir::Node& split = g.node(8);
  EXPECT_EQ(split.inputs[0], id_of(g, "q"));
  EXPECT_EQ(val(g, "c").producer, 7u);
  EXPECT_EQ(run(g), 0);
}

TEST(ShapeFolding, BertHeadSplitWithAllowZeroStays) {
  ir::Graph g;
  GraphBuilder b(g);
  build_head_split(g, b);
  set_attr(g.node(8), attr_int("allowzero", 1));
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(reshape_shape(g, "split"), std::nullopt);
}

// The head split, with the Reshape reading a new graph input "other" of `shape` instead
// of q (the shape still comes from q).
void build_head_split_of_other(ir::Graph& g, ir::Shape shape) {
  GraphBuilder b(g);
  build_head_split(g, b);
  b.typed("other", DataType::kFloat32, std::move(shape));
  b.input("other");
  g.node(8).inputs[0] = id_of(g, "other");
  g.rebuild_links();
}

TEST(ShapeFolding, ReshapeOfAnotherTensorThanTheShapeSourceStays) {
  // The shape comes from q, the data is an unrelated input of other symbolic dims: a 0
  // would copy a dim that is not provably the same.
  ir::Graph g;
  build_head_split_of_other(g, shape_of({sym("n"), sym("m"), dim(64)}));
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(reshape_shape(g, "split"), std::nullopt);
}

TEST(ShapeFolding, SameSymbolsProveDimsOfUnrelatedTensors) {
  ir::Graph g;
  build_head_split_of_other(g, shape_of({sym("batch"), sym("seq"), dim(8), dim(8)}));
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(reshape_shape(g, "split"), Ints({0, 0, 4, 16}));
}

TEST(ShapeFolding, BertHeadMergeThroughTransposeGetsAConstantShape) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("attn", DataType::kFloat32, shape_of({sym("batch"), dim(4), sym("seq"), dim(16)}));
  b.input("attn");
  b.typed("ctx", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(4), dim(16)}));
  b.i64("i0", {}, {0});
  b.i64("i2", {}, {2});
  b.i64("axes0", {1}, {0});
  b.i64("hidden", {1}, {64});
  int64s(b, {"s0", "s2"}, {4});
  int64s(b, {"batch", "seq"}, {});
  int64s(b, {"u0", "u2"}, {1});
  int64s(b, {"c"}, {3});
  b.node("perm", "Transpose", {"attn"}, {"ctx"}, {attr_ints("perm", {0, 2, 1, 3})});
  b.node("shape0", "Shape", {"attn"}, {"s0"});
  b.node("gather0", "Gather", {"s0", "i0"}, {"batch"});
  b.node("shape2", "Shape", {"attn"}, {"s2"});
  b.node("gather2", "Gather", {"s2", "i2"}, {"seq"});
  b.node("unsq0", "Unsqueeze", {"batch", "axes0"}, {"u0"});
  b.node("unsq2", "Unsqueeze", {"seq", "axes0"}, {"u2"});
  b.node("concat", "Concat", {"u0", "u2", "hidden"}, {"c"}, {attr_int("axis", 0)});
  b.node("merge", "Reshape", {"ctx", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(reshape_shape(g, "merge"), Ints({0, 0, 64}));
}

TEST(ShapeFolding, TransposeMappingToTheWrongDimStays) {
  // ctx = Transpose(attn, [0,2,1,3]); position 1 of ctx is attn's dim 2 (seq), but the
  // shape asks for attn's dim 1 (heads, a different symbol).
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("attn", DataType::kFloat32, shape_of({sym("batch"), sym("heads"), sym("seq"), dim(16)}));
  b.input("attn");
  b.typed("ctx", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), sym("heads"), dim(16)}));
  b.i64("i1", {1}, {1});
  b.i64("zero", {1}, {0});
  b.i64("rest", {1}, {-1});
  int64s(b, {"s"}, {4});
  int64s(b, {"h"}, {1});
  int64s(b, {"c"}, {3});
  b.node("perm", "Transpose", {"attn"}, {"ctx"}, {attr_ints("perm", {0, 2, 1, 3})});
  b.node("shape", "Shape", {"attn"}, {"s"});
  b.node("gather", "Gather", {"s", "i1"}, {"h"});  // 1-D index: no Unsqueeze needed
  b.node("concat", "Concat", {"zero", "h", "rest"}, {"c"}, {attr_int("axis", 0)});
  b.node("merge", "Reshape", {"ctx", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(reshape_shape(g, "merge"), std::nullopt);

  // Asking for dim 2 (seq) instead makes it provable.
  ir::Graph g2;
  GraphBuilder b2(g2);
  b2.typed("attn", DataType::kFloat32, shape_of({sym("batch"), sym("heads"), sym("seq"), dim(16)}));
  b2.input("attn");
  b2.typed("ctx", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), sym("heads"), dim(16)}));
  b2.i64("i2", {1}, {2});
  b2.i64("zero", {1}, {0});
  b2.i64("rest", {1}, {-1});
  int64s(b2, {"s"}, {4});
  int64s(b2, {"h"}, {1});
  b2.node("perm", "Transpose", {"attn"}, {"ctx"}, {attr_ints("perm", {0, 2, 1, 3})});
  b2.node("shape", "Shape", {"attn"}, {"s"});
  b2.node("gather", "Gather", {"s", "i2"}, {"h"});
  b2.node("concat", "Concat", {"zero", "h", "rest"}, {"c"}, {attr_int("axis", 0)});
  b2.node("merge", "Reshape", {"ctx", "c"}, {"r"});
  b2.output("r");
  g2.rebuild_links();
  EXPECT_EQ(run(g2), 1);
  EXPECT_EQ(reshape_shape(g2, "merge"), Ints({0, 0, -1}));
}

TEST(ShapeFolding, OldOpsetFormsWithCastsAndElementwiseOps) {
  // Opset 11: Unsqueeze axes as an attribute, the Gather result Cast to int64, the
  // data reached through Relu(Mul(x, scalar)).
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(64)}));
  b.input("x");
  b.f32("scale", {}, {0.125f});
  b.typed("xm", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(64)}));
  b.typed("xr", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(64)}));
  b.i64("i0", {}, {0});
  b.i64("i1", {}, {-2});  // negative: dim 1 of a rank-3 shape
  b.i64("tail", {2}, {8, 8});
  int64s(b, {"s"}, {3});
  int64s(b, {"g0", "g1", "k1"}, {});
  int64s(b, {"u0", "u1"}, {1});
  b.node("mul", "Mul", {"x", "scale"}, {"xm"});
  b.node("relu", "Relu", {"xm"}, {"xr"});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather0", "Gather", {"s", "i0"}, {"g0"});
  b.node("gather1", "Gather", {"s", "i1"}, {"g1"});
  b.node("cast1", "Cast", {"g1"}, {"k1"}, {attr_int("to", 7)});
  b.node("unsq0", "Unsqueeze", {"g0"}, {"u0"}, {attr_ints("axes", {0})});
  b.node("unsq1", "Unsqueeze", {"k1"}, {"u1"}, {attr_ints("axes", {0})});
  b.node("concat", "Concat", {"u0", "u1", "tail"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"xr", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g, 11), 1);
  EXPECT_EQ(reshape_shape(g, "reshape"), Ints({0, 0, 8, 8}));
}

TEST(ShapeFolding, KnownDimsOfAPartlySymbolicShapeBecomeTheirSizes) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), dim(8), dim(64)}));
  b.input("x");
  b.i64("i0", {}, {0});
  b.i64("i1", {}, {1});
  b.i64("axes0", {1}, {0});
  b.i64("rest", {1}, {-1});
  int64s(b, {"s"}, {3});
  int64s(b, {"g0", "g1"}, {});
  int64s(b, {"u0", "u1"}, {1});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather0", "Gather", {"s", "i0"}, {"g0"});
  b.node("gather1", "Gather", {"s", "i1"}, {"g1"});
  b.node("unsq0", "Unsqueeze", {"g0", "axes0"}, {"u0"});
  b.node("unsq1", "Unsqueeze", {"g1", "axes0"}, {"u1"});
  // The shape puts x's dim 1 (8) at position 2 and batch at 0.
  b.node("concat", "Concat", {"u0", "rest", "u1"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"x", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(reshape_shape(g, "reshape"), Ints({0, -1, 8}));
}

TEST(ShapeFolding, UnresolvablePiecesLeaveTheReshape) {
  // Piece 1 is a graph input; piece 0 asks for x's dim 0 at position 0 (provable).
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(64)}));
  b.input("x");
  b.typed("n", DataType::kInt64, {1});
  b.input("n");
  b.i64("i0", {1}, {0});
  int64s(b, {"s"}, {3});
  int64s(b, {"g0"}, {1});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather0", "Gather", {"s", "i0"}, {"g0"});
  b.node("concat", "Concat", {"g0", "n"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"x", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(reshape_shape(g, "reshape"), std::nullopt);
}

TEST(ShapeFolding, ZeroBeyondTheDataRankIsRefused) {
  // x is [batch, seq]; the shape [1, 1, batch] would put batch at position 2, where a 0
  // has no input dim to copy.
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), sym("seq")}));
  b.input("x");
  b.i64("i0", {1}, {0});
  b.i64("ones", {2}, {1, 1});
  int64s(b, {"s"}, {2});
  int64s(b, {"g0"}, {1});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather0", "Gather", {"s", "i0"}, {"g0"});
  b.node("concat", "Concat", {"ones", "g0"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"x", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
}

// r = Reshape(Add(x, bias), Concat(x.shape[0], x.shape[1], x.shape[2])) with x
// [batch, seq, n] and the Add's output shape left unknown by shape inference.
void build_biased_reshape(ir::Graph& g, const std::vector<float>& bias) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), sym("n")}));
  b.input("x");
  b.f32("bias", {static_cast<int64_t>(bias.size())}, bias);
  b.typed("d", DataType::kFloat32, shape_of({ir::Dim{}, ir::Dim{}, ir::Dim{}}));
  b.i64("i0", {1}, {0});
  b.i64("i1", {1}, {1});
  b.i64("i2", {1}, {2});
  int64s(b, {"s"}, {3});
  int64s(b, {"g0", "g1", "g2"}, {1});
  b.node("add", "Add", {"x", "bias"}, {"d"});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather0", "Gather", {"s", "i0"}, {"g0"});
  b.node("gather1", "Gather", {"s", "i1"}, {"g1"});
  b.node("gather2", "Gather", {"s", "i2"}, {"g2"});
  b.node("concat", "Concat", {"g0", "g1", "g2"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"d", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
}

TEST(ShapeFolding, VectorBiasBroadcastIntoTheLastDimIsNotShapePreserving) {
  // d's last dim is broadcast(n, 4), which is not provably n (n may be 1).
  ir::Graph g;
  build_biased_reshape(g, {1, 2, 3, 4});
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(reshape_shape(g, "reshape"), std::nullopt);
}

TEST(ShapeFolding, OneElementBiasPreservesEveryDim) {
  ir::Graph g;
  build_biased_reshape(g, {0.5f});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(reshape_shape(g, "reshape"), Ints({0, 0, 0}));
}

TEST(ShapeFolding, ShapeVectorFoldedInTheSameApplicationResolvesPieces) {
  // Shape(x) of a static x folds in step (a); the Gather of that constant then reads as
  // a constant piece, so the Reshape gets [2, 12] without an evaluator.
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3, 4});
  b.input("x");
  b.i64("i0", {}, {0});
  b.i64("axes0", {1}, {0});
  b.i64("rest", {1}, {12});
  int64s(b, {"s"}, {3});
  int64s(b, {"g0"}, {});
  int64s(b, {"u0"}, {1});
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather0", "Gather", {"s", "i0"}, {"g0"});
  b.node("unsq0", "Unsqueeze", {"g0", "axes0"}, {"u0"});
  b.node("concat", "Concat", {"u0", "rest"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"x", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(reshape_shape(g, "reshape"), Ints({2, 12}));
}

}  // namespace
}  // namespace infer::optimizer
