#include "run_plan.hpp"

#include <map>
#include <set>

namespace infer::cli {
namespace {

// One entry per input name, in the order names first appear: the file's entries, then
// names that only the command line mentions.
class InputTable {
 public:
  InputSource& entry(const std::string& name) {
    auto it = index_.find(name);
    if (it != index_.end()) return sources_[it->second];
    index_[name] = sources_.size();
    sources_.push_back(InputSource{name, "", std::nullopt, ""});
    return sources_.back();
  }
  std::vector<InputSource> take() { return std::move(sources_); }

 private:
  std::vector<InputSource> sources_;
  std::map<std::string, size_t> index_;
};

Status merge_inputs(const CliArgs& args, const config::DeploymentConfig* config, RunPlan& plan) {
  InputTable table;
  if (config != nullptr) {
    const std::string origin = config->source.empty() ? "the deployment file" : config->source;
    for (const config::InputSpec& spec : config->inputs) {
      InputSource& source = table.entry(spec.name);
      source.file = spec.file;
      if (!spec.shape.empty()) source.shape = spec.shape;
      source.origin = origin;
    }
  }
  // A name mentioned on the command line drops the file's entry for it first, so a
  // --shape alone means "generate this shape" even where the file names a .npy.
  std::set<std::string> from_cli;
  std::set<std::string> seen_input;
  for (const NamedValue& input : args.inputs) {
    if (!seen_input.insert(input.name).second) {
      return invalid_argument("--input given twice for input '" + input.name + "'");
    }
  }
  std::set<std::string> seen_shape;
  for (const NamedShape& shape : args.shapes) {
    if (!seen_shape.insert(shape.name).second) {
      return invalid_argument("--shape given twice for input '" + shape.name + "'");
    }
  }
  auto reset_once = [&](const std::string& name) -> InputSource& {
    InputSource& source = table.entry(name);
    if (from_cli.insert(name).second) {
      source.file.clear();
      source.shape.reset();
      source.origin.clear();
    }
    return source;
  };
  for (const NamedValue& input : args.inputs) {
    InputSource& source = reset_once(input.name);
    source.file = input.value;
    source.origin = "--input";
  }
  for (const NamedShape& shape : args.shapes) {
    InputSource& source = reset_once(shape.name);
    source.shape = shape.shape;
    if (source.origin.empty()) source.origin = "--shape";
  }
  plan.inputs = table.take();
  return Status::ok();
}

}  // namespace

Result<RunPlan> make_run_plan(const CliArgs& args, const config::DeploymentConfig* config) {
  RunPlan plan;
  SessionOptions& session = plan.session;

  if (args.model) {
    plan.model_path = *args.model;
  } else if (config != nullptr && !config->model.empty()) {
    plan.model_path = config->model;
  } else {
    const std::string where = config != nullptr && !config->source.empty() ? "'" + config->source + "'" : "the deployment file";
    return invalid_argument("no model given: pass MODEL on the command line or set 'model:' in " + where);
  }

  if (args.backends) {
    session.backends = *args.backends;
  } else if (config != nullptr && !config->backends.empty()) {
    session.backends.clear();
    for (const config::BackendConfig& backend : config->backends) session.backends.push_back(backend.name);
  }
  // Options belong to a backend name, so they still apply when --backends reorders or
  // trims the file's list.
  if (config != nullptr) {
    for (const config::BackendConfig& backend : config->backends) {
      if (!backend.options.empty() || backend.memory_budget_mb)
        session.backend_options.push_back(
            BackendOptions{backend.name, backend.options, backend.memory_budget_mb.value_or(0)});
    }
    for (const config::PlacementPin& pin : config->placement) {
      session.placement.push_back(PlacementPin{pin.node, pin.backend});
    }
  }

  if (args.threads) {
    session.threads = *args.threads;
  } else if (config != nullptr && config->threads) {
    session.threads = *config->threads;
  }
  if (args.strict) {
    session.strict = true;
  } else if (config != nullptr && config->strict) {
    session.strict = *config->strict;
  }
  if (args.opt_level) {
    session.optimization_level = *args.opt_level;
  } else if (config != nullptr && config->optimization_level) {
    session.optimization_level = *config->optimization_level;
  } else {
    // The CLI states its own default rather than inheriting SessionOptions', so that
    // --help and the behaviour cannot drift apart.
    session.optimization_level = kDefaultOptLevel;
  }
  if (args.precision) {
    session.precision = *args.precision;
  } else if (config != nullptr && config->precision) {
    session.precision = *config->precision;
  }
  session.dump_graph_path = args.dump_graph.value_or("");
  if (args.micro_batches) {
    session.micro_batches = *args.micro_batches;
  } else if (config != nullptr && config->micro_batches) {
    session.micro_batches = *config->micro_batches;
  }
  if (args.trace) {
    session.trace_path = *args.trace;
  } else if (config != nullptr) {
    session.trace_path = config->trace;
  }
  if (config != nullptr) {
    const config::PartitionerConfig& part = config->partitioner;
    if (part.cost_model) session.cost_model = *part.cost_model;
    if (part.min_island_nodes) session.min_island_nodes = static_cast<size_t>(*part.min_island_nodes);
    if (part.assumed_symbolic_dim) session.assumed_symbolic_dim = *part.assumed_symbolic_dim;
  }

  if (config != nullptr) session.disabled_passes = config->disabled_passes;
  for (const std::string& pass : args.disabled_passes) {
    bool present = false;
    for (const std::string& existing : session.disabled_passes) present = present || existing == pass;
    if (!present) session.disabled_passes.push_back(pass);
  }

  session.plugin_dirs = args.plugin_dirs;
  if (config != nullptr) {
    session.plugin_dirs.insert(session.plugin_dirs.end(), config->plugin_search_paths.begin(),
                               config->plugin_search_paths.end());
  }
  session.log_level = args.verbose ? LogLevel::kInfo : LogLevel::kWarning;

  INFER_RETURN_IF_ERROR(merge_inputs(args, config, plan));

  plan.output_dir = args.output_dir.value_or("");
  plan.benchmark = args.benchmark;
  plan.warmup = args.warmup.value_or(5);
  plan.iterations = args.iterations.value_or(50);
  plan.json = args.json;
  plan.explain = args.explain;
  plan.compare_precision = args.compare_precision;
  if (plan.compare_precision && plan.session.precision == Precision::kFp32)
    return invalid_argument(
        "--compare-precision compares a reduced-precision run with an fp32 one: give --precision bf16 or "
        "fp16 (or precision: in the deployment file)");
  plan.verbose = args.verbose;
  return plan;
}

}  // namespace infer::cli
