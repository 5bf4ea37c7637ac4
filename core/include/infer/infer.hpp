// The public C++ API for applications: load a model, run it, inspect the plan.
//
//   infer::SessionOptions opts;
//   opts.backends = {"example", "cpu"};
//   auto session = infer::Session::create("model.onnx", opts);
//   if (!session) { std::cerr << session.status().message() << "\n"; return 1; }
//   auto outputs = (*session)->run({{"image", infer::Tensor::zeros(infer::DataType::kFloat32, {1, 1, 8, 8})}});
//
// No exception escapes this API: failures come back as Status / Result<T> whose message
// names the file, node, input or field at fault.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "infer/dtype.hpp"
#include "infer/status.hpp"

namespace infer {

// A dense host tensor (row-major). Copies share the bytes; use clone() for a deep copy.
class Tensor {
 public:
  Tensor() = default;
  // Uninitialized (zero-filled) storage for `shape`.
  static Tensor zeros(DataType dtype, std::vector<int64_t> shape);
  // Copies `size_bytes` bytes; fails when they do not match dtype and shape.
  static Result<Tensor> from_bytes(DataType dtype, std::vector<int64_t> shape, const void* data,
                                   size_t size_bytes);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t element_count() const;
  size_t size_bytes() const { return bytes_ ? bytes_->size() : 0; }
  const void* data() const { return bytes_ ? bytes_->data() : nullptr; }
  void* mutable_data() { return bytes_ ? bytes_->data() : nullptr; }
  template <typename T>
  const T* data_as() const { return static_cast<const T*>(data()); }
  template <typename T>
  T* mutable_data_as() { return static_cast<T*>(mutable_data()); }
  Tensor clone() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<std::vector<uint8_t>> bytes_;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// A model input or output as declared: dims are -1 where symbolic or unknown, and
// dim_params holds the symbol ("batch") or "" for each dim.
struct TensorInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  bool rank_known = true;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
  std::string shape_string() const;  // "[batch,1,8,8]"
};

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };
using LogSink = std::function<void(LogLevel, const std::string&)>;

struct BackendOptions {
  std::string backend;
  std::vector<std::pair<std::string, std::string>> options;  // passed to the plugin
};

struct PlacementPin {
  std::string node;     // node name in the model
  std::string backend;  // must be one of SessionOptions::backends (or "cpu")
};

struct SessionOptions {
  // Backends in priority order. "cpu" is the implicit last fallback unless strict.
  std::vector<std::string> backends = {"cpu"};
  bool strict = false;  // fail listing the nodes no listed backend supports
  int threads = 0;      // 0: one per hardware thread
  // 0: none; 1: basic (folding, elimination, CSE); 2: extended (operator fusion into the
  // ai.infer domain, sdk/FUSED_OPS.md); 3: all (also layout rewrites of Transposes).
  int optimization_level = 3;
  std::vector<std::string> disabled_passes;
  // When set, the graph as it will run (after optimization and after any fused op no
  // backend claimed was decomposed again) is written there as an ONNX file.
  std::string dump_graph_path;
  // Folders searched for plugins before $INFER_PLUGIN_PATH and the installed location:
  // --plugin-dir entries first, then the YAML plugins.search_paths.
  std::vector<std::string> plugin_dirs;
  std::vector<BackendOptions> backend_options;
  std::vector<PlacementPin> placement;
  LogSink log_sink;                 // default: warnings and errors to stderr
  LogLevel log_level = LogLevel::kWarning;
};

// What the partitioner decided, for --explain.
struct NodePlacement {
  std::string node;
  std::string op_type;
  std::string domain;
  std::string backend;
  std::string reason;  // "cpu: supported", "example: unsupported op Conv; fell back to cpu"
};

struct PartitionSummary {
  std::string name;
  std::string backend;
  size_t node_count = 0;
};

struct CopySummary {
  std::string tensor;
  std::string from_backend;
  std::string to_backend;
  int64_t bytes = -1;  // -1 when the shape is symbolic until a run
};

struct PlanReport {
  std::vector<NodePlacement> nodes;
  std::vector<PartitionSummary> partitions;
  std::vector<CopySummary> copies;  // copies between devices per run (inputs and outputs included)
  // Optimizer passes that changed the graph: "constant_folding: 12 rewrites, 0.8 ms".
  std::vector<std::string> passes;
  int optimization_level = 0;
  size_t nodes_loaded = 0;       // nodes of the model as loaded
  size_t nodes_optimized = 0;    // nodes of the graph as it runs
  double optimizer_ms = 0;       // wall time of the optimizer (passes and fallbacks)
  // Fused ai.infer nodes run as their standard-operator decomposition, because no backend
  // claims them or one of higher priority runs the decomposition:
  // "node 'fc1' (ai.infer:FusedGemm): decomposed (example runs its decomposition and comes
  // before cpu)".
  std::vector<std::string> decomposed;
  std::string to_text() const;      // the --explain rendering
};

// What one run did, for --explain and benchmarks.
struct RunStats {
  size_t copies = 0;
  size_t copy_bytes = 0;
  double wall_ms = 0;
};

class Session {
 public:
  virtual ~Session() = default;

  // Loads, checks and shape-infers the model, optimizes it, partitions it over the
  // backends, and compiles each partition through its plugin.
  static Result<std::unique_ptr<Session>> create(const std::string& model_path,
                                                 const SessionOptions& options);

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;

  // Runs once. Every declared input must be given exactly once with the declared dtype
  // and a shape compatible with the declared (possibly symbolic) shape. Outputs come back
  // in declaration order. Safe to call from several threads at once.
  virtual Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs,
                                               RunStats* stats = nullptr) = 0;

  virtual const PlanReport& plan() const = 0;
  // Backends that received at least one partition, in priority order.
  virtual std::vector<std::string> active_backends() const = 0;
};

}  // namespace infer
