// The kernels' helpers (src/ops/op_util.cpp), tested directly: grids, broadcasting,
// activations and names. Expected values are worked out by hand in the comments.
#include <cmath>
#include <limits>

#include "op_kernel.hpp"
#include "vulkan_test_util.hpp"

namespace infer::vk {
namespace {

TEST(VulkanOpUtilTest, GridFoldsIntoTwoDimensionsAndKeepsExtraSpecConstants) {
  Dispatch d;
  d.spec = {0, 0, 0, 42};
  set_grid_1d(d, 1000, 256);  // ceil(1000/256) = 4 groups
  EXPECT_EQ(d.spec, (std::vector<uint32_t>{256, 1, 1, 42}));
  EXPECT_EQ(d.groups[0], 4u);
  EXPECT_EQ(d.groups[1], 1u);
  Dispatch big;
  // 65535 * 256 + 1 threads need 65536 groups: x = 65535, y = 2.
  set_grid_1d(big, uint64_t{65535} * 256 + 1, 256);
  EXPECT_EQ(big.groups[0], 65535u);
  EXPECT_EQ(big.groups[1], 2u);
  EXPECT_EQ(big.groups[2], 1u);
  Dispatch none;
  set_grid_1d(none, 0, 64);
  EXPECT_EQ(none.groups[0], 0u);
}

TEST(VulkanOpUtilTest, BroadcastShapesAndStrides) {
  std::vector<int64_t> out;
  ASSERT_TRUE(broadcast_shapes(std::vector<int64_t>{2, 1, 4}, std::vector<int64_t>{3, 1}, &out));
  EXPECT_EQ(out, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_FALSE(broadcast_shapes(std::vector<int64_t>{2, 3}, std::vector<int64_t>{4}, &out));
  ASSERT_TRUE(broadcast_shapes(std::vector<int64_t>{}, std::vector<int64_t>{5}, &out));
  EXPECT_EQ(out, (std::vector<int64_t>{5}));
  // [2,1,4] read as [2,3,4]: strides 4 (dim 0), 0 (broadcast), 1.
  EXPECT_EQ(broadcast_strides(std::vector<int64_t>{2, 1, 4}, std::vector<int64_t>{2, 3, 4}),
            (std::vector<int64_t>{4, 0, 1}));
  // [3,1] right-aligned under [2,3,4]: missing dim 0 -> 0, 3 -> stride 1, 1 -> 0.
  EXPECT_EQ(broadcast_strides(std::vector<int64_t>{3, 1}, std::vector<int64_t>{2, 3, 4}),
            (std::vector<int64_t>{0, 1, 0}));
}

TEST(VulkanOpUtilTest, ActivationsParseWithDefaultsAndRejectBadParams) {
  NodeInfo node;
  node.name = "f";
  node.op_type = "FusedGemm";
  ActivationSpec spec;
  std::string error;
  ASSERT_TRUE(parse_activation(node, &spec, &error));  // no attribute: none
  EXPECT_EQ(spec.kind, Activation::kNone);
  node.attrs["activation"] = Attr{INFER_ATTR_STRING, 0, 0, "LeakyRelu", {}, {}};
  ASSERT_TRUE(parse_activation(node, &spec, &error));
  EXPECT_EQ(spec.kind, Activation::kLeakyRelu);
  EXPECT_FLOAT_EQ(spec.p0, 0.01f);  // the default alpha
  node.attrs["activation"].s = "Clip";
  node.attrs["activation_params"] = Attr{INFER_ATTR_FLOATS, 0, 0, "", {}, {-1.0, 2.0}};
  ASSERT_TRUE(parse_activation(node, &spec, &error));
  EXPECT_EQ(spec.kind, Activation::kClip);
  EXPECT_FLOAT_EQ(spec.p0, -1.0f);
  EXPECT_FLOAT_EQ(spec.p1, 2.0f);
  node.attrs["activation_params"].floats = {1.0};
  EXPECT_FALSE(parse_activation(node, &spec, &error));
  EXPECT_EQ(error, "node 'f' (FusedGemm): activation 'Clip' takes 2 activation_params, got 1");
  node.attrs["activation"].s = "Swish";
  node.attrs.erase("activation_params");
  EXPECT_FALSE(parse_activation(node, &spec, &error));
  EXPECT_EQ(error, "node 'f' (FusedGemm): unsupported activation 'Swish'");
}

TEST(VulkanOpUtilTest, NamesAndAttributeAccessors) {
  EXPECT_EQ(dtype_name(INFER_DTYPE_FLOAT32), "float32");
  EXPECT_EQ(dtype_name(INFER_DTYPE_BOOL), "bool");
  EXPECT_EQ(dtype_name(static_cast<infer_dtype>(99)), "dtype(99)");
  EXPECT_EQ(dims_text(std::vector<int64_t>{2, -1, 3}), "[2,-1,3]");
  EXPECT_EQ(dims_text(std::vector<int64_t>{}), "[]");
  NodeInfo node;
  node.attrs["axis"] = Attr{INFER_ATTR_INT, -1, 0, "", {}, {}};
  node.attrs["pads"] = Attr{INFER_ATTR_INTS, 0, 0, "", {1, 2}, {}};
  EXPECT_EQ(node.attr_int("axis", 0), -1);
  EXPECT_EQ(node.attr_int("missing", 7), 7);
  EXPECT_EQ(node.attr_float("axis", 0.5), 0.5);  // wrong type: the fallback
  EXPECT_EQ(node.attr_ints("pads", {}), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(node.has_attr("pads"));
}

}  // namespace
}  // namespace infer::vk
