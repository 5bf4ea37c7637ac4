#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "half_float.hpp"
#include "infer/printable.hpp"
#include "json_writer.hpp"

namespace infer::cli {
namespace {

constexpr size_t kTopK = 3;
constexpr int64_t kMaxRows = 20;
constexpr int64_t kMaxValues = 8;

template <typename T>
T load(const HostArray& array, int64_t index) {
  T value{};
  std::memcpy(&value, array.bytes.data() + static_cast<size_t>(index) * sizeof(T), sizeof(T));
  return value;
}

std::string format_double(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

bool is_floating(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 || dtype == DataType::kFloat16 ||
         dtype == DataType::kBFloat16;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? separator : "") + items[i];
  return out;
}

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ms);
  return text;
}

std::string format_rate(double rate) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", rate);
  return text;
}

void write_shape(JsonWriter& json, const std::vector<int64_t>& shape) {
  json.begin_array();
  for (int64_t dim : shape) json.value(dim);
  json.end_array();
}

// An estimate in microseconds, or null when the cost model has none.
void write_estimate(JsonWriter& json, double us) {
  if (us >= 0) {
    json.value(us);
  } else {
    json.null();
  }
}

// "backends" (the cost model's view of each backend) and "totals" (partitions, copies and
// bytes per run, estimated compute and transfers), as --explain prints them.
void write_totals(JsonWriter& json, const PlanReport& plan) {
  json.key("backends").begin_array();
  for (const BackendSummary& b : plan.backends) {
    json.begin_object()
        .key("backend").value(b.backend)
        .key("partitions").value(b.partitions)
        .key("nodes").value(b.nodes)
        .key("est_compute_us").value(b.est_compute_us)
        .key("nodes_without_estimate").value(b.nodes_without_estimate)
        .key("est_memory_bytes").value(b.est_memory_bytes)
        .key("memory_values_of_unknown_size").value(b.memory_values_of_unknown_size)
        .key("memory_budget_bytes");
    if (b.memory_budget_bytes >= 0) {
      json.value(b.memory_budget_bytes);
    } else {
      json.null();
    }
    json.end_object();
  }
  json.end_array();
  const PlanReport::CopyTotals copies = plan.copy_totals();
  double compute = 0;
  for (const BackendSummary& b : plan.backends) compute += b.est_compute_us;
  json.key("totals").begin_object()
      .key("partitions").value(plan.partitions.size())
      .key("copies").value(copies.copies)
      .key("copy_bytes").value(copies.known_bytes)
      .key("copies_of_unknown_size").value(copies.unknown_size)
      .key("est_compute_us").value(compute)
      .key("est_transfer_us").value(plan.est_transfer_us)
      .key("copies_without_estimate").value(plan.copies_without_estimate)
      .key("undecided_placements").value(plan.undecided_placements)
      .end_object();
}

