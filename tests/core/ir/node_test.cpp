// Node attribute accessors and describe().
#include <gtest/gtest.h>

#include "ir/graph.hpp"

namespace infer::ir {
namespace {

Attribute make_attr(const std::string& name, AttrType type) {
  Attribute a;
  a.name = name;
  a.type = type;
  return a;
}

Node make_conv() {
  Node n;
  n.name = "conv1";
  n.op_type = "Conv";
  Attribute group = make_attr("group", AttrType::kInt);
  group.i = 2;
  Attribute alpha = make_attr("alpha", AttrType::kFloat);
  alpha.f = 0.5;
  Attribute pad = make_attr("auto_pad", AttrType::kString);
  pad.s = "SAME_UPPER";
  Attribute pads = make_attr("pads", AttrType::kInts);
  pads.ints = {1, 1, 1, 1};
  n.attributes = {group, alpha, pad, pads};
  return n;
}

TEST(Node, TypedAccessorsReadMatchingAttributes) {
  Node n = make_conv();
  EXPECT_EQ(n.attr_int("group", 1), 2);
  EXPECT_DOUBLE_EQ(n.attr_float("alpha", 1.0), 0.5);
  EXPECT_EQ(n.attr_string("auto_pad", "NOTSET"), "SAME_UPPER");
  ASSERT_NE(n.attr("pads"), nullptr);
  EXPECT_EQ(n.attr("pads")->ints, (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(Node, AccessorsFallBackWhenAbsentOrOfAnotherType) {
  Node n = make_conv();
  EXPECT_EQ(n.attr("strides"), nullptr);
  EXPECT_EQ(n.attr_int("strides", 7), 7);
  EXPECT_EQ(n.attr_int("alpha", 7), 7);               // a float, not an int
  EXPECT_DOUBLE_EQ(n.attr_float("group", 3.0), 3.0);  // an int, not a float
  EXPECT_EQ(n.attr_string("group", "x"), "x");
}

TEST(Node, DescribeNamesNodeAndOperator) {
  Node n = make_conv();
  EXPECT_EQ(n.describe(), "node 'conv1' (Conv)");
  n.domain = "com.acme";
  n.op_type = "Gelu";
  EXPECT_EQ(n.describe(), "node 'conv1' (com.acme:Gelu)");
  n.domain = "ai.onnx";
  EXPECT_EQ(n.describe(), "node 'conv1' (Gelu)");
}

}  // namespace
}  // namespace infer::ir
