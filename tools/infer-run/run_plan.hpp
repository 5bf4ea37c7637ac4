// The merge of a deployment file (--config) and the command line into what infer-run
// will do. Command-line values win: --backends, --threads, --strict, --opt-level and
// --micro-batches replace the file's; an --input or --shape for an input replaces the file's entry for
// that input; --disable-pass and --plugin-dir add to the file's lists (plugin folders
// from the command line are searched first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "config/deployment_config.hpp"
#include "infer/infer.hpp"

namespace infer::cli {

// Where one model input comes from: a .npy file, or generated with a given shape.
// Model inputs absent from RunPlan::inputs are generated from their declared shape.
struct InputSource {
  std::string name;
  std::string file;                            // "" = generate
  std::optional<std::vector<int64_t>> shape;   // for generation, or checked against the file
  std::string origin;                          // "--input", "--shape" or "<config path>"
};

struct RunPlan {
  std::string model_path;
  SessionOptions session;
  std::vector<InputSource> inputs;
  std::string output_dir;  // "" = do not write outputs
  bool benchmark = false;
  int warmup = 5;
  int iterations = 50;
  bool json = false;
  bool explain = false;
  bool compare_precision = false;  // also run in fp32 and compare the outputs
  bool verbose = false;
};

// Merges `args` over `config` (nullptr when there is no --config). Fails on a missing
// model or a repeated --input/--shape for one name.
Result<RunPlan> make_run_plan(const CliArgs& args, const config::DeploymentConfig* config);

}  // namespace infer::cli
