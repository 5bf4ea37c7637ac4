// infer-run's --micro-batches and --trace (and the deployment file's micro_batches):
// parsing, merging with the file, and the binary end to end on the digits CNN split
// across the example device and cpu.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "cli_binary.hpp"
#include "config/deployment_config.hpp"
#include "mini_json.hpp"
#include "npy.hpp"
#include "run_plan.hpp"
#include "test_data.hpp"

namespace infer::cli::testing {
namespace {

ParsedCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "infer-run");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

TEST(CliPipeline, FlagsAreParsed) {
  const ParsedCommandLine p = parse({"m.onnx", "--micro-batches", "4", "--trace", "t.json"});
  ASSERT_FALSE(p.exit_now) << p.error;
  EXPECT_EQ(p.args.micro_batches.value_or(-1), 4);
  EXPECT_EQ(p.args.trace.value_or(""), "t.json");

  const ParsedCommandLine none = parse({"m.onnx"});
  ASSERT_FALSE(none.exit_now) << none.error;
  EXPECT_FALSE(none.args.micro_batches.has_value());
  EXPECT_FALSE(none.args.trace.has_value());

  const ParsedCommandLine help = parse({"--help"});
  EXPECT_NE(help.stdout_text.find("--micro-batches"), std::string::npos);
  EXPECT_NE(help.stdout_text.find("--trace"), std::string::npos);
}

TEST(CliPipeline, BadFlagsExitWith2) {
  const ParsedCommandLine zero = parse({"m.onnx", "--micro-batches", "0"});
  ASSERT_TRUE(zero.exit_now);
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.error, "--micro-batches must be 1 (no split) or more, got 0");
  const ParsedCommandLine empty = parse({"m.onnx", "--trace", ""});
  ASSERT_TRUE(empty.exit_now);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.error, "--trace: the file name is empty");
}

TEST(CliPipeline, TheFilesMicroBatchesAreUsedUnlessTheFlagOverrides) {
  Result<config::DeploymentConfig> config = config::parse_config("model: m.onnx\nmicro_batches: 4\n", "d.yaml", "");
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->micro_batches.value_or(-1), 4);

  CliArgs args;
  Result<RunPlan> from_file = make_run_plan(args, &*config);
  ASSERT_TRUE(from_file.is_ok()) << from_file.status().message();
  EXPECT_EQ(from_file->session.micro_batches, 4);
  EXPECT_EQ(from_file->session.trace_path, "");

  args.micro_batches = 2;
  args.trace = "run.json";
  Result<RunPlan> from_flag = make_run_plan(args, &*config);
  ASSERT_TRUE(from_flag.is_ok()) << from_flag.status().message();
  EXPECT_EQ(from_flag->session.micro_batches, 2);
  EXPECT_EQ(from_flag->session.trace_path, "run.json");

  Result<config::DeploymentConfig> bad = config::parse_config("micro_batches: 0\n", "d.yaml", "");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("d.yaml:1:"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("micro_batches"), std::string::npos) << bad.status().message();
}

// The file's trace is resolved against the file's folder and the flag replaces it; the
// partitioner knobs reach the session options and leave the defaults alone when absent.
TEST(CliPipeline, TheFilesTraceAndPartitionerKeysReachTheSession) {
  Result<config::DeploymentConfig> config = config::parse_config(
      "model: m.onnx\ntrace: out/run.json\npartitioner:\n  cost_model: false\n  min_island_nodes: 5\n"
      "  assumed_symbolic_dim: 8\n",
      "d.yaml", "/deploy");
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  CliArgs args;
  Result<RunPlan> from_file = make_run_plan(args, &*config);
  ASSERT_TRUE(from_file.is_ok()) << from_file.status().message();
  EXPECT_EQ(from_file->session.trace_path, "/deploy/out/run.json");
  EXPECT_FALSE(from_file->session.cost_model);
  EXPECT_EQ(from_file->session.min_island_nodes, 5u);
  EXPECT_EQ(from_file->session.assumed_symbolic_dim, 8);

  args.trace = "flag.json";
  Result<RunPlan> from_flag = make_run_plan(args, &*config);
  ASSERT_TRUE(from_flag.is_ok()) << from_flag.status().message();
  EXPECT_EQ(from_flag->session.trace_path, "flag.json");

  Result<config::DeploymentConfig> bare = config::parse_config("model: m.onnx\n", "d.yaml", "");
  ASSERT_TRUE(bare.is_ok()) << bare.status().message();
  Result<RunPlan> defaults = make_run_plan(CliArgs{}, &*bare);
  ASSERT_TRUE(defaults.is_ok()) << defaults.status().message();
  const SessionOptions reference;
  EXPECT_EQ(defaults->session.trace_path, "");
  EXPECT_EQ(defaults->session.cost_model, reference.cost_model);
  EXPECT_EQ(defaults->session.min_island_nodes, reference.min_island_nodes);
  EXPECT_EQ(defaults->session.assumed_symbolic_dim, reference.assumed_symbolic_dim);
}

