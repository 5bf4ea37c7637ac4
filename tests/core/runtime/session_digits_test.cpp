// Session end to end on the shipped digits CNN, compared with PyTorch's own logits
// (models/digits_samples_expected_logits.npy).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "npy_reader.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::max_abs_diff;
using testing::read_npy;
using testing::source_path;
using testing::tree_options;

constexpr float kTolerance = 1e-4f;  // models/README.md: float32 matches within ~1e-4
const std::vector<int64_t> kPredictions = {0, 7, 0, 3, 8, 5, 8, 4};  // PyTorch's argmax

class DigitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto samples = read_npy(source_path("models/digits_samples.npy"));
    auto expected = read_npy(source_path("models/digits_samples_expected_logits.npy"));
    ASSERT_TRUE(samples.is_ok()) << samples.status().message();
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();
    samples_ = std::move(*samples);
    expected_ = std::move(*expected);
    ASSERT_EQ(samples_.shape, (std::vector<int64_t>{8, 1, 8, 8}));
    ASSERT_EQ(expected_.shape, (std::vector<int64_t>{8, 10}));
  }

  // Samples [first, first + n) as one batch.
  Tensor batch(int64_t first, int64_t n) const {
    auto t = Tensor::from_bytes(DataType::kFloat32, {n, 1, 8, 8}, samples_.as<float>() + first * 64,
                                static_cast<size_t>(n) * 64 * sizeof(float));
    EXPECT_TRUE(t.is_ok());
    return *t;
  }

  std::unique_ptr<Session> create(std::vector<std::string> backends, int level = 3) {
    SessionOptions options = tree_options(backends);
    options.optimization_level = level;
    auto s = Session::create(source_path("models/digits_cnn.onnx"), options);
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    return s.is_ok() ? std::move(*s) : nullptr;
  }

  // Runs samples [first, first + n) and checks the logits against PyTorch's.
  void expect_logits(Session& session, int64_t first, int64_t n, RunStats* stats = nullptr) {
    auto out = session.run({{"image", batch(first, n)}}, stats);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    ASSERT_EQ(out->size(), 1u);
    const Tensor& logits = (*out)[0].tensor;
    EXPECT_EQ((*out)[0].name, "logits");
    ASSERT_EQ(logits.shape(), (std::vector<int64_t>{n, 10}));
    EXPECT_LE(max_abs_diff(logits, expected_.as<float>() + first * 10, n * 10), kTolerance);
    for (int64_t i = 0; i < n; ++i) {
      const float* row = logits.data_as<float>() + i * 10;
      EXPECT_EQ(std::max_element(row, row + 10) - row, kPredictions[first + i])
          << "sample " << first + i;
    }
  }

  testing::NpyArray samples_;
  testing::NpyArray expected_;
};

// A borrowed input (Tensor::borrow over the samples' own bytes) gives PyTorch's logits,
// and the run leaves those bytes as they were.
TEST_F(DigitsTest, BorrowedInputIsReadInPlaceAndLeftUnchanged) {
  auto session = create({"cpu"});
  ASSERT_NE(session, nullptr);
  const std::vector<float> before(samples_.as<float>(), samples_.as<float>() + 8 * 64);
  auto input = Tensor::borrow(DataType::kFloat32, {8, 1, 8, 8}, samples_.as<float>(),
                              8 * 64 * sizeof(float), nullptr);
  ASSERT_TRUE(input.is_ok()) << input.status().message();
  EXPECT_EQ(input->data(), static_cast<const void*>(samples_.as<float>()));
  auto out = session->run({{"image", *input}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_LE(max_abs_diff((*out)[0].tensor, expected_.as<float>(), 80), kTolerance);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), samples_.as<float>()));
}

TEST_F(DigitsTest, SignatureIsTheModelsDeclaration) {
  auto session = create({"cpu"});
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(session->inputs().size(), 1u);
  const TensorInfo& in = session->inputs()[0];
  EXPECT_EQ(in.name, "image");
  EXPECT_EQ(in.dtype, DataType::kFloat32);
  EXPECT_EQ(in.shape_string(), "[batch,1,8,8]");
  ASSERT_EQ(session->outputs().size(), 1u);
  EXPECT_EQ(session->outputs()[0].name, "logits");
  EXPECT_EQ(session->outputs()[0].shape_string(), "[batch,10]");
}

