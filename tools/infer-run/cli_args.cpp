#include "cli_args.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>

#ifndef INFER_VERSION
#define INFER_VERSION "unknown"
#endif

namespace infer::cli {
namespace {

constexpr const char* kDescription =
    "infer-run: run an ONNX model with infer, benchmark it, or explain how it is placed on backends.";

constexpr const char* kFooter = R"(
Usage forms:
  infer-run MODEL [options]          run MODEL (an .onnx file)
  infer-run --config FILE [options]  run the model the deployment file names
  infer-run --list-devices [--json]  list the backend plugins found and their devices

Precedence: flags given on the command line override the deployment file (--config):
  --backends, --threads, --strict, --opt-level, --micro-batches and --trace replace the file's values;
  an --input or --shape for an input replaces the file's entry for that input;
  --disable-pass adds to the file's disabled passes. Plugin folders: --plugin-dir entries first, then the file's
  plugins.search_paths, then $INFER_PLUGIN_PATH and the installed plugin folder.

Inputs: every model input not given with --input (or the file's inputs) is generated
  deterministically from a fixed seed: floats uniform in [0,1), integers in [0,10), bool
  random. A symbolic dim (e.g. 'batch') not set by --shape NAME=DIMS or the file's
  inputs.shape is 1 (stderr names it; --strict makes it an error).
  .npy files must be little-endian, C order; dtype and shape are checked against the model.

Output (default): the model, the backends used and, per output, its dtype and shape; for a
  2-D float output [N, C], the top-3 classes of each row; else the first values.
  --output-dir DIR writes DIR/<name>.npy per output (characters outside [A-Za-z0-9._-] in
  the name become '_') and DIR/outputs.json mapping output names to file names.
  --json prints one JSON object on stdout instead (outputs' names, dtypes, shapes, files;
  with --benchmark: model, backends, iterations, warmup, latency_ms {p50,p90,p99,mean,min,
  max}, throughput_per_s, peak_rss_mb).

Optimization: --opt-level 0 runs the graph as loaded; 1 adds the basic passes (constant
  folding, dead code and common subexpression elimination); 2 adds operator fusion into the
  ai.infer domain; 3 (the default) runs every pass, adding the layout rewrites.
  --dump-graph FILE.onnx writes the graph as it will run (fused ops keep the ai.infer
  domain) as a standalone ONNX file, e.g. to look at in Netron.

Pipelining: --micro-batches N (or the file's micro_batches) splits each run's batch into N
  equal micro-batches and pipelines them, so that the copies of one overlap the compute of
  another; the outputs are joined again. Every input and output needs a symbolic dim 0 and
  the batch must divide by N. --trace FILE.json (or the file's trace) writes every run's steps as a Chrome trace
  (open it in chrome://tracing or ui.perfetto.dev): one track per device queue (compute,
  copy h2d, copy d2h) and one for host copies; intervals span from when the host enqueued
  a step (or saw what it waits for complete) to when the host saw it complete.

Exit status: 0 on success; 1 when the model, a file or a run fails; 2 for a bad command
  line. Errors are one line on stderr: "infer-run: error: <message>".
)";

struct Parser {
  CLI::App app{kDescription, "infer-run"};
  CliArgs args;
  std::string model;
  std::string config;
  std::vector<std::string> backends;
  int threads = 0;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir;
  int warmup = 5;
  int iterations = 50;
  int opt_level = kDefaultOptLevel;
  std::string precision;
  std::string dump_graph;
  int micro_batches = 1;
  std::string trace;

  CLI::Option* model_opt = nullptr;
  CLI::Option* config_opt = nullptr;
  CLI::Option* backends_opt = nullptr;
  CLI::Option* threads_opt = nullptr;
  CLI::Option* output_dir_opt = nullptr;
  CLI::Option* warmup_opt = nullptr;
  CLI::Option* iterations_opt = nullptr;
  CLI::Option* opt_level_opt = nullptr;
  CLI::Option* precision_opt = nullptr;
  CLI::Option* dump_graph_opt = nullptr;
  CLI::Option* micro_batches_opt = nullptr;
  CLI::Option* trace_opt = nullptr;

  Parser() {
    app.footer(kFooter);
    app.set_version_flag("--version", std::string("infer-run ") + INFER_VERSION);
    app.get_formatter()->column_width(34);

    model_opt = app.add_option("MODEL", model, "The ONNX model to run (optional with --config naming one)")
                    ->type_name("FILE");
    config_opt = app.add_option("--config", config, "Deployment file (YAML) with the model, backends, inputs...")
                     ->type_name("FILE");
    backends_opt = app.add_option("--backends", backends,
                                  "Backends in priority order, comma-separated (default: cpu); cpu is the "
                                  "implicit last fallback unless --strict")
                       ->allow_extra_args(false)
                       ->type_name("a,b");
    threads_opt = app.add_option("--threads", threads, "Worker threads (0: one per hardware thread)")->type_name("N");
    app.add_option("--input", inputs, "Feed input NAME from a .npy file (repeatable)")
        ->allow_extra_args(false)
        ->type_name("NAME=FILE.npy");
    app.add_option("--shape", shapes,
                   "Shape of the generated input NAME, dims joined by 'x' (repeatable); symbolic "
                   "dims not given are 1")
        ->allow_extra_args(false)
        ->type_name("NAME=1x3x224x224");
    output_dir_opt = app.add_option("--output-dir", output_dir,
                                    "Write each output to DIR/<name>.npy plus DIR/outputs.json")
                         ->type_name("DIR");
    app.add_flag("--benchmark", args.benchmark,
                                      "Time repeated runs: latency p50/p90/p99/mean/min/max and throughput");
    // Ranges and dependencies are checked in finish(), whose messages are clearer than
    // CLI11's validator texts (which also clutter --help).
    warmup_opt = app.add_option("--warmup", warmup, "Untimed runs before timing, with --benchmark (default 5)")
                     ->type_name("N");
    iterations_opt = app.add_option("--iterations", iterations, "Timed runs, with --benchmark (default 50)")
                         ->type_name("N");
    app.add_flag("--json", args.json, "Print one JSON object on stdout instead of text");
    app.add_flag("--explain", args.explain,
                 "Print the plan (each node's backend and why, partitions, copies) and the copies per run");
    app.add_flag("--strict", args.strict,
                 "Fail if a node is not supported by the listed backends (no cpu fallback), or if "
                 "an input's symbolic dim has no --shape");
    app.add_option("--plugin-dir", args.plugin_dirs, "Folder to search for backend plugins first (repeatable)")
        ->allow_extra_args(false)
        ->type_name("DIR");
    opt_level_opt = app.add_option("--opt-level", opt_level,
                                   "Graph optimization level: 0 none, 1 basic, 2 extended (fusion), 3 all "
                                   "(default 3)")
                        ->type_name("N");
    precision_opt = app.add_option("--precision", precision,
                                   "Arithmetic precision of float32 MatMul/Gemm/Conv: fp32 (default), bf16 or "
                                   "fp16, where the backend has it (--explain lists the nodes)")
                        ->type_name("P");
    app.add_flag("--compare-precision", args.compare_precision,
                 "Also run the model in fp32 and report each output's difference (with --precision)");
    app.add_option("--disable-pass", args.disabled_passes, "Disable an optimizer pass by name (repeatable)")
        ->allow_extra_args(false)
        ->type_name("NAME");
    dump_graph_opt = app.add_option("--dump-graph", dump_graph,
                                    "Write the graph as it will run (after optimization) to an ONNX file, e.g. "
                                    "for Netron")
                         ->type_name("FILE.onnx");
    micro_batches_opt = app.add_option("--micro-batches", micro_batches,
                                       "Split each run's batch (dim 0 of every input) into N micro-batches "
                                       "pipelined across the devices (default 1: no split)")
                            ->type_name("N");
    trace_opt = app.add_option("--trace", trace,
                               "Write a Chrome trace of the runs (one track per device queue) to FILE, "
                               "for chrome://tracing or ui.perfetto.dev")
                    ->type_name("FILE.json");
    app.add_flag("--verbose", args.verbose, "Log informational messages from the runtime and plugins to stderr");
    app.add_flag("--list-devices", args.list_devices,
                 "List every backend plugin found (--plugin-dir, the file's plugins.search_paths, "
                 "$INFER_PLUGIN_PATH, the installed folder) with its devices or why it has none; "
                 "runs no model");
  }

  // Copies what was given into the optional fields and checks the NAME=... values.
  Status finish() {
    if (model_opt->count() > 0) args.model = model;
    if (config_opt->count() > 0) args.config = config;
    if (backends_opt->count() > 0) {
      // Split here rather than with CLI11's delimiter, which silently drops the empty
      // item of "cpu,,example": a typo the user should hear about.
      std::vector<std::string> names;
      for (const std::string& list : backends) {
        size_t start = 0;
        while (true) {
          const size_t comma = std::min(list.find(',', start), list.size());
          names.push_back(list.substr(start, comma - start));
          if (names.back().empty()) {
            return invalid_argument("--backends '" + list + "': empty backend name in the list");
          }
          if (comma == list.size()) break;
          start = comma + 1;
        }
      }
      args.backends = std::move(names);
    }
    if (threads_opt->count() > 0) {
      if (threads < 0) return invalid_argument("--threads must be 0 (one per hardware thread) or more, got " + std::to_string(threads));
      args.threads = threads;
    }
    if (output_dir_opt->count() > 0) {
      if (output_dir.empty()) return invalid_argument("--output-dir: the folder name is empty");
      args.output_dir = output_dir;
    }
    if (warmup_opt->count() > 0) {
      if (!args.benchmark) return invalid_argument("--warmup needs --benchmark");
      if (warmup < 0) return invalid_argument("--warmup must be 0 or more, got " + std::to_string(warmup));
      args.warmup = warmup;
    }
    if (iterations_opt->count() > 0) {
      if (!args.benchmark) return invalid_argument("--iterations needs --benchmark");
      if (iterations < 1) return invalid_argument("--iterations must be 1 or more, got " + std::to_string(iterations));
      args.iterations = iterations;
    }
    if (opt_level_opt->count() > 0) {
      if (opt_level < 0 || opt_level > 3) return invalid_argument("--opt-level must be 0..3, got " + std::to_string(opt_level));
      args.opt_level = opt_level;
    }
    if (precision_opt->count() > 0) {
      Precision p;
      if (!parse_precision(precision, &p))
        return invalid_argument("--precision must be fp32, bf16 or fp16, got '" + precision + "'");
      args.precision = p;
    }
    if (dump_graph_opt->count() > 0) {
      if (dump_graph.empty()) return invalid_argument("--dump-graph: the file name is empty");
      args.dump_graph = dump_graph;
    }
    if (micro_batches_opt->count() > 0) {
      if (micro_batches < 1)
        return invalid_argument("--micro-batches must be 1 (no split) or more, got " + std::to_string(micro_batches));
      args.micro_batches = micro_batches;
    }
    if (trace_opt->count() > 0) {
      if (trace.empty()) return invalid_argument("--trace: the file name is empty");
      args.trace = trace;
    }
    for (const std::string& text : inputs) {
      INFER_ASSIGN_OR_RETURN(NamedValue input, parse_named_value(text, "--input"));
      args.inputs.push_back(std::move(input));
    }
    for (const std::string& text : shapes) {
      INFER_ASSIGN_OR_RETURN(NamedShape shape, parse_shape_arg(text));
      args.shapes.push_back(std::move(shape));
    }
    if (!args.model && !args.config && !args.list_devices) {
      return invalid_argument("no model given: pass MODEL (an .onnx file) or --config FILE (see --help)");
    }
    return Status::ok();
  }
};

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ParsedCommandLine result;
  // CLI11 reports by throwing; nothing may escape this function, so every path ends in
  // a filled-in result.
  try {
    auto parser = std::make_unique<Parser>();
    try {
      parser->app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      result.exit_now = true;
      result.stdout_text = parser->app.help();
      return result;
    } catch (const CLI::CallForAllHelp&) {
      result.exit_now = true;
      result.stdout_text = parser->app.help("", CLI::AppFormatMode::All);
      return result;
    } catch (const CLI::CallForVersion& e) {
      result.exit_now = true;
      result.stdout_text = std::string(e.what()) + "\n";
      return result;
    } catch (const CLI::ParseError& e) {
      result.exit_now = true;
      result.exit_code = 2;
      result.error = e.what();
      return result;
    }
    const Status status = parser->finish();
    if (!status.is_ok()) {
      result.exit_now = true;
      result.exit_code = 2;
      result.error = status.message();
      return result;
    }
    result.args = std::move(parser->args);
  } catch (const std::exception& e) {
    result.exit_now = true;
    result.exit_code = 2;
    result.error = std::string("cannot parse the command line: ") + e.what();
  }
  return result;
}

std::string help_text() {
  try {
    return Parser().app.help();
  } catch (const std::exception& e) {
    return std::string("infer-run: cannot render help: ") + e.what() + "\n";
  }
}

}  // namespace infer::cli
