// A model mixing ops both backends have (MatMul, Add, Relu, Mul: the example device) with
// one only cpu has (Softmax): the split session must move tensors between the devices
// and agree with a cpu-only session and with a plain C++ evaluation of the same maths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "mixed_model.hpp"

namespace infer {
namespace {

using testing::max_abs_diff;
using testing::tree_options;

constexpr int64_t kN = testing::kMixedFeatures;

void reference(const std::vector<float>& x, int64_t batch, std::vector<float>& y, std::vector<float>& s) {
  testing::mixed_reference(x, batch, y, s);
}
std::vector<float> input_values(int64_t batch, float phase) { return testing::mixed_input_values(batch * kN, phase); }

Tensor tensor_of(const std::vector<float>& x, int64_t batch) {
  auto t = Tensor::from_bytes(DataType::kFloat32, {batch, kN}, x.data(), x.size() * sizeof(float));
  EXPECT_TRUE(t.is_ok());
  return *t;
}

class MixedModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { path_ = new std::string(testing::write_mixed_model("infer_runtime_mixed.onnx")); }
  static void TearDownTestSuite() { delete path_; }
  static std::string* path_;
};
std::string* MixedModelTest::path_ = nullptr;

TEST_F(MixedModelTest, SplitSessionCopiesBetweenDevicesAndMatchesCpuAlone) {
  auto split = Session::create(*path_, tree_options({"example", "cpu"}));
  ASSERT_TRUE(split.is_ok()) << split.status().message();
  auto cpu = Session::create(*path_, tree_options({"cpu"}));
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();

  const PlanReport& plan = (*split)->plan();
  ASSERT_EQ(plan.partitions.size(), 3u);
  EXPECT_EQ(plan.partitions[0].backend, "example");
  EXPECT_EQ(plan.partitions[0].node_count, 3u);
  EXPECT_EQ(plan.partitions[1].backend, "cpu");
  EXPECT_EQ(plan.partitions[2].backend, "example");
  // x up to the example, r down to cpu, s back up, y down to the host.
  ASSERT_EQ(plan.copies.size(), 4u);
  EXPECT_EQ(plan.copies[0].tensor, "x");
  EXPECT_EQ(plan.copies[0].from_backend, "host");
  EXPECT_EQ(plan.copies[3].tensor, "y");
  EXPECT_EQ(plan.copies[3].to_backend, "host");
  EXPECT_EQ(plan.nodes[3].reason, "cpu: fallback (example: unsupported op Softmax)");

  for (int64_t batch : {1, 3, 8}) {
    const std::vector<float> x = input_values(batch, 0.3f * static_cast<float>(batch));
    std::vector<float> y_ref, s_ref;
    reference(x, batch, y_ref, s_ref);

    RunStats split_stats, cpu_stats;
    auto a = (*split)->run({{"x", tensor_of(x, batch)}}, &split_stats);
    auto b = (*cpu)->run({{"x", tensor_of(x, batch)}}, &cpu_stats);
    ASSERT_TRUE(a.is_ok()) << a.status().message();
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    ASSERT_EQ(a->size(), 2u);
    EXPECT_EQ((*a)[0].name, "y");
    EXPECT_EQ((*a)[1].name, "s");
    for (const auto* outs : {&*a, &*b}) {
      EXPECT_EQ((*outs)[0].tensor.shape(), (std::vector<int64_t>{batch, kN}));
      EXPECT_LE(max_abs_diff((*outs)[0].tensor, y_ref.data(), batch * kN), 1e-5f);
      EXPECT_LE(max_abs_diff((*outs)[1].tensor, s_ref.data(), batch * kN), 1e-6f);
    }
    EXPECT_LE(max_abs_diff((*a)[0].tensor, (*b)[0].tensor.data_as<float>(), batch * kN), 1e-5f);
    EXPECT_EQ(split_stats.copies, 4u);
    EXPECT_EQ(split_stats.copy_bytes, static_cast<size_t>(4 * batch * kN * 4));
    EXPECT_EQ(cpu_stats.copies, 0u);
  }
}

TEST_F(MixedModelTest, ConcurrentRunsWithSlowCopiesAllAgree) {
  // A copy latency makes the example's copies really asynchronous: completions arrive on
  // its queue thread while other runs are in flight.
  SessionOptions o = tree_options({"example", "cpu"});
  o.backend_options = {{"example", {{"copy_latency_us", "200"}}}};
  auto session = Session::create(*path_, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();

  constexpr int kThreads = 8;
  constexpr int kRuns = 20;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int64_t batch = 1 + t % 4;
      const std::vector<float> x = input_values(batch, static_cast<float>(t));
      std::vector<float> y_ref, s_ref;
      reference(x, batch, y_ref, s_ref);
      std::vector<float> first;
      for (int r = 0; r < kRuns; ++r) {
        RunStats stats;
        auto out = (*session)->run({{"x", tensor_of(x, batch)}}, &stats);
        if (!out.is_ok() || stats.copies != 4 ||
            max_abs_diff((*out)[0].tensor, y_ref.data(), batch * kN) > 1e-5f) {
          ++bad;
          continue;
        }
        const float* y = (*out)[0].tensor.data_as<float>();
        if (first.empty()) first.assign(y, y + batch * kN);
        if (std::memcmp(first.data(), y, first.size() * sizeof(float)) != 0) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(MixedModelTest, DeviceErrorsNameTheStepAndTheSessionKeepsWorking) {
  // 1 MiB of device memory: a batch of 100000 rows (1.6 MB) cannot be uploaded.
  SessionOptions o = tree_options({"example", "cpu"});
  o.backend_options = {{"example", {{"memory_mb", "1"}}}};
  auto session = Session::create(*path_, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();

  const int64_t big = 100000;
  auto failed = (*session)->run({{"x", Tensor::zeros(DataType::kFloat32, {big, kN})}});
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(failed.status().message().rfind(
                "copy of 'x' (host -> example): arena: allocating a 1600000-byte chunk: ", 0),
            0u)
      << failed.status().message();

  // The failure left nothing behind: a run that fits still works, repeatedly.
  for (int i = 0; i < 3; ++i) {
    const std::vector<float> x = input_values(2, 1.0f);
    std::vector<float> y_ref, s_ref;
    reference(x, 2, y_ref, s_ref);
    auto ok = (*session)->run({{"x", tensor_of(x, 2)}});
    ASSERT_TRUE(ok.is_ok()) << ok.status().message();
    EXPECT_LE(max_abs_diff((*ok)[0].tensor, y_ref.data(), 2 * kN), 1e-5f);
  }
}

TEST_F(MixedModelTest, PluginErrorsDuringExecuteNameThePartition) {
  // x (600 kB) fits in the example's 1 MiB, but the first partition's intermediates, as
  // big again, do not: the plugin's execute fails, and the error names the partition,
  // the backend and what the plugin said.
  SessionOptions o = tree_options({"example", "cpu"});
  o.backend_options = {{"example", {{"memory_mb", "1"}}}};
  auto session = Session::create(*path_, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  const int64_t rows = 37500;  // x 37500 x 4 float32 = 600000 bytes
  auto failed = (*session)->run({{"x", Tensor::zeros(DataType::kFloat32, {rows, kN})}});
  ASSERT_FALSE(failed.is_ok());
  const std::string& m = failed.status().message();
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(m.rfind("partition 'p0' (example): plugin 'example': execute of 'p0': ", 0), 0u) << m;
  EXPECT_NE(m.find("out of device memory"), std::string::npos) << m;
}

TEST_F(MixedModelTest, OneThreadRunsEverything) {
  for (int threads : {1, 0}) {
    SessionOptions o = tree_options({"example", "cpu"});
    o.threads = threads;
    auto session = Session::create(*path_, o);
    ASSERT_TRUE(session.is_ok()) << session.status().message();
    const std::vector<float> x = input_values(5, 0.5f);
    std::vector<float> y_ref, s_ref;
    reference(x, 5, y_ref, s_ref);
    auto out = (*session)->run({{"x", tensor_of(x, 5)}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_LE(max_abs_diff((*out)[0].tensor, y_ref.data(), 5 * kN), 1e-5f) << threads;
  }
}

TEST_F(MixedModelTest, OptimizerLevelZeroKeepsTheGraphAndReportsNoPasses) {
  SessionOptions o = tree_options({"cpu"});
  o.optimization_level = 0;
  auto session = Session::create(*path_, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  EXPECT_TRUE((*session)->plan().passes.empty());
  EXPECT_EQ((*session)->plan().nodes.size(), 6u);
}

}  // namespace
}  // namespace infer