void write_plan(JsonWriter& json, const PlanReport& plan) {
  json.begin_object();
  json.key("nodes").begin_array();
  for (const NodePlacement& node : plan.nodes) {
    json.begin_object()
        .key("node").value(node.node)
        .key("op_type").value(node.op_type)
        .key("domain").value(node.domain)
        .key("backend").value(node.backend)
        .key("reason").value(node.reason)
        .key("pinned").value(node.pinned)
        .key("moved").value(node.moved)
        .key("est_time_us");
    write_estimate(json, node.est_time_us);
    json.end_object();
  }
  json.end_array();
  json.key("partitions").begin_array();
  for (const PartitionSummary& partition : plan.partitions) {
    json.begin_object()
        .key("name").value(partition.name)
        .key("backend").value(partition.backend)
        .key("node_count").value(partition.node_count)
        .key("est_time_us");
    write_estimate(json, partition.est_time_us);
    json.end_object();
  }
  json.end_array();
  json.key("copies").begin_array();
  for (const CopySummary& copy : plan.copies) {
    json.begin_object()
        .key("tensor").value(copy.tensor)
        .key("from").value(copy.from_backend)
        .key("to").value(copy.to_backend)
        .key("bytes");
    if (copy.bytes >= 0) {
      json.value(copy.bytes);
    } else {
      json.null();
    }
    json.key("est_time_us");
    write_estimate(json, copy.est_time_us);
    json.end_object();
  }
  json.end_array();
  write_totals(json, plan);
  json.key("passes").begin_array();
  for (const std::string& pass : plan.passes) json.value(pass);
  json.end_array();
  json.key("optimizer").begin_object()
      .key("level").value(static_cast<int64_t>(plan.optimization_level))
      .key("nodes_loaded").value(static_cast<int64_t>(plan.nodes_loaded))
      .key("nodes_run").value(static_cast<int64_t>(plan.nodes_optimized))
      .key("ms").value(plan.optimizer_ms)
      .key("decomposed").begin_array();
  for (const std::string& d : plan.decomposed) json.value(d);
  json.end_array();
  json.key("precision").begin_array();
  for (const std::string& p : plan.precision) json.value(p);
  json.end_array();
  json.end_object();
  json.key("compute_precision").begin_object()
      .key("requested").value(precision_name(plan.requested_precision))
      .key("reduced_nodes").begin_array();
  for (const std::string& n : plan.reduced_precision) json.value(n);
  json.end_array();
  json.end_object();
  json.key("unavailable_backends").begin_array();
  for (const std::string& b : plan.unavailable_backends) json.value(b);
  json.end_array();
  json.end_object();
}

}  // namespace

std::vector<std::pair<int64_t, double>> top_k(const std::vector<double>& row, size_t k) {
  std::vector<std::pair<int64_t, double>> ranked;
  ranked.reserve(row.size());
  for (size_t i = 0; i < row.size(); ++i) ranked.emplace_back(static_cast<int64_t>(i), row[i]);
  auto better = [](const std::pair<int64_t, double>& a, const std::pair<int64_t, double>& b) {
    const bool a_nan = std::isnan(a.second);
    const bool b_nan = std::isnan(b.second);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && a.second != b.second) return a.second > b.second;
    return a.first < b.first;
  };
  const size_t n = std::min(k, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end(), better);
  ranked.resize(n);
  return ranked;
}

std::optional<double> element_as_double(const HostArray& array, int64_t index) {
  switch (array.dtype) {
    case DataType::kFloat32: return load<float>(array, index);
    case DataType::kFloat64: return load<double>(array, index);
    case DataType::kFloat16: return half_to_float(load<uint16_t>(array, index));
    case DataType::kBFloat16: return bfloat16_to_float(load<uint16_t>(array, index));
    case DataType::kInt8: return load<int8_t>(array, index);
    case DataType::kInt16: return load<int16_t>(array, index);
    case DataType::kInt32: return load<int32_t>(array, index);
    case DataType::kInt64: return static_cast<double>(load<int64_t>(array, index));
    case DataType::kUInt8: return load<uint8_t>(array, index);
    case DataType::kUInt16: return load<uint16_t>(array, index);
    case DataType::kUInt32: return load<uint32_t>(array, index);
    case DataType::kUInt64: return static_cast<double>(load<uint64_t>(array, index));
    case DataType::kBool: return load<uint8_t>(array, index) != 0 ? 1.0 : 0.0;
    default: return std::nullopt;
  }
}

std::string format_element(const HostArray& array, int64_t index) {
  switch (array.dtype) {
    case DataType::kInt8: return std::to_string(load<int8_t>(array, index));
    case DataType::kInt16: return std::to_string(load<int16_t>(array, index));
    case DataType::kInt32: return std::to_string(load<int32_t>(array, index));
    case DataType::kInt64: return std::to_string(load<int64_t>(array, index));
    case DataType::kUInt8: return std::to_string(load<uint8_t>(array, index));
    case DataType::kUInt16: return std::to_string(load<uint16_t>(array, index));
    case DataType::kUInt32: return std::to_string(load<uint32_t>(array, index));
    case DataType::kUInt64: return std::to_string(load<uint64_t>(array, index));
    case DataType::kBool: return load<uint8_t>(array, index) != 0 ? "true" : "false";
    case DataType::kComplex64:
      return "(" + format_double(load<float>(array, 2 * index)) + "+" + format_double(load<float>(array, 2 * index + 1)) +
             "j)";
    case DataType::kComplex128:
      return "(" + format_double(load<double>(array, 2 * index)) + "+" +
             format_double(load<double>(array, 2 * index + 1)) + "j)";
    default: {
      const std::optional<double> value = element_as_double(array, index);
      return value ? format_double(*value) : "?";
    }
  }
}

