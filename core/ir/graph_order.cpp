// Ordering and structural checks of a graph: topological_sort() and validate() (see
// graph.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace infer::ir {
namespace {

std::string graph_label(const Graph& g) {
  return "graph '" + (g.name.empty() ? std::string("(unnamed)") : g.name) + "'";
}

std::string value_label(const Graph& g, ValueId v) { return "'" + g.value(v).name + "'"; }

}  // namespace

Status Graph::topological_sort() {
  const size_t n = nodes_.size();
  std::vector<NodeId> producer(values_.size(), kNoNode);
  for (NodeId i = 0; i < n; ++i) {
    for (ValueId out : nodes_[i].outputs) {
      if (out == kNoValue) continue;
      if (out >= values_.size())
        return invalid_argument(graph_label(*this) + ": " + nodes_[i].describe() +
                                " has an output id out of range");
      if (producer[out] != kNoNode && producer[out] != i)
        return invalid_argument(graph_label(*this) + ": value " + value_label(*this, out) +
                                " is produced by both " + nodes_[producer[out]].describe() +
                                " and " + nodes_[i].describe());
      producer[out] = i;
    }
  }

  // Edges producer -> consumer. A node that reads its own output is a cycle of one and
  // keeps a positive in-degree, so it is reported like any other cycle.
  std::vector<std::vector<NodeId>> preds(n);
  std::vector<std::vector<NodeId>> succs(n);
  std::vector<size_t> indegree(n, 0);
  for (NodeId i = 0; i < n; ++i) {
    std::vector<ValueId> reads = nodes_[i].inputs;
    for (ValueId v : implicit_inputs(i)) reads.push_back(v);
    for (ValueId v : reads) {
      if (v == kNoValue || v >= values_.size() || producer[v] == kNoNode) continue;
      NodeId p = producer[v];
      if (std::find(preds[i].begin(), preds[i].end(), p) != preds[i].end()) continue;
      preds[i].push_back(p);
      succs[p].push_back(i);
      ++indegree[i];
    }
  }

  // Kahn's algorithm, always taking the ready node that came first: a sorted graph
  // keeps its order exactly, and an unsorted one moves as little as possible, which
  // keeps dumps and error messages recognisable.
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeId i = ready.top();
    ready.pop();
    order.push_back(i);
    for (NodeId s : succs[i])
      if (--indegree[s] == 0) ready.push(s);
  }

  if (order.size() != n) {
    // Every node left over has a predecessor that is left over too, so walking
    // predecessors from any of them must revisit a node; that node is on a cycle (and
    // not merely downstream of one, which is what naming any leftover node would risk).
    std::vector<bool> done(n, false);
    for (NodeId i : order) done[i] = true;
    NodeId start = 0;
    while (done[start]) ++start;
    std::vector<size_t> seen_at(n, SIZE_MAX);
    std::vector<NodeId> walk;
    NodeId cur = start;
    while (seen_at[cur] == SIZE_MAX) {
      seen_at[cur] = walk.size();
      walk.push_back(cur);
      for (NodeId p : preds[cur]) {
        if (!done[p]) {
          cur = p;
          break;
        }
      }
    }
    // walk[seen_at[cur]..] is the cycle, against the data flow; print it with the flow.
    std::vector<NodeId> cycle(walk.begin() + static_cast<std::ptrdiff_t>(seen_at[cur]), walk.end());
    std::reverse(cycle.begin(), cycle.end());
    std::string path;
    for (NodeId c : cycle) path += nodes_[c].describe() + " -> ";
    path += nodes_[cycle.front()].describe();
    return invalid_argument(graph_label(*this) + " has a cycle: " + path);
  }

  bool unchanged = true;
  for (size_t k = 0; k < n; ++k) unchanged = unchanged && order[k] == k;
  if (!unchanged) {
    std::vector<Node> sorted;
    sorted.reserve(n);
    for (NodeId i : order) sorted.push_back(std::move(nodes_[i]));
    nodes_ = std::move(sorted);
  }
  rebuild_links();
  return Status::ok();
}

Status Graph::validate() const {
  const std::string where = graph_label(*this);
  enum class Def : uint8_t { kNo, kGraphInput, kConstant, kCapture, kNode };
  std::vector<Def> defined(values_.size(), Def::kNo);
  for (ValueId v = 0; v < values_.size(); ++v) {
    if (values_[v].is_constant()) defined[v] = Def::kConstant;
    if (values_[v].outer_scope) {
      if (defined[v] != Def::kNo)
        return invalid_argument(where + ": value " + value_label(*this, v) +
                                " is both a constant and an outer-scope capture");
      defined[v] = Def::kCapture;
    }
  }
  for (ValueId v : inputs) {
    if (v == kNoValue || v >= values_.size())
      return invalid_argument(where + ": a graph input id is out of range");
    if (defined[v] != Def::kNo)
      return invalid_argument(where + ": graph input " + value_label(*this, v) +
                              " is also a constant, a capture or listed twice");
    defined[v] = Def::kGraphInput;
  }
  std::vector<std::string> seen_names;
  for (ValueId v = 0; v < values_.size(); ++v)
    if (!values_[v].name.empty()) seen_names.push_back(values_[v].name);
  std::sort(seen_names.begin(), seen_names.end());
  auto dup = std::adjacent_find(seen_names.begin(), seen_names.end());
  if (dup != seen_names.end())
    return invalid_argument(where + ": two values are named '" + *dup + "'");

  for (NodeId i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      ValueId v = node.inputs[k];
      if (v == kNoValue) continue;
      if (v >= values_.size())
        return invalid_argument(where + ": " + node.describe() + ": input " + std::to_string(k) +
                                " has an id out of range");
      if (defined[v] == Def::kNo)
        return invalid_argument(where + ": " + node.describe() + ": input " + std::to_string(k) +
                                " " + value_label(*this, v) +
                                " is read before any node produces it");
    }
    for (ValueId v : implicit_inputs(i))
      if (defined[v] == Def::kNo)
        return invalid_argument(where + ": " + node.describe() + ": its subgraph reads " +
                                value_label(*this, v) + " before any node produces it");
    for (ValueId v : node.outputs) {
      if (v == kNoValue) continue;
      if (v >= values_.size())
        return invalid_argument(where + ": " + node.describe() + " has an output id out of range");
      if (defined[v] != Def::kNo)
        return invalid_argument(where + ": " + node.describe() + " produces " +
                                value_label(*this, v) +
                                ", which is already a graph input, a constant, a capture "
                                "or another node's output");
      defined[v] = Def::kNode;
      if (values_[v].producer != i)
        return invalid_argument(where + ": value " + value_label(*this, v) +
                                " has a stale producer link (call rebuild_links())");
    }
    for (const Attribute& attr : node.attributes)
      for (const auto& sub : attr.graphs)
        if (sub)
          INFER_RETURN_IF_ERROR(sub->validate().with_context(where + ": " + node.describe() +
                                                             ": attribute '" + attr.name + "'"));
  }
  for (ValueId v : outputs) {
    if (v == kNoValue || v >= values_.size())
      return invalid_argument(where + ": a graph output id is out of range");
    if (defined[v] == Def::kNo)
      return invalid_argument(where + ": graph output " + value_label(*this, v) +
                              " is not defined by any node, input, constant or capture");
  }
  return Status::ok();
}

}  // namespace infer::ir