TEST_F(DigitsTest, CpuMatchesPyTorch) {
  auto session = create({"cpu"});
  ASSERT_NE(session, nullptr);
  RunStats stats;
  expect_logits(*session, 0, 8, &stats);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.copy_bytes, 0u);
  EXPECT_GT(stats.wall_ms, 0.0);

  EXPECT_EQ(session->active_backends(), (std::vector<std::string>{"cpu"}));
  const PlanReport& plan = session->plan();
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_EQ(plan.partitions[0].backend, "cpu");
  // Conv+Relu (twice) and Gemm+Relu are fused; 10 nodes loaded, 7 run.
  EXPECT_EQ(plan.partitions[0].node_count, 7u);
  EXPECT_TRUE(plan.copies.empty());
  ASSERT_EQ(plan.nodes.size(), 7u);
  EXPECT_EQ(plan.nodes[0].node, "/conv1/Conv");
  EXPECT_EQ(plan.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(plan.nodes[0].domain, "ai.infer");
  EXPECT_EQ(plan.nodes[0].reason, "cpu: supported");
  EXPECT_EQ(plan.nodes_loaded, 10u);
  EXPECT_EQ(plan.nodes_optimized, 7u);
  EXPECT_TRUE(plan.decomposed.empty());

  // Unoptimized, the same logits from the 10 nodes of the file.
  auto plain = create({"cpu"}, 0);
  ASSERT_NE(plain, nullptr);
  expect_logits(*plain, 0, 8);
  EXPECT_EQ(plain->plan().nodes.size(), 10u);
  EXPECT_EQ(plain->plan().nodes[0].op_type, "Conv");
}

TEST_F(DigitsTest, DynamicBatchSizesOnOneSession) {
  auto session = create({"cpu"});
  ASSERT_NE(session, nullptr);
  expect_logits(*session, 0, 1);
  expect_logits(*session, 2, 3);
  expect_logits(*session, 0, 8);
  expect_logits(*session, 7, 1);
}

// Without fusion (level 1), the example backend (Add/Sub/Mul/Relu/MatMul/Gemm) takes the
// Relus and the classifier head, cpu the convolutions, pooling and Flatten: six partitions
// alternating between the devices, with real copies through the example's copy engine.
TEST_F(DigitsTest, SplitOverExampleAndCpuMatchesPyTorch) {
  auto session = create({"example", "cpu"}, 1);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->active_backends(), (std::vector<std::string>{"example", "cpu"}));
  const PlanReport& plan = session->plan();
  ASSERT_EQ(plan.partitions.size(), 6u);
  const std::vector<std::string> backends = {"cpu", "example", "cpu", "example", "cpu", "example"};
  for (size_t i = 0; i < backends.size(); ++i) EXPECT_EQ(plan.partitions[i].backend, backends[i]);
  EXPECT_EQ(plan.partitions[5].node_count, 3u);  // fc1 Gemm, Relu, fc2 Gemm
  EXPECT_EQ(plan.nodes[0].backend, "cpu");
  EXPECT_EQ(plan.nodes[0].reason, "cpu: fallback (example: unsupported op Conv)");
  EXPECT_EQ(plan.nodes[1].backend, "example");
  EXPECT_EQ(plan.nodes[1].reason, "example: supported");
  EXPECT_EQ(plan.nodes[7].node, "/fc1/Gemm");
  EXPECT_EQ(plan.nodes[7].reason, "example: preferred");
  ASSERT_EQ(plan.copies.size(), 6u);
  EXPECT_EQ(plan.copies[0].from_backend, "cpu");
  EXPECT_EQ(plan.copies[0].to_backend, "example");
  EXPECT_EQ(plan.copies[0].bytes, -1);  // the batch is symbolic
  EXPECT_EQ(plan.copies[5].tensor, "logits");
  EXPECT_EQ(plan.copies[5].from_backend, "example");
  EXPECT_EQ(plan.copies[5].to_backend, "host");

  RunStats stats;
  expect_logits(*session, 0, 8, &stats);
  EXPECT_EQ(stats.copies, 6u);
  // float32 x batch 8 x (both ways around each of the first two Relus: 8*8*8 and 16*4*4
  // elements, then Flatten's 64 up and the 10 logits back).
  EXPECT_EQ(stats.copy_bytes, 4u * 8 * (2 * 512 + 2 * 256 + 64 + 10));
  expect_logits(*session, 3, 2);
}

