#include "optimizer/float32_widening.hpp"

#include "graph_builder.hpp"

namespace infer::optimizer::testing {
namespace {

constexpr DataType kF16 = DataType::kFloat16;
constexpr DataType kBF16 = DataType::kBFloat16;
constexpr DataType kF32 = DataType::kFloat32;

// IEEE half bit patterns, written out by hand: 0.5 = 0x3800, -2 = 0xC000, 1.5 = 0x3E00,
// 65504 (the largest half) = 0x7BFF; bfloat16 0.5 = 0x3F00, -3 = 0xC040.
const std::vector<uint16_t> kHalfBits = {0x3800, 0xC000, 0x3E00, 0x7BFF};

// x (f16) -> A: Conv(x, W) -> a -> B: Mul(a, a) -> b -> C: Relu(b) -> y (graph output);
// a is also read by D: Neg (not listed), whose output d is a graph output too.
ir::Graph chain() {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", kF16, {1, 1, 2, 2});
  b.constant_of<uint16_t>("W", kF16, {1, 1, 1, 1}, {kHalfBits[0]});
  for (const char* v : {"a", "b", "y", "d"}) b.typed(v, kF16, {1, 1, 2, 2});
  b.input("x");
  b.node("A", "Conv", {"x", "W"}, {"a"});
  b.node("B", "Mul", {"a", "a"}, {"b"});
  b.node("C", "Relu", {"b"}, {"y"});
  b.node("D", "Neg", {"a"}, {"d"});
  b.output("y");
  b.output("d");
  return g;
}

ir::NodeId id_named(const ir::Graph& g, const std::string& name) {
  for (ir::NodeId id = 0; id < g.node_count(); ++id)
    if (g.node(id).name == name) return id;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

int64_t cast_target(const ir::Node& n) { return n.attr_int("to", -1); }

TEST(Float32Widening, ListedNodesComputeInFloat32AndNeighboursShareTheFloat32Value) {
  ir::Graph g = chain();
  Result<WideningSummary> r = widen_to_float32(g, {id_named(g, "A"), id_named(g, "B")});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().message();

  // A reads x through a Cast to float32 and a float32 copy of W.
  const ir::Node& a = node_named(g, "A");
  const ir::Node& cast_in = node_named(g, "A/cast_in_0");
  EXPECT_EQ(cast_in.op_type, "Cast");
  EXPECT_EQ(cast_target(cast_in), static_cast<int64_t>(kF32));
  EXPECT_EQ(cast_in.inputs[0], id_of(g, "x"));
  EXPECT_EQ(a.inputs[0], cast_in.outputs[0]);
  EXPECT_EQ(g.value(a.inputs[0]).dtype, kF32);
  EXPECT_EQ(g.value(a.inputs[1]).name, "W/float32");
  EXPECT_EQ(floats_of(g, "W/float32"), std::vector<float>{0.5f});
  EXPECT_EQ(g.value(a.outputs[0]).dtype, kF32);
  EXPECT_EQ(g.value(a.outputs[0]).name, "a/float32");

  // B reads A's float32 output directly (both slots), without a round trip.
  const ir::Node& bn = node_named(g, "B");
  EXPECT_EQ(bn.inputs[0], a.outputs[0]);
  EXPECT_EQ(bn.inputs[1], a.outputs[0]);

  // 'a' stays a float16 value written by A's cast back, because D (not listed) reads it.
  const ir::Node& a_back = node_named(g, "A/cast_out_0");
  EXPECT_EQ(a_back.outputs[0], id_of(g, "a"));
  EXPECT_EQ(val(g, "a").dtype, kF16);
  EXPECT_EQ(cast_target(a_back), static_cast<int64_t>(kF16));
  EXPECT_EQ(node_named(g, "D").inputs[0], id_of(g, "a"));

  // B's output goes back to float16 for C, which was not listed; C is unchanged.
  const ir::Node& b_back = node_named(g, "B/cast_out_0");
  EXPECT_EQ(b_back.inputs[0], bn.outputs[0]);
  EXPECT_EQ(b_back.outputs[0], id_of(g, "b"));
  EXPECT_EQ(node_named(g, "C").inputs[0], id_of(g, "b"));

  // Graph outputs keep their values, names and dtypes.
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs[0]).dtype, kF16);
  EXPECT_EQ(count_op(g, "Cast"), 3u);
  EXPECT_EQ(r->casts, 3u);
  EXPECT_EQ(r->constants, 1u);
}

TEST(Float32Widening, ACastBackNothingReadsIsDropped) {
  ir::Graph g = chain();
  // With D listed too, nobody reads float16 'a' any more.
  Result<WideningSummary> r =
      widen_to_float32(g, {id_named(g, "A"), id_named(g, "B"), id_named(g, "D")});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().message();
  for (const ir::Node& n : g.nodes()) EXPECT_NE(n.name, "A/cast_out_0");
  EXPECT_EQ(node_named(g, "D").inputs[0], node_named(g, "A").outputs[0]);
  // cast_in for x, cast_out for b (read by C) and for d (a graph output).
  EXPECT_EQ(r->casts, 3u);
  EXPECT_EQ(count_op(g, "Cast"), 3u);
  EXPECT_EQ(val(g, "d").dtype, kF16);
  EXPECT_EQ(node_named(g, "D/cast_out_0").outputs[0], id_of(g, "d"));
}

TEST(Float32Widening, BFloat16ConstantsConvertExactlyAndOtherDtypesStay) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", kBF16, {2});
  b.typed("idx", DataType::kInt64, {2});
  b.constant_of<uint16_t>("k", kBF16, {2}, {0x3F00, 0xC040});
  b.typed("s", kBF16, {2});
  b.typed("i", DataType::kInt64, {2});
  b.input("x");
  b.node("S", "Sub", {"x", "k"}, {"s"});
  b.node("T", "ArgMax", {"s"}, {"i"});
  b.output("i");
  Result<WideningSummary> r = widen_to_float32(g, {id_named(g, "S"), id_named(g, "T")});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().message();
  EXPECT_EQ(floats_of(g, "k/float32"), (std::vector<float>{0.5f, -3.0f}));
  // ArgMax's int64 output is untouched and S's bfloat16 output never goes back.
  EXPECT_EQ(node_named(g, "T").outputs[0], id_of(g, "i"));
  EXPECT_EQ(val(g, "i").dtype, DataType::kInt64);
  EXPECT_EQ(count_op(g, "Cast"), 1u);
  EXPECT_EQ(cast_target(node_named(g, "S/cast_in_0")), static_cast<int64_t>(kF32));
}