std::string render_output(const OutputReport& output) {
  const HostArray& array = output.value;
  std::ostringstream out;
  out << "output " << output.name << ": " << dtype_name(array.dtype) << " " << shape_to_string(array.shape);
  if (!output.file.empty()) out << " -> " << output.file;
  out << "\n";
  const int64_t count = element_count(array.shape).value_or(0);
  if (count == 0) return out.str();
  if (is_floating(array.dtype) && array.shape.size() == 2 && array.shape[1] > 0) {
    const int64_t rows = array.shape[0];
    const int64_t cols = array.shape[1];
    for (int64_t r = 0; r < std::min(rows, kMaxRows); ++r) {
      std::vector<double> row(static_cast<size_t>(cols));
      for (int64_t c = 0; c < cols; ++c) row[static_cast<size_t>(c)] = *element_as_double(array, r * cols + c);
      const auto best = top_k(row, kTopK);
      out << "  row " << r << ":";
      for (size_t i = 0; i < best.size(); ++i) {
        out << (i > 0 ? "," : "") << " top-" << (i + 1) << " class " << best[i].first << " (score "
            << format_double(best[i].second) << ")";
      }
      out << "\n";
    }
    if (rows > kMaxRows) out << "  ... " << (rows - kMaxRows) << " more rows\n";
    return out.str();
  }
  // Types without a readable element form (string, float8, 4-bit) show dtype and shape only.
  const bool is_complex = array.dtype == DataType::kComplex64 || array.dtype == DataType::kComplex128;
  if (!is_complex && !element_as_double(array, 0).has_value()) return out.str();
  out << "  values:";
  for (int64_t i = 0; i < std::min(count, kMaxValues); ++i) out << " " << format_element(array, i);
  if (count > kMaxValues) out << " ... (" << count << " values)";
  out << "\n";
  return out.str();
}

std::string render_run_stats(const RunStats& stats) {
  return "per run: " + std::to_string(stats.copies) + " copies, " + std::to_string(stats.copy_bytes) + " bytes";
}

RunReport::PrecisionComparison compare_with_reference(const std::string& name, const HostArray& value,
                                                      const HostArray& reference) {
  RunReport::PrecisionComparison c;
  c.name = name;
  if (value.dtype != reference.dtype || value.shape != reference.shape) {
    c.problem = "the fp32 run gave " + std::string(dtype_name(reference.dtype)) + " " +
                shape_to_string(reference.shape) + ", this run " + std::string(dtype_name(value.dtype)) + " " +
                shape_to_string(value.shape);
    return c;
  }
  const int64_t count = element_count(value.shape).value_or(0);
  if (count > 0 && !element_as_double(value, 0).has_value()) {
    c.problem = "not numeric (" + std::string(dtype_name(value.dtype)) + ")";
    return c;
  }
  double sum_abs = 0, dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double a = element_as_double(value, i).value_or(0), b = element_as_double(reference, i).value_or(0);
    const double d = std::fabs(a - b);
    if (!(d <= c.max_abs_diff)) c.max_abs_diff = d;  // NaN propagates
    sum_abs += d;
    dot += a * b;
    na += a * a;
    nb += b * b;
  }
  c.count = count;
  c.mean_abs_diff = count > 0 ? sum_abs / static_cast<double>(count) : 0;
  if (na > 0 && nb > 0) {
    c.cosine = dot / (std::sqrt(na) * std::sqrt(nb));
  } else {
    c.cosine = na == nb ? 1.0 : 0.0;
  }
  return c;
}