// At level 3 the Relus after the convolutions are fused into them (only cpu runs
// FusedConv, and the example cannot run the Conv of its decomposition, so they stay fused
// on cpu), while fc1's FusedGemm+Relu goes back to Gemm and Relu for the example backend,
// which comes first and runs both: two partitions instead of six.
TEST_F(DigitsTest, FusedNodesGoToTheBackendThatRunsThemOrTheirDecomposition) {
  auto session = create({"example", "cpu"});
  ASSERT_NE(session, nullptr);
  const PlanReport& plan = session->plan();
  ASSERT_EQ(plan.partitions.size(), 2u);
  EXPECT_EQ(plan.partitions[0].backend, "cpu");
  EXPECT_EQ(plan.partitions[1].backend, "example");
  EXPECT_EQ(plan.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(plan.nodes[0].backend, "cpu");
  ASSERT_EQ(plan.decomposed.size(), 1u);
  EXPECT_EQ(plan.decomposed[0],
            "node '/fc1/Gemm' (ai.infer:FusedGemm): decomposed (example runs its decomposition "
            "and comes before cpu)");
  std::vector<std::string> example_ops;
  for (const NodePlacement& n : plan.nodes)
    if (n.backend == "example") example_ops.push_back(n.node + " " + n.op_type);
  EXPECT_EQ(example_ops, (std::vector<std::string>{"/fc1/Gemm Gemm", "/fc1/Gemm/Relu Relu",
                                                   "/fc2/Gemm Gemm"}));
  RunStats stats;
  expect_logits(*session, 0, 8, &stats);
  EXPECT_EQ(stats.copies, 2u);  // Flatten's output up, the logits back
}

TEST_F(DigitsTest, ManyThreadsRunOneSessionWithIdenticalResults) {
  auto session = create({"cpu"});
  ASSERT_NE(session, nullptr);
  auto reference = session->run({{"image", batch(0, 8)}});
  ASSERT_TRUE(reference.is_ok()) << reference.status().message();
  const Tensor& ref = (*reference)[0].tensor;
  EXPECT_LE(max_abs_diff(ref, expected_.as<float>(), 80), kTolerance);

  constexpr int kThreads = 8;
  constexpr int kRuns = 20;
  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRuns; ++r) {
        auto out = session->run({{"image", batch(0, 8)}});
        if (!out.is_ok()) {
          ++failures;
          continue;
        }
        const Tensor& got = (*out)[0].tensor;
        if (got.size_bytes() != ref.size_bytes() ||
            std::memcmp(got.data(), ref.data(), ref.size_bytes()) != 0)
          ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(DigitsTest, BadInputsAreRejectedBeforeRunning) {
  auto session = create({"cpu"});
  ASSERT_NE(session, nullptr);
  auto wrong_dim = session->run({{"image", Tensor::zeros(DataType::kFloat32, {1, 1, 8, 9})}});
  ASSERT_FALSE(wrong_dim.is_ok());
  EXPECT_EQ(wrong_dim.status().message(), "input 'image': dim 3 is 8 in the model, got 9");
  auto wrong_type = session->run({{"image", Tensor::zeros(DataType::kInt64, {1, 1, 8, 8})}});
  ASSERT_FALSE(wrong_type.is_ok());
  EXPECT_EQ(wrong_type.status().message(), "input 'image': expected dtype float32, got int64");
  auto missing = session->run({});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().message(), "missing input 'image' (float32 [batch,1,8,8])");
}

TEST_F(DigitsTest, PinsMoveNodesAndStrictModeListsUnclaimedNodes) {
  SessionOptions pinned = tree_options({"example", "cpu"});
  pinned.optimization_level = 1;  // "/Relu" is a node of its own only without fusion
  pinned.placement = {{"/Relu", "cpu"}};
  auto s = Session::create(source_path("models/digits_cnn.onnx"), pinned);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ((*s)->plan().nodes[1].node, "/Relu");
  EXPECT_EQ((*s)->plan().nodes[1].backend, "cpu");
  EXPECT_EQ((*s)->plan().nodes[1].reason, "cpu: pinned by placement");
  EXPECT_EQ((*s)->plan().partitions.size(), 4u);
  expect_logits(**s, 0, 4);

  SessionOptions strict = tree_options({"example"});
  strict.strict = true;
  auto failed = Session::create(source_path("models/digits_cnn.onnx"), strict);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnsupported);
  const std::string& m = failed.status().message();
  EXPECT_EQ(m.rfind("strict mode: 5 nodes are not supported by any listed backend (example):", 0),
            0u)
      << m;
  EXPECT_NE(m.find("node '/conv1/Conv' (Conv, domain 'ai.onnx'): example: unsupported op Conv"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("node '/Flatten' (Flatten, domain 'ai.onnx'): example: unsupported op "
                   "Flatten"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("Gemm"), std::string::npos) << m;
}

}  // namespace
}  // namespace infer
