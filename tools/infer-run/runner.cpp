#include "runner.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "bench_stats.hpp"
#include "cli_args.hpp"
#include "config/deployment_config.hpp"
#include "infer/printable.hpp"
#include "input_feed.hpp"
#include "json_writer.hpp"
#include "log_buffer.hpp"
#include "npy.hpp"
#include "output_files.hpp"
#include "report.hpp"
#include "run_plan.hpp"
#include "tensor_convert.hpp"

namespace infer::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A progress line on stderr, redrawn in place, only when a person is watching: scripts
// capturing stderr must see nothing but warnings and the error line.
class Progress {
 public:
  Progress(std::ostream& err, int total) : err_(err), total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}
  void update(const char* phase, int done) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (done != total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    err_ << "\rinfer-run: " << phase << " " << done << "/" << total_ << "   " << std::flush;
  }
  void finish() {
    if (enabled_) err_ << "\r\033[K" << std::flush;
  }

 private:
  std::ostream& err_;
  int total_;
  bool enabled_;
  Clock::time_point last_{};
};

Result<std::vector<NamedTensor>> run_once(Session& session, const std::vector<NamedTensor>& inputs, RunStats* stats,
                                          double* ms) {
  const auto start = Clock::now();
  Result<std::vector<NamedTensor>> outputs = session.run(inputs, stats);
  *ms = elapsed_ms(start);
  return outputs;
}

Status benchmark(Session& session, const RunPlan& plan, const std::vector<NamedTensor>& inputs, std::ostream& err,
                 RunReport& report, std::vector<NamedTensor>& last_outputs) {
  Progress progress(err, plan.warmup + plan.iterations);
  // Runs once, keeping the outputs; the progress line is cleared on failure so the
  // error line starts on a clean line.
  auto step = [&](RunStats* stats, double* ms) -> Status {
    Result<std::vector<NamedTensor>> outputs = run_once(session, inputs, stats, ms);
    if (!outputs.is_ok()) {
      progress.finish();
      return outputs.status();
    }
    last_outputs = std::move(outputs).value();
    return Status::ok();
  };
  double ms = 0;
  for (int i = 0; i < plan.warmup; ++i) {
    INFER_RETURN_IF_ERROR(step(nullptr, &ms));
    progress.update("warmup", i + 1);
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(plan.iterations));
  RunStats stats;
  const auto start = Clock::now();
  for (int i = 0; i < plan.iterations; ++i) {
    // A fresh RunStats per run, so the report shows one run's copies whether the
    // runtime fills the struct or adds to it.
    RunStats run_stats;
    INFER_RETURN_IF_ERROR(step(&run_stats, &ms));
    stats = run_stats;
    samples.push_back(ms);
    progress.update("benchmark", plan.warmup + i + 1);
  }
  const double total_ms = elapsed_ms(start);
  progress.finish();

  BenchmarkReport bench;
  bench.warmup = plan.warmup;
  bench.latency = summarize_latencies(samples);
  bench.throughput_per_s = throughput_per_s(samples.size(), total_ms);
  if (!inputs.empty() && !inputs.front().tensor.shape().empty()) bench.batch_size = inputs.front().tensor.shape()[0];
  report.benchmark = bench;
  report.run_ms = bench.latency.mean;
  if (plan.explain) report.run_stats = stats;
  return Status::ok();
}

Status write_outputs(const std::string& dir, std::vector<OutputReport>& outputs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return unavailable("cannot create output folder '" + dir + "': " + ec.message());
  std::vector<std::string> names;
  for (const OutputReport& output : outputs) names.push_back(output.name);
  const std::vector<std::string> files = output_file_names(names);
  JsonWriter mapping;
  mapping.begin_object();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (fs::path(dir) / files[i]).string();
    INFER_ASSIGN_OR_RETURN(HostArray array,
                           to_npy_compatible(outputs[i].value, "output '" + outputs[i].name + "'"));
    INFER_RETURN_IF_ERROR(write_npy(path, array));
    outputs[i].file = path;
    mapping.key(outputs[i].name).value(files[i]);
  }
  mapping.end_object();
  const std::string json_path = (fs::path(dir) / "outputs.json").string();
  std::ofstream json(json_path, std::ios::trunc);
  json << mapping.str() << "\n";
  json.close();
  if (!json) return unavailable("cannot write '" + json_path + "'");
  return Status::ok();
}