std::string render_text(const RunReport& report) {
  std::ostringstream out;
  out << "model: " << report.model << "\n";
  out << "backends: " << join(report.backends, ", ") << "\n";
  for (const InputReport& input : report.inputs) {
    out << "input " << input.name << ": " << dtype_name(input.dtype) << " " << shape_to_string(input.shape) << " "
        << (input.file.empty() ? std::string("(generated)") : "from " + input.file) << "\n";
  }
  if (report.benchmark) {
    const BenchmarkReport& bench = *report.benchmark;
    const LatencySummary& l = bench.latency;
    out << "benchmark: " << l.count << " iterations after " << bench.warmup << " warmup runs\n";
    out << "latency (ms): p50 " << format_ms(l.p50) << "  p90 " << format_ms(l.p90) << "  p99 " << format_ms(l.p99)
        << "  mean " << format_ms(l.mean) << "  min " << format_ms(l.min) << "  max " << format_ms(l.max) << "\n";
    out << "throughput: " << format_rate(bench.throughput_per_s) << " runs/s";
    if (bench.batch_size && *bench.batch_size > 0) {
      out << ", " << format_rate(bench.throughput_per_s * static_cast<double>(*bench.batch_size))
          << " samples/s (batch " << *bench.batch_size << ")";
    }
    out << "\n";
    if (report.peak_rss_mb) out << "peak RSS: " << format_rate(*report.peak_rss_mb) << " MB\n";
    for (const OutputReport& output : report.outputs) {
      out << "output " << output.name << ": " << dtype_name(output.value.dtype) << " "
          << shape_to_string(output.value.shape);
      if (!output.file.empty()) out << " -> " << output.file;
      out << "\n";
    }
  } else {
    for (const OutputReport& output : report.outputs) out << render_output(output);
    out << "run: " << format_ms(report.run_ms) << " ms\n";
  }
  if (report.run_stats) out << render_run_stats(*report.run_stats) << "\n";
  for (const RunReport::PrecisionComparison& c : report.comparisons) {
    out << "output " << c.name << " (" << precision_name(report.precision) << ") vs fp32: ";
    if (!c.problem.empty()) {
      out << "not compared: " << c.problem << "\n";
      continue;
    }
    char line[160];
    std::snprintf(line, sizeof line, "max abs diff %.3g, mean abs diff %.3g, cosine %.6f (%lld values)\n",
                  c.max_abs_diff, c.mean_abs_diff, c.cosine, static_cast<long long>(c.count));
    out << line;
  }
  return out.str();
}

std::string render_json(const RunReport& report) {
  JsonWriter json;
  json.begin_object();
  json.key("model").value(report.model);
  json.key("backends").begin_array();
  for (const std::string& backend : report.backends) json.value(backend);
  json.end_array();
  json.key("inputs").begin_array();
  for (const InputReport& input : report.inputs) {
    json.begin_object().key("name").value(input.name).key("dtype").value(std::string(dtype_name(input.dtype)));
    json.key("shape");
    write_shape(json, input.shape);
    json.key("file");
    if (input.file.empty()) {
      json.null();
    } else {
      json.value(input.file);
    }
    json.end_object();
  }
  json.end_array();
  json.key("outputs").begin_array();
  for (const OutputReport& output : report.outputs) {
    json.begin_object()
        .key("name").value(output.name)
        .key("dtype").value(std::string(dtype_name(output.value.dtype)));
    json.key("shape");
    write_shape(json, output.value.shape);
    if (!output.file.empty()) json.key("file").value(output.file);
    json.end_object();
  }
  json.end_array();
  if (report.benchmark) {
    const BenchmarkReport& bench = *report.benchmark;
    json.key("iterations").value(bench.latency.count);
    json.key("warmup").value(bench.warmup);
    json.key("latency_ms").begin_object()
        .key("p50").value(bench.latency.p50)
        .key("p90").value(bench.latency.p90)
        .key("p99").value(bench.latency.p99)
        .key("mean").value(bench.latency.mean)
        .key("min").value(bench.latency.min)
        .key("max").value(bench.latency.max)
        .end_object();
    json.key("throughput_per_s").value(bench.throughput_per_s);
    if (bench.batch_size) {
      json.key("batch_size").value(*bench.batch_size);
      json.key("samples_per_s").value(bench.throughput_per_s * static_cast<double>(*bench.batch_size));
    }
  } else {
    json.key("run_ms").value(report.run_ms);
  }
  json.key("peak_rss_mb");
  if (report.peak_rss_mb) {
    json.value(*report.peak_rss_mb);
  } else {
    json.null();
  }
  if (report.plan != nullptr) {
    json.key("plan");
    write_plan(json, *report.plan);
  }
  if (report.run_stats) {
    json.key("run_stats").begin_object()
        .key("copies").value(report.run_stats->copies)
        .key("copy_bytes").value(report.run_stats->copy_bytes)
        .key("wall_ms").value(report.run_stats->wall_ms)
        .end_object();
  }
  if (!report.comparisons.empty()) {
    json.key("precision_comparison").begin_object()
        .key("precision").value(precision_name(report.precision))
        .key("reference").value("fp32")
        .key("outputs").begin_array();
    for (const RunReport::PrecisionComparison& c : report.comparisons) {
      json.begin_object().key("name").value(c.name);
      if (!c.problem.empty()) {
        json.key("problem").value(c.problem);
      } else {
        json.key("count").value(c.count)
            .key("max_abs_diff").value(c.max_abs_diff)
            .key("mean_abs_diff").value(c.mean_abs_diff)
            .key("cosine").value(c.cosine);
      }
      json.end_object();
    }
    json.end_array().end_object();
  }
  json.end_object();
  return json.str() + "\n";
}

