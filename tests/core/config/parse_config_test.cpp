// Valid deployment documents: every key lands in DeploymentConfig as documented in
// configs/README.md. Line numbers in expectations are counted by hand from the strings.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/deployment_config.hpp"

namespace infer::config {
namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

DeploymentConfig parse_ok(const std::string& yaml, const std::string& base_dir = "") {
  Result<DeploymentConfig> config = parse_config(yaml, "test.yaml", base_dir);
  EXPECT_TRUE(config.is_ok()) << config.status().message();
  return config.is_ok() ? std::move(config).value() : DeploymentConfig{};
}

void expect_empty(const DeploymentConfig& config) {
  EXPECT_EQ(config.source, "");
  EXPECT_EQ(config.model, "");
  EXPECT_TRUE(config.backends.empty());
  EXPECT_FALSE(config.threads.has_value());
  EXPECT_FALSE(config.optimization_level.has_value());
  EXPECT_TRUE(config.disabled_passes.empty());
  EXPECT_TRUE(config.placement.empty());
  EXPECT_TRUE(config.plugin_search_paths.empty());
  EXPECT_FALSE(config.strict.has_value());
  EXPECT_TRUE(config.inputs.empty());
}

// Every key of the schema, once. Lines: 1 model, 3 cpu, 4 example, 14 conv1, 15 gemm_2.
constexpr const char* kFullDocument = R"(model: ../models/digits_cnn.onnx
backends:
  - cpu
  - name: example
    options:
      copy_latency_us: 50
      mode: fast
      enabled: true
threads: 2
optimization:
  level: 1
  disabled_passes: [fuse_conv_relu, cse]
placement:
  conv1: cpu
  gemm_2: example
plugins:
  search_paths: [../build/lib/infer/plugins, /opt/infer/plugins]
strict: false
inputs:
  image:
    file: ../models/digits_samples.npy
    shape: [8, 1, 8, 8]
)";

TEST(ParseConfig, FullDocumentRoundTripsEveryField) {
  const DeploymentConfig config = parse_ok(kFullDocument, "/deploy/configs");

  EXPECT_EQ(config.source, "");
  EXPECT_EQ(config.model, "/deploy/models/digits_cnn.onnx");

  ASSERT_EQ(config.backends.size(), 2u);
  EXPECT_EQ(config.backends[0].name, "cpu");
  EXPECT_TRUE(config.backends[0].options.empty());
  EXPECT_EQ(config.backends[0].line, 3);
  EXPECT_EQ(config.backends[1].name, "example");
  EXPECT_EQ(config.backends[1].options, (Options{{"copy_latency_us", "50"}, {"mode", "fast"}, {"enabled", "true"}}));
  EXPECT_EQ(config.backends[1].line, 4);

  EXPECT_EQ(config.threads, 2);
  EXPECT_EQ(config.optimization_level, 1);
  EXPECT_EQ(config.disabled_passes, (std::vector<std::string>{"fuse_conv_relu", "cse"}));

  ASSERT_EQ(config.placement.size(), 2u);
  EXPECT_EQ(config.placement[0].node, "conv1");
  EXPECT_EQ(config.placement[0].backend, "cpu");
  EXPECT_EQ(config.placement[0].line, 14);
  EXPECT_EQ(config.placement[1].node, "gemm_2");
  EXPECT_EQ(config.placement[1].backend, "example");
  EXPECT_EQ(config.placement[1].line, 15);

  EXPECT_EQ(config.plugin_search_paths,
            (std::vector<std::string>{"/deploy/build/lib/infer/plugins", "/opt/infer/plugins"}));
  EXPECT_EQ(config.strict, false);

  ASSERT_EQ(config.inputs.size(), 1u);
  EXPECT_EQ(config.inputs[0].name, "image");
  EXPECT_EQ(config.inputs[0].file, "/deploy/models/digits_samples.npy");
  EXPECT_EQ(config.inputs[0].shape, (std::vector<int64_t>{8, 1, 8, 8}));
}

