// What the partitioner is told about each backend: its capability answer for every node
// of the graph, how fast its link to the host is, how fast it computes when the plugin
// gives no estimate, and how much memory it may use - all as plain data. The runtime
// collects the answers through the plugin host; the partitioner never talks to a plugin
// (it does not depend on the runtime).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infer::partitioner {

// Mirrors the ABI's infer_support.
enum class Support { kNo = 0, kYes = 1, kPreferred = 2 };

struct NodeCapability {
  Support support = Support::kNo;
  double est_time_us = -1;        // < 0: unknown
  int64_t est_memory_bytes = -1;  // < 0: unknown
  std::string reason;             // why not, or a note on how it runs
  // The float type the backend computes the node's products in when narrower than the
  // node's dtypes under the session's precision ("bfloat16"); empty otherwise.
  std::string compute_type;
  bool supported() const { return support != Support::kNo; }
};

// One direction of a link between the host and a device: a copy of n bytes takes
// latency_us + n / bandwidth_bytes_per_us.
struct LinkCost {
  double bandwidth_bytes_per_us = 0;  // > 0
  double latency_us = 0;              // >= 0
  double time_us(int64_t bytes) const {
    return latency_us + static_cast<double>(bytes) / bandwidth_bytes_per_us;
  }
};

// How fast a backend runs a node the plugin gave no time estimate for: a roofline over
// the node's floating-point operations and the bytes it reads and writes, plus a fixed
// cost per kernel launch (see op_work.hpp).
struct Throughput {
  double flops_per_us = 0;  // > 0
  double bytes_per_us = 0;  // > 0
  double launch_us = 0;     // >= 0
};

// Rough defaults the runtime uses by device kind. They only have to rank backends the
// right way round for ops the plugins do not estimate, not to predict run times: a few
// cores with SIMD (about 20 GFLOP/s, 10 GB/s of memory bandwidth, a task spawn per
// kernel) against a discrete GPU (about 2 TFLOP/s, 200 GB/s, a dispatch and its
// synchronization per kernel).
inline constexpr Throughput kCpuThroughput{20'000, 10'000, 1.0};
inline constexpr Throughput kAcceleratorThroughput{2'000'000, 200'000, 10.0};

struct BackendCapabilities {
  std::string name;
  // True when the backend's device memory can be read and written by the host directly:
  // graph inputs and outputs then need no copy to or from it, and copies to and from the
  // host cost nothing.
  bool host_addressable = true;
  // True for "cpu" when the runtime appended it as the implicit last fallback (rather
  // than the user listing it); only changes how reasons read.
  bool implicit_fallback = false;
  // One answer per graph node, indexed by NodeId.
  std::vector<NodeCapability> nodes;

  // The link to and from the host, for a backend that is not host-addressable (measured
  // by the runtime, or the plugin's estimate). Unset: unknown, and then the cost model
  // makes no decision that depends on a copy to or from this backend.
  std::optional<LinkCost> host_to_device;
  std::optional<LinkCost> device_to_host;
  // For nodes whose capability answer has no time estimate. Unset: such nodes have an
  // unknown time on this backend.
  std::optional<Throughput> throughput;
  // Constants plus peak activations placed on this backend must stay under this many
  // bytes; < 0: no budget.
  int64_t memory_budget_bytes = -1;
};

// A placement pin: node `node` must run on backend `backend`.
struct Pin {
  std::string node;
  std::string backend;
};

}  // namespace infer::partitioner
