// Merging a deployment file with the command line: the file supplies defaults, flags
// override them, inputs merge by name, plugin folders from flags come first.
#include <gtest/gtest.h>

#include "config/deployment_config.hpp"
#include "run_plan.hpp"

namespace infer::cli {
namespace {

config::DeploymentConfig load(const std::string& yaml) {
  Result<config::DeploymentConfig> config = config::parse_config(yaml, "d.yaml", "/deploy");
  EXPECT_TRUE(config.is_ok()) << config.status().message();
  config::DeploymentConfig c = config.is_ok() ? std::move(config).value() : config::DeploymentConfig{};
  c.source = "/deploy/d.yaml";
  return c;
}

constexpr const char* kYaml = R"(model: m.onnx
backends:
  - name: example
    options:
      latency_us: 5
  - cpu
threads: 2
optimization:
  level: 2
  disabled_passes: [cse]
placement:
  conv1: cpu
plugins:
  search_paths: [plugins]
strict: true
inputs:
  image:
    file: image.npy
  mask:
    shape: [1, 4]
)";

TEST(RunPlan, DefaultsWithoutAConfig) {
  CliArgs args;
  args.model = "m.onnx";
  Result<RunPlan> plan = make_run_plan(args, nullptr);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->model_path, "m.onnx");
  EXPECT_EQ(plan->session.backends, (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(plan->session.threads, 0);
  EXPECT_FALSE(plan->session.strict);
  EXPECT_EQ(plan->session.optimization_level, 3);  // the CLI's default: every pass
  EXPECT_EQ(plan->session.dump_graph_path, "");
  EXPECT_EQ(plan->session.log_level, LogLevel::kWarning);
  EXPECT_TRUE(plan->inputs.empty());
  EXPECT_EQ(plan->warmup, 5);
  EXPECT_EQ(plan->iterations, 50);
  EXPECT_EQ(plan->output_dir, "");
}

TEST(RunPlan, TakesEverythingFromTheFile) {
  const config::DeploymentConfig config = load(kYaml);
  Result<RunPlan> plan = make_run_plan(CliArgs{}, &config);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const SessionOptions& s = plan->session;
  EXPECT_EQ(plan->model_path, "/deploy/m.onnx");
  EXPECT_EQ(s.backends, (std::vector<std::string>{"example", "cpu"}));
  ASSERT_EQ(s.backend_options.size(), 1u);
  EXPECT_EQ(s.backend_options[0].backend, "example");
  EXPECT_EQ(s.backend_options[0].options,
            (std::vector<std::pair<std::string, std::string>>{{"latency_us", "5"}}));
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.optimization_level, 2);
  EXPECT_EQ(s.disabled_passes, (std::vector<std::string>{"cse"}));
  ASSERT_EQ(s.placement.size(), 1u);
  EXPECT_EQ(s.placement[0].node, "conv1");
  EXPECT_EQ(s.placement[0].backend, "cpu");
  EXPECT_EQ(s.plugin_dirs, (std::vector<std::string>{"/deploy/plugins"}));
  EXPECT_TRUE(s.strict);
  ASSERT_EQ(plan->inputs.size(), 2u);
  EXPECT_EQ(plan->inputs[0].name, "image");
  EXPECT_EQ(plan->inputs[0].file, "/deploy/image.npy");
  EXPECT_FALSE(plan->inputs[0].shape.has_value());
  EXPECT_EQ(plan->inputs[0].origin, "/deploy/d.yaml");
  EXPECT_EQ(plan->inputs[1].name, "mask");
  EXPECT_EQ(plan->inputs[1].file, "");
  EXPECT_EQ(plan->inputs[1].shape.value_or(std::vector<int64_t>{}), (std::vector<int64_t>{1, 4}));
}

TEST(RunPlan, FlagsOverrideTheFile) {
  const config::DeploymentConfig config = load(kYaml);
  CliArgs args;
  args.model = "other.onnx";
  args.backends = std::vector<std::string>{"cpu", "example"};
  args.threads = 8;
  args.opt_level = 0;
  args.disabled_passes = {"fuse", "cse"};
  args.plugin_dirs = {"/cli/plugins"};
  args.verbose = true;
  args.output_dir = "out";
  args.benchmark = true;
  args.iterations = 3;
  args.dump_graph = "opt.onnx";
  Result<RunPlan> plan = make_run_plan(args, &config);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const SessionOptions& s = plan->session;
  EXPECT_EQ(plan->model_path, "other.onnx");
  EXPECT_EQ(s.backends, (std::vector<std::string>{"cpu", "example"}));
  // Options follow the backend's name, whatever the order.
  ASSERT_EQ(s.backend_options.size(), 1u);
  EXPECT_EQ(s.backend_options[0].backend, "example");
  EXPECT_EQ(s.threads, 8);
  EXPECT_EQ(s.optimization_level, 0);
  EXPECT_EQ(s.dump_graph_path, "opt.onnx");
  EXPECT_EQ(s.disabled_passes, (std::vector<std::string>{"cse", "fuse"}));
  EXPECT_EQ(s.plugin_dirs, (std::vector<std::string>{"/cli/plugins", "/deploy/plugins"}));
  EXPECT_EQ(s.log_level, LogLevel::kInfo);
  EXPECT_TRUE(s.strict);  // --strict absent: the file's true stays
  EXPECT_EQ(plan->output_dir, "out");
  EXPECT_TRUE(plan->benchmark);
  EXPECT_EQ(plan->iterations, 3);
  EXPECT_EQ(plan->warmup, 5);
}

TEST(RunPlan, PrecisionFlagOverridesTheFile) {
  config::DeploymentConfig config = load("model: m.onnx\nprecision: fp16\n");
  CliArgs args;
  Result<RunPlan> plan = make_run_plan(args, &config);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->session.precision, Precision::kFp16);
  args.precision = Precision::kBf16;
  plan = make_run_plan(args, &config);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->session.precision, Precision::kBf16);
  // Without either, fp32.
  CliArgs bare;
  bare.model = "m.onnx";
  plan = make_run_plan(bare, nullptr);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->session.precision, Precision::kFp32);
}

