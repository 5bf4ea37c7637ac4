#include "optimizer/attention_fusion.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

enum class Scale { kDiv, kMul, kMulConstantFirst, kNone };

// A BERT-style self-attention block as torch exports it (after shape folding), with
// 2 heads of 8: q, k, v [batch, seq, 16] -> y [batch, seq, 16].
struct Block {
  ir::Shape q_shape = shape_of({sym("batch"), sym("seq"), dim(16)});
  ir::Shape k_shape = shape_of({sym("batch"), sym("seq"), dim(16)});
  ir::Shape v_shape = shape_of({sym("batch"), sym("seq"), dim(16)});
  std::vector<int64_t> split_shape = {0, 0, 2, 8};
  std::vector<int64_t> merge_shape = {0, 0, 16};
  std::vector<int64_t> q_perm = {0, 2, 1, 3};
  bool k_two_transposes = false;  // [0,2,1,3] then [0,1,3,2] instead of [0,2,3,1]
  Scale scale = Scale::kDiv;
  float scale_value = 2.828427f;  // √8, as HF BERT divides
  bool mask = true;
  bool mask_first = false;  // Add(mask, scores)
  ir::Shape mask_shape = shape_of({sym("batch"), dim(1), dim(1), sym("seq")});
  DataType mask_dtype = DataType::kFloat32;
  int64_t softmax_axis = -1;
  bool allowzero = false;
};

void build(ir::Graph& g, const Block& c) {
  GraphBuilder b(g);
  b.typed("q", DataType::kFloat32, c.q_shape);
  b.typed("k", DataType::kFloat32, c.k_shape);
  b.typed("v", DataType::kFloat32, c.v_shape);
  b.input("q");
  b.input("k");
  b.input("v");
  if (c.mask) {
    b.typed("mask", c.mask_dtype, c.mask_shape);
    b.input("mask");
  }
  b.i64("split_shape", {4}, c.split_shape);
  b.i64("merge_shape", {static_cast<int64_t>(c.merge_shape.size())}, c.merge_shape);
  b.f32("c", {}, {c.scale_value});
  std::vector<ir::Attribute> reshape_attrs;
  if (c.allowzero) reshape_attrs.push_back(attr_int("allowzero", 1));

  b.node("q_reshape", "Reshape", {"q", "split_shape"}, {"q_r"}, reshape_attrs);
  b.node("q_transpose", "Transpose", {"q_r"}, {"q4"}, {attr_ints("perm", c.q_perm)});
  b.node("k_reshape", "Reshape", {"k", "split_shape"}, {"k_r"}, reshape_attrs);
  if (c.k_two_transposes) {
    b.node("k_transpose", "Transpose", {"k_r"}, {"k4"}, {attr_ints("perm", {0, 2, 1, 3})});
    b.node("k_swap", "Transpose", {"k4"}, {"kT"}, {attr_ints("perm", {0, 1, 3, 2})});
  } else {
    b.node("k_transpose", "Transpose", {"k_r"}, {"kT"}, {attr_ints("perm", {0, 2, 3, 1})});
  }
  b.node("v_reshape", "Reshape", {"v", "split_shape"}, {"v_r"}, reshape_attrs);
  b.node("v_transpose", "Transpose", {"v_r"}, {"v4"}, {attr_ints("perm", {0, 2, 1, 3})});
  b.node("qk", "MatMul", {"q4", "kT"}, {"s"});
  std::string scores = "s";
  switch (c.scale) {
    case Scale::kDiv:
      b.node("scale", "Div", {"s", "c"}, {"s2"});
      scores = "s2";
      break;
    case Scale::kMul:
      b.node("scale", "Mul", {"s", "c"}, {"s2"});
      scores = "s2";
      break;
    case Scale::kMulConstantFirst:
      b.node("scale", "Mul", {"c", "s"}, {"s2"});
      scores = "s2";
      break;
    case Scale::kNone:
      break;
  }
  if (c.mask) {
    b.node("mask_add", "Add",
           c.mask_first ? std::vector<std::string>{"mask", scores}
                        : std::vector<std::string>{scores, "mask"},
           {"s3"});
    scores = "s3";
  }
  b.node("softmax", "Softmax", {scores}, {"p"}, {attr_int("axis", c.softmax_axis)});
  b.node("pv", "MatMul", {"p", "v4"}, {"o"});
  b.node("merge_transpose", "Transpose", {"o"}, {"o2"}, {attr_ints("perm", {0, 2, 1, 3})});
  b.node("merge_reshape", "Reshape", {"o2", "merge_shape"}, {"y"}, reshape_attrs);
  b.output("y");
  g.rebuild_links();
}

int apply(ir::Graph& g, int64_t opset = 14) {
  return apply_pass<AttentionFusion>(g, context_at(opset));
}