TEST(ParseConfig, BackendsMayBeNamesOrMapsInPriorityOrder) {
  const DeploymentConfig config = parse_ok(R"(backends:
  - vulkan
  - name: cuda_2
  - name: example
    options: {a: 1}
  - cpu
)");
  ASSERT_EQ(config.backends.size(), 4u);
  EXPECT_EQ(config.backends[0].name, "vulkan");
  EXPECT_EQ(config.backends[0].line, 2);
  EXPECT_EQ(config.backends[1].name, "cuda_2");
  EXPECT_TRUE(config.backends[1].options.empty());
  EXPECT_EQ(config.backends[1].line, 3);
  EXPECT_EQ(config.backends[2].name, "example");
  EXPECT_EQ(config.backends[2].options, (Options{{"a", "1"}}));
  EXPECT_EQ(config.backends[2].line, 4);
  EXPECT_EQ(config.backends[3].name, "cpu");
  EXPECT_EQ(config.backends[3].line, 6);
}

TEST(ParseConfig, BackendsInFlowStyle) {
  const DeploymentConfig config = parse_ok("backends: [example, cpu]\n");
  ASSERT_EQ(config.backends.size(), 2u);
  EXPECT_EQ(config.backends[0].name, "example");
  EXPECT_EQ(config.backends[1].name, "cpu");
  EXPECT_EQ(config.backends[1].line, 1);
}

TEST(ParseConfig, OptionValuesAreKeptAsWrittenStrings) {
  const DeploymentConfig config = parse_ok(R"(backends:
  - name: example
    options:
      latency: 50
      ratio: 1.5
      enabled: true
      mask: 0x10
      label: "two words"
      empty: ''
)");
  ASSERT_EQ(config.backends.size(), 1u);
  EXPECT_EQ(config.backends[0].options, (Options{{"latency", "50"},
                                                 {"ratio", "1.5"},
                                                 {"enabled", "true"},
                                                 {"mask", "0x10"},
                                                 {"label", "two words"},
                                                 {"empty", ""}}));
}

TEST(ParseConfig, RelativePathsResolveAgainstBaseDir) {
  const char* yaml = R"(model: ../models/m.onnx
plugins:
  search_paths: [plugins, ./a/../b, /abs/plugins]
inputs:
  x: {file: data/x.npy}
)";
  const DeploymentConfig config = parse_ok(yaml, "repo/configs");
  EXPECT_EQ(config.model, "repo/models/m.onnx");
  EXPECT_EQ(config.plugin_search_paths,
            (std::vector<std::string>{"repo/configs/plugins", "repo/configs/b", "/abs/plugins"}));
  ASSERT_EQ(config.inputs.size(), 1u);
  EXPECT_EQ(config.inputs[0].file, "repo/configs/data/x.npy");
}

TEST(ParseConfig, EmptyBaseDirLeavesPathsRelativeToWorkingDirectory) {
  const DeploymentConfig config = parse_ok("model: ../models/m.onnx\n");
  EXPECT_EQ(config.model, "../models/m.onnx");
}

TEST(ParseConfig, AbsoluteModelPathIsKept) {
  const DeploymentConfig config = parse_ok("model: /models/m.onnx\n", "configs");
  EXPECT_EQ(config.model, "/models/m.onnx");
}

TEST(ParseConfig, EmptyDocumentsAreEmptyConfigs) {
  for (const char* yaml : {"", "\n\n", "# only a comment\n", "---\n", "{}\n"}) {
    SCOPED_TRACE(::testing::Message() << "document: '" << yaml << "'");
    expect_empty(parse_ok(yaml));
  }
}

TEST(ParseConfig, SectionsGivenWithoutValueAreEmpty) {
  expect_empty(parse_ok("backends:\noptimization:\nplacement:\nplugins:\ninputs:\n"));
}

TEST(ParseConfig, IntegerAndBooleanBoundsAndSpellings) {
  DeploymentConfig config = parse_ok("threads: +4\noptimization: {level: 0}\nstrict: True\n");
  EXPECT_EQ(config.threads, 4);
  EXPECT_EQ(config.optimization_level, 0);
  EXPECT_EQ(config.strict, true);

  config = parse_ok("threads: 1\noptimization: {level: 3}\nstrict: FALSE\n");
  EXPECT_EQ(config.threads, 1);
  EXPECT_EQ(config.optimization_level, 3);
  EXPECT_EQ(config.strict, false);
}