TEST(Float32Widening, OnlyNodesWhoseDtypesAreTheirValuesQualify) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", kF16, {2});
  b.typed("h", kF32, {2});
  b.typed("c", kF16, {2});
  b.typed("f", kF32, {2});
  b.input("x");
  b.input("f");
  b.node("Cast16", "Cast", {"f"}, {"c"}, {attr_int("to", static_cast<int64_t>(kF16))});
  b.node("Relu32", "Relu", {"f"}, {"h"});
  b.node("Rand", "RandomNormalLike", {"x"}, {"r"}, {attr_int("dtype", 10)});
  b.node("Add16", "Add", {"x", "c"}, {"s"});
  b.output("h");
  EXPECT_FALSE(is_widenable(g, node_named(g, "Cast16")));
  EXPECT_FALSE(is_widenable(g, node_named(g, "Relu32")));  // nothing in float16
  EXPECT_FALSE(is_widenable(g, node_named(g, "Rand")));
  EXPECT_TRUE(is_widenable(g, node_named(g, "Add16")));
  Result<WideningSummary> r = widen_to_float32(g, {id_named(g, "Cast16")});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("does not read or write a float16/bfloat16"),
            std::string::npos)
      << r.status().message();
}

TEST(Float32Widening, HalfConstantsKeepEveryValueIncludingTheLargest) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", kF16, {4});
  b.constant_of<uint16_t>("k", kF16, {4}, kHalfBits);
  b.typed("y", kF16, {4});
  b.input("x");
  b.node("M", "Mul", {"x", "k"}, {"y"});
  b.output("y");
  ASSERT_TRUE(widen_to_float32(g, {id_named(g, "M")}).is_ok());
  EXPECT_EQ(floats_of(g, "k/float32"), (std::vector<float>{0.5f, -2.0f, 1.5f, 65504.0f}));
  // The graph output 'y' is written by the cast back, from M's float32 result.
  const ir::Node& back = node_named(g, "M/cast_out_0");
  EXPECT_EQ(back.outputs[0], id_of(g, "y"));
  EXPECT_EQ(back.inputs[0], node_named(g, "M").outputs[0]);
}

}  // namespace
}  // namespace infer::optimizer::testing