// The graph is one Attention node reading q, k, v (and the mask when `mask`).
void expect_attention(const ir::Graph& g, bool mask, double scale) {
  ASSERT_EQ(op_types(g), Names({"Attention"}));
  const ir::Node& n = g.node(0);
  EXPECT_EQ(n.name, "qk");
  EXPECT_EQ(n.domain, "ai.infer");
  std::vector<ir::ValueId> inputs = {id_of(g, "q"), id_of(g, "k"), id_of(g, "v")};
  if (mask) inputs.push_back(id_of(g, "mask"));
  EXPECT_EQ(n.inputs, inputs);
  EXPECT_EQ(n.outputs, std::vector<ir::ValueId>{id_of(g, "y")});
  EXPECT_EQ(g.outputs, std::vector<ir::ValueId>{id_of(g, "y")});
  EXPECT_EQ(n.attr_int("num_heads", 0), 2);
  EXPECT_NEAR(n.attr_float("scale", 0), scale, 1e-7 * scale);
  EXPECT_EQ(n.attributes.size(), 2u);
}

// Div by 2.828427 (float32 √8 = 2.8284270763...) is a scale of its reciprocal.
constexpr double kDivScale = 1.0 / static_cast<double>(2.828427f);

// Builds the block `c`, expects one fusion and checks the Attention node it made.
void expect_fused(const Block& c, double scale = kDivScale) {
  ir::Graph g;
  build(g, c);
  EXPECT_EQ(apply(g), 1);
  expect_attention(g, c.mask, scale);
}

TEST(AttentionFusion, BertBlockWithSymbolicDimsAndPaddingMask) { expect_fused(Block{}); }

TEST(AttentionFusion, WithoutMask) {
  Block c;
  c.mask = false;
  expect_fused(c);
}

TEST(AttentionFusion, MulScaleEitherOrder) {
  for (Scale s : {Scale::kMul, Scale::kMulConstantFirst}) {
    Block c;
    c.scale = s;
    c.scale_value = 0.125f;
    expect_fused(c, 0.125);
  }
}

TEST(AttentionFusion, WithoutScale) {
  Block c;
  c.scale = Scale::kNone;
  expect_fused(c, 1.0);
}

TEST(AttentionFusion, MaskAsFirstAddOperand) {
  Block c;
  c.mask_first = true;
  expect_fused(c);
}

TEST(AttentionFusion, CausalAndLowRankMasks) {
  for (const ir::Shape& mask :
       {shape_of({dim(1), dim(1), sym("seq"), sym("seq")}), shape_of({sym("seq"), sym("seq")}),
        shape_of({sym("seq")}), shape_of({}),
        shape_of({sym("batch"), dim(2), sym("seq"), dim(1)})}) {
    ir::Graph g;
    Block c;
    c.mask_shape = mask;
    build(g, c);
    EXPECT_EQ(apply(g), 1) << mask.to_string();
    EXPECT_EQ(testing::count_op(g, "Attention"), 1u);
  }
}

TEST(AttentionFusion, KeyTransposedInTwoSteps) {
  Block c;
  c.k_two_transposes = true;
  expect_fused(c);
}

TEST(AttentionFusion, StaticShapes) {
  Block c;
  c.q_shape = c.k_shape = c.v_shape = shape_of({dim(3), dim(5), dim(16)});
  c.split_shape = {3, 5, 2, 8};
  c.merge_shape = {3, 5, 16};
  c.mask_shape = shape_of({dim(3), dim(1), dim(5), dim(5)});
  expect_fused(c);
}

TEST(AttentionFusion, InferredHeadDimAndMergedLastDim) {
  Block c;
  c.split_shape = {0, 0, 2, -1};
  c.merge_shape = {0, 0, -1};
  expect_fused(c);
}

TEST(AttentionFusion, CrossAttentionWithOtherKeyLength) {
  Block c;
  c.k_shape = c.v_shape = shape_of({sym("batch"), sym("mem"), dim(16)});
  c.mask_shape = shape_of({sym("batch"), dim(1), sym("seq"), sym("mem")});
  expect_fused(c);
}

TEST(AttentionFusion, SoftmaxAxisThree) {
  ir::Graph g;
  Block c;
  c.softmax_axis = 3;
  build(g, c);
  EXPECT_EQ(apply(g), 1);
}

// ---- Blocks that must stay as they are ------------------------------------------------

void expect_untouched(ir::Graph& g, int64_t opset = 14) {
  expect_untouched_by<AttentionFusion>(g, context_at(opset));
}

// Builds the block `c` and expects the pass to leave it alone.
void expect_untouched(const Block& c) {
  ir::Graph g;
  build(g, c);
  expect_untouched(g);
}