std::string render_devices(const std::vector<BackendDevices>& backends, bool json) {
  if (json) {
    JsonWriter w;
    w.begin_object().key("backends").begin_array();
    for (const BackendDevices& b : backends) {
      w.begin_object()
          .key("backend")
          .value(b.backend)
          .key("plugin_path")
          .value(b.plugin_path)
          .key("version")
          .value(b.version)
          .key("description")
          .value(b.description)
          .key("devices")
          .begin_array();
      for (const DeviceInfo& d : b.devices)
        w.begin_object()
            .key("index")
            .value(static_cast<int64_t>(d.index))
            .key("name")
            .value(d.name)
            .key("vendor")
            .value(d.vendor)
            .key("kind")
            .value(d.kind)
            .key("memory_bytes")
            .value(static_cast<int64_t>(d.memory_bytes))
            .key("compute_units")
            .value(static_cast<int64_t>(d.compute_units))
            .key("host_addressable")
            .value(d.host_addressable)
            .end_object();
      w.end_array().key("unavailable");
      if (b.unavailable.empty()) {
        w.null();
      } else {
        w.value(b.unavailable);
      }
      w.end_object();
    }
    w.end_array().end_object();
    return w.str() + "\n";
  }
  std::ostringstream out;
  if (backends.empty()) out << "no backend plugins found\n";
  for (const BackendDevices& b : backends) {
    out << b.backend << ": " << b.plugin_path;
    if (!b.version.empty()) out << " (version " << b.version << ")";
    out << "\n";
    for (const DeviceInfo& d : b.devices) {
      out << "  device " << d.index << ": " << d.name << " [" << d.kind;
      if (d.memory_bytes > 0) {
        char mem[32];
        std::snprintf(mem, sizeof mem, "%.1f GiB",
                      static_cast<double>(d.memory_bytes) / (1024.0 * 1024 * 1024));
        out << ", " << mem;
      }
      if (d.compute_units > 0)
        out << ", " << d.compute_units
            << (d.compute_units == 1 ? " compute unit" : " compute units");
      if (!d.vendor.empty()) out << ", vendor " << d.vendor;
      out << "]\n";
    }
    if (b.devices.empty())
      out << "  " << (b.version.empty() ? "refused: " : "no device: ") << printable(b.unavailable)
          << "\n";
  }
  return out.str();
}

std::string render_plan_json(const PlanReport& plan) {
  JsonWriter json;
  write_plan(json, plan);
  return json.str();
}

}  // namespace infer::cli
