#include "config/deployment_schema.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace infer::config::detail {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Backend names become plugin library names and command-line values ("--backends a,b"),
// so they are held to characters that are safe in both.
bool is_backend_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> read_backend_name(const SchemaReader& reader, const Field& field) {
  if (!field.node.IsScalar() || !is_backend_name(field.node.Scalar())) {
    return reader.expected(field, "a backend name of lowercase letters, digits and '_' ([a-z0-9_]+)");
  }
  return field.node.Scalar();
}

// Options are opaque here: only the plugin knows their meaning, so each value is kept as
// the text that was written and the plugin parses it.
Result<std::vector<std::pair<std::string, std::string>>> read_options(const SchemaReader& reader, const Field& field) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.map(field));
  std::vector<std::pair<std::string, std::string>> options;
  for (const Entry& entry : entries) {
    INFER_ASSIGN_OR_RETURN(std::string value, reader.scalar(entry.value));
    options.emplace_back(entry.key, std::move(value));
  }
  return options;
}

// A backend is written either as its bare name ("- cpu") or as a map with a name and
// options; the bare form is the common case and keeps short files short.
Result<BackendConfig> read_backend(const SchemaReader& reader, const Field& item) {
  BackendConfig backend;
  backend.line = item.line;
  if (!item.node.IsMap()) {
    if (!item.node.IsScalar())
      return reader.expected(item, "a backend name or a map with keys name, options, memory_budget_mb");
    INFER_ASSIGN_OR_RETURN(backend.name, read_backend_name(reader, item));
    return backend;
  }
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                         reader.record(item, {"name", "options", "memory_budget_mb"}));
  for (const Entry& entry : entries) {
    if (entry.key == "name") {
      INFER_ASSIGN_OR_RETURN(backend.name, read_backend_name(reader, entry.value));
    } else if (entry.key == "memory_budget_mb") {
      // A budget for the partitioner, not an option of the plugin: it is kept apart so
      // that plugins never see a key they do not know. The cap (2^40 MiB) keeps the byte
      // count within int64.
      INFER_ASSIGN_OR_RETURN(int64_t mb, reader.integer(entry.value, 1, int64_t{1} << 40));
      backend.memory_budget_mb = mb;
    } else {
      INFER_ASSIGN_OR_RETURN(backend.options, read_options(reader, entry.value));
    }
  }
  if (backend.name.empty()) return reader.error(item.line, "'" + item.path + "' is missing the required key 'name'");
  return backend;
}

Status read_model(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(config.model, reader.path(field));
  return Status::ok();
}

Status read_backends(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Field> items, reader.list(field));
  // The list is a priority order, so a repeated name has no meaning and is likely a typo.
  std::map<std::string, int> first_line;
  for (const Field& item : items) {
    INFER_ASSIGN_OR_RETURN(BackendConfig backend, read_backend(reader, item));
    const auto [seen, inserted] = first_line.emplace(backend.name, backend.line);
    if (!inserted) {
      return reader.error(item.line, "duplicate backend '" + backend.name + "' in 'backends' (first listed on line " +
                                         std::to_string(seen->second) + ")");
    }
    config.backends.push_back(std::move(backend));
  }
  return Status::ok();
}

Status read_threads(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(int64_t threads, reader.integer(field, 1, kIntMax));
  config.threads = static_cast<int>(threads);
  return Status::ok();
}

Status read_micro_batches(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(int64_t count, reader.integer(field, 1, kIntMax));
  config.micro_batches = static_cast<int>(count);
  return Status::ok();
}

Status read_precision(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::string text, reader.string(field));
  Precision p;
  if (!parse_precision(text, &p)) return reader.expected(field, "one of fp32, bf16, fp16");
  config.precision = p;
  return Status::ok();
}

Status read_trace(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(config.trace, reader.path(field));
  return Status::ok();
}

// The partitioner's knobs. They are host-side (no plugin sees them) and each has a
// SessionOptions default, so a missing key keeps that default.
Status read_partitioner(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                         reader.record(field, {"cost_model", "min_island_nodes", "assumed_symbolic_dim"}));
  PartitionerConfig& out = config.partitioner;
  for (const Entry& entry : entries) {
    if (entry.key == "cost_model") {
      INFER_ASSIGN_OR_RETURN(bool on, reader.boolean(entry.value));
      out.cost_model = on;
    } else if (entry.key == "min_island_nodes") {
      INFER_ASSIGN_OR_RETURN(int64_t nodes, reader.integer(entry.value, 1, kIntMax));
      out.min_island_nodes = nodes;
    } else {
      INFER_ASSIGN_OR_RETURN(int64_t dim, reader.integer(entry.value, 1, kIntMax));
      out.assumed_symbolic_dim = dim;
    }
  }
  return Status::ok();
}

