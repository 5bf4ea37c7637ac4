// End to end: the shipped digits model through the built infer-run binary, checked
// against PyTorch's own logits (models/digits_samples_expected_logits.npy, written by
// tools/train_digits_model.py), the independent reference for the whole stack.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cli_binary.hpp"
#include "mini_json.hpp"
#include "npy.hpp"
#include "test_data.hpp"
#include "infer_test_paths.hpp"

namespace infer::cli::testing {
namespace {

constexpr float kAtol = 1e-4f;

std::vector<float> floats_of(const HostArray& array) {
  std::vector<float> values(array.bytes.size() / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
  return values;
}

HostArray load(const std::string& path) {
  Result<HostArray> array = read_npy(path);
  EXPECT_TRUE(array.is_ok()) << array.status().message();
  return array.is_ok() ? std::move(array).value() : HostArray{};
}

int64_t argmax(const std::vector<float>& values, size_t row, size_t cols) {
  size_t best = 0;
  for (size_t c = 1; c < cols; ++c)
    if (values[row * cols + c] > values[row * cols + best]) best = c;
  return static_cast<int64_t>(best);
}

// Compares logits to PyTorch's rows [first_row, first_row + rows).
void expect_matches_pytorch(const HostArray& logits, size_t first_row = 0) {
  const HostArray expected = load(source_path("models/digits_samples_expected_logits.npy"));
  ASSERT_EQ(logits.dtype, DataType::kFloat32);
  ASSERT_EQ(logits.shape.size(), 2u);
  ASSERT_EQ(logits.shape[1], 10);
  const auto rows = static_cast<size_t>(logits.shape[0]);
  const std::vector<float> got = floats_of(logits);
  const std::vector<float> want = floats_of(expected);
  ASSERT_LE((first_row + rows) * 10, want.size());
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < 10; ++c) {
      EXPECT_NEAR(got[r * 10 + c], want[(first_row + r) * 10 + c], kAtol) << "row " << r << " class " << c;
    }
    EXPECT_EQ(argmax(got, r, 10), argmax(want, first_row + r, 10)) << "row " << r;
  }
}

void expect_success(const ProcessResult& r) {
  EXPECT_EQ(r.term_signal, 0);
  ASSERT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(EndToEnd, DefaultConfigMatchesPyTorch) {
  ScratchDir dir("e2e_default");
  const ProcessResult r = infer_run({"--config", "configs/default.yaml", "--output-dir", dir.path()}, INFER_SOURCE_DIR);
  expect_success(r);
  expect_matches_pytorch(load(dir.file("logits.npy")));
}

// The readable summary classifies the samples: row i's top-1 class is PyTorch's argmax
// (0 7 0 3 8 5 8 4; sample 6 is the model's own mistake, label 1).
TEST(EndToEnd, SummaryShowsPyTorchsPredictions) {
  const ProcessResult r = infer_run({"--config", "configs/default.yaml"}, INFER_SOURCE_DIR);
  expect_success(r);
  const int64_t predictions[8] = {0, 7, 0, 3, 8, 5, 8, 4};
  for (int i = 0; i < 8; ++i) {
    const std::string line = "  row " + std::to_string(i) + ": top-1 class " + std::to_string(predictions[i]) + " (score ";
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("backends: cpu\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output logits: float32 [8,10]\n"), std::string::npos) << r.out;
}

TEST(EndToEnd, OutputDirWritesTheMapping) {
  ScratchDir dir("e2e_mapping");
  const ProcessResult r = infer_run({"--config", "configs/default.yaml", "--output-dir", dir.path()}, INFER_SOURCE_DIR);
  expect_success(r);
  const std::optional<JsonValue> mapping = JsonParser::parse(read_file_bytes(dir.file("outputs.json")));
  ASSERT_TRUE(mapping.has_value());
  ASSERT_EQ(mapping->object.size(), 1u);
  EXPECT_EQ(mapping->object[0].first, "logits");
  EXPECT_EQ(mapping->object[0].second.string, "logits.npy");
}

TEST(EndToEnd, ExampleAndCpuGiveTheSameOutputsAsCpu) {
  ScratchDir cpu("e2e_cpu");
  ScratchDir split("e2e_split");
  expect_success(infer_run({"--config", "configs/default.yaml", "--output-dir", cpu.path()}, INFER_SOURCE_DIR));
  const ProcessResult r = infer_run(
      {"--config", "configs/default.yaml", "--backends", "example,cpu", "--output-dir", split.path()}, INFER_SOURCE_DIR);
  expect_success(r);
  const HostArray a = load(cpu.file("logits.npy"));
  const HostArray b = load(split.file("logits.npy"));
  ASSERT_EQ(a.shape, b.shape);
  const std::vector<float> x = floats_of(a);
  const std::vector<float> y = floats_of(b);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], kAtol) << i;
  expect_matches_pytorch(b);
  EXPECT_NE(r.out.find("backends: example, cpu\n"), std::string::npos) << r.out;
}

