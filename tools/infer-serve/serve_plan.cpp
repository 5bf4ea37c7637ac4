#include "serve_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "config/deployment_config.hpp"
#include "run_plan.hpp"

namespace infer::serve {
namespace fs = std::filesystem;
namespace {

// A model's settings from its deployment file, through infer-run's own merge so that
// backends, optimization, pins and plugin folders mean exactly what they mean there.
Result<ModelSettings> model_settings(const config::DeploymentConfig& file, const std::string& path,
                                     const ServeArgs& args) {
  if (file.model.empty())
    return invalid_argument(path + ": 'model:' is missing (the ONNX file to serve)");
  cli::CliArgs cli;
  cli.config = path;
  cli.threads = args.threads;
  cli.plugin_dirs = args.plugin_dirs;
  INFER_ASSIGN_OR_RETURN(cli::RunPlan run, cli::make_run_plan(cli, &file));
  ModelSettings m;
  m.source = path;
  m.model_path = run.model_path;
  m.session = run.session;
  m.name = file.name.empty() ? fs::path(path).stem().string() : file.name;
  if (!config::is_model_name(m.name)) {
    return invalid_argument(
        path + ": '" + m.name +
        "' cannot name a served model (it goes into URLs and metric labels): use "
        "letters, digits, '_', '-' and '.' (at most 128), or set 'name:'");
  }
  m.version = file.version.value_or(1);
  m.instances = file.instances.value_or(1);
  // Instances share the CPUs: each gets its share unless the file or --threads says.
  if (!args.threads && !file.threads)
    m.session.threads = std::max(1, available_cpus() / m.instances);
  const config::BatchingConfig& b = file.batching;
  m.batching.max_batch_size = b.max_batch_size.value_or(0);
  m.batching.preferred_batch_sizes = b.preferred_batch_size;
  m.batching.max_queue_delay = std::chrono::microseconds(b.max_queue_delay_us.value_or(0));
  if (b.max_queue_size) m.batching.max_queue_size = static_cast<size_t>(*b.max_queue_size);
  m.batching.default_timeout = std::chrono::microseconds(b.timeout_us.value_or(0));
  return m;
}

}  // namespace

Result<ServePlan> make_serve_plan(const ServeArgs& args) {
  if (args.config.has_value() == args.model_repository.has_value()) {
    return invalid_argument("give exactly one of --config FILE and --model-repository DIR");
  }
  ServePlan plan;
  if (args.config) {
    INFER_ASSIGN_OR_RETURN(config::DeploymentConfig file, config::load_config_file(*args.config));
    INFER_ASSIGN_OR_RETURN(ModelSettings model, model_settings(file, *args.config, args));
    plan.models.push_back(std::move(model));
    const config::ServerConfig& s = file.server;
    if (!s.host.empty()) plan.http.host = s.host;
    if (s.http_port) plan.http.port = *s.http_port;
    if (s.grpc_port) plan.grpc.port = *s.grpc_port;
    if (s.max_request_mb) {
      plan.http.max_body_bytes = static_cast<size_t>(*s.max_request_mb) << 20;
      plan.grpc.max_message_bytes = plan.http.max_body_bytes;
    }
    if (s.idle_timeout_s) plan.http.idle_timeout = std::chrono::seconds(*s.idle_timeout_s);
    if (s.drain_timeout_s) plan.drain_timeout = std::chrono::seconds(*s.drain_timeout_s);
  } else {
    const std::string& dir = *args.model_repository;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      return not_found("--model-repository " + dir + ": not a folder");
    std::vector<std::string> files, models;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (!entry.is_regular_file()) continue;
      if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
      if (entry.path().extension() == ".onnx") models.push_back(entry.path().string());
    }
    if (ec) return not_found("--model-repository " + dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    std::sort(models.begin(), models.end());
    if (files.empty() && models.empty()) {
      return not_found("--model-repository " + dir +
                       ": no deployment files (*.yaml) or models (*.onnx) in it");
    }
    if (args.default_model_name && (!files.empty() || models.size() != 1)) {
      return invalid_argument(
          "--default-model-name names the model of a repository holding one .onnx file and no "
          "deployment file; " +
          dir + " has " + std::to_string(files.size()) + " deployment files and " +
          std::to_string(models.size()) + " models");
    }
    if (files.empty()) {
      for (const std::string& path : models) {
        config::DeploymentConfig bare;
        bare.model = path;
        bare.name = args.default_model_name.value_or(fs::path(path).stem().string());
        INFER_ASSIGN_OR_RETURN(ModelSettings model, model_settings(bare, path, args));
        plan.models.push_back(std::move(model));
      }
    }
    std::map<std::pair<std::string, int64_t>, std::string> seen;
    for (const std::string& path : files) {
      INFER_ASSIGN_OR_RETURN(config::DeploymentConfig file, config::load_config_file(path));
      const config::ServerConfig& s = file.server;
      if (!s.host.empty() || s.http_port || s.grpc_port || s.max_request_mb || s.idle_timeout_s ||
          s.drain_timeout_s) {
        return invalid_argument(
            path +
            ": 'server' settings belong to the file given with --config; in a model "
            "repository give them on the command line");
      }
      INFER_ASSIGN_OR_RETURN(ModelSettings model, model_settings(file, path, args));
      const auto [it, inserted] = seen.emplace(std::make_pair(model.name, model.version), path);
      if (!inserted) {
        return invalid_argument(path + ": model '" + model.name + "' version " +
                                std::to_string(model.version) + " is already served from " +
                                it->second);
      }
      plan.models.push_back(std::move(model));
    }
  }
  if (args.host) plan.http.host = *args.host;
  if (args.http_port) plan.http.port = *args.http_port;
  if (args.grpc_port) plan.grpc.port = *args.grpc_port;
  plan.grpc.host = plan.http.host;
  if (args.drain_timeout_s) plan.drain_timeout = std::chrono::seconds(*args.drain_timeout_s);
  return plan;
}

}  // namespace infer::serve
