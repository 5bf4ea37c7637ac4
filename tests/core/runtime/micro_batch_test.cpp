// Micro-batching (SessionOptions::micro_batches): a split run gives the outputs of the
// unsplit run and of a plain C++ evaluation, counts its copies per micro-batch, and
// refuses what cannot be split with errors that name the input and the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "mixed_model.hpp"

namespace infer {
namespace {

using testing::max_abs_diff;
using testing::OnnxModelWriter;
using testing::tree_options;

constexpr int64_t kN = testing::kMixedFeatures;

// Two inputs that share the batch: out = x * z + z.
std::string write_two_input_model() {
  OnnxModelWriter w;
  w.input("x", {-1, 3}, {"batch"});
  w.input("z", {-1, 3}, {"n"});
  w.node("mul", "Mul", {"x", "z"}, {"p"});
  w.node("add", "Add", {"p", "z"}, {"out"});
  w.output("out", {-1, 3}, {"batch"});
  const std::string path = testing::temp_path("infer_mb_two_inputs.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

Tensor tensor_of(const std::vector<float>& x, std::vector<int64_t> shape) {
  auto t = Tensor::from_bytes(DataType::kFloat32, std::move(shape), x.data(), x.size() * sizeof(float));
  EXPECT_TRUE(t.is_ok());
  return *t;
}

SessionOptions split_options(std::vector<std::string> backends, int micro_batches) {
  SessionOptions o = tree_options(std::move(backends));
  o.micro_batches = micro_batches;
  return o;
}

TEST(MicroBatchTest, SplitRunsMatchTheUnsplitRunAndTheReference) {
  const std::string path = testing::write_mixed_model("infer_mb_mixed.onnx");
  for (const std::vector<std::string>& backends :
       {std::vector<std::string>{"example", "cpu"}, std::vector<std::string>{"cpu"}}) {
    auto whole = Session::create(path, tree_options(backends));
    ASSERT_TRUE(whole.is_ok()) << whole.status().message();
    // 8 micro-batches are more than the scheduler keeps in flight at once.
    for (int count : {2, 4, 8}) {
      SessionOptions o = split_options(backends, count);
      // A copy latency keeps several micro-batches' copies in flight at once.
      if (backends.size() == 2) o.backend_options = {{"example", {{"copy_latency_us", "300"}}}};
      auto split = Session::create(path, o);
      ASSERT_TRUE(split.is_ok()) << split.status().message();
      for (int64_t batch : {int64_t{count}, int64_t{2} * count, int64_t{3} * count}) {
        const std::vector<float> x = testing::mixed_input_values(batch * kN, 0.1f * static_cast<float>(batch));
        std::vector<float> y_ref, s_ref;
        testing::mixed_reference(x, batch, y_ref, s_ref);
        RunStats split_stats, whole_stats;
        auto a = (*split)->run({{"x", tensor_of(x, {batch, kN})}}, &split_stats);
        auto b = (*whole)->run({{"x", tensor_of(x, {batch, kN})}}, &whole_stats);
        ASSERT_TRUE(a.is_ok()) << a.status().message();
        ASSERT_TRUE(b.is_ok()) << b.status().message();
        ASSERT_EQ(a->size(), 2u);
        EXPECT_EQ((*a)[0].name, "y");
        EXPECT_EQ((*a)[1].name, "s");
        for (size_t o_index = 0; o_index < 2; ++o_index) {
          const Tensor& got = (*a)[o_index].tensor;
          const Tensor& want = (*b)[o_index].tensor;
          EXPECT_EQ(got.shape(), (std::vector<int64_t>{batch, kN}));
          EXPECT_LE(max_abs_diff(got, want.data_as<float>(), batch * kN), 1e-6f)
              << backends[0] << " x" << count << " batch " << batch;
        }
        EXPECT_LE(max_abs_diff((*a)[0].tensor, y_ref.data(), batch * kN), 1e-5f);
        EXPECT_LE(max_abs_diff((*a)[1].tensor, s_ref.data(), batch * kN), 1e-6f);
        // Every micro-batch moves x up, r down, s up and y down: 4 copies of rows/count
        // rows each, which add up to the unsplit run's bytes.
        EXPECT_EQ(split_stats.micro_batches, static_cast<size_t>(count));
        EXPECT_EQ(whole_stats.micro_batches, 1u);
        if (backends.size() == 2) {
          EXPECT_EQ(split_stats.copies, static_cast<size_t>(4 * count));
          EXPECT_EQ(split_stats.copy_bytes, static_cast<size_t>(4 * batch * kN * 4));
        } else {
          EXPECT_EQ(split_stats.copies, 0u);
        }
      }
    }
  }
}

TEST(MicroBatchTest, InputsSharingTheBatchAreSplitTogether) {
  const std::string path = write_two_input_model();
  auto session = Session::create(path, split_options({"cpu"}, 3));
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  const int64_t batch = 6;
  const std::vector<float> x = testing::mixed_input_values(batch * 3, 0.2f);
  const std::vector<float> z = testing::mixed_input_values(batch * 3, 1.3f);
  auto out = (*session)->run({{"x", tensor_of(x, {batch, 3})}, {"z", tensor_of(z, {batch, 3})}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ((*out)[0].tensor.shape(), (std::vector<int64_t>{batch, 3}));
  const float* got = (*out)[0].tensor.data_as<float>();
  for (int64_t i = 0; i < batch * 3; ++i) EXPECT_FLOAT_EQ(got[i], x[i] * z[i] + z[i]) << i;
}

TEST(MicroBatchTest, BadBatchesAreRefusedNamingTheInput) {
  const std::string path = write_two_input_model();
  auto session = Session::create(path, split_options({"cpu"}, 4));
  ASSERT_TRUE(session.is_ok()) << session.status().message();

  auto not_divisible = (*session)->run(
      {{"x", Tensor::zeros(DataType::kFloat32, {6, 3})}, {"z", Tensor::zeros(DataType::kFloat32, {6, 3})}});
  ASSERT_FALSE(not_divisible.is_ok());
  EXPECT_EQ(not_divisible.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(not_divisible.status().message(),
            "input 'x': batch (dim 0) 6 is not divisible by micro_batches 4");

  // The model gives the two inputs different symbols, so only the split sees the clash.
  auto disagree = (*session)->run(
      {{"x", Tensor::zeros(DataType::kFloat32, {8, 3})}, {"z", Tensor::zeros(DataType::kFloat32, {4, 3})}});
  ASSERT_FALSE(disagree.is_ok());
  EXPECT_EQ(disagree.status().message(),
            "micro_batches 4: input 'z' has batch (dim 0) 4, but input 'x' has 8; every input is "
            "split along dim 0");

  // The session is unharmed.
  auto ok = (*session)->run(
      {{"x", Tensor::zeros(DataType::kFloat32, {8, 3})}, {"z", Tensor::zeros(DataType::kFloat32, {8, 3})}});
  EXPECT_TRUE(ok.is_ok()) << ok.status().message();
}

TEST(MicroBatchTest, ModelsWithoutASymbolicBatchAreRefusedAtCreate) {
  const std::string path = testing::write_mixed_model("infer_mb_fixed.onnx", /*fixed_batch=*/8);
  auto fixed = Session::create(path, split_options({"cpu"}, 2));
  ASSERT_FALSE(fixed.is_ok());
  EXPECT_EQ(fixed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fixed.status().message(),
            "model '" + path +
                "': micro_batches 2: model input 'x' [8,4] has a fixed dim 0 (8); micro-batching "
                "needs a symbolic batch dim (e.g. 'batch') there");
  // Unsplit, the same model is fine.
  EXPECT_TRUE(Session::create(path, split_options({"cpu"}, 1)).is_ok());

  auto zero = Session::create(path, split_options({"cpu"}, 0));
  ASSERT_FALSE(zero.is_ok());
  EXPECT_EQ(zero.status().message(), "micro_batches must be 1 (no split) or more, got 0");
}

TEST(MicroBatchTest, AFailingMicroBatchNamesItselfAndTheSessionKeepsWorking) {
  // 1 MiB of device memory cannot take x of a 65536-row micro-batch (1 MiB): the upload of
  // a micro-batch fails, the others skip their remaining steps.
  const std::string path = testing::write_mixed_model("infer_mb_fail.onnx");
  SessionOptions o = split_options({"example", "cpu"}, 2);
  o.backend_options = {{"example", {{"memory_mb", "1"}}}};
  auto session = Session::create(path, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto failed = (*session)->run({{"x", Tensor::zeros(DataType::kFloat32, {131072, kN})}});
  ASSERT_FALSE(failed.is_ok());
  const std::string& m = failed.status().message();
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable) << m;
  EXPECT_EQ(m.rfind("micro-batch ", 0), 0u) << m;
  EXPECT_NE(m.find(" of 2: "), std::string::npos) << m;

  for (int i = 0; i < 3; ++i) {
    const std::vector<float> x = testing::mixed_input_values(4 * kN, 0.5f);
    std::vector<float> y_ref, s_ref;
    testing::mixed_reference(x, 4, y_ref, s_ref);
    auto ok = (*session)->run({{"x", tensor_of(x, {4, kN})}});
    ASSERT_TRUE(ok.is_ok()) << ok.status().message();
    EXPECT_LE(max_abs_diff((*ok)[0].tensor, y_ref.data(), 4 * kN), 1e-5f);
  }
}

}  // namespace
}  // namespace infer