TEST(EndToEnd, ExplainShowsTwoBackendsAndCopies) {
  const ProcessResult r =
      infer_run({"--config", "configs/example_split.yaml", "--explain", "--json"}, INFER_SOURCE_DIR);
  expect_success(r);
  const std::optional<JsonValue> json = JsonParser::parse(r.out);
  ASSERT_TRUE(json.has_value()) << r.out;
  ASSERT_EQ(json->get("backends")->array.size(), 2u) << r.out;
  EXPECT_EQ(json->get("backends")->array[0].string, "example");
  EXPECT_EQ(json->get("backends")->array[1].string, "cpu");
  const JsonValue* plan = json->get("plan");
  ASSERT_TRUE(plan != nullptr && plan->is_object());
  bool on_example = false;
  bool on_cpu = false;
  for (const JsonValue& node : plan->get("nodes")->array) {
    on_example = on_example || node.get("backend")->string == "example";
    on_cpu = on_cpu || node.get("backend")->string == "cpu";
  }
  EXPECT_TRUE(on_example && on_cpu) << r.out;
  EXPECT_FALSE(plan->get("copies")->array.empty()) << r.out;
  const JsonValue* stats = json->get("run_stats");
  ASSERT_TRUE(stats != nullptr);
  EXPECT_GT(stats->get("copies")->number, 0);
  EXPECT_GT(stats->get("copy_bytes")->number, 0);

  // The text form prints the same plan and the copies of the run.
  const ProcessResult text = infer_run({"--config", "configs/example_split.yaml", "--explain"}, INFER_SOURCE_DIR);
  expect_success(text);
  EXPECT_NE(text.out.find("example"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("per run: "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("per run: 0 copies"), std::string::npos) << text.out;
}

// At level 3 the digits model's Conv+Relu and Gemm+Relu pairs are fused; fc1's pair goes
// back to Gemm and Relu for the example device, which runs both and comes before cpu.
// Disabling the one pass that fires leaves the graph as loaded.
TEST(EndToEnd, ExplainReportsWhatTheOptimizerDid) {
  const ProcessResult r = infer_run({"--config", "configs/example_split.yaml", "--opt-level",
                                     "3", "--explain", "--json"},
                                    INFER_SOURCE_DIR);
  expect_success(r);
  const std::optional<JsonValue> json = JsonParser::parse(r.out);
  ASSERT_TRUE(json.has_value()) << r.out;
  const JsonValue* optimizer = json->get("plan")->get("optimizer");
  ASSERT_TRUE(optimizer != nullptr && optimizer->is_object()) << r.out;
  EXPECT_EQ(optimizer->get("level")->number, 3);
  EXPECT_EQ(optimizer->get("nodes_loaded")->number, 10);
  EXPECT_EQ(optimizer->get("nodes_run")->number, 8);
  ASSERT_EQ(optimizer->get("decomposed")->array.size(), 1u) << r.out;
  EXPECT_NE(optimizer->get("decomposed")->array[0].string.find("'/fc1/Gemm'"), std::string::npos);
  ASSERT_EQ(json->get("plan")->get("passes")->array.size(), 1u) << r.out;
  EXPECT_EQ(json->get("plan")->get("passes")->array[0].string.rfind("activation_fusion: 3 rewrites", 0), 0u);

  const ProcessResult off =
      infer_run({"--config", "configs/example_split.yaml", "--opt-level", "3", "--disable-pass",
                 "activation_fusion", "--explain"},
                INFER_SOURCE_DIR);
  expect_success(off);
  EXPECT_NE(off.out.find("optimizer: level 3, 10 nodes loaded -> 10 nodes run"), std::string::npos)
      << off.out;
  EXPECT_NE(off.out.find("optimizer passes that changed the graph: none"), std::string::npos)
      << off.out;
}

TEST(EndToEnd, BenchmarkJson) {
  const ProcessResult r = infer_run(
      {"--config", "configs/default.yaml", "--benchmark", "--json", "--warmup", "2", "--iterations", "10"},
      INFER_SOURCE_DIR);
  expect_success(r);
  const std::optional<JsonValue> json = JsonParser::parse(r.out);
  ASSERT_TRUE(json.has_value()) << r.out;
  ASSERT_TRUE(json->is_object());
  EXPECT_NE(json->get("model")->string.find("digits_cnn.onnx"), std::string::npos);
  ASSERT_TRUE(json->get("backends")->is_array());
  EXPECT_EQ(json->get("iterations")->number, 10);
  EXPECT_EQ(json->get("warmup")->number, 2);
  const JsonValue* latency = json->get("latency_ms");
  ASSERT_TRUE(latency != nullptr && latency->is_object());
  for (const char* key : {"p50", "p90", "p99", "mean", "min", "max"}) {
    ASSERT_TRUE(latency->get(key) != nullptr && latency->get(key)->is_number()) << key;
    EXPECT_GT(latency->get(key)->number, 0) << key;
  }
  EXPECT_GT(json->get("throughput_per_s")->number, 0);
  ASSERT_TRUE(json->get("peak_rss_mb") != nullptr && json->get("peak_rss_mb")->is_number());
  EXPECT_GT(json->get("peak_rss_mb")->number, 1);
}

TEST(EndToEnd, SingleDigitInputFile) {
  ScratchDir dir("e2e_digit");
  const ProcessResult r = infer_run(
      {source_path("models/digits_cnn.onnx"), "--input", "image=" + source_path("models/digit_0.npy"), "--output-dir",
       dir.path()});
  expect_success(r);
  const HostArray logits = load(dir.file("logits.npy"));
  EXPECT_EQ(logits.shape, (std::vector<int64_t>{1, 10}));
  expect_matches_pytorch(logits, 0);  // digit_0.npy is sample 0
  EXPECT_NE(r.out.find("  row 0: top-1 class 0 (score "), std::string::npos) << r.out;
}

TEST(EndToEnd, FlagsOverrideTheConfig) {
  // --input replaces the file's 8 samples with one digit: digit_3.npy is sample 3.
  ScratchDir dir("e2e_override");
  const ProcessResult r = infer_run({"--config", "configs/default.yaml", "--input",
                                     "image=models/digit_3.npy", "--threads", "1", "--output-dir", dir.path()},
                                    INFER_SOURCE_DIR);
  expect_success(r);
  const HostArray logits = load(dir.file("logits.npy"));
  EXPECT_EQ(logits.shape, (std::vector<int64_t>{1, 10}));
  expect_matches_pytorch(logits, 3);
}

}  // namespace
}  // namespace infer::cli::testing