Status read_optimization(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.record(field, {"level", "disabled_passes"}));
  for (const Entry& entry : entries) {
    if (entry.key == "level") {
      INFER_ASSIGN_OR_RETURN(int64_t level, reader.integer(entry.value, 0, 3));
      config.optimization_level = static_cast<int>(level);
      continue;
    }
    INFER_ASSIGN_OR_RETURN(std::vector<Field> passes, reader.list(entry.value));
    for (const Field& pass : passes) {
      INFER_ASSIGN_OR_RETURN(std::string name, reader.string(pass));
      config.disabled_passes.push_back(std::move(name));
    }
  }
  return Status::ok();
}

Status read_placement(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.map(field));
  for (const Entry& entry : entries) {
    INFER_ASSIGN_OR_RETURN(std::string backend, read_backend_name(reader, entry.value));
    config.placement.push_back(PlacementPin{entry.key, std::move(backend), entry.key_line});
  }
  return Status::ok();
}

Status read_plugins(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.record(field, {"search_paths"}));
  for (const Entry& entry : entries) {
    INFER_ASSIGN_OR_RETURN(std::vector<Field> paths, reader.list(entry.value));
    for (const Field& path : paths) {
      INFER_ASSIGN_OR_RETURN(std::string resolved, reader.path(path));
      config.plugin_search_paths.push_back(std::move(resolved));
    }
  }
  return Status::ok();
}

Status read_strict(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(bool strict, reader.boolean(field));
  config.strict = strict;
  return Status::ok();
}

// An empty shape would mean "not given" in InputSpec, so `shape: []` is refused rather
// than silently read as absent.
Result<std::vector<int64_t>> read_shape(const SchemaReader& reader, const Field& field) {
  INFER_ASSIGN_OR_RETURN(std::vector<Field> items, reader.list(field));
  if (items.empty()) {
    return reader.error(field.line, "'" + field.path +
                                        "' must list at least one dimension (leave it out to take the shape "
                                        "from the file)");
  }
  std::vector<int64_t> shape;
  for (const Field& item : items) {
    INFER_ASSIGN_OR_RETURN(int64_t dim, reader.integer(item, 0, kInt64Max));
    shape.push_back(dim);
  }
  return shape;
}

Result<InputSpec> read_input(const SchemaReader& reader, const Entry& entry) {
  InputSpec input;
  input.name = entry.key;
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.record(entry.value, {"file", "shape"}));
  for (const Entry& spec : entries) {
    if (spec.key == "file") {
      INFER_ASSIGN_OR_RETURN(input.file, reader.path(spec.value));
    } else {
      INFER_ASSIGN_OR_RETURN(input.shape, read_shape(reader, spec.value));
    }
  }
  // An input that says nothing is almost certainly a half-written entry.
  if (input.file.empty() && input.shape.empty()) {
    return reader.error(entry.value.line, "'" + entry.value.path + "' must give 'file', 'shape' or both");
  }
  return input;
}

Status read_inputs(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.map(field));
  for (const Entry& entry : entries) {
    INFER_ASSIGN_OR_RETURN(InputSpec input, read_input(reader, entry));
    config.inputs.push_back(std::move(input));
  }
  return Status::ok();
}

// A served model's name becomes a URL path segment (/v2/models/<name>) and a metric
// label, so it is held to characters that need no escaping in either.
Status read_name(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::string name, reader.string(field));
  if (!is_model_name(name)) {
    return reader.expected(field,
                           "a model name of letters, digits, '_', '-' and '.' (at most 128)");
  }
  config.name = std::move(name);
  return Status::ok();
}

Status read_version(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(int64_t version, reader.integer(field, 1, kInt64Max));
  config.version = version;
  return Status::ok();
}

Status read_instances(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(int64_t count, reader.integer(field, 1, 1024));
  config.instances = static_cast<int>(count);
  return Status::ok();
}

Status read_server(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                         reader.record(field, {"host", "http_port", "grpc_port", "max_request_mb",
                                               "idle_timeout_s", "drain_timeout_s"}));
  ServerConfig& out = config.server;
  for (const Entry& entry : entries) {
    if (entry.key == "host") {
      INFER_ASSIGN_OR_RETURN(out.host, reader.string(entry.value));
    } else if (entry.key == "http_port" || entry.key == "grpc_port") {
      INFER_ASSIGN_OR_RETURN(int64_t port, reader.integer(entry.value, 1, 65535));
      (entry.key == "http_port" ? out.http_port : out.grpc_port) = static_cast<int>(port);
    } else if (entry.key == "max_request_mb") {
      INFER_ASSIGN_OR_RETURN(int64_t mb, reader.integer(entry.value, 1, 1 << 20));
      out.max_request_mb = mb;
    } else if (entry.key == "idle_timeout_s") {
      INFER_ASSIGN_OR_RETURN(int64_t s, reader.integer(entry.value, 1, 86400));
      out.idle_timeout_s = s;
    } else {
      INFER_ASSIGN_OR_RETURN(int64_t s, reader.integer(entry.value, 0, 86400));
      out.drain_timeout_s = s;
    }
  }
  return Status::ok();
}