TEST(AttentionFusion, NotBelowOpset13) {
  ir::Graph g;
  build(g, {});
  expect_untouched(g, 12);
}

TEST(AttentionFusion, NotWithAMaskThatWouldBroadcastTheScores) {
  // Sq is 5: a mask with 7 rows would broadcast the scores to [.., 7, ..] (or fail).
  const ir::Shape q = shape_of({sym("batch"), dim(5), dim(16)});
  for (const ir::Shape& mask :
       {shape_of({sym("batch"), dim(1), dim(7), sym("seq")}),
        shape_of({dim(1), sym("batch"), dim(1), dim(1), sym("seq")}),  // rank 5
        shape_of({dim(4), dim(1), dim(1), sym("seq")}),                // batch 4 vs batch
        shape_of({sym("batch"), dim(3), dim(1), sym("seq")}),          // 3 heads vs 2
        shape_of({sym("other"), dim(1), dim(1), sym("seq")}),          // unprovable batch
        ir::Shape{}}) {                                                // unknown rank
    ir::Graph g;
    Block c;
    c.q_shape = q;
    c.mask_shape = mask;
    build(g, c);
    SCOPED_TRACE(mask.to_string());
    expect_untouched(g);
  }
}

TEST(AttentionFusion, NotWithAMaskOfAnotherDtype) {
  Block c;
  c.mask_dtype = DataType::kFloat16;
  expect_untouched(c);
}

TEST(AttentionFusion, NotWhenSoftmaxIsOnAnotherAxis) {
  for (int64_t axis : {2, 1, -2}) {
    Block c;
    c.softmax_axis = axis;
    expect_untouched(c);
  }
}

TEST(AttentionFusion, NotWhenAnIntermediateHasASecondConsumer) {
  for (const char* name : {"q_r", "q4", "kT", "v4", "s", "s2", "s3", "p", "o", "o2"}) {
    ir::Graph g;
    build(g, {});
    add_reader(g, name, "spy", "Identity", "spy_out");
    SCOPED_TRACE(name);
    expect_untouched(g);
  }
}

TEST(AttentionFusion, NotWhenAnIntermediateIsAGraphOutput) {
  ir::Graph g;
  build(g, {});
  g.outputs.push_back(id_of(g, "p"));  // attention probabilities returned too
  expect_untouched(g);
}

TEST(AttentionFusion, NotWithAnotherTransposePerm) {
  Block c;
  c.q_perm = {0, 2, 3, 1};  // would be Qᵀ
  expect_untouched(c);
}

TEST(AttentionFusion, NotWithReshapeAllowzero) {
  Block c;
  c.allowzero = true;
  expect_untouched(c);
}

TEST(AttentionFusion, NotWhenHeadsTimesHeadDimIsNotTheHiddenSize) {
  Block c;
  c.split_shape = {0, 0, 2, 4};  // 2·4 != 16: the Reshape itself fails
  expect_untouched(c);
}

TEST(AttentionFusion, NotWithAStaticShapeOverSymbolicDims) {
  Block c;
  c.split_shape = {3, 5, 2, 8};  // q is [batch, seq, 16]: the Reshape may regroup rows
  expect_untouched(c);
}

TEST(AttentionFusion, NotWhenTheOutputShapeIsNotBSqHidden) {
  Block c;
  c.merge_shape = {0, -1, 8};
  expect_untouched(c);
}

TEST(AttentionFusion, NotWhenBatchesMayBroadcast) {
  Block c;
  c.k_shape = c.v_shape = shape_of({dim(1), sym("seq"), dim(16)});
  expect_untouched(c);
}

TEST(AttentionFusion, NotWithANonConstantScale) {
  ir::Graph g;
  build(g, {});
  make_graph_input(g, "c");
  expect_untouched(g);
}

TEST(AttentionFusion, NotWithADynamicReshapeShape) {
  ir::Graph g;
  build(g, {});
  make_graph_input(g, "split_shape");
  expect_untouched(g);
}

TEST(AttentionFusion, NotWhenTheMaskIsAddedBeforeScaling) {
  // Div(Add(s, mask), c) would scale the mask too; the kernel adds it after scaling.
  ir::Graph g;
  Block c;
  c.mask = false;
  build(g, c);
  GraphBuilder b(g);
  b.typed("mask", DataType::kFloat32, shape_of({sym("batch"), dim(1), dim(1), sym("seq")}));
  b.input("mask");
  for (ir::Node& n : g.mutable_nodes())
    if (n.name == "qk") n.outputs = {b.value("s_raw")};
  b.node("mask_add", "Add", {"s_raw", "mask"}, {"s"});
  g.rebuild_links();
  ASSERT_TRUE(g.topological_sort().is_ok());
  expect_untouched(g);
}

}  // namespace
}  // namespace infer::optimizer
