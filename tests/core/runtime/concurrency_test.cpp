// One Session, many threads: 8 threads x 100 runs, each thread with inputs of its own,
// and every result must be bitwise the result a single thread got for the same inputs
// before the threads started (and close to a plain C++ evaluation). Covers the cpu
// backend alone, a model split across the example device and cpu (copies in both
// directions, completions on the example's queue threads), and split runs pipelined in
// micro-batches.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::max_abs_diff;
using testing::OnnxModelWriter;
using testing::tree_options;

constexpr int64_t kN = 8;  // features
constexpr int kThreads = 8;

std::vector<float> weights(int seed) {
  std::vector<float> w(kN * kN);
  for (int64_t i = 0; i < kN * kN; ++i)
    w[i] = 0.125f * static_cast<float>((i * 7 + seed) % 9) - 0.5f;
  return w;
}

// x[batch,8] -> h = Relu(x @ W1) (example) -> s = Softmax(h) (cpu only) -> y = s @ W2 + x
// (example). Outputs y and s.
std::string write_model() {
  OnnxModelWriter w;
  w.input("x", {-1, kN}, {"batch"});
  w.initializer("W1", {kN, kN}, weights(1));
  w.initializer("W2", {kN, kN}, weights(4));
  w.node("mm1", "MatMul", {"x", "W1"}, {"a"});
  w.node("relu", "Relu", {"a"}, {"h"});
  auto* sm = w.node("softmax", "Softmax", {"h"}, {"s"});
  OnnxModelWriter::int_attr(sm, "axis", -1);
  w.node("mm2", "MatMul", {"s", "W2"}, {"b"});
  w.node("res", "Add", {"b", "x"}, {"y"});
  w.output("y", {-1, kN}, {"batch"});
  w.output("s", {-1, kN}, {"batch"});
  const std::string path = testing::temp_path("infer_concurrency.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// y of the model in double precision, by hand.
std::vector<float> reference_y(const std::vector<float>& x, int64_t batch) {
  const std::vector<float> w1 = weights(1), w2 = weights(4);
  std::vector<float> y(batch * kN);
  for (int64_t r = 0; r < batch; ++r) {
    double h[kN], e[kN], mx = 0, sum = 0;
    for (int64_t j = 0; j < kN; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < kN; ++k) acc += double(x[r * kN + k]) * w1[k * kN + j];
      h[j] = acc > 0 ? acc : 0;
      mx = j == 0 ? h[j] : std::max(mx, h[j]);
    }
    for (int64_t j = 0; j < kN; ++j) sum += e[j] = std::exp(h[j] - mx);
    for (int64_t j = 0; j < kN; ++j) {
      double acc = x[r * kN + j];
      for (int64_t k = 0; k < kN; ++k) acc += e[k] / sum * w2[k * kN + j];
      y[r * kN + j] = static_cast<float>(acc);
    }
  }
  return y;
}

struct ThreadCase {
  int64_t batch = 0;
  std::vector<float> x;
  std::vector<std::vector<uint8_t>> expected;  // bytes of y and s, single-threaded
};

Tensor tensor_of(const std::vector<float>& x, int64_t batch) {
  auto t = Tensor::from_bytes(DataType::kFloat32, {batch, kN}, x.data(), x.size() * sizeof(float));
  EXPECT_TRUE(t.is_ok());
  return *t;
}

bool same_bytes(const Tensor& t, const std::vector<uint8_t>& bytes) {
  return t.size_bytes() == bytes.size() && std::memcmp(t.data(), bytes.data(), bytes.size()) == 0;
}

// Runs the threads and returns a description of every mismatch (empty when all agree).
std::string run_threads(Session& session, int runs_per_thread, int batch_multiple) {
  std::vector<ThreadCase> cases(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    ThreadCase& c = cases[t];
    c.batch = batch_multiple * (1 + t % 4);
    c.x.resize(c.batch * kN);
    for (int64_t i = 0; i < c.batch * kN; ++i)
      c.x[i] = std::sin(0.37f * static_cast<float>(i) + 0.9f * static_cast<float>(t)) * 1.5f;
    auto out = session.run({{"x", tensor_of(c.x, c.batch)}});
    if (!out.is_ok()) return "reference run failed: " + out.status().message();
    const std::vector<float> y = reference_y(c.x, c.batch);
    if (max_abs_diff((*out)[0].tensor, y.data(), c.batch * kN) > 1e-5f)
      return "thread " + std::to_string(t) + ": the reference run disagrees with the maths";
    for (const NamedTensor& o : *out) {
      const auto* p = static_cast<const uint8_t*>(o.tensor.data());
      c.expected.emplace_back(p, p + o.tensor.size_bytes());
    }
  }

  std::mutex mu;
  std::ostringstream problems;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const ThreadCase& c = cases[t];
      for (int r = 0; r < runs_per_thread; ++r) {
        auto out = session.run({{"x", tensor_of(c.x, c.batch)}});
        std::string problem;
        if (!out.is_ok())
          problem = out.status().message();
        else if (out->size() != 2 || !same_bytes((*out)[0].tensor, c.expected[0]) ||
                 !same_bytes((*out)[1].tensor, c.expected[1]))
          problem = "outputs differ from the single-threaded run";
        if (!problem.empty() && bad.fetch_add(1) < 5) {
          std::lock_guard lock(mu);
          problems << "thread " << t << " run " << r << ": " << problem << "\n";
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  if (bad.load() > 0) problems << bad.load() << " bad runs in all\n";
  return problems.str();
}

class ConcurrencyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { path_ = new std::string(write_model()); }
  static void TearDownTestSuite() { delete path_; }
  static std::string* path_;
};
std::string* ConcurrencyTest::path_ = nullptr;

TEST_F(ConcurrencyTest, CpuAloneEightThreadsAHundredRunsEach) {
  auto session = Session::create(*path_, tree_options({"cpu"}));
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  EXPECT_EQ(run_threads(**session, 100, 1), "");
}

TEST_F(ConcurrencyTest, ExampleAndCpuEightThreadsAHundredRunsEach) {
  SessionOptions o = tree_options({"example", "cpu"});
  // A small copy latency keeps copies of different runs in flight together.
  o.backend_options = {{"example", {{"copy_latency_us", "20"}}}};
  auto session = Session::create(*path_, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  ASSERT_EQ((*session)->plan().partitions.size(), 3u);
  EXPECT_EQ((*session)->plan().partitions[1].backend, "cpu");
  EXPECT_EQ(run_threads(**session, 100, 1), "");
}

TEST_F(ConcurrencyTest, PipelinedMicroBatchesFromEightThreads) {
  SessionOptions o = tree_options({"example", "cpu"});
  o.micro_batches = 2;
  o.backend_options = {{"example", {{"copy_latency_us", "20"}}}};
  auto session = Session::create(*path_, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  EXPECT_EQ(run_threads(**session, 25, 2), "");
}

}  // namespace
}  // namespace infer
