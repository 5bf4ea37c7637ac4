// infer-serve: serves models over the KServe v2 protocol (README "Serving"). This file
// is the process: the command line, loading, the signals and the shutdown order. The
// pieces live in infer_serve_core.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "grpc_server.hpp"
#include "http_server.hpp"
#include "model_table.hpp"
#include "serve_plan.hpp"
#include "v2_routes.hpp"

namespace {

using namespace infer::serve;

constexpr const char* kDescription =
    R"(infer-serve: serve models over the KServe v2 (Open Inference) protocol.

Endpoints (HTTP/1.1, JSON and the binary tensor data extension):
  GET  /v2, /v2/health/live, /v2/health/ready
  GET  /v2/models/NAME[/versions/V][/ready]
  POST /v2/models/NAME[/versions/V]/infer
  GET  /metrics                      (Prometheus text format)
gRPC: inference.GRPCInferenceService (ServerLive, ServerReady, ModelReady,
  ServerMetadata, ModelMetadata, ModelInfer).)";

constexpr const char* kFooter = R"(
Each model is a deployment file (configs/README.md): model, backends, threads, plus the
serving keys name, version, instances, batching and server.

SIGTERM or SIGINT: readiness turns false at once, new inference requests get 503, queued
and running ones finish (up to the drain timeout), then the process exits with status 0.

Exit status: 0 after a clean shutdown; 1 when a model fails to load or the port cannot
be bound; 2 for a bad command line.)";