// Triton's dynamic_batching fields. Preferred sizes are checked against the maximum here,
// so a file that could never form its preferred batch is refused where it is written.
Status read_batching(const SchemaReader& reader, const Field& field, DeploymentConfig& config) {
  INFER_ASSIGN_OR_RETURN(
      std::vector<Entry> entries,
      reader.record(field, {"max_batch_size", "preferred_batch_size", "max_queue_delay_us",
                            "max_queue_size", "timeout_us"}));
  BatchingConfig& out = config.batching;
  out.given = true;
  out.line = field.line;
  int preferred_line = 0;
  for (const Entry& entry : entries) {
    if (entry.key == "max_batch_size") {
      INFER_ASSIGN_OR_RETURN(int64_t size, reader.integer(entry.value, 0, 1 << 20));
      out.max_batch_size = size;
    } else if (entry.key == "preferred_batch_size") {
      preferred_line = entry.value.line;
      INFER_ASSIGN_OR_RETURN(std::vector<Field> items, reader.list(entry.value));
      for (const Field& item : items) {
        INFER_ASSIGN_OR_RETURN(int64_t size, reader.integer(item, 1, 1 << 20));
        if (!out.preferred_batch_size.empty() && size <= out.preferred_batch_size.back()) {
          return reader.error(item.line, "'" + entry.value.path +
                                             "' must list sizes in ascending order, each once");
        }
        out.preferred_batch_size.push_back(size);
      }
    } else if (entry.key == "max_queue_delay_us") {
      INFER_ASSIGN_OR_RETURN(int64_t us, reader.integer(entry.value, 0, int64_t{3600} * 1000000));
      out.max_queue_delay_us = us;
    } else if (entry.key == "max_queue_size") {
      INFER_ASSIGN_OR_RETURN(int64_t size, reader.integer(entry.value, 1, 1 << 24));
      out.max_queue_size = size;
    } else {
      INFER_ASSIGN_OR_RETURN(int64_t us, reader.integer(entry.value, 0, int64_t{3600} * 1000000));
      out.timeout_us = us;
    }
  }
  if (!out.preferred_batch_size.empty()) {
    const int64_t max = out.max_batch_size.value_or(0);
    if (out.preferred_batch_size.back() > max) {
      return reader.error(preferred_line, "'batching.preferred_batch_size' lists " +
                                              std::to_string(out.preferred_batch_size.back()) +
                                              ", more than batching.max_batch_size (" +
                                              std::to_string(max) + ")");
    }
  }
  return Status::ok();
}

// The top-level keys, in the order error messages list them. One table, so the keys the
// reader accepts and the keys a message suggests cannot drift apart.
struct Section {
  std::string_view key;
  Status (*read)(const SchemaReader&, const Field&, DeploymentConfig&);
};

constexpr std::array<Section, 17> kSections{{
    {"model", read_model},
    {"backends", read_backends},
    {"threads", read_threads},
    {"optimization", read_optimization},
    {"precision", read_precision},
    {"placement", read_placement},
    {"plugins", read_plugins},
    {"strict", read_strict},
    {"inputs", read_inputs},
    {"micro_batches", read_micro_batches},
    {"trace", read_trace},
    {"partitioner", read_partitioner},
    {"name", read_name},
    {"version", read_version},
    {"instances", read_instances},
    {"server", read_server},
    {"batching", read_batching},
}};

}  // namespace

Result<DeploymentConfig> read_deployment(const SchemaReader& reader, const Field& root) {
  std::vector<std::string_view> keys;
  for (const Section& section : kSections) keys.push_back(section.key);
  INFER_ASSIGN_OR_RETURN(std::vector<Entry> entries, reader.record(root, keys));

  DeploymentConfig config;
  for (const Entry& entry : entries) {
    for (const Section& section : kSections) {
      if (section.key == entry.key) INFER_RETURN_IF_ERROR(section.read(reader, entry.value, config));
    }
  }
  return config;
}

}  // namespace infer::config::detail

namespace infer::config {

bool is_model_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace infer::config
