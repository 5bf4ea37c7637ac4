#include "metrics.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>

namespace infer::serve {
namespace {

const std::vector<double> kSecondsBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                             0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                             1,      2.5,     5,      10};
const std::vector<double> kBatchBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  return std::string(buf, end);
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  std::lock_guard lock(mutex_);
  ++counts_[i];
  ++count_;
  sum_ += value;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  std::lock_guard lock(mutex_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum{" + labels + "} " + number(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

ModelMetrics::ModelMetrics(std::string model_name, std::string model_version)
    : model(std::move(model_name)),
      version(std::move(model_version)),
      request_seconds(kSecondsBuckets),
      queue_seconds(kSecondsBuckets),
      compute_seconds(kSecondsBuckets),
      batch_size(kBatchBuckets) {}

ModelMetrics& Metrics::add_model(const std::string& model, const std::string& version) {
  return models_.emplace_back(model, version);
}

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

uint64_t resident_memory_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string Metrics::render() const {
  std::string out;
  auto labels = [](const ModelMetrics& m) {
    return "model=\"" + escape_label_value(m.model) + "\",version=\"" +
           escape_label_value(m.version) + "\"";
  };
  static const char* const kOutcomes[] = {"success", "bad_request", "rejected", "failed"};
  header(out, "infer_requests_total", "counter",
         "Inference requests answered, by outcome (bad_request: 4xx; rejected: queue full, timed "
         "out or stopping; "
         "failed: the run failed).");
  for (const ModelMetrics& m : models_) {
    for (int i = 0; i < 4; ++i) {
      out += "infer_requests_total{" + labels(m) + ",outcome=\"" + kOutcomes[i] + "\"} " +
             std::to_string(m.outcomes[i].load(std::memory_order_relaxed)) + "\n";
    }
  }
  struct HistogramSeries {
    const char* name;
    const char* help;
    const Histogram ModelMetrics::*member;
  };
  static const HistogramSeries kHistograms[] = {
      {"infer_request_duration_seconds",
       "Time from a request's arrival to its response, successful requests.",
       &ModelMetrics::request_seconds},
      {"infer_queue_duration_seconds", "Time requests waited in the batcher's queue.",
       &ModelMetrics::queue_seconds},
      {"infer_compute_duration_seconds", "Time of the run that computed a request's batch.",
       &ModelMetrics::compute_seconds},
      {"infer_batch_size",
       "Rows per run of the model: the sum of its requests' dim 0 (1 per run when batching is "
       "off).",
       &ModelMetrics::batch_size},
  };
  for (const HistogramSeries& h : kHistograms) {
    header(out, h.name, "histogram", h.help);
    for (const ModelMetrics& m : models_) (m.*(h.member)).render(out, h.name, labels(m));
  }
  header(out, "infer_queue_depth", "gauge", "Requests waiting in the batcher's queue.");
  for (const ModelMetrics& m : models_) {
    out += "infer_queue_depth{" + labels(m) + "} " +
           std::to_string(m.queue_depth ? m.queue_depth() : 0) + "\n";
  }
  header(out, "infer_inflight_requests", "gauge", "Requests accepted and not yet answered.");
  for (const ModelMetrics& m : models_) {
    out += "infer_inflight_requests{" + labels(m) + "} " + std::to_string(m.inflight.load()) + "\n";
  }
  header(out, "infer_model_load_duration_seconds", "gauge",
         "Time the model took to load, compile and warm up its instances.");
  for (const ModelMetrics& m : models_) {
    out += "infer_model_load_duration_seconds{" + labels(m) + "} " + number(m.load_seconds.load()) +
           "\n";
  }
  header(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  out += "process_resident_memory_bytes " + std::to_string(resident_memory_bytes()) + "\n";
  return out;
}

}  // namespace infer::serve
