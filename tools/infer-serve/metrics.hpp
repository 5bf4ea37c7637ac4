// infer-serve's metrics, rendered at GET /metrics in the Prometheus text format (0.0.4).
// Names follow Prometheus' conventions so that `promtool check metrics` finds nothing:
// counters end in _total, durations are histograms in seconds (histograms, unlike
// summaries, can be summed across replicas), every series has HELP and TYPE.
//
//   infer_requests_total{model,version,outcome}   success | bad_request | rejected | failed
//   infer_request_duration_seconds{model,version} end to end, successful requests
//   infer_queue_duration_seconds{model,version}   waiting for a batch to form
//   infer_compute_duration_seconds{model,version} the run of the batch the request was in
//   infer_batch_size{model,version}               rows per run
//   infer_queue_depth{model,version}              requests waiting now
//   infer_inflight_requests{model,version}        accepted and not yet answered
//   infer_model_load_duration_seconds{model,version}
//   process_resident_memory_bytes
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace infer::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Appends the _bucket, _sum and _count lines of series `name` with `labels`
  // (`model="m",version="1"`, no braces).
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

enum class Outcome { kSuccess = 0, kBadRequest = 1, kRejected = 2, kFailed = 3 };

struct ModelMetrics {
  ModelMetrics(std::string model, std::string version);
  const std::string model;
  const std::string version;
  std::atomic<uint64_t> outcomes[4] = {};
  Histogram request_seconds;
  Histogram queue_seconds;
  Histogram compute_seconds;
  Histogram batch_size;
  std::atomic<int64_t> inflight{0};
  std::atomic<double> load_seconds{0};
  std::function<size_t()> queue_depth;  // read at render time; unset = 0

  void count(Outcome outcome) {
    outcomes[static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
  }
};

class Metrics {
 public:
  // Stable references: models are added at load, before serving starts.
  ModelMetrics& add_model(const std::string& model, const std::string& version);
  std::string render() const;

 private:
  std::deque<ModelMetrics> models_;
};

// Label value escaping of the text format (backslash, double quote, newline).
std::string escape_label_value(const std::string& value);
// The process's resident set in bytes (/proc/self/statm), 0 when unreadable.
uint64_t resident_memory_bytes();

}  // namespace infer::serve
