// What the partitioner is told about each backend: its capability answer for every node
// of the graph, as plain data. The runtime collects the answers through the plugin host;
// the partitioner never talks to a plugin (it does not depend on the runtime).
#pragma once

#include <cstdint>
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
  bool supported() const { return support != Support::kNo; }
};

struct BackendCapabilities {
  std::string name;
  // True when the backend's device memory can be read and written by the host directly:
  // graph inputs and outputs then need no copy to or from it.
  bool host_addressable = true;
  // True for "cpu" when the runtime appended it as the implicit last fallback (rather
  // than the user listing it); only changes how reasons read.
  bool implicit_fallback = false;
  // One answer per graph node, indexed by NodeId.
  std::vector<NodeCapability> nodes;
};

// A placement pin: node `node` must run on backend `backend`.
struct Pin {
  std::string node;
  std::string backend;
};

}  // namespace infer::partitioner
