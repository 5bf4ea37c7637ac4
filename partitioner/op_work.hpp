// The default time estimate of a node, for backends whose plugin gives none: the work a
// node does (floating-point operations and bytes moved) computed from the IR, divided by
// a backend's throughput. Only the common heavy ops get a FLOP count of their own (Conv,
// ConvTranspose, MatMul, Gemm and their quantized and ai.infer fused forms, Attention);
// every other op counts one operation per output element, so its time is dominated by
// the bytes it reads and writes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.hpp"
#include "partitioner/capability.hpp"

namespace infer::partitioner {

// The dims of `v` with every unknown dim replaced by `assumed_dim`; nullopt when the rank
// is unknown, or when a dim is unknown and `assumed_dim` <= 0.
std::optional<std::vector<int64_t>> resolved_dims(const ir::Value& v, int64_t assumed_dim);

// Bytes of `v`: a constant's data size, else its dtype times its element count (with
// `assumed_dim` as for resolved_dims). -1 when unknown (unknown dims, strings, undefined
// dtype).
int64_t value_bytes(const ir::Value& v, int64_t assumed_dim);

struct OpWork {
  double flops = -1;  // < 0: unknown
  double bytes = -1;  // < 0: unknown (inputs read plus outputs written)
  bool known() const { return flops >= 0 && bytes >= 0; }
};

OpWork estimate_work(const ir::Graph& graph, const ir::Node& node, int64_t assumed_dim);

// launch + max(flops / flops_per_us, bytes / bytes_per_us) (a roofline); < 0 when the
// work is unknown.
double default_time_us(const OpWork& work, const Throughput& throughput);

}  // namespace infer::partitioner