std::vector<float> floats_of(const HostArray& a) {
  std::vector<float> v(a.bytes.size() / sizeof(float));
  std::memcpy(v.data(), a.bytes.data(), v.size() * sizeof(float));
  return v;
}

// The digits CNN split across the example device (Gemm, Relu) and cpu (Conv, MaxPool),
// run in 2 micro-batches: the logits equal the unsplit run's, and the trace has every
// step of both micro-batches on named tracks.
TEST(CliPipeline, MicroBatchedRunWritesATraceAndMatchesTheWholeRun) {
  ScratchDir dir("cli_pipeline");
  const std::string model = source_path("models/digits_cnn.onnx");
  const std::string trace = dir.file("trace.json");
  const ProcessResult split = infer_run({model, "--backends", "example,cpu", "--shape", "image=4x1x8x8",
                                         "--micro-batches", "2", "--trace", trace, "--output-dir",
                                         dir.file("split")});
  EXPECT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(split.err, "");
  const ProcessResult whole = infer_run(
      {model, "--backends", "example,cpu", "--shape", "image=4x1x8x8", "--output-dir", dir.file("whole")});
  EXPECT_EQ(whole.exit_code, 0) << whole.err;

  Result<HostArray> a = read_npy(dir.file("split/logits.npy"));
  Result<HostArray> b = read_npy(dir.file("whole/logits.npy"));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->shape, (std::vector<int64_t>{4, 10}));
  const std::vector<float> va = floats_of(*a), vb = floats_of(*b);
  ASSERT_EQ(va.size(), vb.size());
  for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], 1e-5f) << i;

  const std::optional<JsonValue> doc = JsonParser::parse(read_file_bytes(trace));
  ASSERT_TRUE(doc.has_value()) << "the trace is not valid JSON";
  const JsonValue* events = doc->get("traceEvents");
  ASSERT_TRUE(events != nullptr && events->is_array());
  std::set<std::string> tracks;
  std::set<int64_t> micro_batches;
  size_t intervals = 0;
  for (const JsonValue& e : events->array) {
    const std::string ph = e.get("ph")->string;
    if (ph == "M" && e.get("name")->string == "thread_name") tracks.insert(e.get("args")->get("name")->string);
    if (ph != "X") continue;
    ++intervals;
    const JsonValue* mb = e.get("args")->get("micro_batch");
    ASSERT_TRUE(mb != nullptr && mb->is_number());
    micro_batches.insert(static_cast<int64_t>(mb->number));
  }
  EXPECT_EQ(micro_batches, (std::set<int64_t>{0, 1}));
  EXPECT_TRUE(tracks.count("cpu compute")) << "no cpu compute track";
  EXPECT_TRUE(tracks.count("example compute")) << "no example compute track";
  EXPECT_TRUE(tracks.count("example copy h2d")) << "no example upload track";
  EXPECT_GE(intervals, 8u);
}

TEST(CliPipeline, ABatchThatDoesNotDivideIsAOneLineError) {
  const ProcessResult r = infer_run({source_path("models/digits_cnn.onnx"), "--shape", "image=4x1x8x8",
                                     "--micro-batches", "3"});
  EXPECT_EQ(expect_one_line_error(r, 1), "input 'image': batch (dim 0) 4 is not divisible by micro_batches 3");
}

}  // namespace
}  // namespace infer::cli::testing
