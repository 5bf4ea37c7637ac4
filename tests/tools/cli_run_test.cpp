// infer-run's successful paths on the small fixture models: text, --json, --output-dir
// naming and mapping, benchmark JSON, --explain. The digits model end to end is in
// tests/e2e.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cli_binary.hpp"
#include "input_generator.hpp"
#include "mini_json.hpp"
#include "npy.hpp"
#include "test_data.hpp"

namespace infer::cli::testing {
namespace {

const std::string kOddNames = data_path("odd_names.onnx");

void expect_success(const ProcessResult& r) {
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(CliRun, HelpGoesToStdout) {
  const ProcessResult r = run_process(kInferRun, {"--help"});
  expect_success(r);
  EXPECT_NE(r.out.find("Usage: infer-run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--benchmark"), std::string::npos);
}

TEST(CliRun, TextSummaryOfAGeneratedRun) {
  const ProcessResult r = infer_run({kOddNames});
  expect_success(r);
  const std::vector<std::string> lines = split_lines(r.out);
  ASSERT_GE(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], "model: " + kOddNames);
  EXPECT_EQ(lines[1], "backends: cpu");
  EXPECT_EQ(lines[2], "input in:0: float32 [2,3] (generated)");
  EXPECT_EQ(lines[3], "output scores/relu:0: float32 [2,3]");
  EXPECT_EQ(lines[4].rfind("  row 0: top-1 class ", 0), 0u) << lines[4];
}

// --list-devices needs no model: every plugin of the folders with its devices, or why it
// has none; a backend without a device is listed with the plugin's reason.
TEST(CliRun, ListDevicesNamesEveryPluginAndItsDevices) {
  const ProcessResult r =
      infer_run({"--list-devices", "--plugin-dir", ::infer::test_paths::runtime_test_plugin_dir()});
  expect_success(r);
  const std::vector<std::string> lines = split_lines(r.out);
  auto at = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.rfind("cpu: " + kPluginDir + "/libinfer_plugin_cpu.so (version ", 0) == 0;
  });
  ASSERT_NE(at, lines.end()) << r.out;
  ASSERT_NE(at + 1, lines.end());
  EXPECT_EQ((at + 1)->rfind("  device 0: CPU (", 0), 0u) << *(at + 1);
  EXPECT_NE((at + 1)->find("[cpu, "), std::string::npos) << *(at + 1);
  auto none = std::find(lines.begin(), lines.end(),
                        "  no device: no Frobnicator driver: /dev/frob0 is missing");
  ASSERT_NE(none, lines.end()) << r.out;
  EXPECT_EQ((none - 1)->rfind("nodevice: ", 0), 0u) << *(none - 1);

  const ProcessResult j = infer_run({"--list-devices", "--json"});
  expect_success(j);
  const std::optional<JsonValue> doc = JsonParser::parse(j.out);
  ASSERT_TRUE(doc.has_value()) << j.out;
  ASSERT_NE(doc->get("backends"), nullptr);
  bool cpu_found = false;
  for (const JsonValue& b : doc->get("backends")->array) {
    if (b.get("backend")->string != "cpu") continue;
    cpu_found = true;
    EXPECT_EQ(b.get("unavailable")->type, JsonValue::Type::kNull);
    ASSERT_EQ(b.get("devices")->array.size(), 1u);
    EXPECT_EQ(b.get("devices")->array[0].get("kind")->string, "cpu");
    EXPECT_TRUE(b.get("devices")->array[0].get("host_addressable")->boolean);
  }
  EXPECT_TRUE(cpu_found) << j.out;
}

// --backends X,cpu where X has no device: the run goes on on cpu and stderr says why X
// was left out, in one line.
TEST(CliRun, BackendWithoutDeviceIsLeftOutWithOneLine) {
  const ProcessResult r =
      infer_run({source_path("models/digits_cnn.onnx"), "--shape", "image=2x1x8x8", "--backends",
                 "nodevice,cpu", "--plugin-dir", ::infer::test_paths::runtime_test_plugin_dir()});
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_EQ(
      r.err,
      "infer-run: warning: backend 'nodevice' is unavailable (no Frobnicator driver: /dev/frob0 is "
      "missing): its nodes go to the next backends\n");
  const std::vector<std::string> lines = split_lines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[1], "backends: cpu");
}

// A symbolic batch with no --shape runs at 1, and stderr says so in one line naming the
// dim and the option that sets it.
TEST(CliRun, SymbolicDimsDefaultToOneWithANotice) {
  const ProcessResult r = infer_run({source_path("models/digits_cnn.onnx")});
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_EQ(
      r.err,
      "infer-run: note: symbolic dims set to 1: image dim 0 ('batch'); choose them with --shape "
      "image=1x1x8x8 (other sizes), or --strict to require them\n");
  const std::vector<std::string> lines = split_lines(r.out);
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[2], "input image: float32 [1,1,8,8] (generated)");
  EXPECT_EQ(lines[3], "output logits: float32 [1,10]");
}

