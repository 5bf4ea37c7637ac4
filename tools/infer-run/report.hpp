// What infer-run prints: the readable summary of a run, the benchmark table, the
// --explain additions, and the --json object. Rendering only; nothing here runs a model.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_stats.hpp"
#include "host_array.hpp"
#include "infer/infer.hpp"

namespace infer::cli {

struct InputReport {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::string file;  // "" = generated
};

struct OutputReport {
  std::string name;
  HostArray value;
  std::string file;  // path written under --output-dir, "" when not written
};

struct BenchmarkReport {
  int warmup = 0;
  LatencySummary latency;  // latency.count = timed iterations
  double throughput_per_s = 0;
  std::optional<int64_t> batch_size;  // dim 0 of the first input, when it has one
};

struct RunReport {
  std::string model;
  std::vector<std::string> backends;  // the session's active backends
  std::vector<InputReport> inputs;
  std::vector<OutputReport> outputs;
  double run_ms = 0;                   // the (last) run's wall time
  std::optional<RunStats> run_stats;   // set with --explain
  const PlanReport* plan = nullptr;    // set with --explain
  std::optional<BenchmarkReport> benchmark;
  std::optional<double> peak_rss_mb;
  // --compare-precision: each output against the same output of a float32 run.
  struct PrecisionComparison {
    std::string name;
    int64_t count = 0;          // values compared
    double max_abs_diff = 0;
    double mean_abs_diff = 0;
    double cosine = 1;          // cosine similarity (1 when both are all zeros)
    std::string problem;        // set when the two cannot be compared (then no figures)
  };
  Precision precision = Precision::kFp32;  // the session's precision
  std::vector<PrecisionComparison> comparisons;
};

// Compares output `name` of a reduced-precision run with the float32 run's value.
RunReport::PrecisionComparison compare_with_reference(const std::string& name, const HostArray& value,
                                                      const HostArray& reference);

// Indices and values of the k largest values of `row` (ties: lower index first), in
// descending order. NaN values rank below every number.
std::vector<std::pair<int64_t, double>> top_k(const std::vector<double>& row, size_t k);

// Element `index` of a numeric array as double, or nullopt for dtypes without a plain
// numeric reading (string, complex, float8, 4-bit).
std::optional<double> element_as_double(const HostArray& array, int64_t index);

// Element `index` rendered for people: integers exactly, floats with 6 significant
// digits, bool as true/false, complex as (re+imj).
std::string format_element(const HostArray& array, int64_t index);

// The lines shown for one output: dtype and shape, then per-row top-3 classes for a
// 2-D floating output, else up to the first 8 values.
std::string render_output(const OutputReport& output);

// The default text report (and the benchmark table when report.benchmark is set).
std::string render_text(const RunReport& report);

// The --json object (one line, ending with '\n').
std::string render_json(const RunReport& report);

// The --json object's "plan" member on its own (one line, no newline): what the Python
// module's Plan.to_dict() parses.
std::string render_plan_json(const PlanReport& plan);

// --list-devices: per plugin, its file and version, then each device (name, kind,
// memory, compute units) or why it has none; with `json`, one JSON object
// {"backends": [...]} on one line.
std::string render_devices(const std::vector<BackendDevices>& backends, bool json);

// "per run: 4 copies, 2560 bytes" for --explain.
std::string render_run_stats(const RunStats& stats);

}  // namespace infer::cli
