#include "partitioner/copy_planner.hpp"

#include <map>
#include <set>
#include <utility>

#include "partitioner/graph_deps.hpp"
#include "partitioner/op_work.hpp"

namespace infer::partitioner {

std::vector<CopyEdge> plan_copies(const ir::Graph& g, const std::vector<Partition>& partitions,
                                  const std::vector<size_t>& partition_of_node,
                                  const std::vector<BackendCapabilities>& backends) {
  const auto producers = value_producers(g);
  std::vector<CopyEdge> copies;
  std::map<std::pair<ir::ValueId, size_t>, size_t> index;  // (value, dst backend) -> copy

  auto add = [&](ir::ValueId v, size_t src_part, size_t src_backend, size_t dst_backend,
                 size_t dst_part) {
    auto [it, inserted] = index.emplace(std::make_pair(v, dst_backend), copies.size());
    if (inserted) {
      CopyEdge e;
      e.value = v;
      e.src_partition = src_part;
      e.src_backend = src_backend;
      e.dst_backend = dst_backend;
      e.bytes = value_bytes(g.value(v), /*assumed_dim=*/0);
      copies.push_back(std::move(e));
    }
    if (dst_part != kHost) copies[it->second].dst_partitions.push_back(dst_part);
  };

  for (size_t p = 0; p < partitions.size(); ++p) {
    const size_t backend = partitions[p].backend;
    for (ir::ValueId v : partitions[p].inputs) {
      const ir::NodeId producer = producers[v];
      if (producer == kNoNode) {
        if (!backends[backend].host_addressable) add(v, kHost, kHost, backend, p);
        continue;
      }
      const size_t src_part = partition_of_node[producer];
      const size_t src_backend = partitions[src_part].backend;
      if (src_backend != backend) add(v, src_part, src_backend, backend, p);
    }
  }
  std::set<ir::ValueId> done;
  for (ir::ValueId v : g.outputs) {
    if (v == ir::kNoValue || !done.insert(v).second) continue;
    const ir::NodeId producer = producers[v];
    if (producer == kNoNode) continue;  // a graph input or constant returned as is
    const size_t src_part = partition_of_node[producer];
    const size_t src_backend = partitions[src_part].backend;
    if (!backends[src_backend].host_addressable) add(v, src_part, src_backend, kHost, kHost);
  }
  return copies;
}

void copies_of_value(const ir::Graph& g, const GraphFacts& facts, ir::ValueId v,
                     const std::vector<size_t>& backend_of,
                     const std::vector<BackendCapabilities>& backends,
                     std::vector<ValueCopy>& out) {
  if (g.value(v).is_constant()) return;
  const ir::NodeId producer = facts.producers[v];
  const size_t src = producer == kNoNode ? kHost : backend_of[producer];
  const size_t first = out.size();
  for (ir::NodeId reader : facts.consumers[v]) {
    const size_t dst = backend_of[reader];
    if (dst == src) continue;
    if (src == kHost && backends[dst].host_addressable) continue;
    bool seen = false;
    for (size_t i = first; i < out.size(); ++i) seen = seen || out[i].dst == dst;
    if (!seen) out.push_back(ValueCopy{src, dst});
  }
  if (facts.is_output[v] && producer != kNoNode && !backends[src].host_addressable)
    out.push_back(ValueCopy{src, kHost});
}

}  // namespace infer::partitioner
