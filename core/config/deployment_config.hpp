// The deployment file: one YAML document that says which model to run, on which
// backends in which order, and how (threads, optimization, pins, plugins, inputs).
// The schema is documented for users in configs/README.md; keep the two in step.
//
// This header is the whole public surface of infer::config. It deliberately names no
// yaml-cpp type, so users of the model do not inherit the parser as a dependency.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "infer/infer.hpp"
#include "infer/status.hpp"

namespace infer::config {

// One entry of `backends:`. Options are kept as the strings that were written, because
// only the plugin knows what they mean; it receives them through the host services.
struct BackendConfig {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;  // in file order
  int line = 0;  // 1-based line of the entry, for later diagnostics (0 = not from a file)
  // `memory_budget_mb`: host-side (never passed to the plugin), the MiB of constants and
  // peak activations the partitioner may place on this backend; >= 1 when given.
  std::optional<int64_t> memory_budget_mb;
};

// One entry of `inputs:`: where a named model input comes from and what shape it has.
struct InputSpec {
  std::string name;
  std::vector<int64_t> shape;  // empty = not given
  std::string file;            // "" = not given; otherwise resolved like `model`
};

// One entry of `placement:`: node `node` must run on backend `backend`.
struct PlacementPin {
  std::string node;
  std::string backend;
  int line = 0;  // 1-based line of the pin (0 = not from a file)
};

// `partitioner:`: knobs of the cost-driven placement (SessionOptions has the defaults).
struct PartitionerConfig {
  std::optional<bool> cost_model;              // false: priority, pins and budgets only
  std::optional<int64_t> min_island_nodes;     // >= 1; islands smaller than this may move
  std::optional<int64_t> assumed_symbolic_dim; // >= 1; size the cost model gives symbolic dims
};

// `server:`: how infer-serve listens (command-line flags win). Ports are 1..65535.
struct ServerConfig {
  std::string host;  // address to bind; "" = not given
  std::optional<int> http_port;
  std::optional<int> grpc_port;
  std::optional<int64_t> max_request_mb;   // >= 1: largest request body accepted
  std::optional<int64_t> idle_timeout_s;   // >= 1: a connection silent this long is closed
  std::optional<int64_t> drain_timeout_s;  // >= 0: on SIGTERM, wait this long for queued work
};

// `batching:`: infer-serve's dynamic batcher for this model (Triton's dynamic_batching).
struct BatchingConfig {
  bool given = false;                         // the block was written
  int line = 0;                               // 1-based line of `batching:`
  std::optional<int64_t> max_batch_size;      // >= 0; 0 turns batching off
  std::vector<int64_t> preferred_batch_size;  // each in [1, max_batch_size], ascending
  std::optional<int64_t> max_queue_delay_us;  // >= 0
  std::optional<int64_t> max_queue_size;      // >= 1
  std::optional<int64_t> timeout_us;          // >= 0; 0 = requests never time out in the queue
};

// A parsed and validated deployment file. Absent keys keep their empty or nullopt value,
// so the caller can tell "not given" (use the built-in default or a CLI flag) from
// "given" and decide precedence itself.
struct DeploymentConfig {
  std::string source;                            // the YAML file path ("" when parsed from a string)
  std::string model;                             // resolved against the YAML file's folder; "" if absent
  std::vector<BackendConfig> backends;           // in priority order
  std::optional<int> threads;                    // >= 1
  std::optional<int> optimization_level;         // 0..3
  std::vector<std::string> disabled_passes;      // optimizer pass names, as written
  std::optional<Precision> precision;            // fp32 | bf16 | fp16
  std::vector<PlacementPin> placement;           // in file order
  std::vector<std::string> plugin_search_paths;  // resolved against the YAML file's folder
  std::optional<bool> strict;                    // true: no implicit cpu fallback for unclaimed nodes
  std::optional<int> micro_batches;              // >= 1; splits each run's batch (SessionOptions)
  std::vector<InputSpec> inputs;                 // in file order
  std::string trace;                             // Chrome trace file, resolved like `model`; "" if absent
  PartitionerConfig partitioner;
  // infer-serve only (infer-run and the Python module ignore them).
  std::string name;                // the model's name when served; "" = not given
  std::optional<int64_t> version;  // >= 1; the served version
  std::optional<int> instances;    // >= 1; sessions serving the model at once
  ServerConfig server;
  BatchingConfig batching;
};

// Whether `name` may name a served model (the `name:` key): 1 to 128 letters, digits,
// '_', '-' and '.', not "." or "..": it becomes a URL path segment and a metric label.
bool is_model_name(const std::string& name);

// Reads and validates the deployment file at `path`. Relative paths inside it are
// resolved against the file's folder. A missing file is NotFound; anything wrong inside
// it is InvalidArgument with "<path>:<line>: <what and which key>". Never throws.
Result<DeploymentConfig> load_config_file(const std::string& path);

// Parses deployment YAML held in memory. `source_name` only labels error messages
// ("<string>" when empty); `base_dir` is the folder relative paths are resolved against
// ("" leaves them relative to the working directory). The result's `source` is "".
// Never throws.
Result<DeploymentConfig> parse_config(const std::string& yaml_text, const std::string& source_name,
                                      const std::string& base_dir);

}  // namespace infer::config
