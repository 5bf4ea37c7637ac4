#include "partitioner/memory_budget.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "partitioner/placement_state.hpp"
#include "partitioner/units.hpp"

namespace infer::partitioner {
namespace {

std::string describe_use(const MemoryUse& use) {
  std::string text = "constants " + format_bytes(use.constants) + " + peak activations " +
                     format_bytes(use.peak_activations);
  if (use.unknown_values > 0)
    text += ", not counting " + std::to_string(use.unknown_values) +
            (use.unknown_values == 1 ? " value" : " values") + " of run-time size";
  return text;
}

}  // namespace

MemoryUse memory_use(const ir::Graph& g, const GraphFacts& f, const CostModel& cost,
                     const std::vector<size_t>& backend_of, size_t backend) {
  MemoryUse use;
  const size_t n = g.node_count();
  std::set<ir::ValueId> constants;
  // delta[i] changes the live sum at node i; a value live over [start, end] adds at
  // start and leaves after end.
  std::vector<int64_t> delta(n + 2, 0);
  for (ir::ValueId v = 0; v < g.value_count(); ++v) {
    const ir::Value& value = g.value(v);
    const auto& consumers = f.consumers[v];
    if (value.is_constant()) {
      for (ir::NodeId c : consumers)
        if (backend_of[c] == backend) {
          constants.insert(v);
          break;
        }
      continue;
    }
    const ir::NodeId producer = f.producers[v];
    size_t start = n, end = 0;
    if (producer != kNoNode && backend_of[producer] == backend) {
      start = producer;
      end = producer;
      for (ir::NodeId c : consumers) end = std::max<size_t>(end, c);
      if (f.is_output[v]) end = n;
    } else {
      if (producer == kNoNode && cost.host_addressable(backend)) continue;
      for (ir::NodeId c : consumers) {
        if (backend_of[c] != backend) continue;
        start = std::min<size_t>(start, c);
        end = std::max<size_t>(end, c);
      }
      if (start == n) continue;  // not read here
    }
    const int64_t bytes = cost.value_bytes(v);
    if (bytes < 0) {
      ++use.unknown_values;
      continue;
    }
    delta[start] += bytes;
    delta[end + 1] -= bytes;
  }
  for (ir::ValueId v : constants) use.constants += std::max<int64_t>(cost.value_bytes(v), 0);
  int64_t live = 0;
  for (size_t i = 0; i <= n; ++i) {
    live += delta[i];
    use.peak_activations = std::max(use.peak_activations, live);
  }
  return use;
}

Status apply_memory_budgets(PlacementState& s) {
  const auto& backends = s.request().backends;
  const ir::Graph& g = s.graph();
  for (size_t b = 0; b < backends.size(); ++b) {
    const int64_t budget = backends[b].memory_budget_bytes;
    if (budget < 0) continue;
    // The latest candidate so far: nodes after it were already examined and either
    // moved or cannot move, so the scan never revisits them.
    ir::NodeId next = static_cast<ir::NodeId>(g.node_count());
    for (;;) {
      const MemoryUse use = memory_use(g, s.facts(), s.cost(), s.backend_of(), b);
      if (use.total() <= budget) break;
      bool spilled = false;
      while (next > 0 && !spilled) {
        const ir::NodeId id = --next;
        if (s.backend_of(id) != b || s.pinned(id)) continue;
        for (size_t t = b + 1; t < backends.size() && !spilled; ++t) {
          if (!s.supports(t, id)) continue;
          s.move({id}, t,
                 "spilled to " + backends[t].name + ": " + backends[b].name +
                     "'s memory budget of " + format_bytes(budget) + " is exceeded (" +
                     describe_use(use) + ")");
          spilled = true;
        }
      }
      if (!spilled)
        return invalid_argument(
            "memory budget: backend '" + backends[b].name + "' needs " +
            format_bytes(use.total()) + " (" + describe_use(use) + ") but its budget is " +
            format_bytes(budget) +
            ", and none of the nodes left on it can move to a later backend (they are "
            "pinned, or no later backend supports them)");
    }
  }
  return Status::ok();
}

}  // namespace infer::partitioner