TEST(ParseConfig, PrecisionTakesItsThreeSpellingsAndTheLongNames) {
  EXPECT_FALSE(parse_ok("threads: 1\n").precision.has_value());
  EXPECT_EQ(parse_ok("precision: fp32\n").precision, Precision::kFp32);
  EXPECT_EQ(parse_ok("precision: bf16\n").precision, Precision::kBf16);
  EXPECT_EQ(parse_ok("precision: fp16\n").precision, Precision::kFp16);
  EXPECT_EQ(parse_ok("precision: bfloat16\n").precision, Precision::kBf16);
  EXPECT_EQ(parse_ok("precision: float32\n").precision, Precision::kFp32);
}

TEST(ParseConfig, InputMayGiveOnlyAShape) {
  const DeploymentConfig config = parse_ok(R"(inputs:
  image:
    shape: [1, 1, 8, 8]
  mask:
    file: m.npy
)");
  ASSERT_EQ(config.inputs.size(), 2u);
  EXPECT_EQ(config.inputs[0].name, "image");
  EXPECT_EQ(config.inputs[0].file, "");
  EXPECT_EQ(config.inputs[0].shape, (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(config.inputs[1].name, "mask");
  EXPECT_EQ(config.inputs[1].file, "m.npy");
  EXPECT_TRUE(config.inputs[1].shape.empty());
}

TEST(ParseConfig, ZeroDimensionsAreAllowed) {
  const DeploymentConfig config = parse_ok("inputs:\n  x: {shape: [0, 3]}\n");
  ASSERT_EQ(config.inputs.size(), 1u);
  EXPECT_EQ(config.inputs[0].shape, (std::vector<int64_t>{0, 3}));
}

TEST(ParseConfig, QuotedStringsAreStrings) {
  const DeploymentConfig config = parse_ok("model: \"my model.onnx\"\nbackends: ['cpu']\n");
  EXPECT_EQ(config.model, "my model.onnx");
  ASSERT_EQ(config.backends.size(), 1u);
  EXPECT_EQ(config.backends[0].name, "cpu");
}

// infer-serve's keys (README "Serving"): each lands in its field; absent ones stay unset.
TEST(ParseConfig, ServingKeys) {
  const DeploymentConfig config = parse_ok(R"(model: m.onnx
name: digits-v2.b
version: 3
instances: 2
server:
  host: 0.0.0.0
  http_port: 8080
  grpc_port: 9000
  max_request_mb: 16
  idle_timeout_s: 5
  drain_timeout_s: 0
batching:
  max_batch_size: 16
  preferred_batch_size: [4, 16]
  max_queue_delay_us: 500
  max_queue_size: 64
  timeout_us: 250000
)");
  EXPECT_EQ(config.name, "digits-v2.b");
  EXPECT_EQ(config.version, 3);
  EXPECT_EQ(config.instances, 2);
  EXPECT_EQ(config.server.host, "0.0.0.0");
  EXPECT_EQ(config.server.http_port, 8080);
  EXPECT_EQ(config.server.grpc_port, 9000);
  EXPECT_EQ(config.server.max_request_mb, 16);
  EXPECT_EQ(config.server.idle_timeout_s, 5);
  EXPECT_EQ(config.server.drain_timeout_s, 0);
  EXPECT_TRUE(config.batching.given);
  EXPECT_EQ(config.batching.line, 13);
  EXPECT_EQ(config.batching.max_batch_size, 16);
  EXPECT_EQ(config.batching.preferred_batch_size, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(config.batching.max_queue_delay_us, 500);
  EXPECT_EQ(config.batching.max_queue_size, 64);
  EXPECT_EQ(config.batching.timeout_us, 250000);
}

TEST(ParseConfig, ServingKeysAbsentStayUnset) {
  const DeploymentConfig config = parse_ok("model: m.onnx\nbatching:\n  max_batch_size: 0\n");
  EXPECT_EQ(config.name, "");
  EXPECT_FALSE(config.version.has_value());
  EXPECT_FALSE(config.instances.has_value());
  EXPECT_EQ(config.server.host, "");
  EXPECT_FALSE(config.server.http_port.has_value());
  EXPECT_EQ(config.batching.max_batch_size, 0);
  EXPECT_TRUE(config.batching.preferred_batch_size.empty());
  EXPECT_FALSE(config.batching.max_queue_delay_us.has_value());
}

}  // namespace
}  // namespace infer::config
