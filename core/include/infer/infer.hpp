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
  // Reads the caller's `size_bytes` bytes in place, without copying them (checked like
  // from_bytes). `owner` is kept alive as long as any copy of the tensor (a numpy array,
  // a mapped file): the bytes must stay valid and unchanged until then. Session::run only
  // reads its input tensors, so a borrowed input is never written.
  static Result<Tensor> borrow(DataType dtype, std::vector<int64_t> shape, const void* data,
                               size_t size_bytes, std::shared_ptr<const void> owner);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t element_count() const;
  size_t size_bytes() const { return size_; }
  const void* data() const { return data_.get(); }
  // The bytes to write. For a borrowed tensor these are the owner's bytes.
  void* mutable_data() { return data_.get(); }
  template <typename T>
  const T* data_as() const { return static_cast<const T*>(data()); }
  template <typename T>
  T* mutable_data_as() { return static_cast<T*>(mutable_data()); }
  // True when the bytes belong to an owner given to borrow() (or to a copy of such a
  // tensor), false when the tensor allocated them.
  bool borrowed() const { return borrowed_; }
  Tensor clone() const;  // always owns a copy of the bytes

  // Keeps the bytes alive: an application that hands data() to code outside C++ (a
  // numpy array, a foreign buffer) holds this as the owner for as long as it reads them.
  std::shared_ptr<const void> keep_alive() const { return data_; }

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<uint8_t> data_;  // null for a default-constructed tensor
  size_t size_ = 0;
  bool borrowed_ = false;
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
  // Host-side, not passed to the plugin: the partitioner keeps the constants plus peak
  // activations it places on this backend under this many MiB, spilling the latest nodes
  // to the next backend. <= 0: no budget.
  int64_t memory_budget_mb = 0;
};

// The arithmetic precision a session allows for float32 nodes (the deployment file's
// `precision`, --precision). kFp32: as the model says. kBf16 / kFp16: backends may compute
// the products of float32 matrix multiplications and convolutions with inputs rounded
// to bfloat16 / float16, accumulating in float32; values between nodes, Softmax,
// normalization statistics and the outputs stay float32. A backend without such
// arithmetic computes in float32; the plan report lists what runs narrower.
enum class Precision { kFp32 = 0, kBf16 = 1, kFp16 = 2 };
// "fp32", "bf16", "fp16".
inline const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
  }
  return "fp32";
}

// Parses "fp32"/"float32", "bf16"/"bfloat16", "fp16"/"float16"; false for anything else.
inline bool parse_precision(const std::string& text, Precision* out) {
  if (text == "fp32" || text == "float32") {
    *out = Precision::kFp32;
  } else if (text == "bf16" || text == "bfloat16") {
    *out = Precision::kBf16;
  } else if (text == "fp16" || text == "float16") {
    *out = Precision::kFp16;
  } else {
    return false;
  }
  return true;
}

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
  Precision precision = Precision::kFp32;
  // When set, the graph as it will run (after optimization and after any fused op no
  // backend claimed was decomposed again) is written there as an ONNX file.
  std::string dump_graph_path;
  // Folders searched for plugins before $INFER_PLUGIN_PATH and the installed location:
  // --plugin-dir entries first, then the YAML plugins.search_paths.
  std::vector<std::string> plugin_dirs;
  std::vector<BackendOptions> backend_options;
  std::vector<PlacementPin> placement;
  // The partitioner's cost model: moves small islands and boundary nodes to another
  // backend when the estimated compute and transfer times say it pays (DESIGN.md §4).
  // False: placement by backend priority, pins and memory budgets only.
  bool cost_model = true;
  // With the cost model: an island (connected nodes of one backend between regions of
  // others) with fewer nodes than this is considered for moving as a whole to a
  // neighbour; 0 or 1 turns island merging off.
  size_t min_island_nodes = 3;
  // With the cost model: when > 0, symbolic dims (e.g. a `batch` input dim) count as this
  // size, so a model with a symbolic batch can be priced; 0 leaves sizes that depend on
  // them unknown, and no move that needs them is made.
  int64_t assumed_symbolic_dim = 0;
  LogSink log_sink;                 // default: warnings and errors to stderr
  LogLevel log_level = LogLevel::kWarning;
  // Splits every run's batch (dim 0 of every input) into this many equal micro-batches,
  // pipelined through the plan so that the copies of one overlap the compute of
  // another, and joins the outputs along dim 0 again. 1: no split. With more, every
  // model input and output must have a symbolic dim 0 (checked by Session::create), and
  // each run's batch must divide by it.
  int micro_batches = 1;
  // When set, every run's steps are recorded and written there as Chrome trace JSON
  // (chrome://tracing, ui.perfetto.dev): one track per device queue. Written by
  // Session::write_trace and when the session is destroyed.
  std::string trace_path;
};

