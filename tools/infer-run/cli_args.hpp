// The command line of infer-run, parsed but not yet merged with a deployment file.
// Absent options stay empty/nullopt so the merge (run_plan.hpp) can tell "not given"
// from "given" and let the YAML file supply the value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "named_arg.hpp"

namespace infer::cli {

struct CliArgs {
  std::optional<std::string> model;
  std::optional<std::string> config;
  std::optional<std::vector<std::string>> backends;
  std::optional<int> threads;
  std::vector<NamedValue> inputs;  // --input NAME=FILE.npy, in order
  std::vector<NamedShape> shapes;  // --shape NAME=DIMS, in order
  std::optional<std::string> output_dir;
  bool benchmark = false;
  std::optional<int> warmup;
  std::optional<int> iterations;
  bool json = false;
  bool explain = false;
  bool strict = false;
  bool verbose = false;
  std::vector<std::string> plugin_dirs;
  std::optional<int> opt_level;
  std::optional<Precision> precision;  // --precision
  bool compare_precision = false;      // --compare-precision
  std::vector<std::string> disabled_passes;
  std::optional<std::string> dump_graph;  // --dump-graph FILE.onnx
  std::optional<int> micro_batches;       // --micro-batches N
  std::optional<std::string> trace;       // --trace FILE.json
  bool list_devices = false;              // --list-devices: list the plugins' devices, run nothing
};

// The optimization level when neither --opt-level nor the deployment file gives one:
// every pass (0 none, 1 basic, 2 extended: fusion into ai.infer ops, 3 all).
inline constexpr int kDefaultOptLevel = 3;

// What parsing decided: run with `args`, or exit at once with `exit_code`, printing
// `stdout_text` (--help, --version) or the one-line `error` (bad usage, exit code 2).
struct ParsedCommandLine {
  bool exit_now = false;
  int exit_code = 0;
  std::string stdout_text;
  std::string error;
  CliArgs args;
};

ParsedCommandLine parse_command_line(int argc, const char* const* argv);

// The --help text (the same text parse_command_line prints for --help).
std::string help_text();

}  // namespace infer::cli
