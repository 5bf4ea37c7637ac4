// The partitioner's cost model: what a node costs on each backend and what a copy costs
// between two backends, each either a number of microseconds or "unknown". Decisions
// that need an unknown figure are not made: the priority placement stands.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.hpp"
#include "partitioner/partition_plan.hpp"
#include "partitioner/partitioner.hpp"

namespace infer::partitioner {

class CostModel {
 public:
  // `request` must outlive the model. Precomputes every node's time on every backend:
  // the plugin's est_time_us when it gave one, else op_work's default estimate over the
  // backend's throughput, else unknown.
  explicit CostModel(const PartitionRequest& request);

  size_t backend_count() const { return request_.backends.size(); }
  const BackendCapabilities& backend(size_t b) const { return request_.backends[b]; }

  // < 0: unknown.
  double node_time_us(ir::NodeId id, size_t backend) const {
    return times_[static_cast<size_t>(id) * request_.backends.size() + backend];
  }
  // Bytes of a value, symbolic dims counted as options.assumed_symbolic_dim; -1 unknown.
  int64_t value_bytes(ir::ValueId v) const { return bytes_[v]; }
  // Whether `backend` (kHost for the host) shares memory with the host.
  bool host_addressable(size_t backend) const {
    return backend == kHost || request_.backends[backend].host_addressable;
  }
  // The time of copying `bytes` from `src` to `dst` (either may be kHost): 0 when both
  // share the host's memory, the link's estimate otherwise (through the host between
  // two devices); < 0 when a needed link or the size is unknown.
  double copy_time_us(size_t src, size_t dst, int64_t bytes) const;

 private:
  const PartitionRequest& request_;
  std::vector<double> times_;   // [node * backends + backend]
  std::vector<int64_t> bytes_;  // per value
};

}  // namespace infer::partitioner