// What the partitioner decided, for --explain.
struct NodePlacement {
  std::string node;
  std::string op_type;
  std::string domain;
  std::string backend;
  // "cpu: supported", "cpu: fallback (example: unsupported op Softmax)", "moved to cpu:
  // example island of 1 node (Relu) under the minimum of 3; a 3.1 MiB transfer (210.0 us)
  // costs more than the 12.0 us it saves on example", "example: supported; kept: moving
  // to cpu saves 50.0 us but adds a 1.2 MiB transfer (300.0 us)".
  std::string reason;
  double est_time_us = -1;  // the cost model's estimate on `backend`; < 0 when unknown
  bool pinned = false;      // placed by a placement pin
  bool moved = false;       // not on its priority backend (memory budget or cost model)
};

struct PartitionSummary {
  std::string name;
  std::string backend;
  size_t node_count = 0;
  double est_time_us = -1;  // sum of its nodes' estimates; < 0 when one is unknown
};

struct CopySummary {
  std::string tensor;
  std::string from_backend;
  std::string to_backend;
  int64_t bytes = -1;       // -1 when the shape is symbolic until a run
  double est_time_us = -1;  // the link's estimate; < 0 when unknown
};

// The cost model's totals for one backend the session uses.
struct BackendSummary {
  std::string backend;
  size_t partitions = 0;
  size_t nodes = 0;
  double est_compute_us = 0;          // sum of the known node estimates
  size_t nodes_without_estimate = 0;  // not in est_compute_us
  // Constants plus peak activations resident on the backend (values of known size), and
  // how many resident values have a size known only at run time.
  int64_t est_memory_bytes = 0;
  size_t memory_values_of_unknown_size = 0;
  int64_t memory_budget_bytes = -1;  // < 0: no budget
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
  // Float16/bfloat16 nodes computed in float32, with casts at their edges, because no
  // backend runs them at their own precision: "node 'conv1' (Conv): float16 -> float32
  // (cpu: Conv does not support dtype float16 (input 0 'x'); cpu runs it in float32)",
  // then a line counting the Cast nodes and float32 constants added.
  std::vector<std::string> precision;
  // The session's requested precision, and the nodes a backend computes narrower than
  // their dtypes because of it: "node 'conv1' (Conv): bfloat16 on cpu".
  Precision requested_precision = Precision::kFp32;
  std::vector<std::string> reduced_precision;
  // Listed backends left out because their plugin has no device, with its reason:
  // "cuda: no CUDA driver: libcuda.so.1: cannot open shared object file".
  std::vector<std::string> unavailable_backends;
  // Per backend that runs a partition, in priority order; empty for a report not built
  // by a session (then to_text() prints no estimates).
  std::vector<BackendSummary> backends;
  double est_transfer_us = 0;          // sum of the copies' known estimates
  size_t copies_without_estimate = 0;  // copies whose time is unknown
  // Small islands and boundary nodes the cost model could not price (sizes known only
  // at run time, or no link estimate), left where priority placed them.
  size_t undecided_placements = 0;

  // Copies and bytes per run: bytes of the copies whose size is static, and how many
  // copies have a size known only at run time.
  struct CopyTotals {
    size_t copies = 0;
    int64_t known_bytes = 0;
    size_t unknown_size = 0;
  };
  CopyTotals copy_totals() const;
  std::string to_text() const;      // the --explain rendering
};

// What one run did, for --explain and benchmarks.
struct RunStats {
  size_t copies = 0;
  size_t copy_bytes = 0;
  double wall_ms = 0;
  size_t micro_batches = 1;  // the micro-batches the run was split into (1: not split)
};

// One device of a backend plugin, as the plugin describes it.
struct DeviceInfo {
  size_t index = 0;  // the plugin's device number
  std::string name;  // "AMD EPYC 9B45 (AVX-512)", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;
  std::string kind;           // "cpu", "gpu" or "accelerator"
  uint64_t memory_bytes = 0;  // 0 when the plugin does not know
  uint32_t compute_units = 0;
  bool host_addressable = false;  // the host reads its buffers directly
};

// A plugin found by discovery and what it offers: its devices, or why it has none.
struct BackendDevices {
  std::string backend;      // the plugin's name: what --backends takes
  std::string plugin_path;  // the file it was loaded from
  std::string version;      // the plugin's own version string
  std::string description;
  std::vector<DeviceInfo> devices;
  // Why there is no device (the plugin's reason, "plugin 'vulkan': no Vulkan driver"),
  // or why the file was refused ("wrong ABI major: ..."); "" when there are devices.
  std::string unavailable;
};

// Every plugin that discovery finds (plugin_dirs in order, then $INFER_PLUGIN_PATH, then
// <exe>/../lib/infer/plugins; the first of each name), sorted by name, each created
// once to list its devices, and after them the files that looked like plugins but were
// refused. Never fails: what cannot be listed says why in `unavailable`.
std::vector<BackendDevices> list_devices(const std::vector<std::string>& plugin_dirs = {},
                                         const LogSink& log_sink = {});

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

  // Writes the trace of the runs so far to SessionOptions::trace_path (replacing the
  // file). Fails when no trace_path was set, or naming the file it cannot write.
  virtual Status write_trace() { return invalid_argument("write_trace: no trace_path was set"); }

  virtual const PlanReport& plan() const = 0;
  // Backends that received at least one partition, in priority order.
  virtual std::vector<std::string> active_backends() const = 0;
};

}  // namespace infer
