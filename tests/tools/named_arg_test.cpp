// --input NAME=FILE and --shape NAME=DIMS parsing, and the messages for bad values.
#include <gtest/gtest.h>

#include "named_arg.hpp"

namespace infer::cli {
namespace {

TEST(ParseDims, AcceptsXAndCommaSeparatedDims) {
  EXPECT_EQ(parse_dims("1x3x224x224").value(), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(parse_dims("8,1,8,8").value(), (std::vector<int64_t>{8, 1, 8, 8}));
  EXPECT_EQ(parse_dims("5").value(), (std::vector<int64_t>{5}));
  EXPECT_EQ(parse_dims("0x3").value(), (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(parse_dims("").value().empty());
  EXPECT_TRUE(parse_dims("scalar").value().empty());
}

TEST(ParseDims, RejectsNonIntegers) {
  for (const char* bad : {"1xax8", "1x-2", "1xx8", "x1", "1x", "1.5x2", "1x2 ", "99999999999999999999"}) {
    Result<std::vector<int64_t>> dims = parse_dims(bad);
    ASSERT_FALSE(dims.is_ok()) << bad;
    EXPECT_NE(dims.status().message().find("is not a non-negative integer"), std::string::npos)
        << dims.status().message();
  }
  EXPECT_EQ(parse_dims("1xax8").status().message(),
            "dim 1 'a' is not a non-negative integer (write dims like 1x3x224x224)");
}

TEST(ParseShapeArg, SplitsNameAndDims) {
  Result<NamedShape> shape = parse_shape_arg("image=1x1x8x8");
  ASSERT_TRUE(shape.is_ok()) << shape.status().message();
  EXPECT_EQ(shape->name, "image");
  EXPECT_EQ(shape->shape, (std::vector<int64_t>{1, 1, 8, 8}));
  // The name may hold characters ONNX allows, '=' excluded; the first '=' splits.
  Result<NamedShape> odd = parse_shape_arg("in:0=2x3");
  ASSERT_TRUE(odd.is_ok());
  EXPECT_EQ(odd->name, "in:0");
  Result<NamedShape> scalar = parse_shape_arg("step=");
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_TRUE(scalar->shape.empty());
}

TEST(ParseShapeArg, ErrorsQuoteTheArgument) {
  EXPECT_EQ(parse_shape_arg("image").status().message(),
            "--shape 'image': expected NAME=DIMS, e.g. image=1x1x8x8");
  EXPECT_EQ(parse_shape_arg("=1x2").status().message(), "--shape '=1x2': the name before '=' is empty");
  EXPECT_EQ(parse_shape_arg("image=1xbx8").status().message(),
            "--shape 'image=1xbx8': dim 1 'b' is not a non-negative integer (write dims like 1x3x224x224)");
  EXPECT_EQ(parse_shape_arg("image=1x1x8x8").status().code(), StatusCode::kOk);
  EXPECT_EQ(parse_shape_arg("image=-1").status().code(), StatusCode::kInvalidArgument);
}

TEST(ParseNamedValue, SplitsAtTheFirstEquals) {
  Result<NamedValue> value = parse_named_value("image=dir/a=b.npy", "--input");
  ASSERT_TRUE(value.is_ok());
  EXPECT_EQ(value->name, "image");
  EXPECT_EQ(value->value, "dir/a=b.npy");
  EXPECT_EQ(parse_named_value("image", "--input").status().message(), "--input 'image': expected NAME=VALUE");
  EXPECT_EQ(parse_named_value("=x.npy", "--input").status().message(),
            "--input '=x.npy': the name before '=' is empty");
  EXPECT_EQ(parse_named_value("image=", "--input").status().message(),
            "--input 'image=': the value after '=' is empty");
}

TEST(DimsToArg, RendersLikeTheFlag) {
  EXPECT_EQ(dims_to_arg({1, 1, 8, 8}), "1x1x8x8");
  EXPECT_EQ(dims_to_arg({}), "scalar");
  EXPECT_EQ(dims_to_arg({0}), "0");
}

}  // namespace
}  // namespace infer::cli
