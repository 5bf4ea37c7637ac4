#include "runtime/input_validation.hpp"

#include <gtest/gtest.h>

namespace infer::runtime {
namespace {

TensorInfo info(const std::string& name, DataType dtype, std::vector<int64_t> dims,
                std::vector<std::string> params) {
  TensorInfo t;
  t.name = name;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.dim_params = std::move(params);
  return t;
}

// image [batch,1,8,8] float32, mask [batch,?] int64 (the second dim unnamed).
std::vector<TensorInfo> declared() {
  return {info("image", DataType::kFloat32, {-1, 1, 8, 8}, {"batch", "", "", ""}),
          info("mask", DataType::kInt64, {-1, -1}, {"batch", ""})};
}

NamedTensor image(int64_t batch, int64_t last = 8) {
  return {"image", Tensor::zeros(DataType::kFloat32, {batch, 1, 8, last})};
}
NamedTensor mask(int64_t batch, int64_t n) {
  return {"mask", Tensor::zeros(DataType::kInt64, {batch, n})};
}

std::string error_of(const std::vector<NamedTensor>& given) {
  auto r = validate_inputs(declared(), given);
  EXPECT_FALSE(r.is_ok());
  if (r.is_ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(InputValidation, AcceptsMatchingInputsInAnyOrderAndReturnsDeclarationOrder) {
  std::vector<NamedTensor> given = {mask(3, 17), image(3)};
  auto r = validate_inputs(declared(), given);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], &given[1].tensor);
  EXPECT_EQ((*r)[1], &given[0].tensor);
}

TEST(InputValidation, MissingInput) {
  EXPECT_EQ(error_of({image(1)}), "missing input 'mask' (int64 [batch,?])");
}

TEST(InputValidation, UnknownInput) {
  EXPECT_EQ(error_of({image(1), mask(1, 1), {"labels", Tensor::zeros(DataType::kInt64, {1})}}),
            "unknown input 'labels' (model inputs: image, mask)");
}

TEST(InputValidation, DuplicateInput) {
  EXPECT_EQ(error_of({image(1), image(1), mask(1, 1)}), "input 'image' is given twice");
}

TEST(InputValidation, WrongDtype) {
  EXPECT_EQ(error_of({{"image", Tensor::zeros(DataType::kInt64, {1, 1, 8, 8})}, mask(1, 1)}),
            "input 'image': expected dtype float32, got int64");
  EXPECT_EQ(error_of({{"image", Tensor()}, mask(1, 1)}),
            "input 'image': expected dtype float32, got undefined");
}

TEST(InputValidation, WrongRank) {
  EXPECT_EQ(error_of({{"image", Tensor::zeros(DataType::kFloat32, {1, 8, 8})}, mask(1, 1)}),
            "input 'image': expected 4 dims [batch,1,8,8], got 3 dims [1,8,8]");
}

TEST(InputValidation, FixedDimThatDiffers) {
  EXPECT_EQ(error_of({image(2, 9), mask(2, 1)}), "input 'image': dim 3 is 8 in the model, got 9");
}

TEST(InputValidation, SymbolMustTakeOneValueAcrossInputs) {
  EXPECT_EQ(error_of({image(2), mask(3, 5)}),
            "input 'mask': dim 0 ('batch') is 3, but 'batch' is 2 in input 'image' dim 0");
}

TEST(InputValidation, UnnamedUnknownDimsTakeAnySize) {
  EXPECT_TRUE(validate_inputs(declared(), {image(4), mask(4, 1)}).is_ok());
  EXPECT_TRUE(validate_inputs(declared(), {image(4), mask(4, 1000)}).is_ok());
}

TEST(InputValidation, UnknownRankTakesAnyShape) {
  TensorInfo any = info("x", DataType::kFloat32, {}, {});
  any.rank_known = false;
  EXPECT_TRUE(
      validate_inputs({any}, {{"x", Tensor::zeros(DataType::kFloat32, {2, 3, 4})}}).is_ok());
  EXPECT_TRUE(validate_inputs({any}, {{"x", Tensor::zeros(DataType::kFloat32, {})}}).is_ok());
}

TEST(InputValidation, NegativeDimsAreRejected) {
  EXPECT_EQ(error_of({image(-1), mask(1, 1)}),
            "input 'image': dim 0 is -1 (dims must not be negative)");
}

TEST(InputValidation, ModelWithoutInputs) {
  auto r = validate_inputs({}, {image(1)});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "unknown input 'image' (model inputs: none)");
  EXPECT_TRUE(validate_inputs({}, {}).is_ok());
}

}  // namespace
}  // namespace infer::runtime
