#include "partitioner/cost_model.hpp"

#include "partitioner/op_work.hpp"

namespace infer::partitioner {

CostModel::CostModel(const PartitionRequest& request) : request_(request) {
  const ir::Graph& g = *request.graph;
  const size_t nb = request.backends.size();
  const int64_t assumed = request.options.assumed_symbolic_dim;
  times_.assign(g.node_count() * nb, -1);
  for (ir::NodeId id = 0; id < g.node_count(); ++id) {
    // The work is computed lazily: most nodes of a large graph have a plugin estimate
    // on every backend or none at all.
    bool have_work = false;
    OpWork work;
    for (size_t b = 0; b < nb; ++b) {
      const BackendCapabilities& caps = request.backends[b];
      const NodeCapability& c = caps.nodes[id];
      double t = -1;
      if (c.est_time_us >= 0) {
        t = c.est_time_us;
      } else if (caps.throughput) {
        if (!have_work) {
          work = estimate_work(g, g.node(id), assumed);
          have_work = true;
        }
        t = default_time_us(work, *caps.throughput);
      }
      times_[static_cast<size_t>(id) * nb + b] = t;
    }
  }
  bytes_.resize(g.value_count());
  for (ir::ValueId v = 0; v < g.value_count(); ++v) bytes_[v] = partitioner::value_bytes(g.value(v), assumed);
}

double CostModel::copy_time_us(size_t src, size_t dst, int64_t bytes) const {
  double total = 0;
  // Out of a device the host cannot address, then into one: between two such devices the
  // copy is staged through the host.
  if (!host_addressable(src)) {
    const auto& link = request_.backends[src].device_to_host;
    if (!link || bytes < 0) return -1;
    total += link->time_us(bytes);
  }
  if (!host_addressable(dst)) {
    const auto& link = request_.backends[dst].host_to_device;
    if (!link || bytes < 0) return -1;
    total += link->time_us(bytes);
  }
  return total;
}

}  // namespace infer::partitioner