int fail(const std::string& message, int code) {
  std::cerr << "infer-serve: error: " << message << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "infer-serve"};
  app.footer(kFooter);
  app.get_formatter()->column_width(34);
  ServeArgs args;
  std::string config, repository, host, default_name;
  int http_port = 0, grpc_port = 0, threads = 0, drain = 0;
  auto* config_opt =
      app.add_option("--config", config, "Deployment file (YAML) of the model to serve")
          ->type_name("FILE");
  auto* repo_opt = app.add_option("--model-repository", repository,
                                  "Serve every deployment file (*.yaml) in DIR, one model each")
                       ->type_name("DIR");
  auto* default_name_opt = app.add_option("--default-model-name", default_name,
                                          "With --model-repository holding one .onnx file and no "
                                          "deployment file: serve it as NAME "
                                          "(KServe passes {{.Name}})")
                               ->type_name("NAME");
  auto* host_opt =
      app.add_option("--host", host,
                     "Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
          ->type_name("ADDR");
  auto* port_opt =
      app.add_option("--http-port", http_port, "HTTP port (default 8000; 0: any free port)")
          ->type_name("N")
          ->check(CLI::Range(0, 65535));
  auto* grpc_port_opt =
      app.add_option("--grpc-port", grpc_port, "gRPC port (default 8001; 0: any free port)")
          ->type_name("N")
          ->check(CLI::Range(0, 65535));
  auto* threads_opt =
      app.add_option("--threads", threads,
                     "Threads per model instance (default: the CPUs, from the cgroup quota, "
                     "divided among the instances)")
          ->type_name("N")
          ->check(CLI::Range(1, 4096));
  app.add_option("--plugin-dir", args.plugin_dirs,
                 "Also look for backend plugins in DIR (repeatable)")
      ->type_name("DIR");
  auto* drain_opt =
      app.add_option("--drain-timeout", drain,
                     "Seconds to let queued requests finish after SIGTERM (default 30)")
          ->type_name("S")
          ->check(CLI::Range(0, 86400));
  app.set_version_flag("--version", std::string("infer-serve ") + INFER_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(e.what(), 2);
  }
  if (config_opt->count()) args.config = config;
  if (repo_opt->count()) args.model_repository = repository;
  if (host_opt->count()) args.host = host;
  if (default_name_opt->count()) args.default_model_name = default_name;
  if (port_opt->count()) args.http_port = http_port;
  if (grpc_port_opt->count()) args.grpc_port = grpc_port;
  if (threads_opt->count()) args.threads = threads;
  if (drain_opt->count()) args.drain_timeout_s = drain;
  if (args.config.has_value() == args.model_repository.has_value()) {
    return fail("give exactly one of --config FILE and --model-repository DIR (see --help)", 2);
  }

  infer::Result<ServePlan> planned = make_serve_plan(args);
  if (!planned.is_ok()) return fail(planned.status().message(), 1);
  ServePlan plan = std::move(planned).value();

  // SIGTERM and SIGINT are taken by sigwait below; every thread started from here on
  // inherits the blocked mask, so no other thread is interrupted by them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Metrics metrics;
  ModelTable models;
  ServerState state;
  for (ModelSettings& settings : plan.models) {
    ModelMetrics& model_metrics =
        metrics.add_model(settings.name, std::to_string(settings.version));
    infer::Result<std::unique_ptr<ServedModel>> model =
        ServedModel::load(std::move(settings), model_metrics);
    if (!model.is_ok()) return fail(model.status().message(), 1);
    std::cerr << "infer-serve: model " << model.value()->describe() << " (loaded in "
              << static_cast<int>(model_metrics.load_seconds.load() * 1000) << " ms)\n";
    models.add(std::move(model).value());
  }
  // A request to a model with batching off runs on the thread that read it when an
  // instance is free (no hand-over to another thread), so for such models the HTTP
  // threads are compute threads too: one per instance (more would only queue requests
  // behind busy instances, through the batcher). A batching model computes on its worker
  // threads, and its requests are parsed by as many HTTP threads as there are CPUs. At
  // most one per CPU, at most 8.
  int io_threads = 0;
  for (ServedModel* model : models.all()) {
    io_threads += model->max_batch_size() > 0 ? available_cpus() : model->settings().instances;
  }
  plan.http.io_threads = std::clamp(io_threads, 1, std::min(available_cpus(), 8));
  V2Router router(models, state, metrics);
  HttpServer http(plan.http, router, state);
  if (infer::Status started = http.start(); !started.is_ok()) return fail(started.message(), 1);
  GrpcServer grpc(plan.grpc, models, state);
  if (infer::Status started = grpc.start(); !started.is_ok()) return fail(started.message(), 1);
  state.ready = true;
  std::cerr << "infer-serve: serving " << models.all().size()
            << (models.all().size() == 1 ? " model" : " models") << " on http://" << plan.http.host
            << ":" << http.port() << " and grpc " << plan.grpc.host << ":" << grpc.port()
            << std::endl;

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  // A second signal while draining means "stop now": the process exits at once, with
  // status 1, as an impatient operator expects.
  std::thread([signals] {
    int again = 0;
    sigwait(&signals, &again);
    std::cerr << "infer-serve: second signal: exiting without waiting for queued requests"
              << std::endl;
    std::_Exit(1);
  }).detach();
  const auto stop_start = std::chrono::steady_clock::now();
  const auto deadline = stop_start + plan.drain_timeout;
  state.ready = false;
  state.stopping = true;
  std::cerr << "infer-serve: " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT")
            << ": not ready; finishing queued requests (up to " << plan.drain_timeout.count()
            << " s)" << std::endl;
  for (ServedModel* model : models.all()) model->stop_accepting();
  bool drained = true;
  for (ServedModel* model : models.all()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    drained = model->drain(std::max(left, std::chrono::milliseconds(0))) && drained;
  }
  for (ServedModel* model : models.all()) model->stop();
  // The answers of the last requests are still being written: give them until the
  // deadline (at least a moment), then close.
  while (state.pending.load() > 0 &&
         std::chrono::steady_clock::now() < deadline + std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  grpc.stop();
  http.stop();
  std::cerr << "infer-serve: stopped"
            << (drained ? "" : " (the drain timeout cut queued requests short)") << std::endl;
  return 0;
}
