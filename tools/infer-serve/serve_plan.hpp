// What infer-serve will serve and how: the merge of the command line over the deployment
// file (--config) or the files of a model repository (--model-repository). Command-line
// values win, as in infer-run.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "grpc_server.hpp"
#include "http_server.hpp"
#include "served_model.hpp"

namespace infer::serve {

struct ServeArgs {
  std::optional<std::string> config;            // --config FILE: one model
  std::optional<std::string> model_repository;  // --model-repository DIR: every DIR/*.yaml
  std::optional<std::string> host;
  std::optional<int> http_port;
  std::optional<int> grpc_port;
  std::optional<int> threads;  // per instance; default: the CPUs / instances
  std::vector<std::string> plugin_dirs;
  std::optional<int> drain_timeout_s;
  std::optional<std::string> default_model_name;  // a repository of one bare .onnx file
};

struct ServePlan {
  HttpSettings http;
  GrpcSettings grpc;
  std::chrono::seconds drain_timeout{30};
  std::vector<ModelSettings> models;
};

// Reads the deployment file(s) and merges `args` over them. In a repository each file is
// one model, named by its `name:` or else its file name without .yaml, at its `version:`
// (default 1); `server:` belongs to the --config file and is refused there. A repository
// without deployment files serves each *.onnx in it with the defaults (cpu, batching
// off), named by its file name, or by --default-model-name when there is one (as KServe
// mounts a model at /mnt/models). Errors name the file and the key.
Result<ServePlan> make_serve_plan(const ServeArgs& args);

}  // namespace infer::serve
