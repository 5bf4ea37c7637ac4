// The command line: every flag lands in CliArgs; bad usage is one message and exit 2.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_args.hpp"

namespace infer::cli {
namespace {

ParsedCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "infer-run");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

TEST(CommandLine, ModelAloneKeepsEverythingUnset) {
  const ParsedCommandLine p = parse({"model.onnx"});
  ASSERT_FALSE(p.exit_now) << p.error;
  EXPECT_EQ(p.args.model.value_or(""), "model.onnx");
  EXPECT_FALSE(p.args.config.has_value());
  EXPECT_FALSE(p.args.backends.has_value());
  EXPECT_FALSE(p.args.threads.has_value());
  EXPECT_FALSE(p.args.warmup.has_value());
  EXPECT_FALSE(p.args.iterations.has_value());
  EXPECT_FALSE(p.args.opt_level.has_value());
  EXPECT_FALSE(p.args.dump_graph.has_value());
  EXPECT_FALSE(p.args.benchmark || p.args.json || p.args.explain || p.args.strict || p.args.verbose);
  EXPECT_TRUE(p.args.inputs.empty());
  EXPECT_TRUE(p.args.plugin_dirs.empty());
}

TEST(CommandLine, EveryFlag) {
  const ParsedCommandLine p =
      parse({"--config", "d.yaml", "--backends", "example,cpu", "--threads", "3", "--input", "image=a.npy", "--input",
             "mask=b.npy", "--shape", "image=1x1x8x8", "--output-dir", "out", "--benchmark", "--warmup", "2",
             "--iterations", "7", "--json", "--explain", "--strict", "--plugin-dir", "p1", "--plugin-dir", "p2",
             "--opt-level", "0", "--disable-pass", "cse", "--disable-pass", "fuse", "--verbose", "--dump-graph", "opt.onnx", "m.onnx"});
  ASSERT_FALSE(p.exit_now) << p.error;
  const CliArgs& a = p.args;
  EXPECT_EQ(a.model.value_or(""), "m.onnx");
  EXPECT_EQ(a.config.value_or(""), "d.yaml");
  EXPECT_EQ(a.backends.value_or(std::vector<std::string>{}), (std::vector<std::string>{"example", "cpu"}));
  EXPECT_EQ(a.threads.value_or(-1), 3);
  ASSERT_EQ(a.inputs.size(), 2u);
  EXPECT_EQ(a.inputs[0].name, "image");
  EXPECT_EQ(a.inputs[0].value, "a.npy");
  EXPECT_EQ(a.inputs[1].name, "mask");
  ASSERT_EQ(a.shapes.size(), 1u);
  EXPECT_EQ(a.shapes[0].shape, (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(a.output_dir.value_or(""), "out");
  EXPECT_TRUE(a.benchmark && a.json && a.explain && a.strict && a.verbose);
  EXPECT_EQ(a.warmup.value_or(-1), 2);
  EXPECT_EQ(a.iterations.value_or(-1), 7);
  EXPECT_EQ(a.plugin_dirs, (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(a.opt_level.value_or(-1), 0);
  EXPECT_EQ(a.disabled_passes, (std::vector<std::string>{"cse", "fuse"}));
  EXPECT_EQ(a.dump_graph.value_or(""), "opt.onnx");
}

TEST(CommandLine, ListFlagsDoNotSwallowTheModel) {
  const ParsedCommandLine p = parse({"--backends", "cpu", "--input", "image=x.npy", "m.onnx"});
  ASSERT_FALSE(p.exit_now) << p.error;
  EXPECT_EQ(p.args.model.value_or(""), "m.onnx");
  EXPECT_EQ(p.args.inputs.size(), 1u);
}

TEST(CommandLine, ConfigAloneIsEnough) {
  const ParsedCommandLine p = parse({"--config", "configs/default.yaml"});
  ASSERT_FALSE(p.exit_now) << p.error;
  EXPECT_FALSE(p.args.model.has_value());
}

TEST(CommandLine, HelpDocumentsEveryFlag) {
  const ParsedCommandLine p = parse({"--help"});
  ASSERT_TRUE(p.exit_now);
  EXPECT_EQ(p.exit_code, 0);
  for (const char* flag : {"MODEL", "--config", "--backends", "--threads", "--input", "--shape", "--output-dir",
                           "--benchmark", "--warmup", "--iterations", "--json", "--explain", "--strict",
                           "--plugin-dir", "--opt-level", "--precision", "--compare-precision", "--disable-pass", "--verbose", "--dump-graph", "outputs.json",
                           "infer-run: error:"}) {
    EXPECT_NE(p.stdout_text.find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(p.stdout_text, help_text());
  // The optimization levels and the default the help states.
  EXPECT_NE(p.stdout_text.find("0 none, 1 basic, 2 extended (fusion), 3 all (default 3)"), std::string::npos)
      << p.stdout_text;
}

TEST(CommandLine, Version) {
  const ParsedCommandLine p = parse({"--version"});
  ASSERT_TRUE(p.exit_now);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_EQ(p.stdout_text.rfind("infer-run ", 0), 0u);
}

struct BadUsage {
  std::vector<std::string> args;
  std::string message_part;
};

void PrintTo(const BadUsage& usage, std::ostream* os) {
  for (const std::string& arg : usage.args) *os << arg << " ";
}

class CommandLineRejects : public ::testing::TestWithParam<BadUsage> {};

TEST_P(CommandLineRejects, WithExitCode2AndOneLine) {
  const ParsedCommandLine p = parse(GetParam().args);
  ASSERT_TRUE(p.exit_now);
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.error.find(GetParam().message_part), std::string::npos) << p.error;
  EXPECT_EQ(p.error.find('\n'), std::string::npos) << p.error;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CommandLineRejects,
    ::testing::Values(
        BadUsage{{}, "no model given"}, BadUsage{{"m.onnx", "--frobnicate"}, "--frobnicate"},
        BadUsage{{"m.onnx", "--iterations", "5"}, "--benchmark"},
        BadUsage{{"m.onnx", "--benchmark", "--iterations", "0"}, "--iterations"},
        BadUsage{{"m.onnx", "--threads", "-1"}, "--threads"}, BadUsage{{"m.onnx", "--threads", "two"}, "two"},
        BadUsage{{"m.onnx", "--opt-level", "4"}, "--opt-level"},
        BadUsage{{"m.onnx", "--precision", "int8"}, "--precision must be fp32, bf16 or fp16, got 'int8'"},
        BadUsage{{"m.onnx", "--dump-graph", ""}, "--dump-graph: the file name is empty"},
        BadUsage{{"m.onnx", "--dump-graph"}, "--dump-graph"},
        BadUsage{{"m.onnx", "--shape", "image=1xqx8"}, "--shape 'image=1xqx8': dim 1 'q'"},
        BadUsage{{"m.onnx", "--shape", "image"}, "expected NAME=DIMS"},
        BadUsage{{"m.onnx", "--input", "image"}, "--input 'image': expected NAME=VALUE"},
        BadUsage{{"m.onnx", "--backends", "cpu,,example"}, "empty backend name"},
        BadUsage{{"m.onnx", "other.onnx"}, "other.onnx"}, BadUsage{{"m.onnx", "--config"}, "--config"}));

}  // namespace
}  // namespace infer::cli