TEST(RunPlan, ComparePrecisionNeedsAReducedPrecision) {
  CliArgs args;
  args.model = "m.onnx";
  args.compare_precision = true;
  Result<RunPlan> plan = make_run_plan(args, nullptr);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("--compare-precision compares a reduced-precision run"),
            std::string::npos)
      << plan.status().message();
  args.precision = Precision::kBf16;
  plan = make_run_plan(args, nullptr);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_TRUE(plan->compare_precision);
}

TEST(RunPlan, StrictFlagTurnsStrictOn) {
  const config::DeploymentConfig config = load("model: m.onnx\nstrict: false\n");
  CliArgs args;
  args.strict = true;
  EXPECT_TRUE(make_run_plan(args, &config)->session.strict);
  EXPECT_FALSE(make_run_plan(CliArgs{}, &config)->session.strict);
}

TEST(RunPlan, InputFlagsReplaceTheFilesEntryByName) {
  const config::DeploymentConfig config = load(kYaml);
  CliArgs args;
  args.inputs = {NamedValue{"image", "cli.npy"}, NamedValue{"extra", "extra.npy"}};
  args.shapes = {NamedShape{"mask", {2, 4}}};
  Result<RunPlan> plan = make_run_plan(args, &config);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->inputs.size(), 3u);
  EXPECT_EQ(plan->inputs[0].name, "image");
  EXPECT_EQ(plan->inputs[0].file, "cli.npy");
  EXPECT_EQ(plan->inputs[0].origin, "--input");
  EXPECT_EQ(plan->inputs[1].name, "mask");
  EXPECT_EQ(plan->inputs[1].shape.value_or(std::vector<int64_t>{}), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(plan->inputs[1].origin, "--shape");
  EXPECT_EQ(plan->inputs[2].name, "extra");
  EXPECT_EQ(plan->inputs[2].file, "extra.npy");
}

TEST(RunPlan, AShapeFlagAloneDropsTheFilesNpy) {
  const config::DeploymentConfig config = load(kYaml);
  CliArgs args;
  args.shapes = {NamedShape{"image", {1, 1, 8, 8}}};
  Result<RunPlan> plan = make_run_plan(args, &config);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->inputs[0].name, "image");
  EXPECT_EQ(plan->inputs[0].file, "");
  EXPECT_EQ(plan->inputs[0].shape.value_or(std::vector<int64_t>{}), (std::vector<int64_t>{1, 1, 8, 8}));
}

TEST(RunPlan, InputAndShapeFlagsForOneNameCombine) {
  CliArgs args;
  args.model = "m.onnx";
  args.inputs = {NamedValue{"image", "x.npy"}};
  args.shapes = {NamedShape{"image", {8, 1, 8, 8}}};
  Result<RunPlan> plan = make_run_plan(args, nullptr);
  ASSERT_TRUE(plan.is_ok());
  ASSERT_EQ(plan->inputs.size(), 1u);
  EXPECT_EQ(plan->inputs[0].file, "x.npy");
  EXPECT_EQ(plan->inputs[0].shape.value_or(std::vector<int64_t>{}), (std::vector<int64_t>{8, 1, 8, 8}));
}

TEST(RunPlan, Errors) {
  EXPECT_EQ(make_run_plan(CliArgs{}, nullptr).status().message(),
            "no model given: pass MODEL on the command line or set 'model:' in the deployment file");
  const config::DeploymentConfig no_model = load("threads: 1\n");
  EXPECT_EQ(make_run_plan(CliArgs{}, &no_model).status().message(),
            "no model given: pass MODEL on the command line or set 'model:' in '/deploy/d.yaml'");
  CliArgs twice;
  twice.model = "m.onnx";
  twice.inputs = {NamedValue{"image", "a.npy"}, NamedValue{"image", "b.npy"}};
  EXPECT_EQ(make_run_plan(twice, nullptr).status().message(), "--input given twice for input 'image'");
  CliArgs shapes;
  shapes.model = "m.onnx";
  shapes.shapes = {NamedShape{"image", {1}}, NamedShape{"image", {2}}};
  EXPECT_EQ(make_run_plan(shapes, nullptr).status().message(), "--shape given twice for input 'image'");
}

}  // namespace
}  // namespace infer::cli