// The output file is named after the sanitized output name, outputs.json maps the real
// name to it, and the values are Relu of the deterministic generated input (which is
// already non-negative, so they equal it).
TEST(CliRun, OutputDirWritesSanitizedNpyAndMapping) {
  ScratchDir dir("cli_out");
  const std::string out_dir = dir.file("nested/out");
  const ProcessResult r = infer_run({kOddNames, "--output-dir", out_dir});
  expect_success(r);

  const std::optional<JsonValue> mapping = JsonParser::parse(read_file_bytes(out_dir + "/outputs.json"));
  ASSERT_TRUE(mapping.has_value());
  ASSERT_TRUE(mapping->is_object());
  ASSERT_EQ(mapping->object.size(), 1u);
  EXPECT_EQ(mapping->object[0].first, "scores/relu:0");
  EXPECT_EQ(mapping->object[0].second.string, "scores_relu_0.npy");

  Result<HostArray> written = read_npy(out_dir + "/scores_relu_0.npy");
  ASSERT_TRUE(written.is_ok()) << written.status().message();
  EXPECT_EQ(written->dtype, DataType::kFloat32);
  EXPECT_EQ(written->shape, (std::vector<int64_t>{2, 3}));
  Result<HostArray> input = generate_input("in:0", DataType::kFloat32, {2, 3});
  ASSERT_TRUE(input.is_ok());
  EXPECT_EQ(written->bytes, input->bytes);
  EXPECT_NE(r.out.find("-> " + out_dir + "/scores_relu_0.npy"), std::string::npos) << r.out;
}

TEST(CliRun, JsonDescribesOutputs) {
  ScratchDir dir("cli_json");
  const ProcessResult r = infer_run({kOddNames, "--json", "--output-dir", dir.path()});
  expect_success(r);
  const std::optional<JsonValue> json = JsonParser::parse(r.out);
  ASSERT_TRUE(json.has_value()) << r.out;
  EXPECT_EQ(json->get("model")->string, kOddNames);
  ASSERT_EQ(json->get("backends")->array.size(), 1u);
  EXPECT_EQ(json->get("backends")->array[0].string, "cpu");
  const JsonValue* outputs = json->get("outputs");
  ASSERT_TRUE(outputs != nullptr && outputs->is_array());
  ASSERT_EQ(outputs->array.size(), 1u);
  const JsonValue& out = outputs->array[0];
  EXPECT_EQ(out.get("name")->string, "scores/relu:0");
  EXPECT_EQ(out.get("dtype")->string, "float32");
  ASSERT_EQ(out.get("shape")->array.size(), 2u);
  EXPECT_EQ(out.get("shape")->array[0].number, 2);
  EXPECT_EQ(out.get("shape")->array[1].number, 3);
  EXPECT_EQ(out.get("file")->string, dir.path() + "/scores_relu_0.npy");
}

TEST(CliRun, BenchmarkJsonHonoursCounts) {
  const ProcessResult r = infer_run({kOddNames, "--benchmark", "--json", "--warmup", "1", "--iterations", "4"});
  expect_success(r);
  const std::optional<JsonValue> json = JsonParser::parse(r.out);
  ASSERT_TRUE(json.has_value()) << r.out;
  EXPECT_EQ(json->get("iterations")->number, 4);
  EXPECT_EQ(json->get("warmup")->number, 1);
  const JsonValue* latency = json->get("latency_ms");
  ASSERT_TRUE(latency != nullptr && latency->is_object());
  EXPECT_LE(latency->get("min")->number, latency->get("p50")->number);
  EXPECT_LE(latency->get("p50")->number, latency->get("p90")->number);
  EXPECT_LE(latency->get("p90")->number, latency->get("p99")->number);
  EXPECT_LE(latency->get("p99")->number, latency->get("max")->number);
  EXPECT_GT(json->get("throughput_per_s")->number, 0);
  EXPECT_GT(json->get("peak_rss_mb")->number, 0);
}

TEST(CliRun, ExplainPrintsThePlanAndCopiesPerRun) {
  const ProcessResult r = infer_run({kOddNames, "--explain"});
  expect_success(r);
  EXPECT_NE(r.out.find("relu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per run: "), std::string::npos) << r.out;
}

// A float16 Conv computes in float32 on cpu: the plan lists it under "precision changes"
// (the JSON under plan.optimizer.precision), and y = relu(w * half(x)) per channel with
// w = [0.5, -1], x the input infer-run generates (recomputed here from its generator).
TEST(CliRun, ExplainListsFloat16NodesComputedInFloat32) {
  const std::string model = data_path("float16_conv.onnx");
  const std::string dir = ::testing::TempDir() + "/float16_conv_out";
  const ProcessResult j = infer_run({model, "--explain", "--json", "--output-dir", dir});
  expect_success(j);
  const std::optional<JsonValue> json = JsonParser::parse(j.out);
  ASSERT_TRUE(json.has_value()) << j.out;
  const JsonValue* precision = json->get("plan")->get("optimizer")->get("precision");
  ASSERT_TRUE(precision != nullptr && precision->is_array()) << j.out;
  ASSERT_GE(precision->array.size(), 2u) << j.out;
  EXPECT_EQ(precision->array[0].string.rfind("node 'half_conv' (", 0), 0u) << j.out;
  EXPECT_NE(precision->array[0].string.find("float16 -> float32 (cpu: "), std::string::npos)
      << j.out;

  Result<HostArray> x = generate_input("x", DataType::kFloat32, {1, 1, 2, 2});
  ASSERT_TRUE(x.is_ok()) << x.status().message();
  Result<HostArray> y = read_npy(dir + "/y.npy");
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  ASSERT_EQ(y->shape, (std::vector<int64_t>{1, 2, 2, 2}));
  const float* xv = reinterpret_cast<const float*>(x->bytes.data());
  const float* yv = reinterpret_cast<const float*>(y->bytes.data());
  const float w[2] = {0.5f, -1.0f};
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i) {
      const float want = std::max(0.0f, w[c] * xv[i]);
      // Two roundings to float16 (x, then the product): relative error below 2^-10.
      EXPECT_NEAR(yv[c * 4 + i], want, 1e-3f * std::fabs(want) + 1e-7f) << c << "," << i;
    }

  const ProcessResult text = infer_run({model, "--explain"});
  expect_success(text);
  EXPECT_NE(text.out.find("precision changes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("node 'half_conv'"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace infer::cli::testing
