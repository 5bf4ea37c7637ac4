// Choosing each input's source and shape before a run: declared shapes, --shape values,
// symbolic and unknown dims, and names the model does not have.
#include <gtest/gtest.h>

#include <cstring>

#include "input_feed.hpp"
#include "input_generator.hpp"
#include "test_data.hpp"

namespace infer::cli {
namespace {

TensorInfo info(const std::string& name, std::vector<int64_t> dims, std::vector<std::string> params,
                DataType dtype = DataType::kFloat32) {
  TensorInfo t;
  t.name = name;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.dim_params = std::move(params);
  return t;
}

TEST(ResolveGeneratedShape, FixedShapesNeedNothing) {
  EXPECT_EQ(resolve_generated_shape(info("x", {2, 3}, {"", ""}), nullptr, "", true).value(),
            (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(resolve_generated_shape(info("s", {}, {}), nullptr, "", true).value().empty());
}

TEST(ResolveGeneratedShape, StrictSymbolicAndUnknownDimsNeedAShape) {
  EXPECT_EQ(resolve_generated_shape(info("image", {-1, 1, 8, 8}, {"batch", "", "", ""}), nullptr,
                                    "", true)
                .status()
                .message(),
            "input 'image' has symbolic dim 'batch': give its shape with --shape image=1x1x8x8");
  EXPECT_EQ(
      resolve_generated_shape(info("x", {4, -1}, {"", ""}), nullptr, "", true).status().message(),
      "input 'x' has an unknown dim 1: give its shape with --shape x=4x1");
  TensorInfo unranked = info("u", {}, {});
  unranked.rank_known = false;
  EXPECT_EQ(resolve_generated_shape(unranked, nullptr, "", true).status().message(),
            "input 'u' has an unknown rank: give its shape with --shape u=DIMS (e.g. 1x3x224x224)");
  const std::vector<int64_t> given = {5, 2};
  EXPECT_EQ(resolve_generated_shape(unranked, &given, "--shape", true).value(), given);
}

TEST(ResolveGeneratedShape, SymbolicAndUnknownDimsDefaultToOneAndAreNamed) {
  std::vector<std::string> defaulted;
  EXPECT_EQ(resolve_generated_shape(info("image", {-1, 3, -1, 8}, {"batch", "", "", ""}), nullptr,
                                    "", false, &defaulted)
                .value(),
            (std::vector<int64_t>{1, 3, 1, 8}));
  EXPECT_EQ(defaulted, (std::vector<std::string>{"image dim 0 ('batch')", "image dim 2"}));
  // An unknown rank cannot be guessed.
  TensorInfo unranked = info("u", {}, {});
  unranked.rank_known = false;
  EXPECT_FALSE(resolve_generated_shape(unranked, nullptr, "", false, &defaulted).is_ok());
}

TEST(ResolveGeneratedShape, GivenShapesMustFitTheDeclaration) {
  const TensorInfo image = info("image", {-1, 1, 8, 8}, {"batch", "", "", ""});
  const std::vector<int64_t> ok = {3, 1, 8, 8};
  EXPECT_EQ(resolve_generated_shape(image, &ok, "--shape", true).value(), ok);
  const std::vector<int64_t> zero_batch = {0, 1, 8, 8};
  EXPECT_EQ(resolve_generated_shape(image, &zero_batch, "--shape", true).value(), zero_batch);
  const std::vector<int64_t> wrong_dim = {3, 1, 8, 9};
  EXPECT_EQ(resolve_generated_shape(image, &wrong_dim, "d.yaml", true).status().message(),
            "input 'image': the shape 3x1x8x9 from d.yaml has 9 in dim 3 but the model declares 8 "
            "([batch,1,8,8])");
}

TEST(PrepareInputs, GeneratesReadsAndRejectsUnknownNames) {
  const std::vector<TensorInfo> declared = {info("image", {-1, 1, 8, 8}, {"batch", "", "", ""}),
                                            info("ids", {3}, {""}, DataType::kInt64)};
  const std::vector<InputSource> sources = {
      InputSource{"image", testing::source_path("models/digit_0.npy"), std::nullopt, "--input"}};
  Result<InputFeed> feed = prepare_inputs(declared, sources, /*strict=*/false);
  ASSERT_TRUE(feed.is_ok()) << feed.status().message();
  ASSERT_EQ(feed->tensors.size(), 2u);
  EXPECT_EQ(feed->tensors[0].name, "image");
  EXPECT_EQ(feed->tensors[0].tensor.shape(), (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(feed->reports[0].file, testing::source_path("models/digit_0.npy"));
  EXPECT_EQ(feed->tensors[1].name, "ids");
  EXPECT_EQ(feed->tensors[1].tensor.dtype(), DataType::kInt64);
  EXPECT_EQ(feed->reports[1].file, "");
  // The generated tensor holds the generator's bytes for that name.
  const HostArray expected = generate_input("ids", DataType::kInt64, {3}).value();
  ASSERT_EQ(feed->tensors[1].tensor.size_bytes(), expected.bytes.size());
  EXPECT_EQ(std::memcmp(feed->tensors[1].tensor.data(), expected.bytes.data(), expected.bytes.size()), 0);

  const std::vector<InputSource> unknown = {InputSource{"imgae", "", std::vector<int64_t>{1}, "--shape"}};
  EXPECT_EQ(
      prepare_inputs(declared, unknown, false).status().message(),
      "input 'imgae' (from --shape) is not an input of the model; its inputs are: image, ids");

  const std::vector<InputSource> mismatch = {InputSource{
      "image", testing::source_path("models/digit_0.npy"), std::vector<int64_t>{2, 1, 8, 8}, "--input"}};
  EXPECT_EQ(
      prepare_inputs(declared, mismatch, false).status().message(),
      "input 'image': the shape 2x1x8x8 given for it does not match the shape [1,1,8,8] of '" +
          testing::source_path("models/digit_0.npy") + "'");
}

TEST(PrepareInputs, SaysWhichSymbolicDimsItSetToOne) {
  const std::vector<TensorInfo> declared = {
      info("image", {-1, 1, 8, 8}, {"batch", "", "", ""}),
      info("mask", {-1, -1}, {"batch", "len"}, DataType::kInt64),
      info("ids", {3}, {""}, DataType::kInt64)};
  Result<InputFeed> feed = prepare_inputs(declared, {}, false);
  ASSERT_TRUE(feed.is_ok()) << feed.status().message();
  EXPECT_EQ(feed->tensors[0].tensor.shape(), (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(feed->tensors[1].tensor.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(
      feed->notice,
      "symbolic dims set to 1: image dim 0 ('batch'), mask dim 0 ('batch'), mask dim 1 ('len'); "
      "choose them "
      "with --shape image=1x1x8x8 --shape mask=1x1 (other sizes), or --strict to require them");

  Result<InputFeed> strict = prepare_inputs(declared, {}, true);
  EXPECT_EQ(strict.status().message(),
            "input 'image' has symbolic dim 'batch': give its shape with --shape image=1x1x8x8");

  // Nothing defaulted, nothing said.
  const std::vector<InputSource> given = {
      InputSource{"image", "", std::vector<int64_t>{2, 1, 8, 8}, "--shape"},
      InputSource{"mask", "", std::vector<int64_t>{2, 5}, "--shape"}};
  Result<InputFeed> full = prepare_inputs(declared, given, false);
  ASSERT_TRUE(full.is_ok()) << full.status().message();
  EXPECT_EQ(full->notice, "");
}

}  // namespace
}  // namespace infer::cli
