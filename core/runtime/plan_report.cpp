// PlanReport::to_text: the --explain rendering of what the partitioner decided.
#include <cstdio>
#include <string>

#include "infer/infer.hpp"

namespace infer {
namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string PlanReport::to_text() const {
  std::string out = "nodes (" + std::to_string(nodes.size()) + "):\n";
  for (const NodePlacement& n : nodes) {
    out += "  " + n.node + " (" + n.op_type;
    if (!n.domain.empty()) out += ", domain " + n.domain;
    out += ") -> " + n.backend + "  [" + n.reason + "]\n";
  }

  out += "partitions (" + std::to_string(partitions.size()) + "):\n";
  for (const PartitionSummary& p : partitions)
    out += "  " + p.name + " on " + p.backend + ": " + plural(p.node_count, "node", "nodes") + "\n";

  out += "copies per run (" + std::to_string(copies.size()) + "):\n";
  int64_t known_bytes = 0;
  size_t unknown = 0;
  for (const CopySummary& c : copies) {
    out += "  " + c.tensor + ": " + c.from_backend + " -> " + c.to_backend + ", ";
    if (c.bytes >= 0) {
      out += plural(static_cast<size_t>(c.bytes), "byte", "bytes") + "\n";
      known_bytes += c.bytes;
    } else {
      out += "size known at run time\n";
      ++unknown;
    }
  }
  if (copies.empty()) {
    out += "  none\n";
  } else {
    if (unknown == copies.size()) {
      out += "  total: known at run time\n";
    } else {
      out += "  total: " + plural(static_cast<size_t>(known_bytes), "byte", "bytes");
      if (unknown > 0) out += " + " + std::to_string(unknown) + " of run-time size";
      out += "\n";
    }
  }

  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", optimizer_ms);
  out += "optimizer: level " + std::to_string(optimization_level) + ", " +
         std::to_string(nodes_loaded) + " nodes loaded -> " + std::to_string(nodes_optimized) +
         " nodes run, " + ms + " ms\n";
  out += "optimizer passes that changed the graph:";
  if (passes.empty()) out += " none";
  out += "\n";
  for (const std::string& p : passes) out += "  " + p + "\n";
  if (!decomposed.empty()) {
    out += "fused nodes run as their standard operators:\n";
    for (const std::string& d : decomposed) out += "  " + d + "\n";
  }
  return out;
}

}  // namespace infer
