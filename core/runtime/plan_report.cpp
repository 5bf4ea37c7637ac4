// PlanReport::to_text: the --explain rendering of what the partitioner decided.
#include <cstdio>
#include <string>

#include "infer/infer.hpp"
#include "partitioner/units.hpp"

namespace infer {
namespace {

using partitioner::format_bytes;
using partitioner::format_time_us;

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The totals section: partitions per backend, copies and bytes per run, and the cost
// model's estimates of compute, transfers and memory.
std::string totals_text(const PlanReport& r) {
  std::string out = "totals:\n";
  std::string per_backend, compute, memory;
  for (const BackendSummary& b : r.backends) {
    const std::string sep = per_backend.empty() ? "" : ", ";
    per_backend += sep + b.backend + " " + std::to_string(b.partitions);
    compute += sep + b.backend + " ";
    if (b.nodes_without_estimate == b.nodes && b.nodes > 0) {
      compute += "unknown";
    } else {
      compute += format_time_us(b.est_compute_us);
      if (b.nodes_without_estimate > 0)
        compute += " (+ " + plural(b.nodes_without_estimate, "node", "nodes") + " without estimate)";
    }
    memory += sep + b.backend + " " + format_bytes(b.est_memory_bytes);
    if (b.memory_budget_bytes >= 0) memory += " of a " + format_bytes(b.memory_budget_bytes) + " budget";
    if (b.memory_values_of_unknown_size > 0)
      memory += " (+ " + plural(b.memory_values_of_unknown_size, "value", "values") +
                " of run-time size)";
  }
  out += "  partitions: " + std::to_string(r.partitions.size());
  if (!per_backend.empty()) out += " (" + per_backend + ")";
  out += "\n";
  const PlanReport::CopyTotals copies = r.copy_totals();
  out += "  copies per run: " + std::to_string(copies.copies);
  if (copies.copies > 0) {
    out += ", ";
    if (copies.unknown_size == copies.copies) {
      out += "bytes known at run time";
    } else {
      out += plural(static_cast<size_t>(copies.known_bytes), "byte", "bytes");
      if (copies.unknown_size > 0)
        out += " + " + std::to_string(copies.unknown_size) + " of run-time size";
    }
  }
  out += "\n";
  out += "  estimated compute: " + compute + "\n";
  out += "  estimated transfers: ";
  if (r.copies_without_estimate > 0 && r.copies_without_estimate == r.copies.size()) {
    out += "unknown";
  } else {
    out += format_time_us(r.est_transfer_us);
    if (r.copies_without_estimate > 0)
      out += " (+ " + plural(r.copies_without_estimate, "copy", "copies") + " without estimate)";
  }
  out += "\n";
  out += "  estimated memory: " + memory + "\n";
  if (r.undecided_placements > 0)
    out += "  undecided: " + std::to_string(r.undecided_placements) +
           " small islands or boundary nodes left where priority placed them (a size known "
           "only at run time, or a missing time or link estimate)\n";
  return out;
}

}  // namespace

PlanReport::CopyTotals PlanReport::copy_totals() const {
  CopyTotals t;
  t.copies = copies.size();
  for (const CopySummary& c : copies) {
    if (c.bytes >= 0)
      t.known_bytes += c.bytes;
    else
      ++t.unknown_size;
  }
  return t;
}

std::string PlanReport::to_text() const {
  std::string out;
  if (!unavailable_backends.empty()) {
    out += "backends left out (no device):\n";
    for (const std::string& b : unavailable_backends) out += "  " + b + "\n";
  }
  out += "nodes (" + std::to_string(nodes.size()) + "):\n";
  for (const NodePlacement& n : nodes) {
    out += "  " + n.node + " (" + n.op_type;
    if (!n.domain.empty()) out += ", domain " + n.domain;
    out += ") -> " + n.backend;
    if (n.est_time_us >= 0) out += " (~" + format_time_us(n.est_time_us) + ")";
    out += "  [" + n.reason + "]\n";
  }

  out += "partitions (" + std::to_string(partitions.size()) + "):\n";
  for (const PartitionSummary& p : partitions) {
    out += "  " + p.name + " on " + p.backend + ": " + plural(p.node_count, "node", "nodes");
    if (p.est_time_us >= 0) out += ", ~" + format_time_us(p.est_time_us);
    out += "\n";
  }

  out += "copies per run (" + std::to_string(copies.size()) + "):\n";
  for (const CopySummary& c : copies) {
    out += "  " + c.tensor + ": " + c.from_backend + " -> " + c.to_backend + ", ";
    if (c.bytes >= 0) {
      out += plural(static_cast<size_t>(c.bytes), "byte", "bytes");
    } else {
      out += "size known at run time";
    }
    if (c.est_time_us >= 0) out += ", ~" + format_time_us(c.est_time_us);
    out += "\n";
  }
  const CopyTotals totals = copy_totals();
  if (copies.empty()) {
    out += "  none\n";
  } else {
    if (totals.unknown_size == copies.size()) {
      out += "  total: known at run time\n";
    } else {
      out += "  total: " + plural(static_cast<size_t>(totals.known_bytes), "byte", "bytes");
      if (totals.unknown_size > 0)
        out += " + " + std::to_string(totals.unknown_size) + " of run-time size";
      out += "\n";
    }
  }
  if (!backends.empty()) out += totals_text(*this);

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
  if (!precision.empty()) {
    out += "precision changes (no backend runs these nodes at their own precision):\n";
    for (const std::string& p : precision) out += "  " + p + "\n";
  }
  if (requested_precision != Precision::kFp32) {
    out += std::string("compute precision ") + precision_name(requested_precision) + ": " +
           std::to_string(reduced_precision.size()) + " node" +
           (reduced_precision.size() == 1 ? "" : "s") +
           " computed narrower than float32, the others in float32\n";
    for (const std::string& p : reduced_precision) out += "  " + p + "\n";
  }
  return out;
}


}  // namespace infer