Status execute(const RunPlan& plan_in, std::ostream& out, std::ostream& err, LogBuffer& logs) {
  RunPlan plan = plan_in;
  plan.session.log_sink = logs.sink();

  INFER_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(plan.model_path, plan.session));
  logs.flush(err);
  INFER_ASSIGN_OR_RETURN(InputFeed feed,
                         prepare_inputs(session->inputs(), plan.inputs, plan.session.strict));
  if (!feed.notice.empty()) err << "infer-run: note: " << printable(feed.notice) << std::endl;

  RunReport report;
  report.model = plan.model_path;
  report.backends = session->active_backends();
  report.inputs = feed.reports;
  if (plan.explain && plan.json) report.plan = &session->plan();
  if (plan.explain && !plan.json) out << session->plan().to_text() << (session->plan().to_text().ends_with('\n') ? "" : "\n");

  std::vector<NamedTensor> outputs;
  if (plan.benchmark) {
    INFER_RETURN_IF_ERROR(benchmark(*session, plan, feed.tensors, err, report, outputs));
  } else {
    RunStats stats;
    INFER_ASSIGN_OR_RETURN(outputs, run_once(*session, feed.tensors, &stats, &report.run_ms));
    if (plan.explain) report.run_stats = stats;
  }
  if (!plan.session.trace_path.empty()) INFER_RETURN_IF_ERROR(session->write_trace());
  logs.flush(err);

  for (const NamedTensor& output : outputs) report.outputs.push_back(OutputReport{output.name, to_host_array(output.tensor), ""});
  report.precision = plan.session.precision;
  if (plan.compare_precision) {
    // The same inputs through a float32 session (no trace, no graph dump of its own).
    SessionOptions reference = plan.session;
    reference.precision = Precision::kFp32;
    reference.trace_path.clear();
    reference.dump_graph_path.clear();
    Result<std::unique_ptr<Session>> fp32 = Session::create(plan.model_path, reference);
    if (!fp32.is_ok()) return fp32.status().with_context("--compare-precision: the fp32 session");
    Result<std::vector<NamedTensor>> expected = (*fp32)->run(feed.tensors);
    if (!expected.is_ok()) return expected.status().with_context("--compare-precision: the fp32 run");
    logs.flush(err);
    for (const OutputReport& output : report.outputs) {
      const NamedTensor* ref = nullptr;
      for (const NamedTensor& e : *expected)
        if (e.name == output.name) ref = &e;
      if (ref == nullptr) continue;  // every session of one model has the same outputs
      report.comparisons.push_back(compare_with_reference(output.name, output.value, to_host_array(ref->tensor)));
    }
  }
  if (!plan.output_dir.empty()) INFER_RETURN_IF_ERROR(write_outputs(plan.output_dir, report.outputs));
  report.peak_rss_mb = peak_rss_mb();

  out << (plan.json ? render_json(report) : render_text(report)) << std::flush;
  return Status::ok();
}

int fail(std::ostream& err, const std::string& message, int code) {
  // printable(): messages that did not come through a Status (command-line parsing,
  // exceptions) may still hold bytes taken from files or arguments.
  err << "infer-run: error: " << printable(one_line(message)) << std::endl;
  return code;
}

}  // namespace

std::string one_line(const std::string& message) {
  std::string out;
  size_t pos = 0;
  while (pos <= message.size()) {
    size_t end = message.find('\n', pos);
    if (end == std::string::npos) end = message.size();
    // Each line without its surrounding blanks (and '\r'), so indented list items join
    // cleanly; empty lines vanish.
    const size_t first = message.find_first_not_of(" \t\r", pos);
    size_t last = message.find_last_not_of(" \t\r", end == 0 ? 0 : end - 1);
    if (first != std::string::npos && first < end && last != std::string::npos && last >= first) {
      if (!out.empty()) out += out.back() == ':' ? " " : "; ";
      out.append(message, first, last - first + 1);
    }
    pos = end + 1;
  }
  return out;
}

int run_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    ParsedCommandLine parsed = parse_command_line(argc, argv);
    if (parsed.exit_now) {
      if (parsed.exit_code != 0) return fail(err, parsed.error, parsed.exit_code);
      out << parsed.stdout_text << std::flush;
      return 0;
    }
    std::optional<config::DeploymentConfig> config;
    if (parsed.args.config) {
      Result<config::DeploymentConfig> loaded = config::load_config_file(*parsed.args.config);
      if (!loaded.is_ok()) return fail(err, loaded.status().message(), 1);
      config = std::move(loaded).value();
    }
    if (parsed.args.list_devices) {
      std::vector<std::string> dirs = parsed.args.plugin_dirs;
      if (config)
        dirs.insert(dirs.end(), config->plugin_search_paths.begin(),
                    config->plugin_search_paths.end());
      LogBuffer logs(parsed.args.verbose ? LogLevel::kDebug : LogLevel::kError);
      const std::vector<BackendDevices> found = list_devices(dirs, logs.sink());
      logs.flush(err);
      out << render_devices(found, parsed.args.json) << std::flush;
      return 0;
    }
    Result<RunPlan> plan = make_run_plan(parsed.args, config ? &*config : nullptr);
    if (!plan.is_ok()) return fail(err, plan.status().message(), 2);

    LogBuffer logs(plan->session.log_level);
    const Status status = execute(*plan, out, err, logs);
    if (!status.is_ok()) {
      // With --verbose the log explains the failure; otherwise it would only add lines.
      if (plan->verbose) {
        logs.flush(err);
      } else {
        logs.clear();
      }
      return fail(err, status.message(), 1);
    }
    return 0;
  } catch (const std::bad_alloc&) {
    return fail(err, "out of memory", 1);
  } catch (const std::exception& e) {
    return fail(err, std::string("internal error: ") + e.what(), 1);
  } catch (...) {
    return fail(err, "internal error: unknown exception", 1);
  }
}

}  // namespace infer::cli
